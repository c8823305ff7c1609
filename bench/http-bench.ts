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

import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { main as originCli } from '../origin/cli/main';
import { machine, machineLine } from './machine';
import { concatCopies, ensureLongSourcesReport, httpBenchSpecs, repoRoot } from './media';
import { dashUrls, fetchUrl, hlsUrls, smoothUrls, TrackUrls } from './http-urls';

export interface HttpBenchOptions {
  seconds?: number;
  soakSeconds?: number;
  log?: (line: string) => void;
}

const CPUS = os.availableParallelism();
const PIN = CPUS >= 2 && spawnSync('taskset', ['-V']).status === 0;
/** CPU sets: the servers on the last CPU, wrk on the first (one-process runs). */
const SERVER_CPU = String(CPUS - 1);
const LOAD_CPU = '0';

// ---------------------------------------------------------------------------------------------
// processes

interface Proc {
  child: ChildProcess;
  url: string;
  pid: number;
}

function pinned(cpus: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return PIN && cpus !== undefined ? ['taskset', ['-c', cpus, cmd, ...args]] : [cmd, args];
}

/** Starts a process and waits for the first `http://host:port` it prints on stdout. */
function startPrinting(
  cpus: string | undefined,
  cmd: string,
  args: string[],
  pattern = /(http:\/\/[\d.]+:\d+)/,
): Promise<Proc> {
  const [c, a] = pinned(cpus, cmd, args);
  const child = spawn(c, a, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) =>
      reject(new Error(`${cmd} ${args.join(' ')} exited (${code}) before listening: ${err}`)),
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m !== null && out.includes('\n')) {
        child.removeAllListeners('exit');
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ child, url: m[1]!, pid: child.pid! });
      }
    });
  });
}

function stop(p: Proc | undefined): Promise<void> {
  if (p === undefined || p.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.child.once('exit', () => resolve());
    p.child.kill('SIGTERM');
  });
}

function originCliPath(): string {
  return process.env['BENCH_ORIGIN_CLI'] ?? path.join(repoRoot(), 'bin', 'origin.js');
}

function startOrigin(root: string, workers: number, extra: string[] = []): Promise<Proc> {
  const args = [
    originCliPath(),
    'serve',
    '--root',
    root,
    '--port',
    '0',
    '--no-player',
    '-q',
    ...(workers > 1 ? ['--workers', String(workers)] : []),
    ...extra,
  ];
  return startPrinting(workers > 1 ? undefined : SERVER_CPU, process.execPath, args);
}

/** RSS in bytes of a process and, for a cluster primary, of its workers. */
function rssOf(pid: number): { pid: number; rss: number }[] {
  const one = (p: number): number => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m === null ? 0 : Number(m[1]) * 1024;
    } catch {
      return 0;
    }
  };
  const children = (p: number): number[] => {
    try {
      return readFileSync(`/proc/${p}/task/${p}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter((x) => x !== '')
        .map(Number);
    } catch {
      return [];
    }
  };
  // Through taskset the pid is exec'd in place, so the child pid is node's.
  return [pid, ...children(pid)].map((p) => ({ pid: p, rss: one(p) }));
}

// ---------------------------------------------------------------------------------------------
// wrk

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  mbps: number;
  bytesPerRequest: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
}

const LUA_DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"bytes":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;

let scriptCount = 0;

/** wrk against `base` + paths (cycled per connection when more than one). */
function wrk(
  base: string,
  paths: string[],
  connections: number,
  seconds: number,
  threads = 1,
  cpus: string | undefined = LOAD_CPU,
): WrkResult {
  const dir = path.join(os.tmpdir(), `http-bench-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const script = path.join(dir, `s${scriptCount++}.lua`);
  const lua =
    paths.length === 1
      ? LUA_DONE
      : `local paths = {${paths.map((p) => JSON.stringify(p)).join(',')}}\nlocal i = math.random(#paths)\nrequest = function()\n  i = i % #paths + 1\n  return wrk.format("GET", paths[i])\nend\n${LUA_DONE}`;
  writeFileSync(script, lua);
  const [cmd, args] = pinned(cpus, 'wrk', [
    '-t',
    String(threads),
    '-c',
    String(connections),
    '-d',
    `${seconds}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    base + paths[0],
  ]);
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`wrk: ${r.error.message} (install it: apt-get install -y wrk)`);
  const m = /WRKJSON (\{.*\})/.exec(r.stdout);
  if (m === null) throw new Error(`wrk printed no result: ${r.stdout}\n${r.stderr}`);
  const j = JSON.parse(m[1]!) as Record<string, number>;
  const secs = j['durationUs']! / 1e6;
  return {
    requests: j['requests']!,
    seconds: Number(secs.toFixed(2)),
    rps: Math.round(j['requests']! / secs),
    mbps: Number((j['bytes']! / secs / 1e6).toFixed(1)),
    bytesPerRequest: Math.round(j['bytes']! / Math.max(1, j['requests']!)),
    latencyMs: { p50: j['p50']! / 1000, p90: j['p90']! / 1000, p99: j['p99']! / 1000, max: j['max']! / 1000 },
    errors: {
      connect: j['connect']!,
      read: j['read']!,
      write: j['write']!,
      status: j['status']!,
      timeout: j['timeout']!,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// references

const NODE_REFERENCE = `
const http = require('node:http');
const body = Buffer.alloc(Number(process.argv[1]), 0x61);
http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
  res.end(body);
}).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port); });
`;

function startNodeReference(bytes: number): Promise<Proc> {
  return startPrinting(SERVER_CPU, process.execPath, ['-e', NODE_REFERENCE, String(bytes)]);
}

async function startNginx(root: string, workers: number, dir: string): Promise<Proc> {
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes ${workers};\n${workers === 1 && PIN ? `worker_cpu_affinity ${'1'.padEnd(CPUS, '0').split('').reverse().join('')};\n` : ''}daemon off;\nmaster_process on;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\n` +
      `events { worker_connections 4096; }\nhttp {\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n  keepalive_requests 10000000;\n  keepalive_timeout 65;\n` +
      `  client_body_temp_path ${dir}/tmp; proxy_temp_path ${dir}/tmp; fastcgi_temp_path ${dir}/tmp; uwsgi_temp_path ${dir}/tmp; scgi_temp_path ${dir}/tmp;\n` +
      `  default_type application/octet-stream;\n  server { listen 127.0.0.1:${port}; root ${root}; }\n}\n`,
  );
  mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  const child = spawn('nginx', ['-c', conf, '-e', `${dir}/error.log`], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.once('error', () => undefined);
  for (let i = 0; i < 100; i++) {
    await sleep(50);
    if (child.exitCode !== null)
      throw new Error(`nginx exited (${child.exitCode}); install it: apt-get install -y nginx`);
    const ok = await fetchUrl(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (ok) return { child, url: `http://127.0.0.1:${port}`, pid: child.pid! };
  }
  throw new Error('nginx did not start');
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// media

async function packageIsm(out: string, files: string[]): Promise<void> {
  if (existsSync(out)) return;
  const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
  const code = await originCli(['package', '-q', '-o', out, ...files], quiet, quiet);
  if (code !== 0) throw new Error(`packaging ${out} failed (exit ${code})`);
}

async function prepareMedia(log: (line: string) => void): Promise<{ dir: string; longDir: string; details: unknown }> {
  const report = await ensureLongSourcesReport(0.5, { specs: httpBenchSpecs(30), log: (l) => log(`[media] ${l}`) });
  const dir = path.join(repoRoot(), 'bench', '.cache', 'http');
  mkdirSync(dir, { recursive: true });
  await packageIsm(path.join(dir, 'b.ism'), report.files);
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

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The run with the median req/s. */
const medianRun = (xs: WrkResult[]): WrkResult => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;

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
      const wrkCpus = w === 1 ? LOAD_CPU : undefined;
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
            wrk(origin.url, [p], C, 1, 1, wrkCpus);
            wrk(ref.url, ['/'], C, 1, 1, wrkCpus);
            for (let round = 0; round < 3; round++) {
              rounds.origin.push(wrk(origin.url, [p], C, seconds, 1, wrkCpus));
              rounds.reference.push(wrk(ref.url, ['/'], C, seconds, 1, wrkCpus));
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
        wrk(origin.url, [p], C, 1, 1, wrkCpus);
        (runs[`manifest/${kind}`] ??= {})[`origin-${w}w`] = wrk(origin.url, [p], C, seconds, 1, wrkCpus);
      }
      for (const [kind, ps] of Object.entries(urls.segments)) {
        wrk(origin.url, ps, C, 1, 1, wrkCpus);
        (runs[`segment/${kind}`] ??= {})[`origin-${w}w`] = wrk(origin.url, ps, C, seconds, 1, wrkCpus);
      }
      await stop(origin);
      const nginx = await startNginx(staticDir, w, path.join(dir, 'nginx'));
      try {
        for (const [kind, ps] of Object.entries(staticPaths)) {
          wrk(nginx.url, ps, C, 1, 1, wrkCpus);
          (runs[`segment/${kind}`] ??= {})[`nginx-${w}w`] = wrk(nginx.url, ps, C, seconds, 1, wrkCpus);
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
            wrk(base, [...ps], 8, 1, 1, undefined);
            (edgeRuns[kind] ??= {})[target] = wrk(base, [...ps], 8, seconds, 1, undefined);
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
      wrk(origin.url, mix, 16, 2, 1, undefined);
      const rssStart = rssOf(origin.pid);
      // In slices, RSS read between them: whether memory levels off after the warm-up or keeps
      // growing shows in the series, not in two points.
      const slices = Math.max(1, Math.round(soakSeconds / 10));
      const parts: WrkResult[] = [];
      const rssSeries: { afterSeconds: number; rss: { pid: number; rss: number }[] }[] = [];
      for (let i = 0; i < slices; i++) {
        parts.push(wrk(origin.url, mix, 256, Math.max(1, Math.round(soakSeconds / slices)), 2, undefined));
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

/** Several wrk runs as one: counts summed, rates over the summed time, latency of the worst slice. */
function sumRuns(parts: WrkResult[]): WrkResult {
  const requests = parts.reduce((n, x) => n + x.requests, 0);
  const seconds = parts.reduce((n, x) => n + x.seconds, 0);
  const bytes = parts.reduce((n, x) => n + x.bytesPerRequest * x.requests, 0);
  const worst = (k: 'p50' | 'p90' | 'p99' | 'max'): number => Math.max(...parts.map((x) => x.latencyMs[k]));
  const errors = { connect: 0, read: 0, write: 0, status: 0, timeout: 0 };
  for (const x of parts) for (const k of Object.keys(errors) as (keyof typeof errors)[]) errors[k] += x.errors[k];
  return {
    requests,
    seconds: Number(seconds.toFixed(2)),
    rps: Math.round(requests / seconds),
    mbps: Number((bytes / seconds / 1048576).toFixed(1)),
    bytesPerRequest: requests === 0 ? 0 : Math.round(bytes / requests),
    latencyMs: { p50: worst('p50'), p90: worst('p90'), p99: worst('p99'), max: worst('max') },
    errors,
  };
}

function printTable(r: Record<string, unknown>, log: (line: string) => void): void {
  const runs = r['runs'] as Record<string, Record<string, WrkResult>>;
  type Long = { median: number; readyMs: { median: number } };
  const cold = r['cold'] as {
    manifests: Record<string, { median: number }>;
    longMpd2h: Long;
    longMpd2hWithoutWarmUp: Long;
  };
  const mb = (x: number): string => (x / 1048576).toFixed(0);
  log('');
  log('| what | target | req/s | p50 ms | p99 ms | MB/s | errors + non-2xx | reference req/s (MB/s) | ratio |');
  log('|---|---|--:|--:|--:|--:|--:|--:|--:|');
  for (const [what, targets] of Object.entries(runs)) {
    const seg = what.startsWith('segment/');
    for (const [t, x] of Object.entries(targets)) {
      if (t.startsWith('nginx') || t === 'node-fixed-body') continue;
      const w = t.replace('origin-', '');
      const ref = seg ? targets[`nginx-${w}`] : targets['node-fixed-body'];
      const ratio = ref === undefined ? '' : seg ? (x.mbps / ref.mbps).toFixed(2) : (x.rps / ref.rps).toFixed(2);
      const errs = Object.values(x.errors).reduce((a, b) => a + b, 0);
      log(
        `| ${what} | ${t} | ${x.rps} | ${x.latencyMs.p50.toFixed(2)} | ${x.latencyMs.p99.toFixed(2)} | ${x.mbps} | ${errs} | ${ref === undefined ? '' : `${ref.rps} (${ref.mbps})`} | ${ratio} |`,
      );
    }
  }
  log('');
  log(
    `cold (first request after start, median of 3): ${Object.entries(cold.manifests)
      .map(([k, v]) => `${k} ${v.median} ms`)
      .join(
        ', ',
      )}; 2-hour MPD ${cold.longMpd2h.median} ms (ready ${cold.longMpd2h.readyMs.median} ms after spawn); without the warm-up ${cold.longMpd2hWithoutWarmUp.median} ms (ready after ${cold.longMpd2hWithoutWarmUp.readyMs.median} ms)`,
  );
  const unc = r['uncached'] as Record<string, WrkResult> | undefined;
  if (unc !== undefined)
    log(
      `uncached manifests (--manifest-cache-bytes 0, 1 connection): ${Object.entries(unc)
        .map(([k, v]) => `${k} ${v.rps} req/s p50 ${v.latencyMs.p50.toFixed(2)} ms`)
        .join(', ')}`,
    );
  const uncLoaded = r['uncachedLoaded'] as Record<string, WrkResult> | undefined;
  if (uncLoaded !== undefined)
    log(
      `uncached manifests (--manifest-cache-bytes 0, ${(r['settings'] as { connections: number }).connections} connections, one worker): ${Object.entries(
        uncLoaded,
      )
        .map(([k, v]) => `${k} ${v.rps} req/s p50 ${v.latencyMs.p50.toFixed(2)} ms`)
        .join(', ')}`,
    );
  const inProcess = r['edgeInProcess'] as { runs: Record<string, Record<string, WrkResult[]>> } | undefined;
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  if (inProcess !== undefined) {
    for (const [k, v] of Object.entries(inProcess.runs)) {
      const d = v['direct']!.map((x) => x.rps);
      const e = v['edge']!.map((x) => x.rps);
      const ratios = d.map((x, i) => e[i]! / x);
      log(
        `edge in the origin process ${k}: direct ${d.join('/')} req/s, through the filter ${e.join('/')} req/s (rounds ${ratios.map((x) => x.toFixed(2)).join('/')}×, median ${median(ratios).toFixed(2)}×)`,
      );
    }
  }
  const edge = r['edge'] as { runs: Record<string, Record<string, WrkResult>> };
  for (const [k, v] of Object.entries(edge.runs))
    log(
      `edge as a second process ${k}: direct ${v['direct']!.rps} req/s, through \`origin edge\` ${v['edge']!.rps} req/s (${(v['edge']!.rps / v['direct']!.rps).toFixed(2)}×)`,
    );
  const every = r['everyUrl'] as {
    requests: number;
    bad: number;
    seconds: number;
    rssBefore: { rss: number }[];
    rssAfter: { rss: number }[];
    rssAfterRuns?: number[];
  };
  const walks =
    every.rssAfterRuns === undefined ? '' : `; the three walks ${every.rssAfterRuns.map(mb).join(' / ')} MB`;
  log(
    `every URL (${every.requests}, ${every.bad} not 200 in all walks, ${every.seconds} s): RSS ${mb(every.rssBefore[0]!.rss)} → ${mb(every.rssAfter[0]!.rss)} MB (one worker, median walk${walks})`,
  );
  const rounds = (
    r['manifestRounds'] as { rounds: Record<string, { origin: number[]; reference: number[] }> } | undefined
  )?.rounds;
  if (rounds !== undefined)
    log(
      `warm manifests, one worker, alternate runs origin/reference req/s: ${Object.entries(rounds)
        .map(([k, v]) => `${k} ${v.origin.map((x, i) => `${x}/${v.reference[i]}`).join(', ')}`)
        .join('; ')}`,
    );
  const soak = r['soak'] as {
    wrk: WrkResult;
    rssStart: { pid: number; rss: number }[];
    rssEnd: { pid: number; rss: number }[];
    workers: number;
    seconds: number;
  };
  const se = soak.wrk.errors;
  log(
    `soak (${soak.workers} workers, 256 connections, ${soak.seconds} s): ${soak.wrk.requests} requests, ${soak.wrk.rps} req/s, ${soak.wrk.mbps} MB/s, errors connect ${se.connect} read ${se.read} write ${se.write} timeout ${se.timeout}, non-2xx ${se.status}; RSS MB start ${soak.rssStart.map((x) => mb(x.rss)).join('/')} end ${soak.rssEnd.map((x) => mb(x.rss)).join('/')}`,
  );
  const series = (r['soak'] as { rssSeries?: { afterSeconds: number; rss: { rss: number }[] }[] }).rssSeries;
  if (series !== undefined)
    log(
      `soak RSS MB by time (primary/workers): ${series.map((x) => `${x.afterSeconds} s ${x.rss.map((y) => mb(y.rss)).join('/')}`).join(', ')}`,
    );
}
