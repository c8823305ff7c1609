// LL-HLS blocking-reload load (issue 23): `origin serve --workers 1 --ingest-port 0` (the built
// CLI: with one worker, one process ingests and serves), the test encoder pushing the
// LL fixture (test/helpers/ll-hls.ts: 0.32 s parts, 1.92 s segments) at real time on the UTC
// grid, and N clients in their own process (bench/ll-hls-clients.ts) each looping on a blocking
// reload for the next part, spread over the video and audio playlists and SPELLINGS query
// spellings (so that the coalescer does not fold them into two requests).
// - Latency of an answer: from the later of two moments, the encoder handing the part's last byte
//   to the ingest socket and the client writing its request, to the client reading the answer (all
//   on this machine's clock). A request written after its part arrived (a client that fell behind,
//   or whose first playlist was read just before the part came) waits for nothing, so its part's
//   arrival is not when its wait began.
// - Warm-up: the clients read their first playlists, then all begin blocking at once
//   (bench/ll-hls-clients.ts). Answers to requests written in the first WARM_UP_MS of that are
//   counted apart: 2 000 requests arriving together at code the worker has not yet run (V8 has not
//   compiled it) is a start-up transient, not the steady state the acceptance is about. They are
//   reported all the same (warmUp*), and are in the dump.
// - Memory: the worker's RSS, sampled every second (/proc).

import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PARTS_PER_SEGMENT } from '../test/helpers/ll-hls';
import { run } from '../test/helpers/process';
import { cpuSecondsOf, LOAD_CPU, pinned, SERVER_CPU } from './http-processes';
import { CHUNK_MS as PART_MS, feedLl, makeLlChannel } from './ll-feed';
import { startLiveOrigin } from './live-origin';
import { deepestDescendant, rssMb } from './procfs';
import { repoRoot } from './media';
import { percentileOfSorted as percentile } from './stats';

/** Distinct spellings of each playlist URL among the clients. */
const SPELLINGS = 25;

/** From the first blocking request, ms: answers to requests written before are the warm-up. */
export const WARM_UP_MS = 1000;

export interface LlLoadResult {
  clients: number;
  seconds: number;
  answers: number;
  /** Answers whose part the encoder had sent (the others: parts sent before the clients began). */
  matched: number;
  /** Of the answers after the warm-up, those whose request was written before their part arrived. */
  waited: number;
  non200: number;
  maxInFlight: number;
  /** How long the clients' first (not blocking) playlist reads took, all at once, ms. */
  startMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers later than one part duration after their part's arrival (or their request, if later). */
  late: number;
  /** The warm-up's answers (not in the figures above), the slowest of them, and how many were late. */
  warmUpAnswers: number;
  warmUpMaxMs: number;
  warmUpLate: number;
  workerRssStartMb: number;
  workerRssMaxMb: number;
  /** The worker's CPU time (user + system) while the clients ran, s; it ingests too. */
  workerCpuS: number;
  /** That CPU time per answer, µs: the figure a loaded machine's scheduling moves least. */
  workerCpuUsPerAnswer: number;
}

/** One run: `clients` blocking clients for `seconds` against one worker. */
export async function runLlLoad(clients: number, seconds: number): Promise<LlLoadResult> {
  const { root, fx } = await makeLlChannel('origin-ll-load-', 'll', [
    ...['--hls.minimum_fragment_length=48/25', '--hls.fmp4', '--hls.low_latency'],
  ]);
  // The origin on one CPU, the load generator on the other (taskset, as the HTTP benches pin wrk).
  // BENCH_LL_CPU_PROF=<dir>: the origin's processes write V8 CPU profiles there (--cpu-prof).
  const prof = process.env.BENCH_LL_CPU_PROF;
  const nodeFlags = prof === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', prof];
  const origin = await startLiveOrigin(root, { workers: 1, cpus: SERVER_CPU, nodeFlags });
  // The worker: the primary's child (bin/origin.js may sit between: the deepest descendant).
  const worker = (): number => deepestDescendant(origin.child.pid!);
  // On the 1.92 s grid (a multiple of 48 s), 48 to 96 s back: that much is pushed at once, a full window.
  const anchor = Math.floor(Date.now() / 48_000) * 48 - 48;
  const firstMsn = anchor / 1.92;
  const sentAt = new Map<string, number>();
  const feed = feedLl(`${origin.ingest}/live/ll.isml`, fx, anchor, (stream, g) => {
    const key = `${stream[0]}/${firstMsn + Math.floor(g / PARTS_PER_SEGMENT)}/${g % PARTS_PER_SEGMENT}`;
    sentAt.set(key, Date.now());
  });
  // The window is full once the pushers have caught up with the clock.
  await feed.caughtUp();
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
  await feed.stop();
  origin.child.kill('SIGTERM');
  await new Promise((r) => origin.child.once('exit', r));
  if (gen.code !== 0) throw new Error(`load generator: ${gen.stderr}`);
  const out = JSON.parse(gen.stdout) as {
    answers: Array<{ u: number; msn: number; part: number; status: number; asked: number; at: number }>;
    maxInFlight: number;
    startMs: number;
  };
  const latencies: number[] = [];
  const warmUp: number[] = [];
  let non200 = 0;
  let waited = 0;
  const timings: number[][] = [];
  const steady = out.answers.reduce((m, a) => Math.min(m, a.asked), Infinity) + WARM_UP_MS;
  for (const a of out.answers) {
    if (a.status !== 200) {
      non200++;
      continue;
    }
    // A part index past the segment's last names the next segment's first part (rfc8216bis §6.2.5.2).
    const msn = a.part >= PARTS_PER_SEGMENT ? a.msn + 1 : a.msn;
    const part = a.part >= PARTS_PER_SEGMENT ? 0 : a.part;
    const sent = sentAt.get(`${a.u % 2 === 0 ? 'v' : 'a'}/${msn}/${part}`);
    if (sent === undefined) continue;
    timings.push([a.u, msn, part, sent, a.asked, a.at]);
    const latency = a.at - Math.max(sent, a.asked);
    if (a.asked < steady) {
      warmUp.push(latency);
      continue;
    }
    if (a.asked < sent) waited++;
    latencies.push(latency);
  }
  // BENCH_LL_ANSWERS=<file>: every matched answer as [url index, msn, part, sent, asked, at] (ms).
  const dump = process.env.BENCH_LL_ANSWERS;
  if (dump !== undefined) writeFileSync(dump, JSON.stringify(timings));
  latencies.sort((x, y) => x - y);
  return {
    clients,
    seconds,
    answers: out.answers.length,
    matched: timings.length,
    waited,
    non200,
    maxInFlight: out.maxInFlight,
    startMs: out.startMs,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? NaN,
    late: latencies.filter((l) => l > PART_MS).length,
    warmUpAnswers: warmUp.length,
    warmUpMaxMs: warmUp.length === 0 ? NaN : warmUp.reduce((m, l) => Math.max(m, l)),
    warmUpLate: warmUp.filter((l) => l > PART_MS).length,
    workerRssStartMb: Math.round(rssStart),
    workerRssMaxMb: Math.round(rssMax),
    workerCpuS: Math.round(cpu * 10) / 10,
    workerCpuUsPerAnswer: Math.round((cpu * 1e6) / Math.max(1, out.answers.length)),
  };
}
