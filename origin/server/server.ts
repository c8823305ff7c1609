// `origin serve`: the server's wiring and the path of a request. Methods and CORS are decided
// here; the hot path (hot-path.ts) answers cached manifests; other presentation URLs are matched
// (routes.ts), coalesced (coalesce.ts), answered by their route's handler (handlers.ts) and sent
// (http.ts, which also maps errors to statuses); the rest are player pages and files (static.ts).

import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { originError } from '../errors';
import { DEFAULT_LIMITS, PresentationStore } from '../cache/presentation-store';
import { ManifestCacheStats } from '../cache/manifest-cache';
import { TrackSelector } from '../model/view';
import { handlePlayout } from './handlers';
import { newPlayoutContext, PlayoutContext } from './route-handler';
import { decodePath, matchPresentationRoute } from './routes';
import { warmUp } from './warm-up';
import { FileHandles } from '../io/file-handles';
import { BufferPool } from '../io/buffers';
import { inlineEdge, InlineEdgeOptions } from '../../host-glue/envoy/edge-inline';
import { corsHeaders, preflight, READ_CHUNK, send, sendError, setHeaders } from './http';
import { checkPhase, RouteMemo, tryCachedManifest } from './hot-path';
import { Coalescer, holdUntilClosed } from './coalesce';
import { serveStatic, servePlayer } from './static';

export interface ServerOptions {
  root: string;
  host: string;
  port: number;
  /** Cache-Control for manifests and for segments; '' sends none. */
  manifestCacheControl: string;
  segmentCacheControl: string;
  select: TrackSelector;
  /** Serve `/`, `/play` and `/_players/` (the player page). */
  playerPage: boolean;
  /**
   * Serve media sources (.ismv, .isma, ...) and clear server manifests as static files
   * (`--serve-sources`); off, they are 404 (static.ts: no clear copy of encrypted content).
   */
  serveSources?: boolean;
  /** Bound of the rendered-manifest cache in bytes (default DEFAULT_MANIFEST_CACHE_BYTES); 0 disables it. */
  manifestCacheBytes?: number;
  /** Bound of the cache of encrypted segments in bytes (default 0: none, every request encrypts). */
  encryptedSegmentCacheBytes?: number;
  /** How long a file's stat (and an open handle of a source) is trusted, ms (default DEFAULT_LIMITS.statTtlMs; 0: every request sees a change). */
  statTtlMs?: number;
  log?: (line: string) => void;
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
}

export const DEFAULT_MANIFEST_CACHE_BYTES = 64 << 20;

export const DEFAULT_CACHE_CONTROL = { manifest: 'public, max-age=60', segment: 'public, max-age=86400' };

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
  /** Counters of the rendered-manifest cache (tests and benchmarks). */
  manifestCacheStats(): ManifestCacheStats;
}

/**
 * Per-server state, read by every request: the handlers' context, kept file handles and recycled
 * read buffers (io/file-handles.ts), remembered routes, replies being made.
 */
interface Origin {
  root: string;
  opts: ServerOptions;
  ctx: PlayoutContext;
  files: FileHandles;
  buffers: BufferPool;
  routes: RouteMemo;
  coalescer: Coalescer;
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const root = path.resolve(opts.root);
  const statTtlMs = opts.statTtlMs ?? DEFAULT_LIMITS.statTtlMs ?? 0;
  const ctx = newPlayoutContext(
    new PresentationStore({ ...DEFAULT_LIMITS, statTtlMs }),
    opts.select,
    opts.manifestCacheBytes ?? DEFAULT_MANIFEST_CACHE_BYTES,
    opts.encryptedSegmentCacheBytes ?? 0,
  );
  const state: Origin = {
    root,
    opts,
    ctx,
    files: ctx.files,
    buffers: new BufferPool(16, 16 * READ_CHUNK),
    routes: new RouteMemo(),
    coalescer: new Coalescer(),
  };
  const origin = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    handle(req, res, state).catch((e: unknown) => {
      // Last resort: handle() maps its own errors; this only runs if writing the error failed.
      opts.log?.(`internal: ${(e as Error)?.stack ?? String(e)}`);
      res.destroy();
    });
  };
  // Envoy's default max request headers size is 60 KiB (Node's is 16 KiB): the same limit as
  // `origin edge` when the filter runs here.
  let server: http.Server;
  if (opts.edge === undefined) server = http.createServer(origin);
  else {
    const edge = inlineEdge({ ...opts.edge, log: opts.log }, origin);
    server = http.createServer(
      { maxHeaderSize: 60 * 1024, ServerResponse: edge.ServerResponse },
      edge.listener,
    ) as unknown as http.Server;
  }
  server.keepAliveTimeout = 65_000;
  if ((opts.warmUpRounds ?? 0) > 0) {
    try {
      const w = await warmUp(opts.select, opts.warmUpRounds);
      opts.log?.(
        `warm-up: ${w.requests} manifests of ${opts.warmUpRounds} synthetic 2-hour presentations in ${w.ms.toFixed(0)} ms`,
      );
    } catch (e) {
      // Never a reason not to serve: the first requests are only slower. Said even with --quiet.
      (opts.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(
        `warm-up failed (serving anyway): ${(e as Error)?.stack ?? String(e)}`,
      );
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    port,
    manifestCacheStats: () => ctx.manifests.stats(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          ctx.files.close();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, state: Origin): Promise<void> {
  const { root, opts } = state;
  if (opts.log !== undefined) {
    const started = process.hrtime.bigint();
    const log = opts.log;
    res.once('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log(`${req.method} ${String(req.url).slice(0, 512)} ${res.statusCode} ${ms.toFixed(1)} ms`);
    });
  }
  if (tryCachedManifest(req, res, state)) return;
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
    const remembered = state.routes.get(rawPath);
    const segments = remembered === undefined ? decodePath(rawPath) : [];
    const route = remembered?.request ?? matchPresentationRoute(segments);
    if (route !== undefined) {
      const ism = remembered?.ism ?? path.join(root, ...route.ismPath.split('/'));
      if (remembered === undefined) state.routes.set(rawPath, route, ism);
      const reply = await state.coalescer.reply(rawUrl, () => handlePlayout(state.ctx, route, ism, rawQuery));
      holdUntilClosed(res, reply);
      // Answer in the event loop's check phase, after the poll phase has read every ready socket,
      // not from inside the read callback: answered within the read callback, a cached manifest
      // ran at half the requests a second (docs/design/performance.md#synchronous-cached-hit).
      await checkPhase();
      return await send(req, res, reply, state);
    }
    const at = { root, segments, rawQuery };
    if (opts.playerPage && (await servePlayer(req, res, at))) return;
    await serveStatic(req, res, at, opts.serveSources === true);
  } catch (e) {
    sendError(res, e, opts.log);
  }
}
