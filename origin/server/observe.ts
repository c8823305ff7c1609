// What the server notes of each request: its metrics (origin/ops/metrics.ts) and its line in the
// request log (origin/ops/log.ts). A cached manifest (hot-path.ts) is noted where it is written,
// with nothing made for it unless a log line is; a request of the long way is noted when its
// response closes, finished or cut off, with what handle() learnt of it on the way (its kind, its
// presentation, how a cache answered it).

import * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import { OriginMetrics } from '../ops/metrics';
import { OriginLogger, RequestLine } from '../ops/log';
import { loggedPath, loggedUrl } from '../ops/redact';
import type { PresentationRequest } from './routes';

/** Where requests are noted; both undefined when metrics and request lines are off. */
export interface Observer {
  metrics: OriginMetrics | undefined;
  /** Set only when request lines are written. */
  logger: OriginLogger | undefined;
}

/** A request taking the long way, as handle() learns what it is. */
export class Noted {
  /** The route kind (routes.ts), or static, player, ops, other. */
  kind = 'other';
  presentation: string | undefined = undefined;
  cache: string | undefined = undefined;
  constructor(readonly started: number) {}
}

/** A request answered by the hot path: a cached manifest of `request`, 200, `bytes` of body. */
export function notedHot(
  o: Observer,
  req: http.IncomingMessage,
  request: PresentationRequest,
  bytes: number,
  started: number,
): void {
  const ms = performance.now() - started;
  const kind = request.route.kind;
  o.metrics?.request(kind, 200, bytes, ms / 1000, false);
  if (o.logger !== undefined) {
    const facts = { kind, presentation: request.ismPath, cache: 'hit', status: 200, bytes, ms };
    o.logger.request(requestLine(o.logger, req, facts));
  }
}

/** Notes the request when its response closes. */
export function noteOnClose(o: Observer, req: http.IncomingMessage, res: http.ServerResponse, n: Noted): void {
  res.once('close', () => {
    const ms = performance.now() - n.started;
    const aborted = !res.writableFinished;
    const status = res.statusCode;
    const bytes =
      aborted || req.method === 'HEAD' || status === 204 || status === 304
        ? 0
        : Number(res.getHeader('content-length') ?? 0) || 0;
    o.metrics?.request(n.kind, status, bytes, ms / 1000, aborted);
    if (o.logger === undefined) return;
    const error = status >= 400 ? res.getHeader('x-origin-error') : undefined;
    const line = requestLine(o.logger, req, {
      kind: n.kind,
      presentation: n.presentation,
      cache: n.cache,
      status,
      bytes,
      ms,
    });
    if (typeof error === 'string') line.error = error;
    if (aborted) line.aborted = true;
    o.logger.request(line);
  });
}

interface Facts {
  kind: string;
  presentation: string | undefined;
  cache: string | undefined;
  status: number;
  bytes: number;
  ms: number;
}

/** An `x-request-id` worth carrying: printable ASCII without spaces, at most 128 characters. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

function requestLine(logger: OriginLogger, req: http.IncomingMessage, f: Facts): RequestLine {
  const id = req.headers['x-request-id'];
  const line: RequestLine = {
    requestId: typeof id === 'string' && REQUEST_ID.test(id) ? id : undefined,
    method: String(req.method).slice(0, 16),
    url: loggedUrl(req.url ?? '/'),
    kind: f.kind,
    status: f.status,
    bytes: f.bytes,
    durationMs: Math.round(f.ms * 1000) / 1000,
  };
  if (f.presentation !== undefined) line.presentation = loggedPath(f.presentation);
  if (f.cache !== undefined) line.cache = f.cache;
  if (logger.enabled('debug')) {
    const h = req.headers;
    line.remote = req.socket.remoteAddress;
    if (typeof h['user-agent'] === 'string') line.userAgent = h['user-agent'].slice(0, 256);
    if (typeof h.range === 'string') line.range = h.range.slice(0, 128);
  }
  return line;
}
