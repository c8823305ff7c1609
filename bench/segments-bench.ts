// Segment benchmark: every segment kind the origin serves, over DISTINCT segments, next to nginx
// serving the same bytes and next to our own fMP4 path, all in one run (issue 26).
//
// - presentation: the `http` suite's b.ism (bench/media.ts httpBenchSpecs(30): 720p/480p/360p
//   H.264 and two AAC tracks, 30 min, 2 s fragments);
// - kinds: Smooth fragment, DASH segment, HLS fMP4, HLS MPEG-TS, packed audio (AAC), I-frame TS
//   and HDS fragment: for each, 60 consecutive segments (from the 100th) of the top rendition,
//   rotated by a wrk Lua script, so that neither request coalescing nor a hot buffer helps;
// - servers: `origin serve` (this build), one worker; with BENCH_BEFORE_CLI=<bin/origin.js of an
//   older build> that build too ("before"); nginx (one worker, sendfile) serving the very same
//   bytes, fetched once from the origin into a temp directory;
// - method: 64 connections, wrk on one CPU and the server pinned to the other; per round, every
//   kind against every server in turn (the servers' order rotated per round), so drift on a shared
//   machine hits all alike; each figure is the median over the rounds, each ratio the median of
//   the rounds' ratios (neighbouring runs). Server CPU per request: utime + stime of the server
//   (and its children) from /proc/<pid>/stat before and after a run, over its requests;
// - coalesced: the hot single URL (the largest of the 60 Smooth fragments) at 64 and at 32
//   connections, and the rotating Smooth fragments at 32, next to nginx: concurrent requests for
//   one URL share one reply in the origin (server/coalesce.ts), so the hot figure is labelled as
//   what it is;
// - memory: RSS of a fresh one-worker server after a walk of every URL of the presentation (every
//   manifest, playlist, init and segment of every format, 8 at a time), and its CPU per request,
//   for each build, alternately.
// Writes bench/results/segments.json. Needs wrk and nginx (apt-get install -y wrk nginx).

import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  cpuSecondsOf,
  Proc,
  PIN,
  rssOf,
  SERVER_CPU,
  LOAD_CPU,
  sleep,
  startNginx,
  startOrigin,
  stop,
  originCliPath,
} from './http-processes';
import { prepareHttpIsm } from './http-bench';
import { dashUrls, fetchUrl, hdsUrls, hlsUrls, smoothUrls, TrackUrls } from './http-urls';
import { machine, machineLine } from './machine';
import { median, wrk, WrkResult } from './wrk';
import { repoRoot } from './media';

export const SEGMENT_KINDS = ['smooth', 'dash', 'hls-fmp4', 'hls-ts', 'packed-audio', 'iframe-ts', 'hds'] as const;
export type SegmentKind = (typeof SEGMENT_KINDS)[number];

const FIRST = 100;
const COUNT = 60;
const CONNECTIONS = 64;

/** One wrk run against one server, with the server's CPU time over it. */
export interface SegmentRun extends WrkResult {
  /** Server CPU (user + system) per request, ms. */
  cpuMsPerRequest: number;
}

interface Server {
  name: string;
  proc: Proc;
  /** Path prefix of the kind's URLs on this server (nginx serves copies under their own names). */
  paths: (kind: string) => string[];
}

function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/** The top rendition's 60 segments of each kind, and every URL of the presentation. */
async function discover(base: string): Promise<{ segments: Record<SegmentKind, string[]>; every: string[] }> {
  const ism = `${base}/b.ism`;
  const smooth = await smoothUrls(`${ism}/Manifest`);
  const dash = await dashUrls(`${ism}/.mpd`);
  const ts = await hlsUrls(`${ism}/.m3u8?hls_client_manifest_version=4`);
  const fmp4 = await hlsUrls(`${ism}/.m3u8?hls_fmp4=true`);
  const fragments = smooth.find((t) => t.video)!.segments.length;
  const hds = await hdsUrls(`${ism}/.f4m`, fragments);
  const top = (l: TrackUrls[], keep: (t: TrackUrls) => boolean): TrackUrls =>
    l.filter(keep).sort((a, b) => b.bitrate - a.bitrate)[0]!;
  const pick = (t: TrackUrls): string[] => t.segments.slice(FIRST, FIRST + COUNT).map(pathOf);
  const video = (t: TrackUrls): boolean => t.video && t.iframes !== true;
  const segments: Record<SegmentKind, string[]> = {
    smooth: pick(top(smooth, video)),
    dash: pick(top(dash, video)),
    'hls-fmp4': pick(top(fmp4, video)),
    'hls-ts': pick(top(ts, video)),
    'packed-audio': pick(top(ts, (t) => !t.video && new URL(t.segments[0]!).pathname.endsWith('.aac'))),
    'iframe-ts': pick(top(ts, (t) => t.iframes === true)),
    hds: pick(top(hds, (t) => t.video)),
  };
  const every = new Set<string>([`${ism}/Manifest`, `${ism}/.mpd`, `${ism}/.m3u8`, `${ism}/.f4m`]);
  for (const list of [smooth, dash, ts, fmp4, hds]) {
    for (const t of list) {
      if (t.init !== undefined) every.add(t.init);
      if (t.name.startsWith('http') && !t.name.includes('Seg1')) every.add(t.name);
      for (const s of t.segments) every.add(s);
    }
  }
  return { segments, every: [...every].map(pathOf) };
}

/** Fetches each path once into `dir/<kind>/<i>.bin`; returns nginx's paths for them. */
async function saveCopies(base: string, dir: string, kind: string, paths: string[]): Promise<string[]> {
  mkdirSync(path.join(dir, kind), { recursive: true });
  const out: string[] = [];
  for (const [i, p] of paths.entries()) {
    const r = await fetchUrl(base + p);
    if (r.status !== 200) throw new Error(`${p}: HTTP ${r.status}`);
    writeFileSync(path.join(dir, kind, `${i}.bin`), r.body);
    out.push(`/${kind}/${i}.bin`);
  }
  return out;
}

/** A wrk run with the server's CPU time before and after. */
function measured(server: Server, paths: string[], connections: number, seconds: number, warmUp = 1): SegmentRun {
  wrk(server.proc.url, paths, connections, warmUp);
  const cpu0 = cpuSecondsOf(server.proc.pid);
  const r = wrk(server.proc.url, paths, connections, seconds);
  const cpu = cpuSecondsOf(server.proc.pid) - cpu0;
  const failed = Object.values(r.errors).reduce((a, b) => a + b, 0);
  if (failed > 0)
    throw new Error(`${server.name} ${paths[0]}: ${failed} errors or non-2xx answers (${JSON.stringify(r.errors)})`);
  return { ...r, cpuMsPerRequest: Number(((cpu * 1000) / Math.max(1, r.requests)).toFixed(3)) };
}

/** One measured run of `paths` on nginx (kept running) or on a fresh origin of the build `cli`. */
async function runKind(
  server: Proc | string,
  o: { name: string; dir: string; paths: string[]; seconds: number },
): Promise<SegmentRun> {
  if (typeof server !== 'string')
    return measured({ name: o.name, proc: server, paths: () => [] }, o.paths, CONNECTIONS, o.seconds);
  const proc = await startOrigin(o.dir, 1, [], server);
  try {
    // A fresh process: 2 s of warm-up so that V8 has optimised the kind's path (DASH measured
    // 0.96 ms of CPU a request after 1 s on a fresh server, 0.75 ms once warm).
    return measured({ name: o.name, proc, paths: () => [] }, o.paths, CONNECTIONS, o.seconds, 2);
  } finally {
    await stop(proc);
  }
}

/** Every URL, 8 at a time; the server's RSS half a second later and its CPU per request. */
async function walk(proc: Proc, urls: string[]): Promise<{ rss: number; cpuMsPerRequest: number; bad: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const cpu0 = cpuSecondsOf(proc.pid);
  let next = 0;
  let bad = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < urls.length) if ((await fetchUrl(proc.url + urls[next++]!, agent)).status !== 200) bad++;
    }),
  );
  agent.destroy();
  const cpu = cpuSecondsOf(proc.pid) - cpu0;
  await sleep(500);
  return {
    rss: rssOf(proc.pid).reduce((s, x) => s + x.rss, 0),
    cpuMsPerRequest: Number(((cpu * 1000) / urls.length).toFixed(3)),
    bad,
  };
}

export interface SegmentsBenchOptions {
  seconds?: number;
  rounds?: number;
  log?: (line: string) => void;
}

export async function runSegmentsBench(options: SegmentsBenchOptions = {}): Promise<Record<string, unknown>> {
  const log = options.log ?? ((line: string) => console.log(line));
  const seconds = options.seconds ?? Number(process.env['BENCH_SECONDS'] ?? 5);
  const rounds = options.rounds ?? Number(process.env['BENCH_ROUNDS'] ?? 3);
  const walks = Number(process.env['BENCH_WALKS'] ?? 1);
  const beforeCli = process.env['BENCH_BEFORE_CLI'];
  const root = repoRoot();
  for (const tool of ['wrk', 'nginx']) {
    if (spawnSync(tool, ['-v']).error !== undefined)
      throw new Error(`${tool} is missing: apt-get install -y wrk nginx`);
  }
  const { dir, details } = await prepareHttpIsm(log);
  log(
    `segments benchmark: ${machineLine()}, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}, ${PIN ? `servers on CPU ${SERVER_CPU}, wrk on CPU ${LOAD_CPU}` : 'no CPU pinning'}`,
  );
  const builds: [string, string][] = [['origin', originCliPath()]];
  if (beforeCli !== undefined) builds.push(['before', beforeCli]);
  const staticDir = mkdtempSync(path.join(os.tmpdir(), 'segments-bench-'));
  // nginx's worker runs as an unprivileged user: the copies must be readable by it.
  chmodSync(staticDir, 0o755);
  const servers: Server[] = [];
  const result: Record<string, unknown> = {
    suite: 'segments',
    date: new Date().toISOString(),
    machine: machine(),
    pinned: PIN,
    settings: {
      seconds,
      rounds,
      connections: CONNECTIONS,
      first: FIRST,
      count: COUNT,
      builds: Object.fromEntries(builds),
    },
    media: details,
  };
  try {
    const first = await startOrigin(dir, 1, [], builds[0]![1]);
    let segments: Record<SegmentKind, string[]>;
    let every: string[];
    const copies: Record<string, string[]> = {};
    try {
      ({ segments, every } = await discover(first.url));
      for (const kind of SEGMENT_KINDS) copies[kind] = await saveCopies(first.url, staticDir, kind, segments[kind]);
    } finally {
      await stop(first);
    }
    const nginx = await startNginx(staticDir, 1, path.join(staticDir, '.nginx'));
    servers.push({ name: 'nginx', proc: nginx, paths: (k) => copies[k]! });
    log(
      `[segments] ${SEGMENT_KINDS.length} kinds × ${builds.length + 1} servers × ${rounds} rounds of ${seconds} s, a fresh origin per run`,
    );

    // runs[kind][server] = one run per round. Each origin run is a fresh one-worker server that
    // serves that kind only, stopped after it: a server that had served other kinds first, or an
    // idle one beside it on the same CPU, is not what the figure is of (see bench/README.md). The
    // kinds' order rotates per round and the servers' order within a kind too.
    const runs: Record<string, Record<string, SegmentRun[]>> = {};
    const orders: string[][] = [];
    for (let round = 0; round < rounds; round++) {
      const kinds = SEGMENT_KINDS.map((_, i) => SEGMENT_KINDS[(i + round) % SEGMENT_KINDS.length]!);
      const names = [...builds.map(([name]) => name), 'nginx'];
      const order = names.map((_, i) => names[(i + round) % names.length]!);
      orders.push([...kinds, '/', ...order]);
      for (const kind of kinds) {
        for (const name of order) {
          const run = await runKind(name === 'nginx' ? nginx : builds.find(([n]) => n === name)![1], {
            name,
            dir,
            paths: name === 'nginx' ? copies[kind]! : segments[kind],
            seconds,
          });
          ((runs[kind] ??= {})[name] ??= []).push(run);
        }
      }
      log(`[segments] round ${round + 1}/${rounds} done (${kinds.join(', ')}; ${order.join(', ')})`);
    }
    result['runs'] = runs;
    result['orders'] = orders;

    // The coalesced figures and the method of the README's claim: the hot single URL at 64 and 32
    // connections, the rotating set at 32, each next to nginx in the same round.
    for (const [name, cli] of builds) {
      const proc = await startOrigin(dir, 1, [], cli);
      servers.push({ name, proc, paths: (k) => segments[k as SegmentKind] });
    }
    const sizes = copies['smooth']!.map((_, i) => statSync(path.join(staticDir, 'smooth', `${i}.bin`)).size);
    const hotIndex = sizes.indexOf(Math.max(...sizes));
    const method: Record<string, Record<string, SegmentRun[]>> = {};
    for (let round = 0; round < Math.min(rounds, 3); round++) {
      for (const [label, connections, pick] of [
        ['hot-64', 64, (p: string[]) => [p[hotIndex]!]],
        ['hot-32', 32, (p: string[]) => [p[hotIndex]!]],
        ['rotating-32', 32, (p: string[]) => p],
      ] as const) {
        for (const s of servers)
          ((method[label] ??= {})[s.name] ??= []).push(measured(s, pick(s.paths('smooth')), connections, seconds));
      }
    }
    result['coalesced'] = {
      note: `Smooth fragment ${hotIndex} of ${sizes.length} (the largest, ${sizes[hotIndex]} bytes) requested by every connection (coalesced: one reply shared by the requests that arrive while it is made), and the rotating set at 32 connections`,
      hotPath: segments.smooth[hotIndex],
      runs: method,
    };
    for (const s of servers) await stop(s.proc);

    // RSS and CPU after a walk of every URL, each build on a fresh server, alternately.
    const memory: Record<string, { rss: number; cpuMsPerRequest: number; bad: number }[]> = {};
    for (let w = 0; w < walks; w++) {
      for (const [name, cli] of w % 2 === 0 ? builds : [...builds].reverse()) {
        const proc = await startOrigin(dir, 1, [], cli);
        try {
          (memory[name] ??= []).push(await walk(proc, every));
        } finally {
          await stop(proc);
        }
      }
    }
    result['everyUrl'] = { urls: every.length, walks: memory };
  } finally {
    for (const s of servers) await stop(s.proc);
    rmSync(staticDir, { recursive: true, force: true });
  }
  printSegments(result, log);
  const outFile = path.join(root, 'bench', 'results', 'segments.json');
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${path.relative(root, outFile)}`);
  return result;
}

/** Median over the rounds of a ratio of two servers' runs (same round: neighbouring runs). */
export function roundRatio(a: SegmentRun[], b: SegmentRun[], of: (r: SegmentRun) => number): number {
  return median(a.map((x, i) => of(x) / of(b[i]!)));
}

function printSegments(r: Record<string, unknown>, log: (line: string) => void): void {
  const runs = r['runs'] as Record<string, Record<string, SegmentRun[]>>;
  const mbps = (x: SegmentRun): number => x.mbps;
  const med = (xs: SegmentRun[], of: (x: SegmentRun) => number): number => median(xs.map(of));
  log('');
  log(
    `| kind | server | req/s | MB/s | kB/req | CPU ms/req | ÷ nginx (MB/s) | ÷ own fMP4 (MB/s) | ÷ before (MB/s) | ÷ before (CPU/req) |`,
  );
  log('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const kind of SEGMENT_KINDS) {
    for (const [name, xs] of Object.entries(runs[kind]!)) {
      const nginx = runs[kind]!['nginx']!;
      const fmp4 = runs['hls-fmp4']![name]!;
      const before = runs[kind]!['before'];
      log(
        `| ${kind} | ${name} | ${med(xs, (x) => x.rps).toFixed(0)} | ${med(xs, mbps).toFixed(0)} | ${(med(xs, (x) => x.bytesPerRequest) / 1000).toFixed(0)} | ${med(xs, (x) => x.cpuMsPerRequest).toFixed(3)} | ${roundRatio(xs, nginx, mbps).toFixed(2)} | ${roundRatio(xs, fmp4, mbps).toFixed(2)} | ${before === undefined || name === 'nginx' ? '' : roundRatio(xs, before, mbps).toFixed(2)} | ${before === undefined || name === 'nginx' ? '' : roundRatio(xs, before, (x) => x.cpuMsPerRequest).toFixed(2)} |`,
      );
    }
  }
  const c = (r['coalesced'] as { runs: Record<string, Record<string, SegmentRun[]>> }).runs;
  log('');
  log(
    'Smooth fragments ÷ nginx (MB/s, median of the rounds): ' +
      Object.entries(c)
        .map(([label, v]) => `${label} ${roundRatio(v['origin']!, v['nginx']!, mbps).toFixed(2)}`)
        .join(', ') +
      ` (rotating-64: ${roundRatio(runs['smooth']!['origin']!, runs['smooth']!['nginx']!, mbps).toFixed(2)})`,
  );
  const m = r['everyUrl'] as { urls: number; walks: Record<string, { rss: number; cpuMsPerRequest: number }[]> };
  log(
    `every URL (${m.urls}), fresh one-worker server: ${Object.entries(m.walks)
      .map(
        ([k, v]) =>
          `${k} RSS ${v.map((x) => (x.rss / 2 ** 20).toFixed(0)).join('/')} MiB, CPU ${v.map((x) => x.cpuMsPerRequest.toFixed(3)).join('/')} ms/req`,
      )
      .join('; ')}`,
  );
}
