// Remote storage benchmark (`proxy_pass`, origin/io/remote/): the same presentation served from
// local files and through nginx as HTTP storage, in the same run, interleaved, as ratios:
//  - cold first manifest: a fresh `origin serve` process, its first `.mpd` (the .ism and five
//    indexes read: from disk, or with HEADs and range reads over loopback HTTP);
//  - segments: wrk over every DASH segment of two renditions, after one warm pass (indexes known;
//    each remote segment still makes its range reads, with If-Match);
//  - connections to storage under load: `--workers 2`, `proxy_connections: 16`, wrk with 256
//    connections; the established connections to nginx sampled from /proc/net/tcp every 100 ms
//    (the bound is workers × proxy_connections = 32).
// The presentation is the http suite's (3 H.264 renditions up to 720p and 2 AAC tracks, 30 min).

import { spawn } from 'node:child_process';
import { promises as fs, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main as originCli } from '../origin/cli/main';
import { fetchUrl, dashUrls } from './http-urls';
import { Proc, sleep, startNginx, startOrigin, stop } from './http-processes';
import { machine, machineLine } from './machine';
import { ensureLongSourcesReport, httpBenchSpecs, repoRoot } from './media';
import { median, UNPINNED_LOAD, wrk, WrkResult } from './wrk';

export interface RemoteBenchOptions {
  rounds?: number;
  seconds?: number;
  log?: (line: string) => void;
}

const PROXY_CONNECTIONS = 16;

interface SegmentFigures {
  urls: number;
  bytesPerRequest: number;
  localRps: number;
  remoteRps: number;
  ratio: number;
  localMBps: number;
  remoteMBps: number;
  errors: number;
  rounds: number;
}

interface ConnectionFigures {
  workers: number;
  proxyConnections: number;
  bound: number;
  clientConnections: number;
  maxStorageConnections: number;
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
  for (const f of report.files) await fs.symlink(f, path.join(storage, 'm', path.basename(f)));
  const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
  const names = report.files.map((f) => path.join(storage, 'm', path.basename(f)));
  if ((await originCli(['package', '-q', '-o', path.join(storage, 'm', 'b.ism'), ...names], quiet, quiet)) !== 0)
    throw new Error('packaging failed');
  const nginx = await startNginx(storage, 1, path.join(tmp, 'nginx'));
  const empty = path.join(tmp, 'empty');
  await fs.mkdir(empty);
  const config = path.join(tmp, 'origin.yaml');
  writeFileSync(
    config,
    `locations:\n  - prefix: /r/\n    proxy_pass: ${nginx.url}/\n    proxy_connections: ${PROXY_CONNECTIONS}\n`,
  );
  const startLocal = (workers = 1): Promise<Proc> => startOrigin(storage, workers);
  const startRemote = (workers = 1): Promise<Proc> => startOrigin(empty, workers, ['--config', config]);
  try {
    const cold = await coldManifests(rounds, startLocal, startRemote);
    log(`remote: cold first .mpd local ${cold.localMs} ms, remote ${cold.remoteMs} ms (medians of ${rounds})`);
    const segments = await segmentRuns(Math.max(3, Math.ceil(rounds / 2)), seconds, startLocal, startRemote);
    const connections = await connectionsUnderLoad(nginx, startRemote, seconds * 2);
    const result = {
      suite: 'remote',
      date: new Date().toISOString(),
      machine: machine(),
      coldFirstManifest: cold,
      segments,
      connections,
    };
    log(
      `remote: segments ${segments.remoteRps} req/s remote, ${segments.localRps} local (ratio ${segments.ratio}), ` +
        `${segments.remoteMBps} / ${segments.localMBps} MB/s, ${segments.errors} errors`,
    );
    log(
      `remote: under ${connections.clientConnections} client connections, 2 workers: at most ` +
        `${connections.maxStorageConnections} connections to storage (bound ${connections.bound}), ${connections.rps} req/s`,
    );
    const out = path.join(repoRoot(), 'bench', 'results', 'remote.json');
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await stop(nginx);
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** Time to the first `.mpd` of a fresh process, local then remote, `rounds` times (medians, ms). */
async function coldManifests(
  rounds: number,
  startLocal: () => Promise<Proc>,
  startRemote: () => Promise<Proc>,
): Promise<{ localMs: number; remoteMs: number; ratio: number }> {
  const local: number[] = [];
  const remote: number[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const [start, prefix, into] of [
      [startLocal, '', local],
      [startRemote, '/r', remote],
    ] as const) {
      const p = await start();
      try {
        const t0 = process.hrtime.bigint();
        const r = await fetchUrl(`${p.url}${prefix}/m/b.ism/.mpd`);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r.status !== 200) throw new Error(`${prefix}/m/b.ism/.mpd: HTTP ${r.status} ${r.body}`);
        into.push(ms);
      } finally {
        await stop(p);
      }
    }
  }
  const [l, r] = [median(local), median(remote)];
  return { localMs: round1(l), remoteMs: round1(r), ratio: round2(r / l) };
}

/** wrk over the DASH segments of two renditions, local and remote alternating (medians). */
async function segmentRuns(
  rounds: number,
  seconds: number,
  startLocal: () => Promise<Proc>,
  startRemote: () => Promise<Proc>,
): Promise<SegmentFigures> {
  const local = await startLocal();
  const remote = await startRemote();
  try {
    const tracks = await dashUrls(`${local.url}/m/b.ism/.mpd`);
    const video = tracks.filter((t) => t.video).sort((a, b) => a.bitrate - b.bitrate)[1]!;
    const audio = tracks.find((t) => !t.video)!;
    const paths = [...video.segments, ...audio.segments].map((u) => new URL(u).pathname + new URL(u).search);
    // One warm pass each: the indexes are read, the first reads are not in the figures.
    for (const p of paths) {
      const [a, b] = await Promise.all([fetchUrl(local.url + p), fetchUrl(`${remote.url}/r${p}`)]);
      if (a.status !== 200 || b.status !== 200 || !a.body.equals(b.body)) throw new Error(`${p}: not the same bytes`);
    }
    const runs: { local: WrkResult[]; remote: WrkResult[] } = { local: [], remote: [] };
    for (let i = 0; i < rounds; i++) {
      runs.local.push(wrk(local.url, paths, 16, seconds));
      runs.remote.push(
        wrk(
          remote.url,
          paths.map((p) => `/r${p}`),
          16,
          seconds,
        ),
      );
    }
    const rps = (xs: WrkResult[]): number => median(xs.map((x) => x.rps));
    const mbps = (xs: WrkResult[]): number => median(xs.map((x) => x.mbps));
    const errors = [...runs.local, ...runs.remote].reduce((n, x) => n + x.errors.status + x.errors.read, 0);
    return {
      urls: paths.length,
      bytesPerRequest: runs.local[0]!.bytesPerRequest,
      localRps: rps(runs.local),
      remoteRps: rps(runs.remote),
      ratio: round2(rps(runs.remote) / rps(runs.local)),
      localMBps: mbps(runs.local),
      remoteMBps: mbps(runs.remote),
      errors,
      rounds,
    };
  } finally {
    await stop(local);
    await stop(remote);
  }
}

/** The most connections to storage at once while 256 clients load two workers. */
async function connectionsUnderLoad(
  nginx: Proc,
  startRemote: (workers: number) => Promise<Proc>,
  seconds: number,
): Promise<ConnectionFigures> {
  const port = Number(new URL(nginx.url).port);
  const remote = await startRemote(2);
  try {
    const tracks = await dashUrls(`${remote.url}/r/m/b.ism/.mpd`);
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
      rps: load.rps,
      errors: load.errors,
    };
  } finally {
    await stop(remote);
  }
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
