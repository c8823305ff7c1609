// LL-HLS blocking-reload load (issue 23): `origin serve --workers 1 --ingest-port 0` (the built
// CLI, its own processes: the primary ingests, one worker serves), the test encoder pushing the
// LL fixture (test/helpers/ll-hls.ts: 0.32 s parts, 1.92 s segments) at real time on the UTC
// grid, and N clients in their own process (bench/ll-hls-clients.ts) each looping on a blocking
// reload for the next part, spread over the video and audio playlists and SPELLINGS query
// spellings (so that the coalescer does not fold them into two requests).
// - Latency of an answer: from the moment the encoder handed the part's last byte to the ingest
//   socket to the moment the client read the answer (both on this machine's clock).
// - Memory: the worker's RSS, sampled every second (/proc).

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeLlFixtures, PARTS_PER_SEGMENT } from '../test/helpers/ll-hls';
import { TestEncoder } from '../test/helpers/test-encoder';
import { cpuSecondsOf, LOAD_CPU, pinned, SERVER_CPU } from './http-processes';
import { startLiveOrigin } from './live-origin';
import { childrenOf } from './procfs';
import { repoRoot } from './media';

/** Distinct spellings of each playlist URL among the clients. */
const SPELLINGS = 25;
const PART_MS = 320;

export interface LlLoadResult {
  clients: number;
  seconds: number;
  answers: number;
  /** Answers whose part the encoder had sent (the others: parts sent before the clients began). */
  matched: number;
  non200: number;
  maxInFlight: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers later than one part duration after the part's arrival. */
  late: number;
  workerRssStartMb: number;
  workerRssMaxMb: number;
  /** The worker's CPU time (user + system) while the clients ran, s; it ingests too. */
  workerCpuS: number;
  /** That CPU time per answer, µs: the figure a loaded machine's scheduling moves least. */
  workerCpuUsPerAnswer: number;
}

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? NaN : Number(m[1]) / 1024;
  } catch {
    return NaN;
  }
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** One run: `clients` blocking clients for `seconds` against one worker. */
export async function runLlLoad(clients: number, seconds: number): Promise<LlLoadResult> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'origin-ll-load-'));
  mkdirSync(path.join(root, 'live'));
  const bin = path.join(repoRoot(), 'bin', 'origin.js');
  const pkg = await run(process.execPath, [
    bin,
    'package',
    '-q',
    '-o',
    path.join(root, 'live', 'll.isml'),
    '--hls.minimum_fragment_length=48/25',
    '--hls.fmp4',
    '--hls.low_latency',
  ]);
  if (pkg.code !== 0) throw new Error(`origin package: ${pkg.stderr}`);
  const fx = await makeLlFixtures(root);
  // The origin on one CPU, the load generator on the other (taskset, as the HTTP benches pin wrk).
  // BENCH_LL_CPU_PROF=<dir>: the origin's processes write V8 CPU profiles there (--cpu-prof).
  const prof = process.env.BENCH_LL_CPU_PROF;
  const nodeFlags = prof === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', prof];
  const origin = await startLiveOrigin(root, { workers: 1, cpus: SERVER_CPU, nodeFlags });
  // The worker: the primary's child (bin/origin.js may sit between: the deepest descendant).
  const worker = (): number => {
    let pid = origin.child.pid!;
    for (let kids = childrenOf(pid); kids.length > 0; kids = childrenOf(pid)) pid = kids[0]!;
    return pid;
  };
  // On the 1.92 s grid (a multiple of 48 s), 48 to 96 s back: that much is pushed at once, a full window.
  const anchor = Math.floor(Date.now() / 48_000) * 48 - 48;
  const firstMsn = anchor / 1.92;
  const sentAt = new Map<string, number>();
  let stop = false;
  let caughtUp = 0;
  const pushers = (['video-300k.cmfv', 'audio-64k.cmfa'] as const).map(async (stream) => {
    const enc = new TestEncoder({
      channelUrl: `${origin.ingest}/live/ll.isml`,
      stream,
      fixture: stream.startsWith('video') ? fx.video : fx.audio,
      anchorSeconds: anchor,
    });
    await enc.open();
    let live = false;
    for (let g = 0; !stop; g++) {
      const due = anchor * 1000 + (g + 1) * PART_MS;
      if (due > Date.now() && !live) {
        live = true;
        caughtUp++;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
      await enc.send(g, g + 1);
      const key = `${stream[0]}/${firstMsn + Math.floor(g / PARTS_PER_SEGMENT)}/${g % PARTS_PER_SEGMENT}`;
      sentAt.set(key, Date.now());
    }
    await enc.close(true);
  });
  // The window is full once the pushers have caught up with the clock.
  while (caughtUp < 2) await new Promise((r) => setTimeout(r, 100));
  // ... and the ingest has archived that backlog (fsync per fragment): the playlist lists the
  // newest part sent.
  const probe = `${origin.url}/live/ll.isml/ll-video=300000.m3u8`;
  for (let tries = 0; tries < 100; tries++) {
    const body = (await run('curl', ['-s', probe])).stdout;
    const newest = [...body.matchAll(/-(\d+)\.part(\d+)\.m4s",/g)].at(-1);
    const last = [...sentAt.keys()].filter((k) => k.startsWith('v/')).at(-1);
    if (newest !== undefined && `v/${newest[1]}/${newest[2]}` === last) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const rssStart = rssMb(worker());
  const cpuStart = cpuSecondsOf(worker());
  let rssMax = rssStart;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMb(worker()))), 1000);
  // Spellings: the same playlist under another virtual directory (the routes ignore it); video
  // at even indexes, audio at odd ones.
  const spelled: string[] = [];
  for (let s = 0; s < SPELLINGS; s++)
    for (const key of ['video=300000', 'audio=64000']) spelled.push(`${origin.url}/live/ll.isml/${s}/ll-${key}.m3u8`);
  const gen = await run(
    ...pinned(LOAD_CPU, process.execPath, [
      ...nodeFlags.map((f) => (f === prof ? path.join(prof, 'clients') : f)),
      path.join(repoRoot(), 'dist', 'bench', 'll-hls-clients.js'),
      ...spelled,
      '--clients',
      String(clients),
      '--seconds',
      String(seconds),
    ]),
  );
  clearInterval(sampler);
  const cpu = cpuSecondsOf(worker()) - cpuStart;
  stop = true;
  await Promise.all(pushers);
  origin.child.kill('SIGTERM');
  await new Promise((r) => origin.child.once('exit', r));
  if (gen.code !== 0) throw new Error(`load generator: ${gen.stderr}`);
  const out = JSON.parse(gen.stdout) as {
    answers: Array<{ u: number; msn: number; part: number; status: number; at: number }>;
    maxInFlight: number;
  };
  const latencies: number[] = [];
  let non200 = 0;
  for (const a of out.answers) {
    if (a.status !== 200) {
      non200++;
      continue;
    }
    // A part index past the segment's last names the next segment's first part (rfc8216bis §6.2.5.2).
    const msn = a.part >= PARTS_PER_SEGMENT ? a.msn + 1 : a.msn;
    const part = a.part >= PARTS_PER_SEGMENT ? 0 : a.part;
    const sent = sentAt.get(`${a.u % 2 === 0 ? 'v' : 'a'}/${msn}/${part}`);
    if (sent !== undefined) latencies.push(a.at - sent);
  }
  latencies.sort((x, y) => x - y);
  return {
    clients,
    seconds,
    answers: out.answers.length,
    matched: latencies.length,
    non200,
    maxInFlight: out.maxInFlight,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? NaN,
    late: latencies.filter((l) => l > PART_MS).length,
    workerRssStartMb: Math.round(rssStart),
    workerRssMaxMb: Math.round(rssMax),
    workerCpuS: Math.round(cpu * 10) / 10,
    workerCpuUsPerAnswer: Math.round((cpu * 1e6) / Math.max(1, out.answers.length)),
  };
}
