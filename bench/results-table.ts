// The current figures of every suite, rendered from bench/results/*.json into one Markdown table
// between the `bench-results` markers of bench/README.md. The JSON files are the record; the table
// is generated, and test/docs/bench-results.test.ts checks that the README holds what this renders.
//
//   node dist/bench/results-table.js          rewrite the table in bench/README.md
//   node dist/bench/results-table.js --check  exit 1 when the README's table is not current

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A suite's JSON, read loosely: the generator names the fields it uses. */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const BEGIN = '<!-- bench-results -->';
export const END = '<!-- /bench-results -->';

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const fixed = (n: number, digits: number): string => n.toFixed(digits);
const join = (xs: readonly string[]): string => xs.join(' / ');

interface Row {
  suite: string;
  measurement: string;
  figure: string;
  target: string;
}

/** Rows of a suite that records its own targets (index, filter, edge-plugin). */
function targetRows(suite: string, j: Json): Row[] {
  return ((j.targets ?? []) as Json[]).map((t) => ({
    suite,
    measurement: `${t.target} (${t.basis})`,
    figure: `${t.measured} ${t.unit}`,
    target: `≤ ${t.limit}${t.pass ? '' : ' **MISS**'}`,
  }));
}

const MANIFESTS = ['smooth', 'mpd', 'hls-master', 'hls-media'];
const SEGMENTS = ['smooth', 'dash', 'hls-fmp4', 'hls-ts'];

function httpRows(j: Json): Row[] {
  const cached = MANIFESTS.map((m) => {
    const r = j.manifestRounds.rounds[m];
    return fixed(median(r.origin) / median(r.reference), 2);
  });
  const uncachedP50 = MANIFESTS.map((m) => fixed(j.uncached[m].latencyMs.p50, 2));
  const segments = SEGMENTS.map((s) => {
    const r = j.runs[`segment/${s}`];
    return fixed(r['origin-1w'].mbps / r['nginx-1w'].mbps, 2);
  });
  const edge = ['manifest/mpd', 'segment/dash'].map((k) => {
    const r = j.edgeInProcess.runs[k];
    return fixed(median((r.edge as Json[]).map((e, i) => e.rps / r.direct[i].rps)), 2);
  });
  const cold = j.cold;
  const rss = (j.everyUrl.rssAfterRuns as number[]).map((b) => b / 2 ** 20);
  const soak = j.soak;
  const soakErrors = Object.values(soak.wrk.errors as Record<string, number>).reduce((a, b) => a + b, 0);
  return [
    {
      suite: 'http',
      measurement:
        'cached manifests, 1 worker, 32 connections: req/s ÷ node:http with a fixed body of the same size, medians of alternating runs (Smooth / MPD / HLS master / media playlist)',
      figure: join(cached),
      target: '≥ 0.8',
    },
    {
      suite: 'http',
      measurement: 'uncached manifests: p50 on 1 connection, ms (Smooth / MPD / HLS master / media playlist)',
      figure: join(uncachedP50),
      target: '≤ 1',
    },
    {
      suite: 'http',
      measurement:
        'segments, 1 worker, 32 connections, 60 rotating: MB/s ÷ nginx static on the same bytes (Smooth / DASH / HLS fMP4 / TS); the 64-connection figures are the `segments` suite’s',
      figure: join(segments),
      target: '≥ 0.5 (TS ≥ 0.35)',
    },
    {
      suite: 'http',
      measurement:
        'edge in the origin process (`serve --edge-config`) ÷ direct, median of the rounds (cached MPD / DASH segment)',
      figure: join(edge),
      target: '≥ 0.7',
    },
    {
      suite: 'http',
      measurement: 'first MPD of a 2-hour presentation after start, with the default warm-up / without, ms',
      figure: `${fixed(cold.longMpd2h.median, 1)} / ${fixed(cold.longMpd2hWithoutWarmUp.median, 1)}`,
      target: '≤ 50',
    },
    {
      suite: 'http',
      measurement: `RSS after every URL of the presentation (${j.everyUrl.requests}), one worker, median of ${rss.length} walks, MiB`,
      figure: fixed(median(rss), 0),
      target: '≤ 200',
    },
    {
      suite: 'http',
      measurement: `${soak.connections} connections, ${soak.seconds} s, mixed, ${soak.workers} workers: requests / errors`,
      figure: `${soak.wrk.requests} / ${soakErrors}`,
      target: 'no errors',
    },
  ];
}

const SEGMENT_KINDS = ['smooth', 'dash', 'hls-fmp4', 'hls-ts', 'packed-audio', 'iframe-ts', 'hds'];

/** Median over the rounds of a ratio of two servers' runs (bench/segments-bench.ts roundRatio). */
function roundRatio(a: Json[], b: Json[], field: string): number {
  return median(a.map((x, i) => x[field] / b[i]![field]));
}

function segmentsRows(j: Json): Row[] {
  const runs = j.runs as Record<string, Record<string, Json[]>>;
  const of = (kind: string, server: string): Json[] => runs[kind]![server]!;
  const hasBefore = runs['hls-ts']!['before'] !== undefined;
  const cpu = (server: string): string =>
    join(['hls-ts', 'hls-fmp4'].map((k) => fixed(median(of(k, server).map((x) => x.cpuMsPerRequest)), 3)));
  const coalesced = j.coalesced.runs as Record<string, Record<string, Json[]>>;
  const walks = j.everyUrl.walks as Record<string, Json[]>;
  const tsOverFmp4 = roundRatio(of('hls-ts', 'origin'), of('hls-fmp4', 'origin'), 'mbps');
  const rss = (name: string): string => fixed(median(walks[name]!.map((w) => w.rss)) / 2 ** 20, 0);
  const rows: Row[] = [
    {
      suite: 'segments',
      measurement:
        '60 distinct segments rotated, 64 connections, 1 worker: MB/s ÷ nginx static on the same bytes, median of the rounds (Smooth / DASH / HLS fMP4 / TS / packed audio / I-frame TS / HDS)',
      figure: join(SEGMENT_KINDS.map((k) => fixed(roundRatio(of(k, 'origin'), of(k, 'nginx'), 'mbps'), 2))),
      target: '',
    },
    {
      suite: 'segments',
      measurement: 'the same: TS MB/s ÷ our own HLS fMP4 MB/s on the same media',
      figure: fixed(tsOverFmp4, 2),
      target: `≥ 0.95${tsOverFmp4 >= 0.95 ? '' : ' **MISS**'}`,
    },
    {
      suite: 'segments',
      measurement: `server CPU per request, ms (TS / HLS fMP4)${hasBefore ? ', this build; the build before' : ''}`,
      figure: hasBefore ? `${cpu('origin')}; ${cpu('before')}` : cpu('origin'),
      target: '',
    },
  ];
  if (hasBefore)
    rows.push({
      suite: 'segments',
      measurement:
        'MB/s ÷ the build before, same rounds (Smooth / DASH / HLS fMP4 / TS / packed audio / I-frame TS / HDS)',
      figure: join(SEGMENT_KINDS.map((k) => fixed(roundRatio(of(k, 'origin'), of(k, 'before'), 'mbps'), 2))),
      target: '',
    });
  if (hasBefore)
    rows.push({
      suite: 'segments',
      measurement:
        'server CPU per request ÷ the build before, same rounds (Smooth / DASH / HLS fMP4 / TS / packed audio / I-frame TS / HDS)',
      figure: join(SEGMENT_KINDS.map((k) => fixed(roundRatio(of(k, 'origin'), of(k, 'before'), 'cpuMsPerRequest'), 2))),
      target: '',
    });
  rows.push(
    {
      suite: 'segments',
      measurement:
        'Smooth fragments ÷ nginx (MB/s): hot single URL (coalesced) at 64 / at 32 connections; 60 rotating at 32 / at 64',
      figure: join([
        ...['hot-64', 'hot-32', 'rotating-32'].map((k) =>
          fixed(roundRatio(coalesced[k]!['origin']!, coalesced[k]!['nginx']!, 'mbps'), 2),
        ),
        fixed(roundRatio(of('smooth', 'origin'), of('smooth', 'nginx'), 'mbps'), 2),
      ]),
      target: '',
    },
    {
      suite: 'segments',
      measurement: `RSS after every URL (${j.everyUrl.urls}), fresh one-worker server, MiB${walks['before'] !== undefined ? ': this build / the build before' : ''}`,
      figure: walks['before'] !== undefined ? `${rss('origin')} / ${rss('before')}` : rss('origin'),
      target: '≤ 200',
    },
  );
  return rows;
}

function tsRows(j: Json): Row[] {
  const r = j.results;
  return [
    {
      suite: 'ts',
      measurement: 'MB/s through the request handler: TS / fMP4 / TS writer alone',
      figure: join([r.ts, r.fmp4, r.tsWriterAlone].map((x: Json) => fixed(x.throughputMBs.median, 0))),
      target: '',
    },
  ];
}

function drmRows(j: Json): Row[] {
  const r = j.results;
  return [
    {
      suite: 'drm',
      measurement: 'DASH segments through the request handler, MB/s: clear / cenc / cbcs (one process)',
      figure: join([r.clear, r.cenc, r.cbcs].map((x: Json) => fixed(x.throughputMBs.median, 0))),
      target: '',
    },
    {
      suite: 'drm',
      measurement:
        'encrypted over clear, repeated requests (kept layouts), median of the passes’ own ratios: cenc / cbcs (MB/s of wall time; per CPU-second)',
      figure: `${join([j.ratios.cencOverClear, j.ratios.cbcsOverClear].map((x: number) => fixed(x, 2)))}; ${join(
        [j.ratios.cpu.cencOverClear, j.ratios.cpu.cbcsOverClear].map((x: number) => fixed(x, 2)),
      )}`,
      target: 'cenc ≥ 0.4, cbcs ≥ 0.2',
    },
    ...(j.ratios.cencFirstOverClear === undefined
      ? []
      : [
          {
            suite: 'drm',
            measurement:
              'the same for first requests (no kept layouts): cenc / cbcs (MB/s of wall time; per CPU-second)',
            figure: `${join([j.ratios.cencFirstOverClear, j.ratios.cbcsFirstOverClear].map((x: number) => fixed(x, 2)))}; ${join(
              [j.ratios.cpu.cencFirstOverClear, j.ratios.cpu.cbcsFirstOverClear].map((x: number) => fixed(x, 2)),
            )}`,
            target: '',
          },
        ]),
    {
      suite: 'drm',
      measurement:
        'the same with a warm encrypted-segment cache (`--encrypted-segment-cache-bytes`, off by default): cenc / cbcs over clear',
      figure: join([j.ratios.cencCachedOverClear, j.ratios.cbcsCachedOverClear].map((x: number) => fixed(x, 2))),
      target: '',
    },
  ];
}

function edgeRows(j: Json): Row[] {
  const runs = j.throughput.runs as Json[];
  const rps = (target: string): number => median(runs.filter((r) => r.target === target).map((r) => r.load.rps));
  return [
    {
      suite: 'edge',
      measurement: 'one pass-through request through `build/edge.wasm` in the host, µs (median / p95)',
      figure: `${fixed(j.hostOverhead.wasm.median, 2)} / ${fixed(j.hostOverhead.wasm.p95, 2)}`,
      target: '',
    },
    {
      suite: 'edge',
      measurement: 'cached MPD, `origin edge` as a second process: req/s through the edge / direct',
      figure: `${fixed(rps('edge'), 0)} / ${fixed(rps('direct'), 0)}`,
      target: '',
    },
  ];
}

function remoteRows(j: Json): Row[] {
  const c = j.connections;
  const s3 = j.s3 as Json | undefined;
  const reads = (g: Json): string =>
    g.storageReadsPerRequest === undefined ? '' : `; ${fixed(g.storageReadsPerRequest, 2)} storage reads per segment`;
  return [
    {
      suite: 'remote',
      measurement:
        'proxy_pass to nginx ÷ local files, same run: cold first MPD time (5 indexes) / segment req/s (medians)',
      figure: `${fixed(j.coldFirstManifest.ratio, 2)} / ${fixed(j.segments.ratio, 2)}${reads(j.segments)}`,
      target: '',
    },
    ...(s3 === undefined
      ? []
      : [
          {
            suite: 'remote',
            measurement: 'proxy_pass to S3 (s3rver) ÷ local files, same run: cold first MPD time / segment req/s',
            figure: `${fixed(s3.coldFirstManifest.ratio, 2)} / ${fixed(s3.segments.ratio, 2)}${reads(s3.segments)}`,
            target: '',
          },
        ]),
    {
      suite: 'remote',
      measurement: `connections to storage at most, ${c.clientConnections} client connections, ${c.workers} workers × proxy_connections ${c.proxyConnections}${s3 === undefined ? '' : ' (nginx / s3rver)'}`,
      figure:
        s3 === undefined
          ? String(c.maxStorageConnections)
          : `${c.maxStorageConnections} / ${s3.connections.maxStorageConnections}`,
      target: `≤ ${c.bound}`,
    },
  ];
}

function ingestRows(j: Json): Row[] {
  const runs = j.runs as Json[];
  const held = runs.filter((r) => r.holds === true).pop();
  return [
    {
      suite: 'ingest',
      measurement: `largest N channels (3 video + audio each, real time) that holds: p99 ingest-to-available < 2 s, none dropped; p50 / p99 ms at that N (readers poll /archive every ${j.probeMs} ms)`,
      figure: held === undefined ? '0' : `${held.channels} (${held.p50Ms} / ${held.p99Ms})`,
      target: '',
    },
  ];
}

function captureRows(j: Json): Row[] {
  return [
    {
      suite: 'capture',
      measurement: `origin capture of ${j.seconds} s of 720p + AAC from a local origin, × real time, next to ffmpeg -c copy of the same URL; peak RSS capture / ffmpeg (MiB)`,
      figure: `${fixed(j.captureRealTime.median, 0)}× vs ${fixed(j.ffmpegRealTime.median, 0)}× (${fixed(j.speedRatioMedian, 2)}); ${j.capturePeakRssMiB} / ${j.ffmpegPeakRssMiB}`,
      target: '',
    },
  ];
}

function llHlsRows(j: Json): Row[] {
  return [
    {
      suite: 'll-hls',
      measurement: `${j.clients} clients looping on LL-HLS blocking reloads, one worker (it ingests too), ${j.seconds} s: answers later than one part (320 ms) after the part's arrival, after the first second; p50 / p99 / slowest ms; first second: late, slowest ms`,
      figure: `${j.late} of ${j.answers - j.warmUpAnswers}; ${j.p50Ms} / ${j.p99Ms} / ${j.maxMs}; ${j.warmUpLate}, ${j.warmUpMaxMs}`,
      target: '0',
    },
  ];
}

function identityRows(j: Json): Row[] {
  const kinds = j.kinds as Record<string, { segments: number; identical: number }>;
  const names = ['hls-ts', 'packed-audio', 'iframe-ts', 'hds'];
  return [
    {
      suite: 'identity',
      measurement:
        'generated segments of the segments presentation byte-identical to the build before, identical / all (TS / packed audio / I-frame TS / HDS)',
      figure: join(names.map((k) => `${kinds[k]!.identical}/${kinds[k]!.segments}`)),
      target: 'all',
    },
  ];
}

/** The table, from the JSON files in `dir` (bench/results). */
export function resultsTable(dir: string): string {
  const read = (suite: string): Json => JSON.parse(readFileSync(path.join(dir, `${suite}.json`), 'utf8')) as Json;
  const rows: Row[] = [
    ...targetRows('index', read('index')),
    ...targetRows('filter', read('filter')),
    ...httpRows(read('http')),
    ...segmentsRows(read('segments')),
    ...identityRows(read('identity')),
    ...tsRows(read('ts')),
    ...drmRows(read('drm')),
    ...edgeRows(read('edge')),
    ...targetRows('edge-plugin', read('edge-plugin')),
    ...remoteRows(read('remote')),
    ...ingestRows(read('ingest')),
    ...captureRows(read('capture')),
    ...llHlsRows(read('ll-hls')),
  ];
  const dates = [
    'index',
    'filter',
    'http',
    'segments',
    'identity',
    'ts',
    'drm',
    'edge',
    'edge-plugin',
    'remote',
    'ingest',
    'capture',
    'll-hls',
  ].map((s) => `${s} ${read(s).date.slice(0, 10)}`);
  return [
    `Runs: ${dates.join(', ')}.`,
    '',
    '| suite | measurement | figure | target |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.suite} | ${r.measurement} | ${r.figure} | ${r.target} |`),
  ].join('\n');
}

/** `readme` with the text between the markers replaced by `table`. */
export function withTable(readme: string, table: string): string {
  const a = readme.indexOf(BEGIN);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`bench/README.md has no ${BEGIN} … ${END} block`);
  return `${readme.slice(0, a + BEGIN.length)}\n${table}\n${readme.slice(b)}`;
}

if (require.main === module) {
  const bench = path.join(__dirname, '..', '..', 'bench');
  const readmePath = path.join(bench, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const next = withTable(readme, resultsTable(path.join(bench, 'results')));
  if (process.argv.includes('--check')) {
    if (next !== readme) {
      process.stderr.write('bench/README.md: the results table is not current (node dist/bench/results-table.js)\n');
      process.exit(1);
    }
  } else if (next !== readme) writeFileSync(readmePath, next);
}
