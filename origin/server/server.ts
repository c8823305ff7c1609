// `origin serve`: the HTTP layer. It owns everything HTTP — methods, conditional requests, Range,
// CORS, Cache-Control, and the one mapping of errors to status codes and the `X-Origin-Error`
// header — and nothing else: what to answer comes from the route table and the playout handler.

import { createReadStream, promises as fs } from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { httpStatusOf, OriginError, originError } from '../errors';
import { DEFAULT_LIMITS, PresentationStore } from '../cache/presentation-store';
import { ManifestCacheStats } from '../cache/manifest-cache';
import { TrackSelector } from '../model/view';
import { indexPage, isPlayerName, PLAYER_ASSET_CONTENT_TYPE, playerAssetFile, playerPage } from '../player/player-page';
import { cachedManifest, handlePlayout, newPlayoutContext, Part, PlayoutContext, Reply } from './handlers';
import { decodePath, matchPresentationRoute, PresentationRequest } from './routes';
import { warmUp } from './warm-up';
import { ifNoneMatchHits, notModifiedSince, parseRange, RangeResult } from './http-util';
import { listPresentations } from './presentations';
import { FileHandles, Lease } from '../io/file-handles';
import { BufferPool } from '../io/buffers';
import { inlineEdge, InlineEdgeOptions } from '../../host-glue/envoy/edge-inline';

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
  /** Bound of the rendered-manifest cache in bytes (default DEFAULT_MANIFEST_CACHE_BYTES); 0 disables it. */
  manifestCacheBytes?: number;
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

/** What the player page requests: everything but the Dolby audio browsers cannot decode. */
export const BROWSER_FILTER = 'FourCC!="ac-3"&&FourCC!="ec-3"';

export const DEFAULT_CACHE_CONTROL = { manifest: 'public, max-age=60', segment: 'public, max-age=86400' };

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
  /** Counters of the rendered-manifest cache (tests and benchmarks). */
  manifestCacheStats(): ManifestCacheStats;
}

const STATIC_TYPES: Record<string, string> = {
  '.ism': 'application/xml',
  '.ismv': 'video/mp4',
  '.isma': 'audio/mp4',
  '.ismt': 'application/mp4',
  '.mp4': 'video/mp4',
  '.m4s': 'video/mp4',
  '.vtt': 'text/vtt',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const root = path.resolve(opts.root);
  const statTtlMs = opts.statTtlMs ?? DEFAULT_LIMITS.statTtlMs ?? 0;
  const ctx = newPlayoutContext(
    new PresentationStore({ ...DEFAULT_LIMITS, statTtlMs }),
    opts.select,
    opts.manifestCacheBytes ?? DEFAULT_MANIFEST_CACHE_BYTES,
  );
  const inflight: Inflight = Object.create(null) as Inflight;
  const io: Io = { files: ctx.files, buffers: new BufferPool(16, 16 * READ_CHUNK), routes: new RouteMemo() };
  const origin = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    handle(req, res, root, ctx, opts, inflight, io).catch((e: unknown) => {
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
function checkPhase(): Promise<void> {
  return new Promise((resolve) => inCheckPhase(resolve));
}

/**
 * The route of a raw path, remembered: decodePath and matchPresentationRoute are pure functions
 * of it, so a repeated request line skips the decoding, the route patterns and the path join.
 * Only matched presentation routes are kept (errors and other paths go the long way), at most
 * ROUTE_MEMO_ENTRIES, forgotten all at once when full.
 */
class RouteMemo {
  private readonly map = new Map<string, { request: PresentationRequest; ism: string }>();

  get(rawPath: string): { request: PresentationRequest; ism: string } | undefined {
    return this.map.get(rawPath);
  }

  set(rawPath: string, request: PresentationRequest, ism: string): void {
    if (rawPath.length > 1024) return;
    if (this.map.size >= ROUTE_MEMO_ENTRIES) this.map.clear();
    // Shared by every later request of this path: nothing may change it.
    Object.freeze(request.groups);
    this.map.set(rawPath, Object.freeze({ request: Object.freeze(request), ism }));
  }
}

const ROUTE_MEMO_ENTRIES = 4096;

/** Per-server request state: kept file handles and recycled read buffers (file-io.ts), routes. */
interface Io {
  files: FileHandles;
  buffers: BufferPool;
  routes: RouteMemo;
}

const CORS_ORIGIN = '*';
const CORS_EXPOSE = 'Content-Length, Content-Range, ETag, Last-Modified, X-Origin-Error';

/**
 * Hot path: a manifest held by the rendered-manifest cache, for a GET or HEAD without
 * conditional headers (those go through send()). Decided synchronously in the read callback,
 * written in the check phase with its headers as one array (no per-header setHeader); the
 * headers and their order are send()'s.
 */
function tryCachedManifest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  ctx: PlayoutContext,
  opts: ServerOptions,
  io: Io,
): boolean {
  const method = req.method;
  if (method !== 'GET' && method !== 'HEAD') return false;
  const rawUrl = req.url ?? '/';
  const q = rawUrl.indexOf('?');
  const known = io.routes.get(q < 0 ? rawUrl : rawUrl.slice(0, q));
  if (known === undefined) return false;
  const reply = cachedManifest(ctx, known.request, known.ism, q < 0 ? '' : rawUrl.slice(q + 1));
  if (reply === undefined || reply.body.type !== 'text' || reply.body.bytes === undefined) return false;
  const headers = req.headers;
  if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return false;
  const bytes = reply.body.bytes;
  inCheckPhase(() => {
    const head = ['Access-Control-Allow-Origin', CORS_ORIGIN, 'Access-Control-Expose-Headers', CORS_EXPOSE];
    if (opts.manifestCacheControl !== '') head.push('Cache-Control', opts.manifestCacheControl);
    head.push(
      'Last-Modified',
      httpDate(reply.lastModified),
      'ETag',
      reply.etag,
      'Content-Type',
      reply.contentType,
      'Content-Length',
      String(bytes.byteLength),
    );
    try {
      res.writeHead(200, head);
      res.end(method === 'HEAD' ? undefined : bytes);
    } catch (e) {
      opts.log?.(`internal: ${(e as Error)?.stack ?? String(e)}`);
      res.destroy();
    }
  });
  return true;
}

/** HTTP dates of recent modification times (a handful of presentations answer most requests). */
const httpDates = new Map<number, string>();

function httpDate(d: Date): string {
  const ms = d.getTime();
  let text = httpDates.get(ms);
  if (text === undefined) {
    if (httpDates.size >= 1024) httpDates.clear();
    text = d.toUTCString();
    httpDates.set(ms, text);
  }
  return text;
}

async function handle(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  root: string,
  ctx: PlayoutContext,
  opts: ServerOptions,
  inflight: Inflight,
  io: Io,
): Promise<void> {
  if (opts.log !== undefined) {
    const started = process.hrtime.bigint();
    const log = opts.log;
    res.once('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log(`${req.method} ${String(req.url).slice(0, 512)} ${res.statusCode} ${ms.toFixed(1)} ms`);
    });
  }
  if (tryCachedManifest(req, res, ctx, opts, io)) return;
  res.setHeader('Access-Control-Allow-Origin', CORS_ORIGIN);
  res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE);
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
    const known = io.routes.get(rawPath);
    const segments = known === undefined ? decodePath(rawPath) : [];
    const route = known?.request ?? matchPresentationRoute(segments);
    if (route !== undefined) {
      const ism = known?.ism ?? path.join(root, ...route.ismPath.split('/'));
      if (known === undefined) io.routes.set(rawPath, route, ism);
      const reply = await coalesce(inflight, rawUrl, () => handlePlayout(ctx, route, ism, rawQuery));
      holdUntilClosed(res, reply);
      // Answer in the event loop's check phase, after the poll phase has read every ready socket,
      // not from inside the read callback. Measured (bench/README.md, "answering later"): a cached
      // manifest answered within the read callback (every await already settled) ran at half the
      // req/s at 32 connections (16–17k against 25–29k, wrk pinned to the other CPU).
      await checkPhase();
      return await send(req, res, reply, opts, io);
    }
    if (opts.playerPage && (await servePlayer(req, res, segments, rawQuery, root))) return;
    await serveStatic(req, res, root, segments);
  } catch (e) {
    sendError(res, e, opts);
  }
}

/**
 * Request coalescing: concurrent requests with the same URL share one reply (the generated bytes
 * of a TS segment, the boxes of an fMP4 one). Nothing is kept once it is answered; conditional
 * requests and Range are applied to the shared reply per request.
 */
function coalesce(inflight: Inflight, key: string, make: () => Promise<Reply>): Promise<Reply> {
  const joined = inflight[key];
  if (joined !== undefined) {
    joined.users++;
    return joined.reply;
  }
  const entry: Pending = { reply: make(), users: 1 };
  inflight[key] = entry;
  // Registered before any user's await, so it runs first: the key is gone (no one joins any more)
  // before the users count as holders of lent bytes, and each holder lets go when its response
  // closes (holdUntilClosed).
  entry.reply.then(
    (r) => {
      delete inflight[key];
      if (r.body.type === 'bytes') r.body.loan?.share(entry.users);
    },
    () => void delete inflight[key],
  );
  return entry.reply;
}

/**
 * Lent reply bytes (a TS segment's output, playout.ts) stay with this response until it has
 * closed: 'close' follows 'finish', which follows the socket's last write callback, or comes when
 * the connection is gone, after libuv has cancelled its pending writes. Either way nothing reads
 * the bytes after it.
 */
function holdUntilClosed(res: http.ServerResponse, reply: Reply): void {
  const loan = reply.body.type === 'bytes' ? reply.body.loan : undefined;
  if (loan === undefined) return;
  if (res.closed) loan.letGo();
  else res.once('close', () => loan.letGo());
}

/**
 * Replies being made, by request line: a dictionary object, not a Map. Each request adds a key
 * and removes it, and a Map churned like that rebuilds its table every few requests with each
 * obsolete table linked to the next; once one is promoted the chain keeps later tables, and the
 * replies in them (segment bytes), alive until a full collection (host-glue/proxy-wasm/vm.ts ContextTable).
 */
type Inflight = Record<string, Pending | undefined>;

/** A reply being made and the number of requests waiting for it. */
interface Pending {
  reply: Promise<Reply>;
  users: number;
}

function preflight(res: http.ServerResponse): void {
  res.statusCode = 204;
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'Range, If-None-Match, If-Modified-Since');
  res.setHeader('Access-Control-Max-Age', '86400');
  res.end();
}

/** The one place errors become HTTP: status by kind, a one-line reason, a stable code. */
export function sendError(res: http.ServerResponse, e: unknown, opts: ServerOptions): void {
  const status = httpStatusOf(e);
  const known = e instanceof OriginError;
  // Server-side failures keep their detail in the log; the client gets a line without paths.
  const line =
    known && status < 500
      ? e.message
      : status === 500 && known
        ? `${e.kind}: the origin could not produce this response`
        : 'internal error';
  if (status >= 500) opts.log?.(`error ${status}: ${(e as Error)?.stack ?? String(e)}`);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${line.replace(/[\r\n]+/g, ' ')}\n`;
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Origin-Error', known ? e.code : 'internal');
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

async function send(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  reply: Reply,
  opts: ServerOptions,
  io: Io,
): Promise<void> {
  const cacheControl = reply.cacheClass === 'manifest' ? opts.manifestCacheControl : opts.segmentCacheControl;
  if (cacheControl !== '') res.setHeader('Cache-Control', cacheControl);
  res.setHeader('Last-Modified', httpDate(reply.lastModified));
  res.setHeader('ETag', reply.etag);
  res.setHeader('Content-Type', reply.contentType);
  if (
    ifNoneMatchHits(req.headers['if-none-match'], reply.etag) ||
    notModifiedSince(req.headers['if-none-match'], req.headers['if-modified-since'], reply.lastModified)
  ) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const body = reply.body;
  if (body.type !== 'parts') {
    const bytes = body.type === 'text' ? (body.bytes ?? Buffer.from(body.text, 'utf8')) : body.bytes;
    return sendBytes(req, res, bytes, reply.cacheClass === 'segment');
  }
  res.setHeader('Accept-Ranges', 'bytes');
  const range = parseRange(req.headers.range, body.length);
  if (range.kind === 'unsatisfiable') return unsatisfiable(res, body.length);
  const [start, end] = range.kind === 'range' ? [range.start, range.end] : [0, body.length - 1];
  startBody(res, range, body.length);
  if (req.method === 'HEAD' || body.length === 0) return void res.end();
  await streamParts(res, io, body.file, body.parts, start, end);
}

function startBody(res: http.ServerResponse, range: RangeResult, total: number): void {
  if (range.kind === 'range') {
    res.statusCode = 206;
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${total}`);
    res.setHeader('Content-Length', range.end - range.start + 1);
  } else {
    res.statusCode = 200;
    res.setHeader('Content-Length', total);
  }
}

function unsatisfiable(res: http.ServerResponse, total: number): void {
  res.statusCode = 416;
  res.setHeader('Content-Range', `bytes */${total}`);
  res.removeHeader('Content-Type');
  res.end();
}

function sendBytes(req: http.IncomingMessage, res: http.ServerResponse, bytes: Uint8Array, ranges: boolean): void {
  let range: RangeResult = { kind: 'full' };
  if (ranges) {
    res.setHeader('Accept-Ranges', 'bytes');
    range = parseRange(req.headers.range, bytes.byteLength);
    if (range.kind === 'unsatisfiable') return unsatisfiable(res, bytes.byteLength);
  }
  startBody(res, range, bytes.byteLength);
  if (req.method === 'HEAD') return void res.end();
  res.end(range.kind === 'range' ? bytes.subarray(range.start, range.end + 1) : bytes);
}

/** Largest read from a source per write: a segment streams in pieces of at most this. */
const READ_CHUNK = 1 << 20;

/**
 * Writes the [start, end] window of a list of parts; file parts stream from disk by range through
 * a kept handle (file-io.ts), in reads of up to READ_CHUNK into pooled buffers that return to the
 * pool once the socket has taken them (no stream objects), waiting for 'drain' when the socket is
 * full. A client that goes away stops the reads.
 */
async function streamParts(
  res: http.ServerResponse,
  io: Io,
  file: string,
  parts: readonly Part[],
  start: number,
  end: number,
): Promise<void> {
  let lease: Lease | undefined;
  try {
    let at = 0;
    for (const part of parts) {
      const length = part.kind === 'bytes' ? part.bytes.byteLength : part.length;
      const from = Math.max(start, at);
      const to = Math.min(end + 1, at + length);
      for (let pos = from; pos < to && !res.destroyed;) {
        let ok: boolean;
        if (part.kind === 'bytes') {
          const chunk = part.bytes.subarray(pos - at, to - at);
          pos += chunk.byteLength;
          ok = res.write(chunk);
        } else {
          lease ??= await io.files.acquire(file);
          const want = Math.min(READ_CHUNK, to - pos);
          const buffer = io.buffers.take(READ_CHUNK);
          const { bytesRead } = await lease.handle.read(buffer, 0, want, part.offset + (pos - at));
          if (bytesRead === 0) {
            io.buffers.give(buffer);
            throw originError('io', `${file} ended before byte ${part.offset + (pos - at)}`, { subject: file });
          }
          pos += bytesRead;
          ok = res.write(buffer.subarray(0, bytesRead), (err) => {
            if (!err) io.buffers.give(buffer);
          });
        }
        if (!ok) await drained(res);
      }
      at += length;
      if (at > end) break;
    }
    res.end();
  } finally {
    lease?.release();
  }
}

function drained(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

async function servePlayer(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  segments: string[],
  rawQuery: string,
  root: string,
): Promise<boolean> {
  const urlPath = '/' + segments.join('/');
  const html = (text: string): void => {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  if (urlPath === '/') {
    const list = await listPresentations(root);
    // Browsers decode neither AC-3 nor E-AC-3 (and HLS pairs video with the highest audio
    // group): the page asks for what a browser can play, through the filter language.
    const q = `?filter=${encodeURIComponent(BROWSER_FILTER)}`;
    html(
      indexPage(
        list.map((p) => ({
          name: p,
          urls: { smooth: `${p}/Manifest${q}`, dash: `${p}/.mpd${q}`, hls: `${p}/.m3u8${q}` },
        })),
      ),
    );
    return true;
  }
  if (urlPath === '/play') {
    const params = new URLSearchParams(rawQuery);
    const player = params.get('player') ?? '';
    const url = params.get('url') ?? '';
    if (!isPlayerName(player))
      throw originError('bad-parameter', `unknown player "${player.slice(0, 32)}"`, { subject: 'player' });
    if (url === '' || url.length > 2048)
      throw originError('bad-parameter', 'url must be a manifest URL of at most 2048 characters', { subject: 'url' });
    html(playerPage(player, url));
    return true;
  }
  if (urlPath.startsWith('/_players/')) {
    const file = playerAssetFile(urlPath);
    if (file === undefined) throw originError('unknown-url', `no player asset ${urlPath.slice(0, 128)}`);
    const bytes = await fs.readFile(file);
    res.setHeader('Content-Type', PLAYER_ASSET_CONTENT_TYPE);
    res.setHeader('Cache-Control', 'public, max-age=3600');
    sendBytes(req, res, bytes, false);
    return true;
  }
  return false;
}

async function serveStatic(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  root: string,
  segments: string[],
): Promise<void> {
  const file = path.join(root, ...segments);
  // decodePath refused dot segments and encoded slashes; this guards the join anyway.
  if (file !== root && !file.startsWith(root + path.sep)) throw originError('bad-path', 'path outside the root');
  let stat;
  try {
    stat = await fs.stat(file);
  } catch {
    throw originError('unknown-url', `nothing at /${segments.join('/').slice(0, 256)}`);
  }
  if (!stat.isFile()) throw originError('unknown-url', `nothing at /${segments.join('/').slice(0, 256)}`);
  const etag = `"${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}"`;
  res.setHeader('Content-Type', STATIC_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream');
  res.setHeader('Last-Modified', stat.mtime.toUTCString());
  res.setHeader('ETag', etag);
  res.setHeader('Accept-Ranges', 'bytes');
  if (
    ifNoneMatchHits(req.headers['if-none-match'], etag) ||
    notModifiedSince(req.headers['if-none-match'], req.headers['if-modified-since'], stat.mtime)
  ) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const range = parseRange(req.headers.range, stat.size);
  if (range.kind === 'unsatisfiable') return unsatisfiable(res, stat.size);
  startBody(res, range, stat.size);
  if (req.method === 'HEAD' || stat.size === 0) return void res.end();
  const [start, end] = range.kind === 'range' ? [range.start, range.end] : [0, stat.size - 1];
  await pipeline(createReadStream(file, { start, end }), res);
}
