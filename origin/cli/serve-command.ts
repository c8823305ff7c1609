// `origin serve --root <dir> [--host 127.0.0.1] [--port 8081] [...]`: the HTTP origin.

import cluster, { Worker } from 'node:cluster';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_CACHE_CONTROL, DEFAULT_MANIFEST_CACHE_BYTES, RunningServer, startServer } from '../server/server';
import { wasmTrackSelector } from '../server/select';
import { WARM_UP_ROUNDS } from '../server/warm-up';
import { eachArg, logLevelArg, UsageError } from './args';
import { DEFAULT_LIMITS } from '../cache/presentation-store';
import type { HttpFilterFactory, LogLevel } from '../../host-glue/proxy-wasm/http-filter';

export const SERVE_USAGE = `Usage: origin serve --root <dir> [options]

Serves every server manifest (.ism) under <dir> as Smooth Streaming, DASH and HLS
(/<path>/<presentation>.ism/Manifest, /.mpd, /.m3u8, ...), other files under <dir> as
static files (with Range), and a player page at / .

Options:
  --root <dir>                     directory to serve (required)
  --host <address>                 address to listen on (default 127.0.0.1)
  --port <n>                       port, 0 = any free port (default 8081)
  --manifest-cache-control <v>     Cache-Control of manifests and playlists
                                   (default "${DEFAULT_CACHE_CONTROL.manifest}"; "" sends none)
  --segment-cache-control <v>      Cache-Control of segments and fragments
                                   (default "${DEFAULT_CACHE_CONTROL.segment}"; "" sends none)
  --no-player                      do not serve the player page (/, /play, /_players/)
  --serve-sources                  serve media sources (.ismv, .isma, .ismt, .mp4, .cmf?) and
                                   server manifests as static files; only for roots of clear
                                   content (a server manifest with DRM options never is)
  --workers <n>                    worker processes sharing the port (default: the number
                                   of CPUs, ${defaultWorkers()} here); 1 serves in this process
  --stat-ttl-ms <n>                trust a file's stat (and reuse its open handle) for
                                   n ms (default ${DEFAULT_LIMITS.statTtlMs}: a changed .ism or source is seen
                                   within that; 0: by the next request)
  --manifest-cache-bytes <n>       bound of the rendered-manifest cache per worker
                                   (default ${DEFAULT_MANIFEST_CACHE_BYTES}; 0 disables it)
  --encrypted-segment-cache-bytes <n>
                                   keep encrypted segments, least recently used out, up to
                                   n bytes per worker (default 0: none, each request
                                   encrypts its segment)
  --edge-config <envoy.yaml>       run the edge's wasm filter in this process: every
                                   request goes through the filter of this Envoy bootstrap
                                   (module, configuration, failure policy, server header)
                                   before the origin answers, as through \`origin edge\`
                                   but without a second hop; its routes and clusters are
                                   not used (each worker loads its own VM, like Envoy's)
  --edge-log-level <level>         the filter's log threshold: trace, debug, info, warn,
                                   error, critical (default info)
  --warm-up-rounds <n>             before listening, answer the manifests of n synthetic
                                   2-hour presentations in memory, so that the first
                                   client request runs compiled code (default ${WARM_UP_ROUNDS}:
                                   about 0.3 s of start-up; 0 starts at once)
  -q, --quiet                      no request log on stderr
  -h, --help                       this text
`;

export interface ServeArgs {
  root: string;
  host: string;
  port: number;
  manifestCacheControl: string;
  segmentCacheControl: string;
  playerPage: boolean;
  serveSources?: boolean;
  quiet: boolean;
  help: boolean;
  /** Worker processes (default: the CPUs); only runServe reads it. */
  workers?: number;
  /** Bound of the rendered-manifest cache; 0 disables it (default DEFAULT_MANIFEST_CACHE_BYTES). */
  manifestCacheBytes?: number;
  /** Bound of the encrypted-segment cache (default 0: none). */
  encryptedSegmentCacheBytes?: number;
  /** ms a file's stat is trusted (default 0). */
  statTtlMs?: number;
  /** An envoy.yaml whose wasm filter runs in this process. */
  edgeConfig?: string;
  edgeLogLevel?: LogLevel;
  /** Rounds of the start-up warm-up (default WARM_UP_ROUNDS; 0: none). */
  warmUpRounds?: number;
}

/** The CPUs this process may use (os.availableParallelism honours affinity masks). */
export function defaultWorkers(): number {
  return Math.max(1, os.availableParallelism());
}

export function parseServeArgs(argv: readonly string[]): ServeArgs {
  const a: ServeArgs = {
    root: '',
    host: '127.0.0.1',
    port: 8081,
    manifestCacheControl: DEFAULT_CACHE_CONTROL.manifest,
    segmentCacheControl: DEFAULT_CACHE_CONTROL.segment,
    playerPage: true,
    quiet: false,
    help: false,
    workers: defaultWorkers(),
    manifestCacheBytes: DEFAULT_MANIFEST_CACHE_BYTES,
    warmUpRounds: WARM_UP_ROUNDS,
  };
  eachArg(argv, ({ arg, flag, value }) => {
    switch (flag) {
      case '-h':
      case '--help':
        a.help = true;
        break;
      case '-q':
      case '--quiet':
        a.quiet = true;
        break;
      case '--root':
        a.root = value();
        break;
      case '--host':
        a.host = value();
        break;
      case '--port': {
        const v = value();
        if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new UsageError(`--port must be 0..65535, not "${v}"`);
        a.port = Number(v);
        break;
      }
      case '--manifest-cache-control':
        a.manifestCacheControl = headerValue(flag, value());
        break;
      case '--segment-cache-control':
        a.segmentCacheControl = headerValue(flag, value());
        break;
      case '--serve-sources':
        a.serveSources = true;
        break;
      case '--no-player':
        a.playerPage = false;
        break;
      case '--workers':
        a.workers = integer(flag, value(), 1, 256);
        break;
      case '--stat-ttl-ms':
        a.statTtlMs = integer(flag, value(), 0, 3_600_000);
        break;
      case '--edge-config':
        a.edgeConfig = value();
        break;
      case '--edge-log-level':
        a.edgeLogLevel = logLevelArg(flag, value());
        break;
      case '--manifest-cache-bytes':
        a.manifestCacheBytes = integer(flag, value(), 0, 2 ** 40);
        break;
      case '--encrypted-segment-cache-bytes':
        a.encryptedSegmentCacheBytes = integer(flag, value(), 0, 2 ** 40);
        break;
      case '--warm-up-rounds':
        a.warmUpRounds = integer(flag, value(), 0, 100);
        break;
      default:
        throw new UsageError(`unknown argument "${arg}" (origin serve --help)`);
    }
  });
  if (!a.help && a.root === '') throw new UsageError('--root <dir> is required');
  return a;
}

function integer(flag: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!/^\d{1,13}$/.test(v) || n < min || n > max)
    throw new UsageError(`${flag} must be an integer in ${min}..${max}, not "${v.slice(0, 32)}"`);
  return n;
}

function headerValue(flag: string, v: string): string {
  if (/[\r\n\0]/.test(v) || v.length > 256)
    throw new UsageError(`${flag} must be one header line of at most 256 characters`);
  return v;
}

/** Starts the server; resolves once listening. The CLI keeps the process alive while it runs. */
export async function serve(a: ServeArgs, log: (line: string) => void): Promise<RunningServer> {
  const root = path.resolve(a.root);
  const stat = await fs.stat(root).catch(() => undefined);
  if (stat === undefined || !stat.isDirectory()) throw new UsageError(`--root ${a.root} is not a directory`);
  let edge:
    { factory: HttpFilterFactory; config: import('../../host-glue/envoy/envoy-config').LoadedEdgeConfig } | undefined;
  if (a.edgeConfig !== undefined) {
    // Loaded on use, like `origin edge` (the host and the YAML reader are not needed otherwise).
    const { loadEdgeFilter } = require('./edge-command') as typeof import('./edge-command');
    edge = await loadEdgeFilter(a.edgeConfig, {
      logLevel: a.edgeLogLevel ?? 'info',
      pluginLog: (_level, line) => log(line),
    });
  }
  const server = await startServer({
    root,
    host: a.host,
    port: a.port,
    manifestCacheControl: a.manifestCacheControl,
    segmentCacheControl: a.segmentCacheControl,
    select: wasmTrackSelector,
    playerPage: a.playerPage,
    serveSources: a.serveSources === true,
    manifestCacheBytes: a.manifestCacheBytes,
    encryptedSegmentCacheBytes: a.encryptedSegmentCacheBytes ?? 0,
    statTtlMs: a.statTtlMs ?? DEFAULT_LIMITS.statTtlMs,
    warmUpRounds: a.warmUpRounds ?? WARM_UP_ROUNDS,
    log: a.quiet ? undefined : log,
    ...(edge !== undefined
      ? {
          edge: {
            factory: edge.factory,
            server: edge.config.server,
            generateRequestId: edge.config.generateRequestId,
            suppressEnvoyHeaders: edge.config.suppressEnvoyHeaders,
          },
        }
      : {}),
  }).catch(async (e: unknown) => {
    await edge?.factory.shutdown();
    throw e;
  });
  if (edge === undefined) return server;
  for (const w of edge.config.warnings) log(`origin serve: warning: ${w}`);
  const factory = edge.factory;
  return {
    ...server,
    close: async () => {
      await server.close();
      await factory.shutdown();
    },
  };
}

/** `origin serve`'s exit for an --edge-config that does not load: Envoy's reason, status 1. */
function edgeLoadFailure(e: unknown, a: ServeArgs, err: NodeJS.WritableStream): number | undefined {
  const name = (e as Error)?.name;
  if (name === 'EdgeConfigError') err.write(`origin serve: error: ${(e as Error).message}\n`);
  else if (name === 'PluginLoadError')
    err.write(`origin serve: error: ${a.edgeConfig}: the wasm filter does not load: ${(e as Error).message}\n`);
  else return undefined;
  return 1;
}

export async function runServe(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const a = parseServeArgs(argv);
  if (a.help) {
    out.write(SERVE_USAGE);
    return 0;
  }
  const log = (line: string): void => void err.write(`${line}\n`);
  if (cluster.isWorker) return runWorker(a, log);
  if ((a.workers ?? 1) > 1) return runPrimary(a, out, log);
  let server: RunningServer;
  try {
    server = await serve(a, log);
  } catch (e) {
    const code = edgeLoadFailure(e, a, err);
    if (code !== undefined) return code;
    throw e;
  }
  out.write(`origin serving ${path.resolve(a.root)} at ${server.url}/ (Ctrl-C stops)\n`);
  await untilSignal();
  await server.close();
  return 0;
}

// Multi-core: node:cluster. The workers share nothing but the listening port (the primary
// accepts and hands connections round-robin, cluster.SCHED_RR, Node's default on Linux); each
// has its own presentation and manifest caches. A worker that dies is restarted with a log line.
// `startServer()` stays single-process: workers exist only through this command.

interface WorkerReady {
  origin: 'ready';
  url: string;
}

/** A worker: serve, tell the primary where, stop on a signal or when the primary goes. */
async function runWorker(a: ServeArgs, log: (line: string) => void): Promise<number> {
  let server: RunningServer;
  try {
    server = await serve(a, log);
  } catch (e) {
    const code = edgeLoadFailure(e, a, process.stderr);
    if (code !== undefined) return code;
    throw e;
  }
  process.send!({ origin: 'ready', url: server.url } satisfies WorkerReady);
  await new Promise<void>((resolve) => {
    process.once('disconnect', resolve);
    void untilSignal().then(resolve);
  });
  await server.close();
  // The IPC channel would keep this process alive.
  if (process.connected) process.disconnect();
  return 0;
}

async function runPrimary(a: ServeArgs, out: NodeJS.WritableStream, log: (line: string) => void): Promise<number> {
  let stopping = false;
  const fork = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const w: Worker = cluster.fork();
      const onExit = (code: number | null, signal: string | null): void =>
        reject(new Error(`worker ${w.process.pid} exited (${signal ?? code}) before listening`));
      w.once('exit', onExit);
      w.on('message', (m: WorkerReady) => {
        if (m?.origin !== 'ready') return;
        w.off('exit', onExit);
        w.once('exit', (code, signal) => {
          if (stopping) return;
          log(`origin: worker ${w.process.pid} died (${signal ?? `exit ${code}`}); starting another`);
          fork().catch((e: unknown) => log(`origin: could not restart a worker: ${(e as Error).message}`));
        });
        resolve(m.url);
      });
    });
  const urls = await Promise.all(Array.from({ length: a.workers ?? 1 }, fork));
  out.write(`origin serving ${path.resolve(a.root)} at ${urls[0]}/ with ${a.workers} workers (Ctrl-C stops)\n`);
  await untilSignal();
  stopping = true;
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          w.once('exit', () => resolve());
          w.process.kill('SIGTERM');
        }),
    ),
  );
  return 0;
}

export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
