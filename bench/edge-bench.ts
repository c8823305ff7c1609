// Edge benchmark: what the embedded edge costs per request.
//
// (1) host overhead: the proxy-wasm host (host-glue/proxy-wasm/host.ts) running build/edge.wasm with the
//     shipped envoy-config/envoy.yaml's plugin configuration, its callbacks driven in-process
//     through the HttpFilterStream seam exactly as the proxy drives them for a cached manifest:
//     newStream → requestHeaders (a player's 12 headers, end_of_stream) → responseHeaders (the
//     origin's 9 and x-envoy-upstream-service-time) → responseBody (6 kB, end_of_stream) → end
//     (on_log, on_done, on_delete). Timed in batches; µs per request, median and p95 of the
//     batch means. Floor in the same run: the same sequence through a JavaScript pass-through
//     stream (the seam's promises alone).
// (2) throughput: the origin and the edge each in their own process (as deployed: `origin serve`
//     and `origin edge`), a keep-alive load generator in this one; the same cached MPD asked
//     `connections` at a time for `seconds`, direct then through the edge, alternating `rounds`
//     times. Req/s, latency percentiles, and the edge process's CPU time per request
//     (process.cpuUsage over the run, divided by the requests it served).
//
// No targets: the figures are reported. Writes bench/results/edge.json.

import { ChildProcess, fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadEdgeConfig } from '../host-glue/envoy/envoy-config';
import { HeaderList, HttpFilterFactory, HttpFilterStream } from '../host-glue/proxy-wasm/http-filter';
import { createPlugin } from '../host-glue/proxy-wasm/host';
import { main as originCli } from '../origin/cli/main';
import { stats, Stats } from './stats';
import { machine, machineLine } from './machine';
import { repoRoot } from './media';

export interface EdgeBenchOptions {
  /** Requests per timed batch, and timed batches, of the host overhead. */
  batch?: number;
  batches?: number;
  /** Concurrent keep-alive connections of the load generator. */
  connections?: number;
  /** Seconds per throughput measurement, and direct/edge pairs. */
  seconds?: number;
  rounds?: number;
  outFile?: string;
  log?: (line: string) => void;
}

const PRESENTATION = [
  'video_baseline_400k.ismv',
  'video_main_900k.ismv',
  'audio_eng_64k.isma',
  'audio_eng_128k.isma',
  'text_eng.ismt',
];
const MANIFEST_PATH = '/b.ism/.mpd?filter=FourCC%21%3D%22ac-3%22';

// ---------------------------------------------------------------------------------------------
// (1) host overhead, in-process

const REQUEST_HEADERS: HeaderList = [
  [':authority', 'edge.example.com'],
  [':path', MANIFEST_PATH],
  [':method', 'GET'],
  [':scheme', 'http'],
  ['user-agent', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36'],
  ['accept', '*/*'],
  ['accept-encoding', 'gzip, deflate, br'],
  ['accept-language', 'en-US,en;q=0.9'],
  ['origin', 'https://player.example.com'],
  ['referer', 'https://player.example.com/'],
  ['x-forwarded-proto', 'http'],
  ['x-request-id', '0f8b2a9e-3d4c-4e5f-8a6b-7c8d9e0f1a2b'],
];
const RESPONSE_HEADERS: HeaderList = [
  [':status', '200'],
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', 'Content-Length, Content-Range, ETag, Last-Modified, X-Origin-Error'],
  ['cache-control', 'public, max-age=60'],
  ['last-modified', 'Sat, 21 Nov 2026 10:00:00 GMT'],
  ['etag', '"3f2a9c1b7d"'],
  ['content-type', 'application/dash+xml'],
  ['content-length', '6144'],
  ['date', 'Sat, 21 Nov 2026 10:00:00 GMT'],
  ['x-envoy-upstream-service-time', '1'],
];
const BODY = new Uint8Array(6144).fill(0x3c);
const INFO = {
  remoteAddress: '127.0.0.1',
  remotePort: 40000,
  protocol: 'HTTP/1.1',
  localAddress: '127.0.0.1',
  localPort: 8080,
  connectionId: 1,
};

async function oneRequest(f: HttpFilterFactory): Promise<number> {
  const s = f.newStream(INFO);
  const a = await s.requestHeaders(REQUEST_HEADERS, true);
  const b = await s.responseHeaders(RESPONSE_HEADERS, false);
  const c = await s.responseBody(BODY, true);
  s.end();
  if (a.kind !== 'continue' || b.kind !== 'continue' || c.kind !== 'continue')
    throw new Error(`the plugin did not pass the request through: ${a.kind} ${b.kind} ${c.kind}`);
  return c.data.byteLength;
}

/** The seam's promises alone: a pass-through stream in JavaScript. */
const jsPassThrough: HttpFilterFactory = {
  newStream(): HttpFilterStream {
    return {
      requestHeaders: async (headers) => ({ kind: 'continue', headers }),
      requestBody: async (data) => ({ kind: 'continue', data }),
      responseHeaders: async (headers) => ({ kind: 'continue', headers }),
      responseBody: async (data) => ({ kind: 'continue', data }),
      end: () => undefined,
    };
  },
  shutdown: async () => undefined,
};

/** µs per request: `batches` batch means of `batch` sequential requests, after a warm-up. */
async function timeRequests(
  f: HttpFilterFactory,
  batch: number,
  batches: number,
): Promise<{ us: Stats; samples: number[] }> {
  let sink = 0;
  for (let i = 0; i < batch * 20; i++) sink += await oneRequest(f);
  const samples: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) sink += await oneRequest(f);
    samples.push(Number(process.hrtime.bigint() - t0) / batch / 1000);
  }
  if (sink === 0) throw new Error('no body passed');
  return { us: stats(samples), samples };
}

// ---------------------------------------------------------------------------------------------
// (2) throughput: origin and edge as child processes

type ChildRole = 'origin' | 'edge';
interface ChildReady {
  url: string;
}
interface ChildCpu {
  cpuUs: number;
  requests: number;
}

class Child {
  private constructor(
    private readonly proc: ChildProcess,
    readonly url: string,
  ) {}

  static start(role: ChildRole, args: string[]): Promise<Child> {
    const proc = fork(__filename, ['edge-bench-child', role, ...args], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      proc.once('error', reject);
      proc.once('exit', (code) => reject(new Error(`${role} process exited (${code}) before it was ready`)));
      proc.once('message', (m) => resolve(new Child(proc, (m as ChildReady).url)));
    });
  }

  /** CPU µs and requests since the last call. */
  cpu(): Promise<ChildCpu> {
    return new Promise((resolve) => {
      this.proc.once('message', (m) => resolve(m as ChildCpu));
      this.proc.send('cpu');
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.proc.once('exit', () => resolve());
      this.proc.kill('SIGTERM');
    });
  }
}

/** The child side: `origin serve` or `origin edge` in this process, reporting CPU on request. */
async function runChild(role: ChildRole, args: string[]): Promise<void> {
  let url: string;
  let served: () => number = () => 0;
  if (role === 'origin') {
    const { startServer } = require('../origin/server/server') as typeof import('../origin/server/server');
    const { wasmTrackSelector } = require('../origin/server/select') as typeof import('../origin/server/select');
    const server = await startServer({
      root: args[0]!,
      host: '127.0.0.1',
      port: 0,
      manifestCacheControl: 'public, max-age=60',
      segmentCacheControl: 'public, max-age=86400',
      select: wasmTrackSelector,
      playerPage: false,
    });
    url = server.url;
  } else {
    const { startEdge } = require('../origin/cli/edge-command') as typeof import('../origin/cli/edge-command');
    const started = await startEdge(
      {
        config: path.join(repoRoot(), 'envoy-config', 'envoy.yaml'),
        port: 0,
        host: '127.0.0.1',
        upstream: new URL(args[0]!),
        logLevel: 'info',
        quiet: true,
        help: false,
      },
      { cwd: repoRoot(), pluginLog: () => undefined },
    );
    url = started.edge.url;
    served = () => started.edge.stats.requests;
  }
  let last = process.cpuUsage();
  let lastServed = 0;
  process.on('message', () => {
    const used = process.cpuUsage(last);
    last = process.cpuUsage();
    const now = served();
    process.send!({ cpuUs: used.user + used.system, requests: now - lastServed } satisfies ChildCpu);
    lastServed = now;
  });
  process.on('SIGTERM', () => process.exit(0));
  process.send!({ url } satisfies ChildReady);
}

interface Load {
  requests: number;
  seconds: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  bytes: number;
}

/** `connections` keep-alive loops asking for the same URL for `seconds`; every answer checked. */
async function load(base: string, connections: number, seconds: number, expectBytes: number): Promise<Load> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const u = new URL(base);
  const latencies: number[] = [];
  let bytes = 0;
  const get = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      http
        .get({ host: u.hostname, port: u.port, path: MANIFEST_PATH, agent }, (res) => {
          let n = 0;
          res.on('data', (c: Buffer) => (n += c.length));
          res.on('end', () => {
            if (res.statusCode !== 200 || n !== expectBytes)
              return reject(new Error(`${base}: ${res.statusCode}, ${n} bytes (expected 200, ${expectBytes})`));
            bytes += n;
            latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
            resolve();
          });
        })
        .on('error', reject);
    });
  const t0 = process.hrtime.bigint();
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) await get();
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const pct = (p: number): number =>
    Number(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!.toFixed(3));
  return {
    requests: sorted.length,
    seconds: Number(elapsed.toFixed(3)),
    rps: Math.round(sorted.length / elapsed),
    latencyMs: { p50: pct(0.5), p90: pct(0.9), p99: pct(0.99), max: pct(1) },
    bytes,
  };
}

async function packagePresentation(root: string): Promise<void> {
  const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
  const media = (f: string): string => path.join(repoRoot(), 'fixtures', 'media', f);
  const code = await originCli(
    ['package', '-q', '-o', path.join(root, 'b.ism'), ...PRESENTATION.map(media)],
    quiet,
    quiet,
  );
  if (code !== 0) throw new Error(`packaging the bench presentation failed (exit ${code})`);
}

// ---------------------------------------------------------------------------------------------

export async function runEdgeBench(options: EdgeBenchOptions = {}): Promise<Record<string, unknown>> {
  const log = options.log ?? ((line: string) => console.log(line));
  const batch = options.batch ?? 200;
  const batches = options.batches ?? 200;
  const connections = options.connections ?? 8;
  const seconds = options.seconds ?? 4;
  const rounds = options.rounds ?? 3;
  const root = repoRoot();
  const outFile = options.outFile ?? path.join(root, 'bench', 'results', 'edge.json');
  // The machine is shared: the load before the run says how much of it the figures had.
  const loadAverageAtStart = os.loadavg().map((x) => Number(x.toFixed(2)));

  // (1) host overhead
  const config = await loadEdgeConfig(path.join(root, 'envoy-config', 'envoy.yaml'), { cwd: root });
  const host = await createPlugin({
    wasm: config.wasm,
    name: config.plugin.name,
    rootId: config.plugin.rootId,
    vmId: config.plugin.vmId,
    vmConfiguration: config.plugin.vmConfiguration,
    pluginConfiguration: config.plugin.pluginConfiguration,
    failurePolicy: config.plugin.failurePolicy,
    logLevel: 'info',
    log: () => undefined,
  });
  const wasm = await timeRequests(host, batch, batches);
  const floor = await timeRequests(jsPassThrough, batch, batches);
  await host.shutdown();

  // (2) throughput, origin and edge in their own processes
  const dir = path.join(root, 'bench', '.cache', 'edge');
  mkdirSync(dir, { recursive: true });
  await packagePresentation(dir);
  const origin = await Child.start('origin', [dir]);
  const edge = await Child.start('edge', [origin.url]);
  const runs: Array<{ round: number; target: 'direct' | 'edge'; load: Load; edgeCpuUsPerRequest?: number }> = [];
  try {
    const expected = await new Promise<number>((resolve, reject) => {
      http
        .get(origin.url + MANIFEST_PATH, (res) => {
          let n = 0;
          res
            .on('data', (c: Buffer) => (n += c.length))
            .on('end', () =>
              res.statusCode === 200
                ? resolve(n)
                : reject(new Error(`the origin answers ${MANIFEST_PATH} with ${res.statusCode}`)),
            );
        })
        .on('error', reject);
    });
    await load(edge.url, connections, 1, expected); // warm-up: JIT, pools, the rendered-manifest cache
    await load(origin.url, connections, 1, expected);
    for (let round = 1; round <= rounds; round++) {
      runs.push({ round, target: 'direct', load: await load(origin.url, connections, seconds, expected) });
      await edge.cpu();
      const through = await load(edge.url, connections, seconds, expected);
      const cpu = await edge.cpu();
      runs.push({
        round,
        target: 'edge',
        load: through,
        edgeCpuUsPerRequest: Number((cpu.cpuUs / Math.max(1, cpu.requests)).toFixed(1)),
      });
    }
  } finally {
    await edge.stop();
    await origin.stop();
  }

  const median = (xs: number[]): number => stats(xs).median;
  const direct = runs.filter((r) => r.target === 'direct');
  const viaEdge = runs.filter((r) => r.target === 'edge');
  const summary = {
    directRps: median(direct.map((r) => r.load.rps)),
    edgeRps: median(viaEdge.map((r) => r.load.rps)),
    directP50Ms: median(direct.map((r) => r.load.latencyMs.p50)),
    edgeP50Ms: median(viaEdge.map((r) => r.load.latencyMs.p50)),
    directP99Ms: median(direct.map((r) => r.load.latencyMs.p99)),
    edgeP99Ms: median(viaEdge.map((r) => r.load.latencyMs.p99)),
    edgeCpuUsPerRequest: median(viaEdge.map((r) => r.edgeCpuUsPerRequest!)),
  };

  // --- print ---
  log(`edge benchmark: ${machineLine()}, load average at start ${loadAverageAtStart.join(' ')}`);
  log('');
  log(
    `host overhead per request (create → request headers → response headers → 6 kB body → end), µs, median / p95 of ${batches} batches of ${batch}:`,
  );
  log(`  proxy-wasm host + build/edge.wasm   ${wasm.us.median.toFixed(1)} / ${wasm.us.p95.toFixed(1)}`);
  log(`  JS pass-through (the seam alone)    ${floor.us.median.toFixed(2)} / ${floor.us.p95.toFixed(2)}`);
  log('');
  log(
    `cached MPD (${MANIFEST_PATH}, ${direct[0]?.load.bytes !== undefined ? Math.round(direct[0].load.bytes / direct[0].load.requests) : '?'} bytes), ${connections} keep-alive connections, ${seconds} s per run, origin and edge in their own processes:`,
  );
  for (const r of runs) {
    const l = r.load;
    log(
      `  round ${r.round} ${r.target.padEnd(6)} ${String(l.rps).padStart(6)} req/s   p50 ${l.latencyMs.p50.toFixed(2)} ms  p90 ${l.latencyMs.p90.toFixed(2)} ms  p99 ${l.latencyMs.p99.toFixed(2)} ms${r.edgeCpuUsPerRequest !== undefined ? `   edge CPU ${r.edgeCpuUsPerRequest} µs/request` : ''}`,
    );
  }
  log(
    `  median: direct ${summary.directRps} req/s, through the edge ${summary.edgeRps} req/s (${((summary.edgeRps / summary.directRps) * 100).toFixed(0)} %); p50 ${summary.directP50Ms} → ${summary.edgeP50Ms} ms; edge CPU ${summary.edgeCpuUsPerRequest} µs per request`,
  );

  const result = {
    suite: 'edge',
    date: new Date().toISOString(),
    machine: machine(),
    loadAverageAtStart,
    settings: { batch, batches, connections, seconds, rounds, manifest: MANIFEST_PATH, presentation: PRESENTATION },
    hostOverhead: {
      unit: 'µs per request',
      wasm: wasm.us,
      jsPassThrough: floor.us,
      wasmSamplesUs: wasm.samples.filter((_, i) => i % 10 === 0).map((x) => Number(x.toFixed(2))),
    },
    throughput: { runs, summary },
  };
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${path.relative(root, outFile)}`);
  return result;
}

if (require.main === module && process.argv[2] === 'edge-bench-child') {
  runChild(process.argv[3] as ChildRole, process.argv.slice(4)).catch((e: unknown) => {
    console.error(`edge bench ${process.argv[3]}: ${(e as Error)?.stack ?? String(e)}`);
    process.exit(1);
  });
}
