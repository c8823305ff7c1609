// The ingest listener (`origin serve --ingest-port`): encoders POST or PUT fragmented MP4 to
// `<ch>.isml/Streams(<name>)` (origin/live/live-routes.ts). It is its own http.Server because
// Node's timeouts are per server: an ingest POST lasts as long as the event, so there is no
// request timeout (Node's default would cut it after 5 minutes), but the headers timeout stays,
// and a body that sends nothing for `idleTimeoutMs` is answered 408 and closed.
//
// Statuses are the DASH-IF live media ingest spec's (§Failure behaviours): 403 credentials, 404
// unknown publishing point, 415 media type, 412 a fragment before its header, 400 anything else
// malformed; plus 401 when no credentials came (ingest-auth.ts: Basic, the edge's signed URLs). Memory per request is bounded: the body is cut into boxes as it arrives
// (origin/live/box-stream.ts), at most one box is held, and a box larger than `maxBoxBytes` is
// refused from its header. The next chunk is read only when the previous one is archived.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { originError } from '../errors';
import { FILE_ARCHIVE_STORAGE } from '../io/archive-storage';
import { FILE_STORAGE } from '../io/storage';
import { ArchiveIo } from '../live/archive';
import { BoxSplitter } from '../live/box-stream';
import { Channel } from '../live/channel';
import { Channels } from '../live/channels';
import { LivePublished } from '../live/fragment-table';
import { IngestParser } from '../live/ingest-parser';
import { matchLiveRoute } from '../live/live-routes';
import { OriginLogger } from '../ops/log';
import { sendError } from './http';
import { authorizeIngest, authRequired, IngestAuth } from './ingest-auth';
import { decodePath } from './routes';
import { TokenRule } from './url-token';

export const DEFAULT_INGEST_IDLE_MS = 30_000;
/** Largest box an encoder may send: a 6-second 4K fragment's mdat is far below. */
export const DEFAULT_MAX_INGEST_BOX = 64 << 20;
/** How long close() lets the requests being read end before it cuts their connections, ms. */
const CLOSE_GRACE_MS = 2_000;

export interface IngestServerOptions {
  root: string;
  host: string;
  port: number;
  /** Accepted Basic credentials, `user:password`; none, and no token: open (loopback only). */
  credentials?: readonly string[];
  /** Signed URLs accepted (the edge's auth_token scheme, origin/server/url-token.ts). */
  token?: TokenRule;
  /** A body silent this long is closed (default DEFAULT_INGEST_IDLE_MS). */
  idleTimeoutMs?: number;
  /** Node's headersTimeout (default 60 s). */
  headersTimeoutMs?: number;
  maxBoxBytes?: number;
  /** The channels' clock, ms since the epoch (default Date.now). */
  now?: () => number;
  /** fsync each archived fragment (default true). */
  sync?: boolean;
  io?: ArchiveIo;
  logger?: OriginLogger;
  /** Told of each published fragment: the serving processes' fragment tables (fragment-table.ts). */
  onPublish?: (m: LivePublished) => void;
}

export interface RunningIngest {
  url: string;
  port: number;
  channels: Channels;
  close(): Promise<void>;
}

/** Whether a listen address only takes connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export async function startIngestServer(o: IngestServerOptions): Promise<RunningIngest> {
  const auth: IngestAuth = {
    credentials: (o.credentials ?? []).map((c) => Buffer.from(c, 'utf8')),
    token: o.token,
    now: o.now ?? Date.now,
  };
  if (!authRequired(auth) && !isLoopback(o.host))
    throw originError(
      'bad-request',
      `ingest on ${o.host} without authentication: give --ingest-credentials or --ingest-token, or listen on a loopback address`,
    );
  const channels = new Channels({
    root: o.root,
    io: o.io ?? { read: FILE_STORAGE, write: FILE_ARCHIVE_STORAGE },
    now: o.now,
    sync: o.sync,
    onPublish: o.onPublish,
  });
  // A restart continues every channel at once: torn tails cut, the status rewritten (no encoder
  // is connected to a process that just started), before any encoder comes back.
  for (const isml of await archivedChannels(o.root)) await channels.get(isml).catch(() => undefined);
  const headersTimeout = o.headersTimeoutMs ?? 60_000;
  const server = http.createServer({
    requestTimeout: 0,
    headersTimeout,
    // How often Node checks the headers timeout: its default (30 s) would let a short one run long.
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(headersTimeout / 4))),
  });
  // ffmpeg half-closes its side right after the last chunk, before reading the answer. Node's
  // default then aborts the request (its body may still sit unread behind our backpressure):
  // an HTTP server that allows half-open connections reads on and answers (lib/_http_server.js,
  // socketOnEnd).
  (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const ctx: IngestContext = {
    channels,
    auth,
    idleMs: o.idleTimeoutMs ?? DEFAULT_INGEST_IDLE_MS,
    maxBox: o.maxBoxBytes ?? DEFAULT_MAX_INGEST_BOX,
    logger: o.logger,
  };
  // The requests being read: close() lets them finish (an encoder that has just sent its last
  // fragment and the empty mfra that ends the stream must not lose them to the shutdown).
  const inFlight = new Set<Promise<void>>();
  const track = (p: Promise<void>): void => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  server.on('request', (req, res) => track(ingest(req, res, ctx)));
  // Expect: 100-continue (ffmpeg sends it with credentials in the URL): refuse before the body.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    try {
      authorizeIngest(req, res, ctx.auth, pathSegments(req));
    } catch (e) {
      res.shouldKeepAlive = false;
      return sendError(res, e, ctx.logger);
    }
    res.writeContinue();
    track(ingest(req, res, ctx));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}`,
    port,
    channels,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Bodies still arriving get CLOSE_GRACE_MS to end; then every connection is cut.
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)));
      await Promise.race([Promise.allSettled([...inFlight]), grace]);
      clearTimeout(timer);
      server.closeAllConnections();
      await closed;
      await channels.closeAll();
    },
  };
}

interface IngestContext {
  channels: Channels;
  auth: IngestAuth;
  idleMs: number;
  maxBox: number;
  logger: OriginLogger | undefined;
}

/** Content types an encoder may send (none is fine: ffmpeg sends none). */
const MEDIA_TYPES = /^(video|audio|application)\/(mp4|iso\.segment|octet-stream|vnd\.ms-sstr\+xml)$/i;

async function ingest(req: http.IncomingMessage, res: http.ServerResponse, ctx: IngestContext): Promise<void> {
  try {
    if (req.method !== 'POST' && req.method !== 'PUT') {
      res.setHeader('Allow', 'POST, PUT');
      throw originError('method-not-allowed', `${String(req.method).slice(0, 16)}: ingest takes POST or PUT`);
    }
    const live = matchLiveRoute(authorizeIngest(req, res, ctx.auth, pathSegments(req)));
    if (live === undefined || live.route.kind !== 'ingest' || live.stream === undefined)
      throw originError('unknown-url', 'ingest URLs are <channel>.isml/Streams(<name>)');
    const type = req.headers['content-type']?.split(';')[0]?.trim();
    if (type !== undefined && type !== '' && !MEDIA_TYPES.test(type))
      throw originError('ingest-media-type', `Content-Type ${type.slice(0, 64)} is not fragmented MP4 (video/mp4)`);
    const channel = await ctx.channels.get(live.isml);
    channel.requestOpened();
    let result: { ends: string[]; summary: string } | undefined;
    try {
      result = await consume(req, channel, live.stream, ctx);
    } finally {
      // The status file says what this request did before it is answered.
      await channel.requestClosed(result?.ends ?? []);
    }
    respond(res, 200, result.summary);
    ctx.logger?.log('info', `ingest ${live.isml} Streams(${live.stream}): ${result.summary}`);
  } catch (e) {
    // The path only: a query could carry anything.
    const where = (req.url ?? '').split('?')[0]!.slice(0, 256);
    ctx.logger?.log('warn', `ingest ${where}: ${(e as Error)?.message ?? String(e)}`);
    closeAfter(req, res);
    sendError(res, e, ctx.logger);
  }
}

/**
 * Reads a body box by box into the channel. Returns the tracks its graceful end ends: those of
 * a POST that carried its own header and media (one long POST per stream); a header alone or
 * segments alone (one segment per request) end nothing.
 */
async function consume(
  req: http.IncomingMessage,
  channel: Channel,
  stream: string,
  ctx: IngestContext,
): Promise<{ ends: string[]; summary: string }> {
  const splitter = new BoxSplitter(ctx.maxBox);
  const parser = new IngestParser(channel.knownHeader(stream));
  let keys: string[] = [];
  const counts = { archived: 0, duplicate: 0, late: 0 };
  // A silent body ends the loop below with ingest-idle; the request is closed in the channel and
  // then answered 408 like any other error (the socket's inactivity timer, reset by every chunk).
  let idle!: (e: Error) => void;
  const silent = new Promise<never>((_, reject) => (idle = reject));
  silent.catch(() => undefined);
  req.setTimeout(ctx.idleMs, () => idle(originError('ingest-idle', `nothing received for ${ctx.idleMs / 1000} s`)));
  // Not for-await: leaving that loop on an error would destroy the request, and with it the
  // socket the error's answer goes out on.
  const chunks = (req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  for (;;) {
    const next = await Promise.race([chunks.next(), silent]);
    if (next.done === true) break;
    for (const box of splitter.push(next.value)) {
      const ev = parser.push(box);
      if (ev === undefined) continue;
      if (ev.kind === 'header') keys = await channel.header(stream, ev.header);
      else if (ev.kind === 'fragment') counts[await channel.fragment(stream, ev.fragment)]++;
      else await channel.endOfStream(stream);
    }
  }
  req.setTimeout(0);
  splitter.end();
  parser.end();
  const fragments = counts.archived + counts.duplicate + counts.late;
  const summary = `${counts.archived} fragments archived, ${counts.duplicate} duplicates and ${counts.late} late dropped`;
  return { ends: parser.sentHeader && fragments > 0 ? keys : [], summary };
}

/** The decoded segments of the request's path (its query, unsigned, is ignored). */
function pathSegments(req: http.IncomingMessage): string[] {
  const rawUrl = req.url ?? '/';
  const q = rawUrl.indexOf('?');
  return decodePath(q < 0 ? rawUrl : rawUrl.slice(0, q));
}

function respond(res: http.ServerResponse, status: number, text: string): void {
  const body = `${text}\n`;
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}

/**
 * An error answered before the body was read: the connection closes after the answer (the rest
 * of the body is not read), and is destroyed if the client does not let go within a second.
 */
function closeAfter(req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.complete) return;
  res.shouldKeepAlive = false;
  const socket = req.socket;
  if (socket === null) return;
  res.once('finish', () => {
    socket.end();
    setTimeout(() => socket.destroy(), 1000).unref();
  });
}

/** Directories searched below the root for channel archives at start-up. */
const MAX_SCAN_DEPTH = 6;

/** The `.isml` URL paths under `root` that have an archive (`<name>.isml.archive/`). */
async function archivedChannels(root: string, rel: string[] = []): Promise<string[]> {
  if (rel.length > MAX_SCAN_DEPTH) return [];
  let entries;
  try {
    entries = await fs.readdir(path.join(root, ...rel), { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue;
    if (/\.isml\.archive$/i.test(e.name)) out.push('/' + [...rel, e.name.slice(0, -'.archive'.length)].join('/'));
    else out.push(...(await archivedChannels(root, [...rel, e.name])));
  }
  return out;
}
