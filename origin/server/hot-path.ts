// The hot path: a request for a manifest the rendered-manifest cache holds is decided in the
// socket's read callback, without a promise, and answered in the event loop's check phase. Its
// pieces: the check-phase queue (also where the long way answers), the route memo (a repeated
// request line skips path decoding and route matching) and tryCachedManifest. The headers are
// http.ts pushReplyHeaders, the same builder send() uses, so both ways send the same headers.

import * as http from 'node:http';
import { cachedManifest } from './handlers';
import { CacheControls, corsHeaders, pushReplyHeaders } from './http';
import { PlayoutContext } from './route-handler';
import { PresentationRequest } from './routes';
import { notedHot, Observer } from './observe';
import type { OriginLogger } from '../ops/log';

/**
 * Work run in the event loop's check phase, after the poll phase has read every ready socket:
 * one setImmediate for all the replies of a round, not one (and a promise) per reply.
 */
const checkQueue: (() => void)[] = [];
let checkScheduled = false;

function inCheckPhase(run: () => void): void {
  checkQueue.push(run);
  if (checkScheduled) return;
  checkScheduled = true;
  setImmediate(runCheckQueue);
}

function runCheckQueue(): void {
  checkScheduled = false;
  const runs = checkQueue.splice(0);
  for (const run of runs) run();
}

/** Resolves in the event loop's check phase. */
export function checkPhase(): Promise<void> {
  return new Promise((resolve) => inCheckPhase(resolve));
}

/** A remembered route: the matched request and the absolute path of its .ism. */
export interface RememberedRoute {
  request: PresentationRequest;
  ism: string;
  /** The Cache-Control values of its location (`--config`), when they are not the server's. */
  controls?: CacheControls;
}

/**
 * The route of a raw path, remembered: decodePath and matchPresentationRoute are pure functions
 * of it, so a repeated request line skips the decoding, the route patterns and the path join.
 * Only matched presentation routes are kept (errors and other paths go the long way), at most
 * ROUTE_MEMO_ENTRIES, forgotten all at once when full.
 */
export class RouteMemo {
  private readonly map = new Map<string, RememberedRoute>();

  get(rawPath: string): RememberedRoute | undefined {
    return this.map.get(rawPath);
  }

  set(rawPath: string, request: PresentationRequest, ism: string, controls?: CacheControls): void {
    if (rawPath.length > 1024) return;
    if (this.map.size >= ROUTE_MEMO_ENTRIES) this.map.clear();
    // Shared by every later request of this path: nothing may change it.
    Object.freeze(request.groups);
    this.map.set(rawPath, Object.freeze({ request: Object.freeze(request), ism, controls }));
  }

  /** Forgets every route (a reload changed the locations). */
  clear(): void {
    this.map.clear();
  }
}

const ROUTE_MEMO_ENTRIES = 4096;

/** What the hot path reads: the handlers' context, the route memo, the Cache-Control values, the log and metrics. */
export interface HotPath {
  ctx: PlayoutContext;
  routes: RouteMemo;
  opts: CacheControls;
  logger: OriginLogger | undefined;
  /** Where answered requests are noted (observe.ts); undefined with metrics and request lines off. */
  observer: Observer | undefined;
}

/**
 * A manifest held by the rendered-manifest cache, for a GET or HEAD without conditional headers
 * (those go through send()): true when answered (in the check phase), false when the request
 * takes the long way. Written with its headers as one array (no per-header setHeader).
 */
export function tryCachedManifest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  hot: HotPath,
  started: number,
): boolean {
  const method = req.method;
  if (method !== 'GET' && method !== 'HEAD') return false;
  const rawUrl = req.url ?? '/';
  const q = rawUrl.indexOf('?');
  const remembered = hot.routes.get(q < 0 ? rawUrl : rawUrl.slice(0, q));
  if (remembered === undefined) return false;
  // Before the lookup, which counts a hit (/metrics) that the long way would count again.
  const headers = req.headers;
  if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return false;
  const reply = cachedManifest(hot.ctx, remembered.request, remembered.ism, q < 0 ? '' : rawUrl.slice(q + 1));
  if (reply === undefined || reply.body.type !== 'text' || reply.body.bytes === undefined) return false;
  const bytes = reply.body.bytes;
  const opts = remembered.controls ?? hot.opts;
  inCheckPhase(() => {
    const head = pushReplyHeaders(corsHeaders(), reply, opts);
    head.push('Content-Length', String(bytes.byteLength));
    try {
      res.writeHead(200, head);
      res.end(method === 'HEAD' ? undefined : bytes);
    } catch (e) {
      hot.logger?.log('error', 'internal', { err: (e as Error)?.stack ?? String(e) });
      res.destroy();
      return;
    }
    if (hot.observer !== undefined)
      notedHot(hot.observer, req, remembered.request, method === 'HEAD' ? 0 : bytes.byteLength, started);
  });
  return true;
}
