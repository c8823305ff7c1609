// Ingest bench (issue 21): one origin (`origin serve --workers 2 --ingest-port`, the built CLI in
// its own process) ingesting N channels while simulated readers poll them.
//
// - Each channel: 3 video renditions (video_baseline_400k, video_main_900k, video_high_1600k) and
//   audio (audio_eng_64k), pushed as CMAF, one long POST per track, by the test encoder
//   (test/helpers/test-encoder.ts) replaying the fixtures' 2 s fragments at real time: fragment g
//   leaves when the wall clock reaches its end on the UTC timeline the replay starts at. No
//   encoding: the encoders cost the bench process little.
// - Readers: per channel one probe polling `<ch>.isml/archive` every PROBE_MS, and LOAD_READERS
//   polling every second (players refreshing). The live manifests are not on main yet; /archive is
//   what a worker answers from its fragment table (origin/live/fragment-table.ts), the same
//   freshness path.
// - Ingest-to-available latency of a fragment: from the moment its last byte was handed to the
//   socket to the first probe answer whose range covers it (so it includes up to PROBE_MS of
//   polling). A fragment never seen by the end of the run (plus a grace) is dropped.
// - N holds when p99 < one fragment duration (2 s) and no fragment was dropped. N doubles from 1
//   until it does not hold (or BENCH_INGEST_MAX). BENCH_INGEST_SECONDS: run length per N (20).

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadFixture, TestEncoder } from '../test/helpers/test-encoder';
import { startLiveOrigin } from './live-origin';
import { machine, machineLine } from './machine';
import { repoRoot } from './media';
import { percentileOfSorted as percentile } from './stats';

const FRAGMENT_MS = 2000;
const PROBE_MS = 100;
const LOAD_READERS = 2;
const GRACE_MS = 4000;
const TRACKS = [
  ['video_baseline_400k.ismv', 'video-400k.cmfv'],
  ['video_main_900k.ismv', 'video-900k.cmfv'],
  ['video_high_1600k.ismv', 'video-1600k.cmfv'],
  ['audio_eng_64k.isma', 'audio-64k.cmfa'],
] as const;

interface RunResult {
  channels: number;
  fragments: number;
  seen: number;
  dropped: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  readerRequests: number;
  holds: boolean;
}

function get(url: string, agent: http.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      })
      .on('error', reject);
  });
}

/** One run: N channels for `seconds`; the origin is fresh for each run. */
async function runChannels(n: number, seconds: number, isml: string): Promise<RunResult> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'origin-ingest-bench-'));
  mkdirSync(path.join(root, 'live'));
  for (let c = 0; c < n; c++) copyFileSync(isml, path.join(root, 'live', `ch${c}.isml`));
  const origin = await startLiveOrigin(root, { workers: 2 });
  const fixtures = TRACKS.map(([file]) => loadFixture(path.join(repoRoot(), 'fixtures', 'media', file)));
  const count = Math.floor((seconds * 1000) / FRAGMENT_MS);
  const anchor = Math.floor(Date.now() / 1000) + 1;
  const startMs = anchor * 1000;
  /** `<ch>/<track>/<g>` → when its last byte left, and when a probe first saw it. */
  const sentAt = new Map<string, number>();
  const seenAt = new Map<string, number>();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let readerRequests = 0;
  let stop = false;
  const encoders = [];
  for (let c = 0; c < n; c++)
    for (const [k, [, stream]] of TRACKS.entries()) {
      const enc = new TestEncoder({
        channelUrl: `${origin.ingest}/live/ch${c}.isml`,
        stream,
        fixture: fixtures[k]!,
        anchorSeconds: anchor,
      });
      encoders.push(
        (async () => {
          await enc.open();
          for (let g = 0; g < count; g++) {
            // A fragment leaves once its end is reached on the wall clock, as an encoder's would.
            const due = startMs + (g + 1) * FRAGMENT_MS;
            await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
            await enc.send(g, g + 1);
            sentAt.set(`${c}/${stream}-1/${g}`, performance.now());
          }
          return enc.close(true);
        })(),
      );
    }
  /** Per track, each fragment's [time, end) on the replay's timeline: what a range must cover. */
  const spans = fixtures.map((f, k) => {
    const enc = new TestEncoder({ channelUrl: '', stream: TRACKS[k]![1], fixture: f, anchorSeconds: anchor });
    return Array.from({ length: count }, (_, g) => {
      const x = enc.fragment(g);
      return { start: x.time, end: x.time + x.duration };
    });
  });
  const probe = async (c: number): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      try {
        const body = JSON.parse(await get(`${origin.url}/live/ch${c}.isml/archive`, agent)) as {
          tracks: Array<{ track: string; ranges: Array<{ start: string; end: string }> }>;
        };
        readerRequests++;
        const at = performance.now();
        for (const t of body.tracks) {
          const k = TRACKS.findIndex(([, s]) => `${s}-1` === t.track);
          const ranges = t.ranges.map((r) => ({ start: BigInt(r.start), end: BigInt(r.end) }));
          spans[k]?.forEach((f, g) => {
            const key = `${c}/${t.track}/${g}`;
            if (!seenAt.has(key) && ranges.some((r) => r.start <= f.start && f.end <= r.end)) seenAt.set(key, at);
          });
        }
      } catch {
        // A refused or cut request: the next poll tries again.
      }
      await new Promise((r) => setTimeout(r, Math.max(0, PROBE_MS - (performance.now() - t0))));
    }
  };
  const load = async (c: number): Promise<void> => {
    while (!stop) {
      await get(`${origin.url}/live/ch${c}.isml/archive`, agent).catch(() => undefined);
      readerRequests++;
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  const readers = [];
  for (let c = 0; c < n; c++) {
    readers.push(probe(c));
    for (let r = 0; r < LOAD_READERS; r++) readers.push(load(c));
  }
  const answers = await Promise.all(encoders);
  await new Promise((r) => setTimeout(r, GRACE_MS));
  stop = true;
  await Promise.all(readers);
  agent.destroy();
  origin.child.kill('SIGTERM');
  await new Promise((r) => origin.child.once('exit', r));
  rmSync(root, { recursive: true, force: true });
  const latencies: number[] = [];
  let dropped = answers.filter((a) => a.status !== 200).length;
  for (const [key, sent] of sentAt) {
    const seen = seenAt.get(key);
    if (seen === undefined) dropped++;
    else latencies.push(Math.max(0, seen - sent));
  }
  latencies.sort((a, b) => a - b);
  const p99 = percentile(latencies, 99);
  return {
    channels: n,
    fragments: sentAt.size,
    seen: latencies.length,
    dropped,
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(p99),
    maxMs: Math.round(latencies[latencies.length - 1] ?? NaN),
    readerRequests,
    holds: dropped === 0 && p99 < FRAGMENT_MS,
  };
}

export async function runIngestBench(): Promise<unknown> {
  const seconds = Number(process.env.BENCH_INGEST_SECONDS ?? 20);
  const max = Number(process.env.BENCH_INGEST_MAX ?? 64);
  const work = mkdtempSync(path.join(os.tmpdir(), 'origin-ingest-bench-isml-'));
  const isml = path.join(work, 'ch.isml');
  const made = spawnSync(process.execPath, [path.join(repoRoot(), 'bin', 'origin.js'), 'package', '-q', '-o', isml]);
  if (made.status !== 0) throw new Error(`origin package: ${made.stderr.toString()}`);
  console.log(`ingest: ${machineLine()}; ${seconds} s per run, 4 tracks a channel, probe every ${PROBE_MS} ms`);
  const runs: RunResult[] = [];
  for (let n = 1; n <= max; n *= 2) {
    const r = await runChannels(n, seconds, isml);
    runs.push(r);
    console.log(
      `  N=${String(n).padStart(3)}: ${r.fragments} fragments, dropped ${r.dropped}, latency p50 ${r.p50Ms} ms p99 ${r.p99Ms} ms max ${r.maxMs} ms, ${r.readerRequests} reader requests: ${r.holds ? 'holds' : 'MISS'}`,
    );
    if (!r.holds) break;
  }
  rmSync(work, { recursive: true, force: true });
  const held = runs.filter((r) => r.holds).pop()?.channels ?? 0;
  console.log(`ingest: the largest N that holds (p99 < ${FRAGMENT_MS} ms, nothing dropped): ${held}`);
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    // The machine is shared: its load when the runs ended says how busy it was.
    loadAverage: os.loadavg()[0],
    seconds,
    probeMs: PROBE_MS,
    loadReaders: LOAD_READERS,
    runs,
    largestHolding: held,
  };
  writeFileSync(path.join(repoRoot(), 'bench', 'results', 'ingest.json'), JSON.stringify(result, null, 2) + '\n');
  return result;
}
