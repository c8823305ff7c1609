// Remote storage benchmark (`proxy_pass`, origin/io/remote/): the same presentation served from
// local files, through nginx as HTTP storage and through s3rver as S3 storage (s3-storage.ts), in
// the same run, interleaved, as ratios to local:
//  - cold first manifest: a fresh `origin serve` process, its first `.mpd` (the .ism and five
//    indexes read: from disk, or with HEADs and range reads over loopback HTTP);
//  - segments: wrk over every DASH segment of two renditions, after one warm pass (indexes known;
//    each remote segment still makes its range read, with If-Match), and the storage reads per
//    segment request (the origin's /metrics before and after);
//  - connections to storage under load: `--workers 2`, `proxy_connections: 16`, wrk with 256
//    connections; the established connections to the storage sampled from /proc/net/tcp every
//    100 ms (the bound is workers × proxy_connections = 32).
// The presentation is the http suite's (3 H.264 renditions up to 720p and 2 AAC tracks, 30 min).

import { spawn } from 'node:child_process';
import { promises as fs, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main as originCli } from '../origin/cli/main';
import { fetchUrl, dashUrls } from './http-urls';
import { Proc, sleep, startNginx, startOrigin, stop } from './http-processes';
import { machine, machineLine } from './machine';
import { ensureLongSourcesReport, httpBenchSpecs, repoRoot } from './media';
import { s3Env, startS3Storage } from './s3-storage';
import { median, UNPINNED_LOAD, wrk, WrkResult } from './wrk';

export interface RemoteBenchOptions {
  rounds?: number;
  seconds?: number;
  log?: (line: string) => void;
}

const PROXY_CONNECTIONS = 16;

/** The storages, each a location of the remote origin's configuration. */
const BACKENDS = [
  { name: 'http', prefix: '/r' },
  { name: 's3', prefix: '/s' },
] as const;
type Backend = (typeof BACKENDS)[number]['name'];

interface SegmentFigures {
  urls: number;
  bytesPerRequest: number;
  localRps: number;
  remoteRps: number;
  ratio: number;
  localMBps: number;
  remoteMBps: number;
  /** Storage exchanges per segment request during the timed runs (from /metrics). */
  storageReadsPerRequest: number;
  errors: number;
  rounds: number;
}

interface ColdFigures {
  localMs: number;
  remoteMs: number;
  ratio: number;
}

interface ConnectionFigures {
  workers: number;
  proxyConnections: number;
  bound: number;
  clientConnections: number;
  maxStorageConnections: number;
  /** Connections to the storage before the origin started (left by earlier runs; 0 normally). */
  connectionsBefore: number;
  rps: number;
  errors: WrkResult['errors'];
}

export async function runRemoteBench(opts: RemoteBenchOptions = {}): Promise<unknown> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const rounds = opts.rounds ?? 5;
  const seconds = opts.seconds ?? 5;
  log(`remote: ${machineLine()}`);
  const report = await ensureLongSourcesReport(0.5, { specs: httpBenchSpecs(30), log: (l) => log(`[media] ${l}`) });
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'remote-bench-'));
  // nginx's workers run as another user (mkdtemp makes the directory 0700).
  await fs.chmod(tmp, 0o755);
  const storage = path.join(tmp, 'storage');
  await fs.mkdir(path.join(storage, 'm'), { recursive: true });
  // Hard links (a copy across file systems): the origin serves no symbolic link out of its root.
  for (const f of report.files) await linkOrCopy(await fs.realpath(f), path.join(storage, 'm', path.basename(f)));
  const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
  const names = report.files.map((f) => path.join(storage, 'm', path.basename(f)));
  if ((await originCli(['package', '-q', '-o', path.join(storage, 'm', 'b.ism'), ...names], quiet, quiet)) !== 0)
    throw new Error('packaging failed');
  const nginx = await startNginx(storage, 1, path.join(tmp, 'nginx'));
  const s3 = await startS3Storage(storage, 'media', path.join(tmp, 's3rver'));
  const empty = path.join(tmp, 'empty');
  await fs.mkdir(empty);
  const config = path.join(tmp, 'origin.yaml');
  writeFileSync(
    config,
    `locations:\n  - prefix: /r/\n    proxy_pass: ${nginx.url}/\n    proxy_connections: ${PROXY_CONNECTIONS}\n` +
      `  - prefix: /s/\n    proxy_pass: s3://media/\n    s3_endpoint: ${s3.endpoint}\n    s3_url_style: path\n` +
      `    proxy_connections: ${PROXY_CONNECTIONS}\n`,
  );
  const saved = { ...process.env };
  Object.assign(process.env, s3Env);
  const startLocal = (workers = 1): Promise<Proc> => startOrigin(storage, workers);
  const startRemote = (workers = 1): Promise<Proc> => startOrigin(empty, workers, ['--config', config]);
  try {
    const cold = await coldManifests(rounds, startLocal, startRemote);
    for (const b of BACKENDS)
      log(
        `remote: cold first .mpd local ${cold[b.name].localMs} ms, ${b.name} ${cold[b.name].remoteMs} ms (medians of ${rounds})`,
      );
    const segments = await segmentRuns(Math.max(3, Math.ceil(rounds / 2)), seconds, startLocal, startRemote);
    const ports = { http: Number(new URL(nginx.url).port), s3: s3.port };
    const connections = {
      http: await connectionsUnderLoad(ports.http, '/r', startRemote, seconds * 2),
      s3: await connectionsUnderLoad(ports.s3, '/s', startRemote, seconds * 2),
    };
    const result = {
      suite: 'remote',
      date: new Date().toISOString(),
      machine: machine(),
      coldFirstManifest: cold.http,
      segments: segments.http,
      connections: connections.http,
      s3: { coldFirstManifest: cold.s3, segments: segments.s3, connections: connections.s3 },
    };
    for (const b of BACKENDS) {
      const [g, c] = [segments[b.name], connections[b.name]];
      log(
        `remote: ${b.name} segments ${g.remoteRps} req/s, local ${g.localRps} (ratio ${g.ratio}), ` +
          `${g.remoteMBps} / ${g.localMBps} MB/s, ${g.storageReadsPerRequest} storage reads per request, ${g.errors} errors`,
      );
      log(
        `remote: ${b.name} under ${c.clientConnections} client connections, 2 workers: at most ` +
          `${c.maxStorageConnections} connections to storage (bound ${c.bound}), ${c.rps} req/s`,
      );
    }
    const out = path.join(repoRoot(), 'bench', 'results', 'remote.json');
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    for (const k of Object.keys(s3Env)) if (saved[k] === undefined) delete process.env[k];
    Object.assign(process.env, saved);
    await stop(nginx);
    await s3.stop();
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await fs.link(from, to);
  } catch {
    await fs.copyFile(from, to);
  }
}

/**
 * Time to the first `.mpd` of a fresh process, local then each storage, `rounds` times (medians,
 * ms; the ratio is of the medians).
 */
async function coldManifests(
  rounds: number,
  startLocal: () => Promise<Proc>,
  startRemote: () => Promise<Proc>,
): Promise<Record<Backend, ColdFigures>> {
  const times: Record<'local' | Backend, number[]> = { local: [], http: [], s3: [] };
  const runs: [name: 'local' | Backend, start: () => Promise<Proc>, prefix: string][] = [
    ['local', startLocal, ''],
    ...BACKENDS.map((b): [Backend, () => Promise<Proc>, string] => [b.name, startRemote, b.prefix]),
  ];
  for (let i = 0; i < rounds; i++) {
    for (const [name, start, prefix] of runs) {
      const p = await start();
      try {
        const t0 = process.hrtime.bigint();
        const r = await fetchUrl(`${p.url}${prefix}/m/b.ism/.mpd`);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r.status !== 200) throw new Error(`${prefix}/m/b.ism/.mpd: HTTP ${r.status} ${r.body}`);
        times[name].push(ms);
      } finally {
        await stop(p);
      }
    }
  }
  const l = median(times.local);
  const of = (b: Backend): ColdFigures => ({
    localMs: round1(l),
    remoteMs: round1(median(times[b])),
    ratio: round2(median(times[b]) / l),
  });
  return { http: of('http'), s3: of('s3') };
}

/** Storage exchanges a remote origin made so far, per backend (its /metrics, summed over outcomes). */
async function storageExchanges(url: string): Promise<Record<Backend, number>> {
  const body = (await fetchUrl(`${url}/metrics`)).body.toString();
  const count = (b: Backend): number =>
    [...body.matchAll(new RegExp(`^origin_storage_requests_total\\{backend="${b}",[^}]*\\} (\\d+)$`, 'gm'))].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  return { http: count('http'), s3: count('s3') };
}

/** wrk over the DASH segments of two renditions, local and each storage alternating (medians). */
async function segmentRuns(
  rounds: number,
  seconds: number,
  startLocal: () => Promise<Proc>,
  startRemote: () => Promise<Proc>,
): Promise<Record<Backend, SegmentFigures>> {
  const local = await startLocal();
  const remote = await startRemote();
  try {
    const tracks = await dashUrls(`${local.url}/m/b.ism/.mpd`);
    const video = tracks.filter((t) => t.video).sort((a, b) => a.bitrate - b.bitrate)[1]!;
    const audio = tracks.find((t) => !t.video)!;
    const paths = [...video.segments, ...audio.segments].map((u) => new URL(u).pathname + new URL(u).search);
    // One warm pass each: the indexes are read, the first reads are not in the figures.
    for (const p of paths) {
      const [a, ...rs] = await Promise.all([
        fetchUrl(local.url + p),
        ...BACKENDS.map((b) => fetchUrl(`${remote.url}${b.prefix}${p}`)),
      ]);
      for (const b of rs)
        if (a.status !== 200 || b.status !== 200 || !a.body.equals(b.body)) throw new Error(`${p}: not the same bytes`);
    }
    const runs: Record<'local' | Backend, WrkResult[]> = { local: [], http: [], s3: [] };
    const exchanges: Record<Backend, number> = { http: 0, s3: 0 };
    for (let i = 0; i < rounds; i++) {
      runs.local.push(wrk(local.url, paths, 16, seconds));
      for (const b of BACKENDS) {
        const before = await storageExchanges(remote.url);
        runs[b.name].push(
          wrk(
            remote.url,
            paths.map((p) => `${b.prefix}${p}`),
            16,
            seconds,
          ),
        );
        exchanges[b.name] += (await storageExchanges(remote.url))[b.name] - before[b.name];
      }
    }
    const rps = (xs: WrkResult[]): number => median(xs.map((x) => x.rps));
    const mbps = (xs: WrkResult[]): number => median(xs.map((x) => x.mbps));
    const errors = (xs: WrkResult[]): number => xs.reduce((n, x) => n + x.errors.status + x.errors.read, 0);
    const of = (b: Backend): SegmentFigures => ({
      urls: paths.length,
      bytesPerRequest: runs.local[0]!.bytesPerRequest,
      localRps: rps(runs.local),
      remoteRps: rps(runs[b]),
      // The median of each round's own ratio (local and remote measured next to each other).
      ratio: round2(median(runs[b].map((x, i) => x.rps / runs.local[i]!.rps))),
      localMBps: mbps(runs.local),
      remoteMBps: mbps(runs[b]),
      storageReadsPerRequest: round2(
        exchanges[b] /
          Math.max(
            1,
            runs[b].reduce((n, x) => n + x.requests, 0),
          ),
      ),
      errors: errors(runs.local) + errors(runs[b]),
      rounds,
    });
    return { http: of('http'), s3: of('s3') };
  } finally {
    await stop(local);
    await stop(remote);
  }
}

/** The most connections to storage (its port) at once while 256 clients load two workers. */
async function connectionsUnderLoad(
  port: number,
  prefix: string,
  startRemote: (workers: number) => Promise<Proc>,
  seconds: number,
): Promise<ConnectionFigures> {
  // The processes of the runs before may still be closing their connections to the storage: they
  // would be counted as this origin's.
  const before = await quietStorage(port);
  const remote = await startRemote(2);
  try {
    const tracks = await dashUrls(`${remote.url}${prefix}/m/b.ism/.mpd`);
    const paths = tracks.flatMap((t) => t.segments).map((u) => new URL(u).pathname);
    // wrk blocks this process (spawnSync): the sampling runs in a child of its own meanwhile.
    const sampler = spawn(process.execPath, ['-e', SAMPLER, String(port), String(seconds + 2)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let printed = '';
    sampler.stdout.on('data', (d: Buffer) => (printed += d.toString()));
    const sampled = new Promise<number>((resolve) => sampler.once('exit', () => resolve(Number(printed.trim()))));
    await sleep(200);
    const load = wrk(remote.url, paths, 256, seconds, UNPINNED_LOAD);
    const max = await sampled;
    return {
      workers: 2,
      proxyConnections: PROXY_CONNECTIONS,
      bound: 2 * PROXY_CONNECTIONS,
      clientConnections: 256,
      maxStorageConnections: max,
      connectionsBefore: before,
      rps: load.rps,
      errors: load.errors,
    };
  } finally {
    await stop(remote);
  }
}

/** Established connections to 127.0.0.1:`port` now (/proc/net/tcp; the clients' side). */
function storageConnections(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  let n = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[2] === `0100007F:${hex}` && f[3] === '01') n++;
  }
  return n;
}

/** Waits (at most 10 s) until nothing is connected to the storage; the count left. */
async function quietStorage(port: number): Promise<number> {
  for (let i = 0; i < 100 && storageConnections(port) > 0; i++) await sleep(100);
  return storageConnections(port);
}

/**
 * Samples /proc/net/tcp every 100 ms for argv[2] seconds and prints the most established
 * connections whose remote end was 127.0.0.1:argv[1] (the origin's side of its storage connections).
 */
const SAMPLER = `
const fs = require('node:fs');
const hex = Number(process.argv[1]).toString(16).toUpperCase().padStart(4, '0');
let max = 0;
const sample = () => {
  let n = 0;
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\\n').slice(1)) {
    const f = line.trim().split(/\\s+/);
    if (f[2] === '0100007F:' + hex && f[3] === '01') n++;
  }
  max = Math.max(max, n);
};
const timer = setInterval(sample, 100);
setTimeout(() => { clearInterval(timer); console.log(max); }, Number(process.argv[2]) * 1000);
`;

const round1 = (x: number): number => Number(x.toFixed(1));
const round2 = (x: number): number => Number(x.toFixed(2));
