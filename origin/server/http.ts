// HTTP for a reply: the headers (one builder, also used by the hot path), conditional requests,
// Range, streaming of file parts, CORS, and the one mapping of errors to a status and the
// `X-Origin-Error` header. What to answer comes from the route table and the handlers.

import * as http from 'node:http';
import { httpStatusOf, liveFragmentError, OriginError, originError } from '../errors';
import type { GrowingSegment } from '../live/chunked-segment';
import { FileHandles, Lease } from '../io/file-handles';
import { BufferPool } from '../io/buffers';
import { Part, Reply } from './route-handler';
import { ifNoneMatchHits, notModifiedSince, parseRange, RangeResult } from './http-util';
import type { OriginLogger } from '../ops/log';

/** Cache-Control for manifests and for segments; '' sends none. */
export interface CacheControls {
  manifestCacheControl: string;
  segmentCacheControl: string;
}

/** What send() needs besides the request: the Cache-Control values and where file parts are read. */
export interface ReplyOutput {
  opts: CacheControls;
  /** Kept source handles (io/file-handles.ts). */
  files: FileHandles;
  /** Recycled read buffers of READ_CHUNK bytes. */
  buffers: BufferPool;
}

const CORS_ORIGIN = '*';
const CORS_EXPOSE = 'Content-Length, Content-Range, ETag, Last-Modified, X-Origin-Error';

/** The CORS headers every response starts with, as name, value pairs (a new array each time). */
export function corsHeaders(): string[] {
  return ['Access-Control-Allow-Origin', CORS_ORIGIN, 'Access-Control-Expose-Headers', CORS_EXPOSE];
}

/**
 * Appends a reply's headers, as name, value pairs, to `head` (which holds the CORS headers): the
 * validators and the type, in the order every reply sends them. The body's headers (Accept-Ranges,
 * Content-Range, Content-Length) follow. send() and the hot path (hot-path.ts) both write these.
 */
export function pushReplyHeaders(head: string[], reply: Reply, controls: CacheControls): string[] {
  const cacheControl =
    reply.cacheControl ??
    (reply.cacheClass === 'manifest' ? controls.manifestCacheControl : controls.segmentCacheControl);
  if (cacheControl !== '') head.push('Cache-Control', cacheControl);
  head.push('Last-Modified', httpDate(reply.lastModified));
  // A segment still growing has no validator (live-chunked.ts): its bytes are not final yet.
  if (reply.etag !== '') head.push('ETag', reply.etag);
  head.push('Content-Type', reply.contentType);
  return head;
}

/** Sets name, value pairs on the response, in order. */
export function setHeaders(res: http.ServerResponse, head: readonly string[]): void {
  for (let i = 0; i < head.length; i += 2) res.setHeader(head[i]!, head[i + 1]!);
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

export function preflight(res: http.ServerResponse): void {
  res.statusCode = 204;
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'Range, If-None-Match, If-Modified-Since');
  res.setHeader('Access-Control-Max-Age', '86400');
  res.end();
}

/**
 * The one place errors become HTTP: status by kind, a one-line reason, a stable code. `logger`
 * receives server-side failures (5xx) with their detail.
 */
export function sendError(res: http.ServerResponse, e: unknown, logger?: OriginLogger): void {
  const status = httpStatusOf(e);
  const isOriginError = e instanceof OriginError;
  // Server-side failures keep their detail in the log; the client gets a line without paths.
  const line =
    isOriginError && status < 500
      ? e.message
      : isOriginError
        ? `${status === 500 ? e.kind : e.code}: the origin could not produce this response`
        : 'internal error';
  if (status >= 500) logger?.log('error', `error ${status}`, { err: (e as Error)?.stack ?? String(e) });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${line.replace(/[\r\n]+/g, ' ')}\n`;
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Origin-Error', isOriginError ? e.code : 'internal');
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** A reply's headers, then 304, 416 or its body (whole, or the requested range). */
export async function send(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  reply: Reply,
  out: ReplyOutput,
): Promise<void> {
  setHeaders(res, pushReplyHeaders([], reply, out.opts));
  if (reply.growing !== undefined) return sendGrowing(req, res, reply.growing);
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
  await streamParts(res, out, body, start, end);
}

/**
 * A segment being ingested (live-chunked.ts): 200 with chunked transfer coding (no Content-Length),
 * each chunk written as it arrives, shared by every response (no copy per client); a failed
 * segment cuts the response. A Range on it waits until the segment is whole, then is answered
 * from its bytes as for any segment (206, or 416 past its end).
 */
async function sendGrowing(req: http.IncomingMessage, res: http.ServerResponse, g: GrowingSegment): Promise<void> {
  if (req.headers.range !== undefined) {
    if (!(await g.done())) throw liveFragmentError('fragment-not-yet', 'dash', 'the segment was not completed');
    return sendBytes(req, res, Buffer.concat(g.chunks), true);
  }
  res.statusCode = 200;
  if (req.method === 'HEAD') return void res.end();
  await new Promise<void>((resolve) => {
    const stop = g.listen({
      chunk: (bytes) => void res.write(bytes),
      end: (complete) => (complete ? res.end() : res.destroy()),
    });
    res.once('close', () => {
      stop();
      resolve();
    });
  });
}

/** The status and length headers of a body: 206 with Content-Range for a range, else 200. */
export function startBody(res: http.ServerResponse, range: RangeResult, total: number): void {
  if (range.kind === 'range') {
    res.statusCode = 206;
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${total}`);
    res.setHeader('Content-Length', range.end - range.start + 1);
  } else {
    res.statusCode = 200;
    res.setHeader('Content-Length', total);
  }
}

export function unsatisfiable(res: http.ServerResponse, total: number): void {
  res.statusCode = 416;
  res.setHeader('Content-Range', `bytes */${total}`);
  res.removeHeader('Content-Type');
  res.end();
}

/** Bytes in memory as the body; with `ranges`, Accept-Ranges and the Range header honoured. */
export function sendBytes(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  bytes: Uint8Array,
  ranges: boolean,
): void {
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
export const READ_CHUNK = 1 << 20;

/**
 * Writes the [start, end] window of a list of parts; file parts stream from disk by range through
 * a kept handle (io/file-handles.ts), in reads of up to READ_CHUNK into pooled buffers that return
 * to the pool once the socket has taken them (no stream objects), waiting for 'drain' when the
 * socket is full. A client that goes away stops the reads.
 */
async function streamParts(
  res: http.ServerResponse,
  io: ReplyOutput,
  body: { file: string; parts: readonly Part[] },
  start: number,
  end: number,
): Promise<void> {
  const { file, parts } = body;
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
          const { bytesRead } = await lease.handle
            .read(buffer, 0, want, part.offset + (pos - at))
            .catch((e: unknown) => {
              io.buffers.give(buffer); // the read has settled: nothing lands in it any more
              throw e;
            });
          if (bytesRead === 0) {
            io.buffers.give(buffer);
            throw originError('io', `${file} ended before byte ${part.offset + (pos - at)}`, { subject: file });
          }
          pos += bytesRead;
          // A buffer whose write failed is not reused (libuv may not be done with it): dropped.
          ok = res.write(buffer.subarray(0, bytesRead), (err) => {
            if (err) io.buffers.drop(buffer);
            else io.buffers.give(buffer);
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
  // A client that went away while a read was awaited: its 'close' has been emitted already and
  // would never come again; waiting for it held the source's lease (and descriptor) forever.
  if (res.destroyed) return Promise.resolve();
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
