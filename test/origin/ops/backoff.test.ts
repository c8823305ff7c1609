// The restart delays of dead workers (origin/ops/backoff.ts), on an injected clock.

import { BACKOFF, RestartBackoff } from '../../../origin/ops/backoff';

test('deaths close together double the delay up to the cap; five within a minute are a crash loop', () => {
  const b = new RestartBackoff();
  const delays: number[] = [];
  const loops: boolean[] = [];
  for (let i = 0; i < 12; i++) {
    const r = b.died(1000 + i * 10);
    delays.push(r.delayMs);
    loops.push(r.crashLoop);
  }
  expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
  expect(loops).toEqual([false, false, false, false, true, true, true, true, true, true, true, true]);
  expect(b.inCrashLoop(1200)).toBe(true);
});

test('deaths older than the window are forgotten: the crash loop ends, the delay starts over', () => {
  const b = new RestartBackoff();
  for (let i = 0; i < 5; i++) b.died(i * 1000);
  expect(b.inCrashLoop(4000)).toBe(true);
  // The first death leaves the window at 60 s: four remain.
  expect(b.inCrashLoop(BACKOFF.windowMs)).toBe(false);
  expect(b.inCrashLoop(4000 + BACKOFF.windowMs)).toBe(false);
  expect(b.died(10 * BACKOFF.windowMs)).toEqual({ delayMs: BACKOFF.baseMs, recent: 1, crashLoop: false });
});

test('a steady stream of deaths keeps a bounded history and the capped delay', () => {
  const b = new RestartBackoff();
  let last = { delayMs: 0, recent: 0, crashLoop: false };
  for (let t = 0; t < 100_000; t += 5) last = b.died(t);
  expect(last.delayMs).toBe(BACKOFF.capMs);
  expect(last.recent).toBeLessThanOrEqual(64);
  expect(last.crashLoop).toBe(true);
});
