// HTTP benchmark: the origin as deployed (`origin serve`, its own process), driven by wrk, with
// references measured in the same run.
//
// - presentation: bench/media.ts httpBenchSpecs(30): 3 H.264 renditions (720p, 480p, 360p) and
//   2 AAC tracks, 30 min, 2 s GOPs, packaged into one .ism (bench/.cache/http/b.ism);
// - manifests (Smooth Manifest, MPD, HLS master, HLS media playlist): cold (first request after
//   start, a fresh process per manifest) and warm (wrk, keep-alive) req/s and p50/p99;
//   reference: a minimal node:http server answering a fixed body of the manifest's size;
// - uncached manifest generation (`--manifest-cache-bytes 0`), one connection;
// - segments (Smooth fragment, DASH segment, HLS fMP4 and TS; 720p, cycling over 60 of them):
//   req/s and MB/s; reference: nginx serving the very same bytes as static files;
// - 1 worker and N workers (`--workers N`);
// - edge: req/s through `origin edge` next to direct for a cached manifest and a segment;
// - memory: RSS after requesting every URL of the presentation (all formats, every segment);
// - soak: 256 connections for 60 s against a mix, errors, non-2xx and RSS at start and end;
// - the first MPD of a 2-hour presentation after start.
// wrk and the servers run on separate CPUs where there are two or more (taskset). Writes
// bench/results/http.json (or http-<label>.json). Needs wrk and nginx: apt-get install -y wrk nginx.
//
// BENCH_ORIGIN_CLI=<bin/origin.js of another build> BENCH_LABEL=before measures another build of
// the origin with the same method (one worker; options it lacks are skipped).

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { main as originCli } from '../origin/cli/main';
import {
  CPUS,
  LOAD_CPU,
  PIN,
  rssOf,
  SERVER_CPU,
  sleep,
  startNginx,
  startNodeReference,
  startOrigin,
  startPrinting,
  stop,
  originCliPath,
} from './http-processes';
import { printTable } from './http-report';
import { machine, machineLine } from './machine';
import { concatCopies } from './ffmpeg';
import { ensureLongSourcesReport, httpBenchSpecs, repoRoot } from './media';
import { dashUrls, fetchUrl, hlsUrls, smoothUrls, TrackUrls } from './http-urls';
import { median, medianRun, PINNED_LOAD, sumRuns, UNPINNED_LOAD, wrk, WrkResult } from './wrk';

export interface HttpBenchOptions {
  seconds?: number;
  soakSeconds?: number;
  log?: (line: string) => void;
}

// ---------------------------------------------------------------------------------------------
// media

async function packageIsm(out: string, files: string[]): Promise<void> {
  if (existsSync(out)) return;
  const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
  const code = await originCli(['package', '-q', '-o', out, ...files], quiet, quiet);
  if (code !== 0) throw new Error(`packaging ${out} failed (exit ${code})`);
}

/** The 30-min presentation `b.ism` (also the `segments` suite's), its directory, its sources and their details. */
export async function prepareHttpIsm(
  log: (line: string) => void,
): Promise<{ dir: string; files: string[]; details: unknown }> {
  const report = await ensureLongSourcesReport(0.5, { specs: httpBenchSpecs(30), log: (l) => log(`[media] ${l}`) });
  const dir = path.join(repoRoot(), 'bench', '.cache', 'http');
  mkdirSync(dir, { recursive: true });
  await packageIsm(path.join(dir, 'b.ism'), report.files);
  return { dir, files: report.files, details: report.details };
}

async function prepareMedia(log: (line: string) => void): Promise<{ dir: string; longDir: string; details: unknown }> {
  const report = await prepareHttpIsm(log);
  const dir = report.dir;
  // The 2-hour presentation: each 30-min source four times over, stream-copied.
  const longDir = path.join(dir, 'long');
  mkdirSync(longDir, { recursive: true });
  const long: string[] = [];
  for (const f of report.files)
    long.push(await concatCopies(f, 4, path.join(longDir, path.basename(f).replace('_30m', '_2h'))));
  await packageIsm(path.join(longDir, 'long.ism'), long);
  return { dir, longDir, details: report.details };
}

// ---------------------------------------------------------------------------------------------

interface Urls {
  manifests: Record<string, string>;
  segments: Record<string, string[]>;
  every: string[];
}

const MANIFESTS: Record<string, string> = {
  smooth: '/b.ism/Manifest',
  mpd: '/b.ism/.mpd',
  'hls-master': '/b.ism/.m3u8',
};
const SEGMENTS_PER_KIND = 60;

function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/** The 720p rendition's segments of each kind, and every URL of the presentation. */
async function discover(base: string): Promise<Urls> {
  const smooth = await smoothUrls(base + MANIFESTS.smooth!);
  const dash = await dashUrls(base + MANIFESTS.mpd!);
  const ts = await hlsUrls(base + MANIFESTS['hls-master']!);
  const fmp4 = await hlsUrls(`${base}/b.ism/.m3u8?hls_fmp4=true`);
  const top = (l: TrackUrls[]): TrackUrls => l.filter((t) => t.video).sort((a, b) => b.bitrate - a.bitrate)[0]!;
  const middle = (t: TrackUrls): string[] => t.segments.slice(100, 100 + SEGMENTS_PER_KIND).map(pathOf);
  const every = new Set<string>(Object.values(MANIFESTS).map((p) => base + p));
  for (const list of [smooth, dash, ts, fmp4]) {
    for (const t of list) {
      if (t.init !== undefined) every.add(t.init);
      if (t.name.startsWith('http')) every.add(t.name);
      for (const s of t.segments) every.add(s);
    }
  }
  const media = top(ts).name;
  return {
    manifests: { ...MANIFESTS, 'hls-media': pathOf(media) },
    segments: {
      smooth: middle(top(smooth)),
      dash: middle(top(dash)),
      'hls-fmp4': middle(top(fmp4)),
      'hls-ts': middle(top(ts)),
    },
    every: [...every].map(pathOf),
  };
}

/** Requests every URL (8 at a time, keep-alive); counts non-200 answers. */
async function requestAll(urls: string[]): Promise<{ requests: number; bad: number; bytes: number; seconds: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  let next = 0;
  let bad = 0;
  let bytes = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < urls.length) {
        const r = await fetchUrl(urls[next++]!, agent);
        if (r.status !== 200) bad++;
        bytes += r.body.byteLength;
      }
    }),
  );
  agent.destroy();
  return {
    requests: urls.length,
    bad,
    bytes,
    seconds: Number((Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)),
  };
}

/** Time of one GET (ms), body read. */
async function timeOne(url: string): Promise<{ ms: number; status: number; bytes: number }> {
  const t0 = process.hrtime.bigint();
  const r = await fetchUrl(url);
  return {
    ms: Number((Number(process.hrtime.bigint() - t0) / 1e6).toFixed(2)),
    status: r.status,
    bytes: r.body.byteLength,
  };
}

function savePaths(dir: string, base: string, paths: string[]): Promise<string[]> {
  return Promise.all(
    paths.map(async (p, i) => {
      const r = await fetchUrl(base + p);
      if (r.status !== 200) throw new Error(`${p}: HTTP ${r.status}`);
      const rel = `${path.basename(dir)}/${i}.bin`;
      writeFileSync(path.join(dir, `${i}.bin`), r.body);
      return `/${rel}`;
    }),
  );
}

export async function runHttpBench(options: HttpBenchOptions = {}): Promise<Record<string, unknown>> {
  const log = options.log ?? ((line: string) => console.log(line));
  const seconds = options.seconds ?? Number(process.env['BENCH_SECONDS'] ?? 5);
  const soakSeconds = options.soakSeconds ?? Number(process.env['BENCH_SOAK_SECONDS'] ?? 60);
  const label = process.env['BENCH_LABEL'];
  const other = process.env['BENCH_ORIGIN_CLI'] !== undefined;
  const root = repoRoot();
  const outFile = path.join(root, 'bench', 'results', label === undefined ? 'http.json' : `http-${label}.json`);
  for (const tool of ['wrk', 'nginx']) {
    if (spawnSync(tool, ['-v']).error !== undefined)
      throw new Error(`${tool} is missing: apt-get install -y wrk nginx`);
  }
  const loadAverageAtStart = os.loadavg().map((x) => Number(x.toFixed(2)));
  const { dir, longDir, details } = await prepareMedia(log);
  const workerCounts = other ? [1] : [...new Set([1, CPUS])];
  const C = 32;
  /** Alternating direct/edge rounds of the in-process edge measurement. */
  const EDGE_ROUNDS = 3;
  const result: Record<string, unknown> = {
    suite: 'http',
    label: label ?? 'current',
    date: new Date().toISOString(),
    machine: machine(),
    loadAverageAtStart,
    pinned: PIN,
    settings: { seconds, soakSeconds, connections: C, segmentsPerKind: SEGMENTS_PER_KIND },
    media: details,
  };
  log(
    `http benchmark: ${machineLine()}, load average at start ${loadAverageAtStart.join(' ')}, ${PIN ? `servers on CPU ${SERVER_CPU}, wrk on CPU ${LOAD_CPU} (one-process runs)` : 'no CPU pinning'}`,
  );

  // --- URLs, static copies of the segments for nginx, the references' sizes
  log('[http] discovering URLs');
  let origin = await startOrigin(dir, 1);
  try {
    await measure();
  } finally {
    await stop(origin);
  }
  async function measure(): Promise<void> {
    const urls = await discover(origin.url);
    log(`[http] ${urls.every.length} URLs; saving the segments for nginx`);
    const staticDir = path.join(dir, 'static');
    const staticPaths: Record<string, string[]> = {};
    for (const [kind, paths] of Object.entries(urls.segments)) {
      mkdirSync(path.join(staticDir, kind), { recursive: true });
      staticPaths[kind] = await savePaths(path.join(staticDir, kind), origin.url, paths);
    }
    const manifestBytes: Record<string, number> = {};
    for (const [kind, p] of Object.entries(urls.manifests))
      manifestBytes[kind] = (await fetchUrl(origin.url + p)).body.byteLength;
    await stop(origin);
    result['urls'] = {
      manifests: urls.manifests,
      segmentsFirst: Object.fromEntries(Object.entries(urls.segments).map(([k, v]) => [k, v[0]])),
      every: urls.every.length,
    };

    log(`[http] cold`);
    // --- cold: the first request after start, a fresh process per manifest
    const cold: Record<string, number[]> = {};
    for (let round = 0; round < 3; round++) {
      for (const [kind, p] of Object.entries(urls.manifests)) {
        origin = await startOrigin(dir, 1);
        const t = await timeOne(origin.url + p);
        (cold[kind] ??= []).push(t.ms);
        await stop(origin);
      }
    }
    // The 2-hour MPD with the default start-up warm-up and without it (--warm-up-rounds 0), with
    // the time from spawn to the printed URL: the warm-up moves work from the first request to
    // the start, and both sides of that trade are reported.
    const long = { warm: [] as number[], none: [] as number[], readyWarm: [] as number[], readyNone: [] as number[] };
    for (let round = 0; round < 3; round++) {
      for (const warm of [true, false]) {
        const t0 = performance.now();
        origin = await startOrigin(longDir, 1, warm ? [] : ['--warm-up-rounds', '0']);
        (warm ? long.readyWarm : long.readyNone).push(Math.round(performance.now() - t0));
        (warm ? long.warm : long.none).push((await timeOne(origin.url + '/long.ism/.mpd')).ms);
        await stop(origin);
      }
    }
    result['cold'] = {
      unit: 'ms, first request after start (3 fresh processes each; median)',
      manifests: Object.fromEntries(Object.entries(cold).map(([k, v]) => [k, { median: median(v), runs: v }])),
      longMpd2h: {
        median: median(long.warm),
        runs: long.warm,
        readyMs: { median: median(long.readyWarm), runs: long.readyWarm },
      },
      longMpd2hWithoutWarmUp: {
        median: median(long.none),
        runs: long.none,
        readyMs: { median: median(long.readyNone), runs: long.readyNone },
      },
    };

    log(`[http] warm`);
    // --- warm manifests and segments, 1 and N workers
    const runs: Record<string, Record<string, WrkResult>> = {};
    const manifestRounds: Record<string, { origin: number[]; reference: number[] }> = {};
    for (const w of workerCounts) {
      origin = await startOrigin(dir, w);
      const wrkLoad = w === 1 ? PINNED_LOAD : UNPINNED_LOAD;
      for (const [kind, p] of Object.entries(urls.manifests)) {
        if (w === 1) {
          // One worker against the node:http reference of the same body size, alternately
          // (origin, reference, three times over, both pinned to the server CPU and only one
          // loaded at a time): on this shared machine either side drifts by ±30 % between runs
          // minutes apart, so each ratio compares neighbouring runs. The median run of each side
          // is the table's figure; every run is kept in manifestRounds.
          const ref = await startNodeReference(manifestBytes[kind]!);
          try {
            const rounds: { origin: WrkResult[]; reference: WrkResult[] } = { origin: [], reference: [] };
            wrk(origin.url, [p], C, 1, wrkLoad);
            wrk(ref.url, ['/'], C, 1, wrkLoad);
            for (let round = 0; round < 3; round++) {
              rounds.origin.push(wrk(origin.url, [p], C, seconds, wrkLoad));
              rounds.reference.push(wrk(ref.url, ['/'], C, seconds, wrkLoad));
            }
            const runsOf = (runs[`manifest/${kind}`] ??= {});
            runsOf['origin-1w'] = medianRun(rounds.origin);
            runsOf['node-fixed-body'] = medianRun(rounds.reference);
            manifestRounds[kind] = {
              origin: rounds.origin.map((x) => x.rps),
              reference: rounds.reference.map((x) => x.rps),
            };
          } finally {
            await stop(ref);
          }
          continue;
        }
        wrk(origin.url, [p], C, 1, wrkLoad);
        (runs[`manifest/${kind}`] ??= {})[`origin-${w}w`] = wrk(origin.url, [p], C, seconds, wrkLoad);
      }
      for (const [kind, ps] of Object.entries(urls.segments)) {
        wrk(origin.url, ps, C, 1, wrkLoad);
        (runs[`segment/${kind}`] ??= {})[`origin-${w}w`] = wrk(origin.url, ps, C, seconds, wrkLoad);
      }
      await stop(origin);
      const nginx = await startNginx(staticDir, w, path.join(dir, 'nginx'));
      try {
        for (const [kind, ps] of Object.entries(staticPaths)) {
          wrk(nginx.url, ps, C, 1, wrkLoad);
          (runs[`segment/${kind}`] ??= {})[`nginx-${w}w`] = wrk(nginx.url, ps, C, seconds, wrkLoad);
        }
      } finally {
        await stop(nginx);
      }
    }
    result['runs'] = runs;
    result['manifestRounds'] = {
      unit: 'req/s, one worker, origin and node:http reference alternately',
      rounds: manifestRounds,
    };

    log(`[http] uncached`);
    // --- uncached manifest generation: cache disabled; latency on one connection, throughput
    // of the worker at C connections (wrk on the other CPU)
    if (!other) {
      const uncached: Record<string, WrkResult> = {};
      const uncachedLoaded: Record<string, WrkResult> = {};
      origin = await startOrigin(dir, 1, ['--manifest-cache-bytes', '0']);
      for (const [kind, p] of Object.entries(urls.manifests)) {
        wrk(origin.url, [p], 1, 1);
        uncached[kind] = wrk(origin.url, [p], 1, seconds);
        uncachedLoaded[kind] = wrk(origin.url, [p], C, seconds);
      }
      await stop(origin);
      result['uncached'] = uncached;
      result['uncachedLoaded'] = uncachedLoaded;
    }

    log(`[http] edge`);
    // --- edge in the origin's process (`origin serve --edge-config`, the real edge.wasm):
    // pinned like the direct origin, C connections, direct and through the filter alternately.
    // Three rounds: the ratio of each round's pair, and their median as the figure (on a shared
    // machine the speed of the CPU drifts between runs a few seconds apart; a pair measured back
    // to back shares the drift).
    {
      const yaml = path.join(root, 'envoy-config', 'envoy.yaml');
      const direct = await startOrigin(dir, 1);
      const inline = await startOrigin(dir, 1, ['--edge-config', yaml]);
      const inProcess: Record<string, Record<string, WrkResult[]>> = {};
      try {
        for (const [kind, ps] of [
          ['manifest/mpd', [urls.manifests.mpd!]],
          ['segment/dash', [urls.segments.dash![0]!]],
        ] as const) {
          for (let round = 0; round < EDGE_ROUNDS; round++) {
            for (const [target, proc] of [
              ['direct', direct],
              ['edge', inline],
            ] as const) {
              wrk(proc.url, [...ps], C, 1);
              ((inProcess[kind] ??= {})[target] ??= []).push(wrk(proc.url, [...ps], C, seconds));
            }
          }
        }
      } finally {
        await stop(inline);
        await stop(direct);
      }
      result['edgeInProcess'] = {
        note: `the filter in the origin process (serve --edge-config); origin pinned to one CPU, wrk to the other; ${EDGE_ROUNDS} alternating rounds, the figure is the median of the rounds' ratios`,
        runs: inProcess,
      };
    }
    // --- edge as a second process: direct next to through `origin edge`, cached MPD and a segment
    {
      origin = await startOrigin(dir, 1);
      const edge = await startPrinting(
        LOAD_CPU,
        process.execPath,
        [
          originCliPath(),
          'edge',
          '--config',
          path.join(root, 'envoy-config', 'envoy.yaml'),
          '--upstream',
          origin.url,
          '--port',
          '0',
          '-q',
        ],
        /listening on (http:\/\/[\d.]+:\d+)/,
      );
      const edgeRuns: Record<string, Record<string, WrkResult>> = {};
      try {
        for (const [kind, ps] of [
          ['manifest/mpd', [urls.manifests.mpd!]],
          ['segment/dash', [urls.segments.dash![0]!]],
        ] as const) {
          for (const [target, base] of [
            ['direct', origin.url],
            ['edge', edge.url],
          ] as const) {
            wrk(base, [...ps], 8, 1, UNPINNED_LOAD);
            (edgeRuns[kind] ??= {})[target] = wrk(base, [...ps], 8, seconds, UNPINNED_LOAD);
          }
        }
      } finally {
        await stop(edge);
        await stop(origin);
      }
      result['edge'] = { note: 'origin pinned to one CPU, edge and wrk share the other', runs: edgeRuns };
    }

    log(`[http] every URL`);
    // --- memory: every URL of the presentation, one worker
    // Three walks, each by a fresh server: the RSS half a second after a walk moves by ±20 MB
    // with when V8 last collected its old generation; the median walk is the figure.
    {
      const walks = [];
      for (let round = 0; round < 3; round++) {
        origin = await startOrigin(dir, 1);
        const before = rssOf(origin.pid);
        const walk = await requestAll(urls.every.map((p) => origin.url + p));
        await sleep(500);
        const after = rssOf(origin.pid);
        await stop(origin);
        walks.push({ ...walk, rssBefore: before, rssAfter: after });
      }
      const byRss = [...walks].sort((a, b) => a.rssAfter[0]!.rss - b.rssAfter[0]!.rss);
      result['everyUrl'] = {
        ...byRss[1]!,
        rssAfterRuns: walks.map((x) => x.rssAfter[0]!.rss),
        bad: walks.reduce((n, x) => n + x.bad, 0),
      };
    }

    log(`[http] soak`);
    // --- soak: 256 connections, a mix of manifests and segments, N workers
    {
      const w = Math.max(...workerCounts);
      origin = await startOrigin(dir, w);
      const mix = [...Object.values(urls.manifests), ...Object.values(urls.segments).flatMap((ps) => ps.slice(0, 15))];
      wrk(origin.url, mix, 16, 2, UNPINNED_LOAD);
      const rssStart = rssOf(origin.pid);
      // In slices, RSS read between them: whether memory levels off after the warm-up or keeps
      // growing shows in the series, not in two points.
      const slices = Math.max(1, Math.round(soakSeconds / 10));
      const parts: WrkResult[] = [];
      const rssSeries: { afterSeconds: number; rss: { pid: number; rss: number }[] }[] = [];
      for (let i = 0; i < slices; i++) {
        parts.push(
          wrk(origin.url, mix, 256, Math.max(1, Math.round(soakSeconds / slices)), { threads: 2, cpus: undefined }),
        );
        rssSeries.push({ afterSeconds: Math.round(((i + 1) * soakSeconds) / slices), rss: rssOf(origin.pid) });
      }
      const rssEnd = rssSeries[rssSeries.length - 1]!.rss;
      await stop(origin);
      result['soak'] = {
        workers: w,
        connections: 256,
        seconds: soakSeconds,
        urls: mix.length,
        wrk: sumRuns(parts),
        slices: parts,
        rssStart,
        rssSeries,
        rssEnd,
      };
    }
    result['loadAverageAtEnd'] = os.loadavg().map((x) => Number(x.toFixed(2)));
  }

  printTable(result, log);
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${path.relative(root, outFile)}`);
  return result;
}
