// LL-DASH chunked-segment load (issue 23): `origin serve --workers 1 --ingest-port 0` (the built
// CLI, its own processes: the primary ingests, one worker serves), the test encoder pushing the
// LL fixture (test/helpers/ll-hls.ts: 0.32 s chunks, 1.92 s segments) at real time on the UTC
// grid, and N clients in their own process (bench/ll-dash-clients.ts) each reading the segment
// being ingested as it grows, then the next. Every client of a segment shares one growing buffer
// in the worker (live/chunked-segment.ts) and waits without a timer or thread of its own.
// - Latency of a segment: from the moment the encoder handed its last chunk to the ingest socket
//   to the moment the client read the end of the response (both on this machine's clock).
// - Memory: the worker's RSS, sampled every second (/proc).

import * as path from 'node:path';
import { PARTS_PER_SEGMENT } from '../test/helpers/ll-hls';
import { run } from '../test/helpers/process';
import { feedLl, makeLlChannel } from './ll-feed';
import { startLiveOrigin } from './live-origin';
import { deepestDescendant, rssMb } from './procfs';
import { repoRoot } from './media';
import { percentileOfSorted as percentile } from './stats';

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

/** One run: `clients` readers of the growing segment for `seconds` against one worker. */
export async function runLlDashLoad(clients: number, seconds: number): Promise<LlDashLoadResult> {
  const { root, fx } = await makeLlChannel('origin-lld-load-', 'lld', [
    ...['--mpd.minimum_fragment_length=48/25', '--mpd.low_latency'],
  ]);
  const origin = await startLiveOrigin(root, { workers: 1 });
  // The worker: the primary's child (bin/origin.js may sit between: the deepest descendant).
  const worker = (): number => deepestDescendant(origin.child.pid!);
  // On the 1.92 s grid (a multiple of 48 s), 48 to 96 s back: that much is pushed at once.
  const anchor = Math.floor(Date.now() / 48_000) * 48 - 48;
  /** When the encoder sent each video chunk, by fragment index from the anchor. */
  const sentAt = new Map<number, number>();
  const feed = feedLl(`${origin.ingest}/live/lld.isml`, fx, anchor, (stream, g) => {
    if (stream.startsWith('video')) sentAt.set(g, Date.now());
  });
  await feed.caughtUp();
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
  await feed.stop();
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
