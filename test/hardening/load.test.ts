// Load (issue 24): 256 connections of wrk over a mix of every format's manifests and segments
// (Smooth, DASH, HLS MPEG-TS, fMP4, packed audio and WebVTT, I-frame playlists, HDS) against
// `origin serve --workers 2`, sampling the resident memory and open descriptors of the primary
// and of each worker. 0 errors; the memory after warm-up stays flat. CI runs 15 s; HARDENING_SOAK=1
// runs 60 s and then the 10-minute soak, sampling every 10 s into test-artifacts/hardening/
// (git-ignored) as CSV. HARDENING_LOAD_SECONDS overrides the short run's length.

import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { childrenOf } from '../origin/server/cli-origin';
import { ROOT } from '../helpers/fixtures';
import { request } from './harness/http';
import { OriginProcess, startOriginProcess } from './harness/origin-process';
import { PlantedRoot, plantedRoot } from './harness/planted-root';
import { presentationTails } from './harness/presentation-urls';
import { fdsOf, mib, rssOf } from './harness/proc';
import { runWrk, WrkRun } from './harness/wrk';

const linux = process.platform === 'linux';
const maybe = linux ? test : test.skip;
const SOAK = process.env['HARDENING_SOAK'] === '1';
const SHORT = Number(process.env['HARDENING_LOAD_SECONDS'] ?? 15);
const CONNECTIONS = 256;
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'hardening');

let planted: PlantedRoot;
let origin: OriginProcess;
let mix: string[];

beforeAll(async () => {
  if (!linux) return;
  planted = await plantedRoot(`CANARY${randomBytes(8).toString('hex')}`);
  // --workers 2 after the harness's --workers 1: the last one given counts.
  origin = await startOriginProcess(planted.root, ['--workers', '2']);
  const tails = await presentationTails(origin.url, 'p');
  mix = [...tails.map((t) => `/p.ism/${t}`), ...tails.map((t) => `/sub/dir/q.ism/${t}`)];
  for (const p of mix) {
    const a = await request(origin.url, p);
    if (a.status !== 200) throw new Error(`${p}: ${a.status} before the load`);
  }
}, 120_000);
afterAll(async () => {
  if (origin?.alive()) await origin.stop();
});

interface Sample {
  t: number;
  pid: number;
  role: string;
  rss: number;
  fds: number;
}

/** The primary and its workers, sampled every `everyMs` until `stop` resolves. */
async function sampled<T>(everyMs: number, work: Promise<T>): Promise<{ result: T; samples: Sample[] }> {
  const samples: Sample[] = [];
  const started = Date.now();
  const take = (): void => {
    const t = (Date.now() - started) / 1000;
    samples.push({ t, pid: origin.pid, role: 'primary', rss: rssOf(origin.pid), fds: fdsOf(origin.pid) });
    childrenOf(origin.pid).forEach((pid, i) =>
      samples.push({ t, pid, role: `worker${i + 1}`, rss: rssOf(pid), fds: fdsOf(pid) }),
    );
  };
  take();
  const timer = setInterval(take, everyMs);
  try {
    const result = await work;
    take();
    return { result, samples };
  } finally {
    clearInterval(timer);
  }
}

/** One run: wrk for `seconds`, samples, the CSV, the figures, and the checks. */
async function loadRun(name: string, seconds: number, everyMs: number): Promise<void> {
  const { result, samples } = await sampled(everyMs, runWrk(origin.url, mix, CONNECTIONS, seconds));
  mkdirSync(ARTIFACTS, { recursive: true });
  const csv = path.join(ARTIFACTS, `${name}.csv`);
  writeFileSync(
    csv,
    [
      't_s,pid,role,rss_bytes,fds',
      ...samples.map((s) => `${s.t.toFixed(1)},${s.pid},${s.role},${s.rss},${s.fds}`),
    ].join('\n') + '\n',
  );
  const roles = [...new Set(samples.map((s) => s.role))];
  const lines = roles.map((role) => {
    const of = samples.filter((s) => s.role === role && Number.isFinite(s.rss));
    // Warm-up: the first quarter of the run.
    const warmed = of.find((s) => s.t >= seconds / 4) ?? of[0]!;
    const last = of[of.length - 1]!;
    const peak = Math.max(...of.map((s) => s.rss));
    return { role, start: of[0]!, warmed, last, peak, fdPeak: Math.max(...of.map((s) => s.fds)) };
  });
  console.log(
    `load ${name}: ${CONNECTIONS} connections, ${result.seconds.toFixed(1)} s over ${mix.length} URLs: ${result.requests} requests, ` +
      `${result.rps} req/s, ${(result.bytes / result.seconds / 1e6).toFixed(1)} MB/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms; ` +
      `errors ${JSON.stringify(result.errors)}; samples in ${path.relative(ROOT, csv)}\n` +
      lines
        .map(
          (l) =>
            `  ${l.role}: RSS ${mib(l.start.rss)} → ${mib(l.warmed.rss)} (after warm-up) → ${mib(l.last.rss)} MiB (peak ${mib(l.peak)}); fds ${l.start.fds} → ${l.last.fds} (peak ${l.fdPeak})`,
        )
        .join('\n'),
  );
  expect(errorsOf(result)).toBe(0);
  expect(result.requests).toBeGreaterThan(0);
  expect(origin.alive()).toBe(true);
  expect(origin.strayLines()).toEqual([]);
  expect(origin.errorLines()).toEqual([]);
  expect(lines.filter((l) => l.role.startsWith('worker')).length).toBe(2);
  for (const l of lines) {
    // Flat after warm-up: within a fifth plus 32 MiB of the warmed figure.
    expect(l.last.rss).toBeLessThan(l.warmed.rss * 1.2 + (32 << 20));
  }
}

const errorsOf = (r: WrkRun): number => Object.values(r.errors).reduce((a, b) => a + b, 0);

maybe(
  `${SHORT} s of 256 connections over every format, 2 workers: 0 errors, memory flat`,
  async () => {
    await loadRun(`load-${SHORT}s`, SHORT, 1000);
  },
  (SHORT + 60) * 1000,
);

(SOAK && linux ? test : test.skip)(
  '60 s of the same load',
  async () => {
    await loadRun('load-60s', 60, 2000);
  },
  180_000,
);

(SOAK && linux ? test : test.skip)(
  'the 10-minute soak, sampled every 10 s',
  async () => {
    await loadRun('soak-600s', 600, 10_000);
  },
  900_000,
);
