// The generation gate (origin/server/work-gate.ts): at most `slots` tasks at once, the others in
// arrival order, every task's own result or error, a slot freed whatever the task did.

import { GENERATION_SLOTS, WorkGate } from '../../../origin/server/work-gate';

/** A task that settles when the test says. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('runs at most `slots` tasks at once and starts the others in arrival order', async () => {
  const gate = new WorkGate(2);
  const started: number[] = [];
  const tasks = Array.from({ length: 5 }, () => deferred<number>());
  const results = tasks.map((t, i) =>
    gate.run(async () => {
      started.push(i);
      return t.promise;
    }),
  );
  await tick();
  expect(started).toEqual([0, 1]);
  expect(gate.active).toBe(2);
  expect(gate.queued).toBe(3);
  tasks[1]!.resolve(1);
  await tick();
  expect(started).toEqual([0, 1, 2]);
  tasks[0]!.resolve(0);
  tasks[2]!.resolve(2);
  await tick();
  expect(started).toEqual([0, 1, 2, 3, 4]);
  tasks[3]!.resolve(3);
  tasks[4]!.resolve(4);
  expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4]);
  expect(gate.active).toBe(0);
  expect(gate.queued).toBe(0);
});

test('a failed or throwing task passes its error on and frees its slot', async () => {
  const gate = new WorkGate(1);
  const failing = gate.run(() => Promise.reject(new Error('read failed')));
  const throwing = gate.run(() => {
    throw new Error('sync throw');
  });
  const next = gate.run(async () => 'after');
  await expect(failing).rejects.toThrow('read failed');
  await expect(throwing).rejects.toThrow('sync throw');
  await expect(next).resolves.toBe('after');
  expect(gate.active).toBe(0);
});

test('the same results as running every task directly (the plain version), for any slot count', async () => {
  const work = (i: number) => async (): Promise<number> => {
    for (let k = 0; k < i % 3; k++) await tick();
    if (i % 7 === 6) throw new Error(`task ${i}`);
    return i * i;
  };
  const plain = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => work(i)()));
  for (const slots of [1, 2, GENERATION_SLOTS, 64]) {
    const gate = new WorkGate(slots);
    let most = 0;
    const gated = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        gate.run(async () => {
          most = Math.max(most, gate.active);
          return work(i)();
        }),
      ),
    );
    expect(gated).toEqual(plain);
    expect(most).toBeLessThanOrEqual(slots);
    expect(gate.active + gate.queued).toBe(0);
  }
});

test('refuses a slot count below 1 or not an integer', () => {
  expect(() => new WorkGate(0)).toThrow(RangeError);
  expect(() => new WorkGate(1.5)).toThrow(RangeError);
});

test('a waiting task whose signal aborts is never started, rejects client-gone and keeps the order', async () => {
  const gate = new WorkGate(1);
  const started: number[] = [];
  const first = deferred<number>();
  const aborts = [new AbortController(), new AbortController(), new AbortController()];
  const running = gate.run(async () => {
    started.push(0);
    return first.promise;
  });
  const waiting = aborts.map((a, i) =>
    gate.run(async () => {
      started.push(i + 1);
      return i + 1;
    }, a.signal),
  );
  await tick();
  expect(gate.queued).toBe(3);
  aborts[0]!.abort();
  aborts[2]!.abort();
  await expect(waiting[0]).rejects.toMatchObject({ code: 'client-gone' });
  await expect(waiting[2]).rejects.toMatchObject({ code: 'client-gone' });
  expect(gate.queued).toBe(1);
  expect(gate.cancelled).toBe(2);
  first.resolve(0);
  expect(await running).toBe(0);
  expect(await waiting[1]).toBe(2);
  expect(started).toEqual([0, 2]);
  expect(gate.active + gate.queued).toBe(0);
  // The slot was passed on and given back: a new task runs at once.
  await expect(gate.run(async () => 'next')).resolves.toBe('next');
});

test('a signal aborted before the call starts nothing; one aborted after the start changes nothing', async () => {
  const gate = new WorkGate(1);
  const gone = new AbortController();
  gone.abort();
  let ran = false;
  await expect(
    gate.run(async () => {
      ran = true;
    }, gone.signal),
  ).rejects.toMatchObject({ code: 'client-gone' });
  expect(ran).toBe(false);
  const late = new AbortController();
  const task = deferred<string>();
  const result = gate.run(() => task.promise, late.signal);
  await tick();
  late.abort();
  task.resolve('made');
  await expect(result).resolves.toBe('made');
  expect(gate.active + gate.queued).toBe(0);
});
