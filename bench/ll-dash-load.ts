// LL-DASH chunked-segment load (issue 23): `origin serve --workers 1 --ingest-port 0` (the built
// CLI, its own processes: the primary ingests, one worker serves), the test encoder pushing the
// LL fixture (test/helpers/ll-hls.ts: 0.32 s chunks, 1.92 s segments) at real time on the UTC
// grid, and N clients in their own process (bench/ll-dash-clients.ts) each reading the segment
// being ingested as it grows, then the next. Every client of a segment shares one growing buffer
// in the worker (live/chunked-segment.ts) and waits without a timer or thread of its own.
// - Latency of a segment: from the moment the encoder handed its last chunk to the ingest socket
//   to the moment the client read the end of the response (both on this machine's clock).
// - Memory: the worker's RSS, sampled every second (/proc).

import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeLlFixtures, PARTS_PER_SEGMENT } from '../test/helpers/ll-hls';
import { TestEncoder } from '../test/helpers/test-encoder';
import { childrenOf } from './procfs';
import { repoRoot } from './media';

const CHUNK_MS = 320;
/** Video ticks per segment (25 Hz, 1.92 s). */
const SEGMENT_TICKS = 48;

export interface LlDashLoadResult {
  clients: number;
  seconds: number;
  answers: number;
  non200: number;
  /** Answers whose body differs in length from another client's answer for the same segment. */
  mismatched: number;
  maxInFlight: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  workerRssStartMb: number;
  workerRssMaxMb: number;
}

function startOrigin(root: string): Promise<{ child: ChildProcess; url: string; ingest: string }> {
  const bin = path.join(repoRoot(), 'bin', 'origin.js');
  const args = ['serve', '--root', root, '--port', '0', '--workers', '1', '--ingest-port', '0', '-q'];
  const child = spawn(process.execPath, [bin, ...args, '--warm-up-rounds', '0'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`origin serve exited (${code})`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const s = /serving .* at (http:\/\/[\d.]+:\d+)\//.exec(out);
      const i = /live ingest at (http:\/\/[\d.]+:\d+)\//.exec(out);
      if (s !== null && i !== null) {
        child.removeAllListeners('exit');
        resolve({ child, url: s[1]!, ingest: i[1]! });
      }
    });
  });
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

/** One run: `clients` readers of the growing segment for `seconds` against one worker. */
export async function runLlDashLoad(clients: number, seconds: number): Promise<LlDashLoadResult> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'origin-lld-load-'));
  mkdirSync(path.join(root, 'live'));
  const bin = path.join(repoRoot(), 'bin', 'origin.js');
  const isml = path.join(root, 'live', 'lld.isml');
  const pkg = await run(process.execPath, [
    ...[bin, 'package', '-q', '-o', isml],
    ...['--mpd.minimum_fragment_length=48/25', '--mpd.low_latency'],
  ]);
  if (pkg.code !== 0) throw new Error(`origin package: ${pkg.stderr}`);
  const fx = await makeLlFixtures(root);
  const origin = await startOrigin(root);
  // The worker: the primary's child (bin/origin.js may sit between: the deepest descendant).
  const worker = (): number => {
    let pid = origin.child.pid!;
    for (let kids = childrenOf(pid); kids.length > 0; kids = childrenOf(pid)) pid = kids[0]!;
    return pid;
  };
  // On the 1.92 s grid (a multiple of 48 s), 48 to 96 s back: that much is pushed at once.
  const anchor = Math.floor(Date.now() / 48_000) * 48 - 48;
  /** When the encoder sent each video chunk, by fragment index from the anchor. */
  const sentAt = new Map<number, number>();
  let stop = false;
  let caughtUp = 0;
  const pushers = (['video-300k.cmfv', 'audio-64k.cmfa'] as const).map(async (stream) => {
    const enc = new TestEncoder({
      channelUrl: `${origin.ingest}/live/lld.isml`,
      stream,
      fixture: stream.startsWith('video') ? fx.video : fx.audio,
      anchorSeconds: anchor,
    });
    await enc.open();
    let live = false;
    for (let g = 0; !stop; g++) {
      const due = anchor * 1000 + (g + 1) * CHUNK_MS;
      if (due > Date.now() && !live) {
        live = true;
        caughtUp++;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
      await enc.send(g, g + 1);
      if (stream.startsWith('video')) sentAt.set(g, Date.now());
    }
    await enc.close(true);
  });
  while (caughtUp < 2) await new Promise((r) => setTimeout(r, 100));
  const base = `${origin.url}/live/lld.isml`;
  // The ingest has archived the backlog once the MPD lists a growing segment near the clock.
  for (let tries = 0; tries < 100; tries++) {
    const mpd = (await run('curl', ['-s', `${base}/.mpd`])).stdout;
    const m = /<S t="(\d+)" d="48"(?: r="(\d+)")? \/>/.exec(mpd);
    const newest = m === null ? 0 : (Number(m[1]) + 48 * Number(m[2] ?? 0)) / 25;
    if (newest > Date.now() / 1000 - 4) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const rssStart = rssMb(worker());
  let rssMax = rssStart;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMb(worker()))), 1000);
  const gen = await run(process.execPath, [
    path.join(repoRoot(), 'dist', 'bench', 'll-dash-clients.js'),
    ...[`${base}/.mpd`, `${base}/dash/lld-video=300000-$Time$.dash`],
    ...['--clients', String(clients), '--seconds', String(seconds)],
  ]);
  clearInterval(sampler);
  stop = true;
  await Promise.all(pushers);
  origin.child.kill('SIGTERM');
  if (gen.code !== 0) throw new Error(`load generator: ${gen.stderr}`);
  const out = JSON.parse(gen.stdout) as {
    answers: Array<{ t: number; status: number; bytes: number; firstAt: number; at: number }>;
    maxInFlight: number;
  };
  const latencies: number[] = [];
  const lengths = new Map<number, number>();
  let non200 = 0;
  let mismatched = 0;
  for (const a of out.answers) {
    if (a.status !== 200) {
      non200++;
      continue;
    }
    const known = lengths.get(a.t);
    if (known === undefined) lengths.set(a.t, a.bytes);
    else if (known !== a.bytes) mismatched++;
    const k = (a.t - anchor * 25) / SEGMENT_TICKS;
    const sent = sentAt.get(k * PARTS_PER_SEGMENT + PARTS_PER_SEGMENT - 1);
    if (sent !== undefined) latencies.push(a.at - sent);
  }
  latencies.sort((x, y) => x - y);
  return {
    clients,
    seconds,
    answers: out.answers.length,
    non200,
    mismatched,
    maxInFlight: out.maxInFlight,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    maxMs: latencies.at(-1) ?? NaN,
    workerRssStartMb: Math.round(rssStart),
    workerRssMaxMb: Math.round(rssMax),
  };
}
