// `origin serve --root <dir> [--host 127.0.0.1] [--port 8081] [...]`: the HTTP origin.

import cluster from 'node:cluster';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_CACHE_CONTROL, DEFAULT_MANIFEST_CACHE_BYTES, RunningServer, startServer } from '../server/server';
import { wasmTrackSelector } from '../server/select';
import { WARM_UP_ROUNDS } from '../server/warm-up';
import { eachOption, logLevelArg, portArg, UsageError } from './args';
import { DEFAULT_LIMITS } from '../cache/presentation-store';
import { ROUTES } from '../server/routes';
import { OriginMetrics } from '../ops/metrics';
import { defaultLogFormat, humanLogger, LOG_LEVELS, LogFormat, LogLevel, makeLogger, OriginLogger } from '../ops/log';
import type { HttpFilterFactory, LogLevel as PluginLogLevel } from '../../host-glue/proxy-wasm/http-filter';
import { INGEST_USAGE, startIngestFromArgs } from './serve-ingest';
import type { LocationConfig } from '../config/config-file';
import { parseRefusalStatus, REFUSAL_FLAGS, REFUSAL_USAGE, refusalStatusTable } from './serve-refusals';
import type { LiveFragmentCode } from '../error-codes';

/** The ServeArgs field of each refusal's status. */
const REFUSAL_FIELDS = {
  'fragment-expired': 'fragmentExpiredStatus',
  'fragment-missing': 'fragmentMissingStatus',
  'fragment-not-yet': 'fragmentNotYetStatus',
} as const satisfies Record<LiveFragmentCode, keyof ServeArgs>;

export const DEFAULT_DRAIN_SECONDS = 10;

export const SERVE_USAGE = `Usage: origin serve --root <dir> [options]

Serves every server manifest (.ism) under <dir> as Smooth Streaming, DASH and HLS
(/<path>/<presentation>.ism/Manifest, /.mpd, /.m3u8, ...), other files under <dir> as
static files (with Range), and a player page at / .

Options:
  --config <origin.yaml>           read settings and locations (per-prefix Cache-Control,
                                   remote storage with proxy_pass) from a YAML file; the
                                   flags below override its settings; SIGHUP reloads it
                                   (docs/reference/configuration.md)
  --root <dir>                     directory to serve (required, here or in --config)
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
  --follow-symlinks                serve presentations and static files through symbolic
                                   links under --root that resolve outside it (default: such
                                   a .ism, source or file is as if absent)
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
  --log-format <format>            json (one JSON object a line) or human (default: human
                                   on a terminal, json otherwise); the log goes to stderr
  --log-level <level>              trace, debug, info, warn, error, fatal or silent
                                   (default info; request lines are info)
  -q, --quiet                      no request lines (the rest of the log stays)
  --no-metrics                     count nothing and answer /metrics with 404
  --drain-seconds <n>              on SIGTERM or SIGINT, stop taking connections and let the
                                   responses in flight finish for up to n seconds, then exit
                                   (default ${DEFAULT_DRAIN_SECONDS}; a second signal exits at once)
${INGEST_USAGE}${REFUSAL_USAGE}  -h, --help                       this text

/metrics (Prometheus), /healthz and /readyz are the origin's own: docs/guide/operations.md.
`;

export interface ServeArgs {
  /** --config: the YAML file read for the settings and locations (cli/serve-config.ts). */
  config?: string;
  /** The locations of --config (none without it). */
  locations?: readonly LocationConfig[];
  root: string;
  host: string;
  port: number;
  manifestCacheControl: string;
  segmentCacheControl: string;
  playerPage: boolean;
  /** The edge's example URLs for the index page (origin demo's). */
  playerExamples?: () => readonly import('../player/index-page').EdgeExample[];
  serveSources?: boolean;
  /** --follow-symlinks: presentations and static files through links that resolve outside the root. */
  followSymlinks?: boolean;
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
  edgeLogLevel?: PluginLogLevel;
  /** Rounds of the start-up warm-up (default WARM_UP_ROUNDS; 0: none). */
  warmUpRounds?: number;
  /** json or human (default: human on a terminal). */
  logFormat?: LogFormat;
  /** The log threshold (default info). */
  logLevel?: LogLevel;
  /** Count requests and answer /metrics (default true). */
  metrics?: boolean;
  /** How long SIGTERM waits for the responses in flight (default DEFAULT_DRAIN_SECONDS). */
  drainSeconds?: number;
  /** --ingest-port: take live ingest there (cli/serve-ingest.ts). */
  ingestPort?: number;
  ingestHost?: string;
  /** A file of `user:password` lines. */
  ingestCredentials?: string;
  /** A JSON file: the edge's auth_token object (secret, prefix, timeout, skew). */
  ingestToken?: string;
  ingestIdleSeconds?: number;
  /** Live segment refusal statuses (cli/serve-refusals.ts): `<status>` or `<format>=<status>,...`. */
  fragmentExpiredStatus?: string;
  fragmentMissingStatus?: string;
  fragmentNotYetStatus?: string;
}

/** The CPUs this process may use (os.availableParallelism honours affinity masks). */
export function defaultWorkers(): number {
  return Math.max(1, os.availableParallelism());
}

/**
 * The arguments of `origin serve`: the defaults, then `file` (the settings of --config,
 * cli/serve-config.ts), then the flags of `argv`.
 */
export function parseServeArgs(argv: readonly string[], file: Partial<ServeArgs> = {}): ServeArgs {
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
    ...file,
  };
  eachOption(argv, a, ({ arg, flag, value }) => {
    switch (flag) {
      case '--config':
        a.config = value();
        break;
      case '--root':
        a.root = value();
        break;
      case '--host':
        a.host = value();
        break;
      case '--port':
        a.port = portArg(flag, value());
        break;
      case '--manifest-cache-control':
        a.manifestCacheControl = headerValue(flag, value());
        break;
      case '--segment-cache-control':
        a.segmentCacheControl = headerValue(flag, value());
        break;
      case '--serve-sources':
        a.serveSources = true;
        break;
      case '--follow-symlinks':
        a.followSymlinks = true;
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
      case '--log-format': {
        const v = value();
        if (v !== 'json' && v !== 'human')
          throw new UsageError(`--log-format must be json or human, not "${v.slice(0, 32)}"`);
        a.logFormat = v;
        break;
      }
      case '--log-level': {
        const v = value();
        if (!(LOG_LEVELS as readonly string[]).includes(v))
          throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not "${v.slice(0, 32)}"`);
        a.logLevel = v as LogLevel;
        break;
      }
      case '--no-metrics':
        a.metrics = false;
        break;
      case '--drain-seconds':
        a.drainSeconds = integer(flag, value(), 0, 3600);
        break;
      case '--ingest-port':
        a.ingestPort = integer(flag, value(), 0, 65535);
        break;
      case '--ingest-host':
        a.ingestHost = value();
        break;
      case '--ingest-credentials':
        a.ingestCredentials = value();
        break;
      case '--ingest-token':
        a.ingestToken = value();
        break;
      case '--ingest-idle-timeout':
        a.ingestIdleSeconds = integer(flag, value(), 1, 3600);
        break;
      case '--fragment-expired-status':
      case '--fragment-missing-status':
      case '--fragment-not-yet-status': {
        const v = value();
        parseRefusalStatus(flag, v);
        const field = REFUSAL_FIELDS[REFUSAL_FLAGS[flag]!];
        a[field] = v;
        break;
      }
      default:
        throw new UsageError(`unknown argument "${arg}" (origin serve --help)`);
    }
  });
  if (!a.help && a.root === '' && a.config === undefined) throw new UsageError('--root <dir> is required');
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

/**
 * Starts the server; resolves once listening. The CLI keeps the process alive while it runs.
 * `log`: the log, or a function taking human lines. `metrics`: the ones to count into (a worker's,
 * set up to scrape through its primary); by default a new set with the process's series, unless
 * `--no-metrics`. Another registry's series join /metrics through `server.metrics?.include()`.
 */
export async function serve(
  a: ServeArgs,
  log: OriginLogger | ((line: string) => void),
  metrics: OriginMetrics | undefined = a.metrics === false ? undefined : cliMetrics(),
): Promise<RunningServer> {
  const logger = typeof log === 'function' ? humanLogger(log, { requests: !a.quiet, level: a.logLevel }) : log;
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
      pluginLog: (level, line) => logger.log(PLUGIN_LEVELS[level], line),
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
    ...(a.playerExamples === undefined ? {} : { playerExamples: a.playerExamples }),
    serveSources: a.serveSources === true,
    followSymlinks: a.followSymlinks === true,
    manifestCacheBytes: a.manifestCacheBytes,
    encryptedSegmentCacheBytes: a.encryptedSegmentCacheBytes ?? 0,
    statTtlMs: a.statTtlMs ?? DEFAULT_LIMITS.statTtlMs,
    warmUpRounds: a.warmUpRounds ?? WARM_UP_ROUNDS,
    logger,
    metrics: metrics ?? false,
    locations: a.config === undefined ? undefined : (a.locations ?? []),
    liveFragmentStatus: refusalStatusTable({
      'fragment-expired': a.fragmentExpiredStatus,
      'fragment-missing': a.fragmentMissingStatus,
      'fragment-not-yet': a.fragmentNotYetStatus,
    }),
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
  for (const w of edge.config.warnings) logger.log('warn', `origin serve: warning: ${w}`);
  if (server.metrics !== undefined) {
    // The plugin's own counters (proxy-wasm metrics ABI) next to the origin's, named as Envoy
    // names them (host-glue/envoy/edge-stats.ts); under --workers the primary sums them too.
    const { Registry } = require('prom-client') as typeof import('prom-client');
    const { addEdgeMetrics } =
      require('../../host-glue/envoy/edge-stats') as typeof import('../../host-glue/envoy/edge-stats');
    const registry = new Registry();
    addEdgeMetrics(registry, edge, { warn: (line) => logger.log('warn', `origin serve: ${line}`) });
    server.metrics.include(registry);
  }
  const factory = edge.factory;
  const shutDown = async <T>(closed: T): Promise<T> => {
    await factory.shutdown();
    return closed;
  };
  return {
    ...server,
    close: async () => shutDown(await server.close()),
    drain: async (boundMs) => shutDown(await server.drain(boundMs)),
  };
}

/** The metrics of `origin serve`: the origin's, with the process's (CPU, memory, descriptors, GC). */
export function cliMetrics(): OriginMetrics {
  const m = new OriginMetrics(ROUTES.map((r) => r.kind));
  m.includeProcessMetrics();
  return m;
}

/** The plugin's log levels (proxy_log) as the origin's. */
const PLUGIN_LEVELS: Record<PluginLogLevel, Exclude<LogLevel, 'silent'>> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  error: 'error',
  critical: 'error',
};

/** Why an --edge-config does not load (Envoy's reason), or undefined for any other error. */
export function edgeLoadFailure(e: unknown, a: ServeArgs): string | undefined {
  const name = (e as Error)?.name;
  if (name === 'EdgeConfigError') return `origin serve: error: ${(e as Error).message}`;
  if (name === 'PluginLoadError')
    return `origin serve: error: ${a.edgeConfig}: the wasm filter does not load: ${(e as Error).message}`;
  return undefined;
}

export async function runServe(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  // Loaded on use like the cluster code: it imports this file.
  const { configFailure, reloadOnHangUp, resolveServeArgs } =
    require('./serve-config') as typeof import('./serve-config');
  let a: ServeArgs;
  try {
    a = await resolveServeArgs(argv);
  } catch (e) {
    const why = configFailure(e);
    if (why === undefined) throw e;
    err.write(`${why}\n`);
    return 1;
  }
  if (a.help) {
    out.write(SERVE_USAGE);
    return 0;
  }
  const logger = makeLogger(a.logFormat ?? defaultLogFormat(err), err, { level: a.logLevel, requests: !a.quiet });
  const { runPrimary, runWorker } = require('./serve-cluster') as typeof import('./serve-cluster');
  if (cluster.isWorker) return runWorker(a, logger);
  if ((a.workers ?? 1) > 1) return runPrimary(argv, a, out, logger);
  let server: RunningServer;
  try {
    server = await serve(a, logger);
  } catch (e) {
    const why = edgeLoadFailure(e, a);
    if (why === undefined) throw e;
    err.write(`${why}\n`);
    return 1;
  }
  // One process: the ingest tells this server's fragment table directly.
  const ingest = await startIngestFromArgs(a, logger, (m) => server.live.apply(m)).catch(async (e: unknown) => {
    await server.close();
    throw e;
  });
  out.write(`origin serving ${path.resolve(a.root)} at ${server.url}/ (Ctrl-C stops)\n`);
  if (ingest !== undefined) out.write(`origin taking live ingest at ${ingest.url}/\n`);
  const hangUp = reloadOnHangUp(argv, a, logger, (r) => server.reconfigure(r));
  await untilSignal();
  process.off('SIGHUP', hangUp);
  await ingest?.close();
  await stopServing(server, a, logger);
  return 0;
}

/**
 * After SIGTERM or SIGINT: the responses in flight finish within --drain-seconds (a second signal
 * cuts them off), then the log is flushed.
 */
export async function stopServing(server: RunningServer, a: ServeArgs, logger: OriginLogger): Promise<void> {
  const boundMs = (a.drainSeconds ?? DEFAULT_DRAIN_SECONDS) * 1000;
  logger.log('info', `origin: draining (at most ${boundMs / 1000} s)`);
  const again = (): void => void server.close();
  process.once('SIGTERM', again);
  process.once('SIGINT', again);
  const clean = await server.drain(boundMs);
  process.off('SIGTERM', again);
  process.off('SIGINT', again);
  if (!clean) logger.log('warn', `origin: responses still in flight after ${boundMs / 1000} s were cut off`);
  logger.flush();
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
