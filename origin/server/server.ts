// `origin serve`: the server's wiring and the path of a request. Methods and CORS are decided
// here; the hot path (hot-path.ts) answers cached manifests; other presentation URLs are matched
// (routes.ts), coalesced (coalesce.ts), answered by their route's handler (handlers.ts) and sent
// (http.ts, which also maps errors to statuses); the rest are the origin's own endpoints
// (ops-endpoints.ts), player pages and files (static.ts). Every request is noted for /metrics and
// the log (observe.ts); drain.ts stops the server without cutting responses off.

import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { OriginError, originError } from '../errors';
import type { LiveFragmentStatusTable } from '../error-codes';
import { CacheCounts, DEFAULT_LIMITS, PresentationStore } from '../cache/presentation-store';
import { ManifestCacheStats } from '../cache/manifest-cache';
import { TrackSelector } from '../model/view';
import { handlePlayout } from './handlers';
import { newPlayoutContext } from './route-handler';
import { decodePath, matchPresentationRoute, matchTail, ROUTES } from './routes';
import { handleLivePlayout, LiveChannels } from './live-playout';
import { warmUp } from './warm-up';
import { FileHandles } from '../io/file-handles';
import { RootConfinement } from '../io/confine';
import { FILE_STORAGE } from '../io/storage';
import { BufferPool, segmentReadBuffers } from '../io/buffers';
import { inlineEdge, InlineEdgeOptions } from '../../host-glue/envoy/edge-inline';
import { CacheFigures, MetricSources, OriginMetrics } from '../ops/metrics';
import { humanLogger, OriginLogger } from '../ops/log';
import { CacheControls, corsHeaders, preflight, READ_CHUNK, ReplyOutput, send, sendError, setHeaders } from './http';
import { checkPhase, HotPath, RouteMemo, tryCachedManifest } from './hot-path';
import { Coalescer, holdUntilClosed } from './coalesce';
import { serveStatic, servePlayer } from './static';
import type { EdgeExample } from '../player/index-page';
import { Noted, noteOnClose } from './observe';
import { OPS_PATHS, OpsState, serveOps } from './ops-endpoints';
import { drain } from './drain';
import { matchLiveRoute } from '../live/live-routes';
import { LiveFragmentTable } from '../live/fragment-table';
import { serveLiveStatus } from './live-status';
import { RoutedStorage } from '../io/remote/routed-storage';
import type { LocationConfig } from '../config/config-file';
import { Locations } from '../config/locations';
import { remoteLocations } from './locations';
import { Passthrough } from './passthrough';
import { BlockingReloads, BlockingRoute, liveHlsPlaylist } from './blocking-reload';

export interface ServerOptions {
  root: string;
  /** The clock of `/.time`, ms since 1970 (tests inject one; default Date.now). */
  now?: () => number;
  host: string;
  port: number;
  /** Cache-Control for manifests and for segments; '' sends none. */
  manifestCacheControl: string;
  segmentCacheControl: string;
  select: TrackSelector;
  /** Serve `/`, `/play` and `/_players/` (the player page). */
  playerPage: boolean;
  /** The edge's example URLs the index page offers (`npm start`: freshly signed on each call). */
  playerExamples?: () => readonly EdgeExample[];
  /**
   * Serve media sources (.ismv, .isma, ...) and clear server manifests as static files
   * (`--serve-sources`); off, they are 404 (static.ts: no clear copy of encrypted content).
   */
  serveSources?: boolean;
  /**
   * Serve presentations and static files through symbolic links under the root that resolve
   * outside it (`--follow-symlinks`); off, such a file is as if absent (io/confine.ts).
   */
  followSymlinks?: boolean;
  /** Bound of the rendered-manifest cache in bytes (default DEFAULT_MANIFEST_CACHE_BYTES); 0 disables it. */
  manifestCacheBytes?: number;
  /** Bound of the cache of encrypted segments in bytes (default 0: none, every request encrypts). */
  encryptedSegmentCacheBytes?: number;
  /** How long a file's stat (and an open handle of a source) is trusted, ms (default DEFAULT_LIMITS.statTtlMs; 0: every request sees a change). */
  statTtlMs?: number;
  /** Log lines in the human format (tests, `origin demo`); `logger` takes precedence. */
  log?: (line: string) => void;
  /** The log (origin/ops/log.ts): request lines, warnings, errors. */
  logger?: OriginLogger;
  /**
   * The metrics of /metrics (origin/ops/metrics.ts): a new set when undefined; false turns them off
   * (`--no-metrics`: nothing counted, /metrics is 404).
   */
  metrics?: OriginMetrics | false;
  /**
   * Rounds of the start-up warm-up (warm-up.ts) run before the server listens: manifests of
   * synthetic presentations, so the first client request runs compiled code. Default 0 (none);
   * `origin serve` runs WARM_UP_ROUNDS.
   */
  warmUpRounds?: number;
  /**
   * The edge filter in this process (`--edge-config`): every request goes through it before the
   * origin answers (host-glue/envoy/edge-inline.ts). Its factory stays the caller's to shut down.
   */
  edge?: Omit<InlineEdgeOptions, 'log'>;
  /**
   * The locations of `--config` (origin/config/): Cache-Control per prefix and remote storage
   * (`proxy_pass`, io/remote/). Undefined: local files only, and reconfigure() refuses.
   */
  locations?: readonly LocationConfig[];
  /** Statuses of live segment refusals per format (`--fragment-*-status`; default LIVE_FRAGMENT_STATUS). */
  liveFragmentStatus?: LiveFragmentStatusTable;
  /** Live HLS playlist requests on their own way (blocking-reload.ts; default true); false: the long way. */
  blockingReloadWay?: boolean;
}

/** What reconfigure() changes: the settings a reload (SIGHUP) may change while serving. */
export interface Reconfiguration {
  manifestCacheControl: string;
  segmentCacheControl: string;
  locations: readonly LocationConfig[];
}

export const DEFAULT_MANIFEST_CACHE_BYTES = 64 << 20;

export const DEFAULT_CACHE_CONTROL = { manifest: 'public, max-age=60', segment: 'public, max-age=86400' };

export interface RunningServer {
  url: string;
  port: number;
  /** Closes at once, cutting off what is in flight. */
  close(): Promise<void>;
  /**
   * Stops taking requests and lets those in flight finish, for at most `boundMs` (drain.ts), then
   * closes; resolves true when none was cut off.
   */
  drain(boundMs: number): Promise<boolean>;
  /** Counters of the rendered-manifest cache (tests and benchmarks). */
  manifestCacheStats(): ManifestCacheStats;
  /** Its metrics (undefined when off): include() adds another registry's series to /metrics. */
  metrics: OriginMetrics | undefined;
  /**
   * Applies a reload: Cache-Control values and locations (remote storages of unchanged locations
   * keep their connections and validators). Throws when the server was started without locations.
   */
  reconfigure(r: Reconfiguration): void;
  /** The remote storage of the locations (tests, benches), if any. */
  storage: RoutedStorage | undefined;
  /** The live channels' fragments: the ingest process's messages go to its apply(). */
  live: LiveFragmentTable;
}

/**
 * Per-server state, read by every request: the handlers' context, kept file handles and recycled
 * read buffers (io/file-handles.ts), remembered routes, replies being made.
 */
interface Origin extends HotPath {
  root: string;
  opts: ServerOptions;
  /** The locations of `--config`: their Cache-Control values (remote storage is the store's). */
  locations: Locations;
  files: FileHandles;
  buffers: BufferPool;
  coalescer: Coalescer;
  /** /metrics, /healthz, /readyz (ops-endpoints.ts): readiness and draining. */
  ops: OpsState;
  /** Undefined with --follow-symlinks. */
  confinement: RootConfinement | undefined;
  /** Live channels' presentations at their current versions (live-playout.ts). */
  liveChannels: LiveChannels;
  /** Legacy Smooth passthrough (`iss_pass_through` locations). */
  passthrough: Passthrough;
  /** The live channels' published fragments (origin/live/fragment-table.ts). */
  live: LiveFragmentTable;
  /** LL-HLS blocking playlist requests (blocking-reload.ts); undefined: the long way. */
  blocking: BlockingReloads | undefined;
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const root = path.resolve(opts.root);
  const statTtlMs = opts.statTtlMs ?? DEFAULT_LIMITS.statTtlMs ?? 0;
  // Links under the root that lead out of it are refused, for presentations and static files alike.
  const confinement = opts.followSymlinks === true ? undefined : new RootConfinement(root);
  const routed = opts.locations === undefined ? undefined : new RoutedStorage(remoteLocations(root, opts.locations));
  const store = new PresentationStore({ ...DEFAULT_LIMITS, statTtlMs }, routed ?? FILE_STORAGE, confinement);
  const ctx = newPlayoutContext(
    store,
    opts.select,
    opts.manifestCacheBytes ?? DEFAULT_MANIFEST_CACHE_BYTES,
    opts.encryptedSegmentCacheBytes ?? 0,
  );
  const logger = opts.logger ?? (opts.log === undefined ? undefined : humanLogger(opts.log));
  const metrics = opts.metrics === false ? undefined : (opts.metrics ?? new OriginMetrics(ROUTES.map((r) => r.kind)));
  const requestLog = logger?.requests === true ? logger : undefined;
  const live = new LiveFragmentTable(FILE_STORAGE, root);
  const state: Origin = {
    root,
    opts,
    locations: new Locations(opts.locations),
    ctx,
    files: ctx.files,
    buffers: new BufferPool(16, 16 * READ_CHUNK),
    routes: new RouteMemo(),
    coalescer: new Coalescer(),
    logger,
    observer: metrics === undefined && requestLog === undefined ? undefined : { metrics, logger: requestLog },
    ops: { root, metrics, ready: false, draining: false, now: opts.now },
    liveChannels: new LiveChannels(FILE_STORAGE, root, opts.liveFragmentStatus, (isml, t) => live.fragments(isml, t)),
    confinement,
    passthrough: new Passthrough(routed ?? FILE_STORAGE, confinement),
    live,
    blocking: undefined,
  };
  if (opts.blockingReloadWay !== false) state.blocking = blockingReloads(state);
  // Publish messages also wake the LL-HLS requests waiting for the channel (live-low-latency.ts).
  state.live.onApply = (m) => state.liveChannels.publish(m.live);
  metrics?.bind(metricSources(state, routed));
  if (logger?.enabled('debug'))
    store.onLoad = (p, ms) =>
      logger.log('debug', `loaded ${p.path}`, { tracks: p.tracks.length, protected: p.protection !== undefined, ms });
  const origin = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    handle(req, res, state).catch((e: unknown) => {
      // Last resort: handle() maps its own errors; this only runs if writing the error failed.
      logger?.log('error', 'internal', { err: (e as Error)?.stack ?? String(e) });
      res.destroy();
    });
  };
  // Envoy's default max request headers size is 60 KiB (Node's is 16 KiB): the same limit as
  // `origin edge` when the filter runs here.
  let server: http.Server;
  if (opts.edge === undefined) server = http.createServer(origin);
  else {
    const edgeLog = logger === undefined ? undefined : (line: string) => logger.log('warn', line);
    const edge = inlineEdge({ ...opts.edge, log: edgeLog }, origin);
    // The origin's own endpoints are answered before the filter (ops-endpoints.ts).
    const listener = (req: http.IncomingMessage, res: http.ServerResponse): void =>
      isOpsUrl(req.url) ? origin(req, res) : edge.listener(req, res);
    server = http.createServer(
      { maxHeaderSize: 60 * 1024, ServerResponse: edge.ServerResponse },
      listener,
    ) as unknown as http.Server;
  }
  server.keepAliveTimeout = 65_000;
  if ((opts.warmUpRounds ?? 0) > 0) await warmUpBeforeListening(opts, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  state.ops.ready = true;
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const closed = (): void => {
    ctx.files.close();
    routed?.close();
    metrics?.close();
  };
  return {
    url: `http://${host}:${port}`,
    port,
    metrics,
    storage: routed,
    live: state.live,
    reconfigure: (r) => {
      if (routed === undefined) throw new Error('this server was started without locations (--config)');
      routed.reconfigure(remoteLocations(root, r.locations));
      state.opts = {
        ...state.opts,
        manifestCacheControl: r.manifestCacheControl,
        segmentCacheControl: r.segmentCacheControl,
      };
      state.locations = new Locations(r.locations);
      state.routes.clear();
      state.blocking?.clear();
      // What was read through a location that moved is asked again.
      store.forgetAll();
    },
    manifestCacheStats: () => ctx.manifests.stats(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          closed();
          resolve();
        });
        server.closeAllConnections();
      }),
    drain: async (boundMs) => {
      state.ops.draining = true;
      const clean = await drain(server, boundMs);
      closed();
      return clean;
    },
  };
}

async function warmUpBeforeListening(opts: ServerOptions, logger: OriginLogger | undefined): Promise<void> {
  try {
    const w = await warmUp(opts.select, opts.warmUpRounds);
    logger?.log(
      'info',
      `warm-up: ${w.requests} manifests of ${opts.warmUpRounds} synthetic 2-hour presentations in ${w.ms.toFixed(0)} ms`,
    );
  } catch (e) {
    // Never a reason not to serve: the first requests are only slower. Said even with --quiet.
    const line = `warm-up failed (serving anyway): ${(e as Error)?.stack ?? String(e)}`;
    if (logger !== undefined) logger.log('warn', line);
    else process.stderr.write(`${line}\n`);
  }
}

/** What /metrics reads of a server: its caches, coalescer, handles and buffer pools. */
function metricSources(state: Origin, routed: RoutedStorage | undefined): MetricSources {
  const { ctx } = state;
  const figures = (c: CacheCounts, bytes: boolean): CacheFigures => ({
    hits: c.hits,
    misses: c.misses,
    evictions: c.evictions,
    entries: c.entries,
    bytes: bytes ? c.cost : undefined,
  });
  return {
    caches: () => {
      const m = ctx.manifests.stats();
      const store = ctx.store.counts();
      return {
        manifest: {
          hits: m.requestHits + m.canonicalHits,
          misses: m.renders,
          evictions: m.evictions,
          entries: m.documents,
          bytes: m.bytes,
        },
        presentation: figures(store.presentations, false),
        'media-index': figures(store.media, true),
        view: figures(ctx.views.counts(), true),
        'segment-boxes': figures(ctx.segments.counts(), true),
        'encryption-layout': figures(ctx.encryptedLayouts.counts(), true),
        'encrypted-segment': figures(ctx.encrypted.counts(), true),
      };
    },
    coalesced: () => state.coalescer.joined + (state.blocking?.joined ?? 0),
    storage: () => routed?.stats,
    sourceHandles: () => ctx.files.openDescriptors,
    pools: () => ({
      segment: { idle: segmentReadBuffers.idleBytes, lent: segmentReadBuffers.lentBytes },
      stream: { idle: state.buffers.idleBytes, lent: state.buffers.lentBytes },
    }),
  };
}

/** The Cache-Control values of a URL path's location, when its location sets any (else undefined: the server's). */
function controlsAt(state: Origin, urlPath: string): CacheControls | undefined {
  const l = state.locations.size === 0 ? undefined : state.locations.match(urlPath);
  if (l === undefined || (l.manifestCacheControl === undefined && l.segmentCacheControl === undefined))
    return undefined;
  return {
    manifestCacheControl: l.manifestCacheControl ?? state.opts.manifestCacheControl,
    segmentCacheControl: l.segmentCacheControl ?? state.opts.segmentCacheControl,
  };
}

function replyOutput(state: Origin, controls: CacheControls | undefined): ReplyOutput {
  return controls === undefined ? state : { opts: controls, files: state.files, buffers: state.buffers };
}

function staticOptions(state: Origin): { serveSources: boolean; confinement: RootConfinement | undefined } {
  return { serveSources: state.opts.serveSources === true, confinement: state.confinement };
}

/** The location of a path when it is a legacy one (`iss_pass_through` or `prefer_static`), else undefined. */
function legacyAt(state: Origin, segments: readonly string[]): LocationConfig | undefined {
  if (state.locations.size === 0) return undefined;
  const l = state.locations.match('/' + segments.join('/'));
  return l !== undefined && (l.issPassThrough || l.preferStatic) ? l : undefined;
}

/** Whether a path names a file on the local disk (`prefer_static`: then it is served as it is). */
async function preferredFile(state: Origin, segments: readonly string[]): Promise<boolean> {
  const file = path.join(state.root, ...segments);
  if (state.ctx.store.storage.remote?.(file) !== undefined) return false;
  try {
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The blocking way of live HLS playlist requests over this server's state (not in legacy locations). */
function blockingReloads(state: Origin): BlockingReloads {
  const route = (rawPath: string): BlockingRoute | undefined => {
    const found = OPS_PATHS.has(rawPath) ? undefined : liveHlsPlaylist(rawPath);
    if (found === undefined || legacyAt(state, found.segments) !== undefined) return undefined;
    return { request: found.request, controls: controlsAt(state, found.request.ismPath) };
  };
  const { ctx, liveChannels: channels, logger, observer } = state;
  return new BlockingReloads({ ctx, channels, route, output: (c) => replyOutput(state, c), logger, observer });
}

/** Whether a raw URL is one of the origin's own endpoints (its path exactly, any query). */
function isOpsUrl(rawUrl: string | undefined): boolean {
  if (rawUrl === undefined) return false;
  const q = rawUrl.indexOf('?');
  return OPS_PATHS.has(q < 0 ? rawUrl : rawUrl.slice(0, q));
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, state: Origin): Promise<void> {
  const { root, opts, observer } = state;
  // While draining, every response closes its connection (drain.ts).
  if (state.ops.draining) res.shouldKeepAlive = false;
  const started = observer === undefined ? 0 : performance.now();
  if (tryCachedManifest(req, res, state, started)) return;
  if (state.blocking?.take(req, res, started) === true) return;
  let noted: Noted | undefined;
  if (observer !== undefined) {
    noted = new Noted(started);
    noteOnClose(observer, req, res, noted);
  }
  setHeaders(res, corsHeaders());
  try {
    if (req.method === 'OPTIONS') return preflight(res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD, OPTIONS');
      throw originError('method-not-allowed', `${String(req.method).slice(0, 16)} is not supported; use GET or HEAD`);
    }
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const rawQuery = q < 0 ? '' : rawUrl.slice(q + 1);
    if (OPS_PATHS.has(rawPath)) {
      if (noted !== undefined) noted.kind = 'ops';
      return await serveOps(req, res, rawPath, state.ops);
    }
    const remembered = state.routes.get(rawPath);
    const segments = remembered === undefined ? decodePath(rawPath) : [];
    const legacy = remembered === undefined ? legacyAt(state, segments) : undefined;
    if (legacy?.preferStatic === true && (await preferredFile(state, segments))) {
      if (noted !== undefined) noted.kind = 'static';
      return await serveStatic(req, res, { root, segments, rawQuery }, staticOptions(state));
    }
    const route = remembered?.request ?? matchPresentationRoute(segments);
    if (route !== undefined) {
      if (noted !== undefined) {
        noted.kind = route.route.kind;
        noted.presentation = route.ismPath;
      }
      const ism = remembered?.ism ?? path.join(root, ...route.ismPath.split('/'));
      const controls = remembered === undefined ? controlsAt(state, route.ismPath) : remembered.controls;
      // Legacy locations are not remembered: a static file may appear, and passthrough is their path.
      if (remembered === undefined && legacy === undefined) state.routes.set(rawPath, route, ism, controls);
      const joining = noted !== undefined && state.coalescer.pending(rawUrl);
      const reply = await state.coalescer.reply(rawUrl, res, (signal) =>
        legacy?.issPassThrough === true
          ? state.passthrough.reply(route, ism)
          : handlePlayout(state.ctx, route, ism, rawQuery, signal),
      );
      if (noted !== undefined) noted.cache = joining ? 'coalesced' : reply.cache;
      holdUntilClosed(res, reply);
      // Answer in the event loop's check phase, after the poll phase has read every ready socket,
      // not from inside the read callback: answered within the read callback, a cached manifest
      // ran at half the requests a second (docs/design/performance.md#synchronous-cached-hit).
      await checkPhase();
      return await send(req, res, reply, replyOutput(state, controls));
    }
    // Live channels (.isml): their state and archive; the .isml and its archive are never files.
    const live = matchLiveRoute(segments);
    if (live !== undefined && live.route.kind === 'output') {
      const output = matchTail(live.isml, live.tail);
      if (noted !== undefined) {
        noted.kind = output.route.kind;
        noted.presentation = live.isml;
      }
      const reply = await state.coalescer.reply(rawUrl, res, (signal) =>
        handleLivePlayout(state.ctx, state.liveChannels, output, rawQuery, signal),
      );
      holdUntilClosed(res, reply);
      return await send(req, res, reply, replyOutput(state, controlsAt(state, live.isml)));
    }
    if (live !== undefined)
      return await serveLiveStatus(req, res, live, rawQuery, { root, storage: FILE_STORAGE, fragments: state.live });
    const at = { root, segments, rawQuery };
    if (noted !== undefined) noted.kind = 'player';
    if (opts.playerPage && (await servePlayer(req, res, at, opts.playerExamples))) return;
    if (noted !== undefined) noted.kind = 'static';
    await serveStatic(req, res, at, staticOptions(state));
  } catch (e) {
    // A client that went away in the middle of a file is no server error (its request line says aborted).
    if (res.destroyed && (e as NodeJS.ErrnoException)?.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    // Nor one whose segment was never made because every client asking for it had gone (work-gate.ts).
    if (e instanceof OriginError && e.code === 'client-gone') return;
    sendError(res, e, state.logger);
  }
}
