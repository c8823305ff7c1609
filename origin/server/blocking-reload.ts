// Live HLS playlist requests on a way of their own: LL-HLS blocking reloads (`_HLS_msn`,
// live-low-latency.ts), the many-waiters case of issue 23, and the plain reloads of the same
// playlists (every player's first, and the polling of players without low latency). With 2 000
// players on one worker, each part's publish answers about 2 000 requests at once, and what each
// answer costs beyond node:http's own work decides whether the last of them leaves within one
// part duration; 2 000 players starting at once ask for 2 000 plain playlists. So here:
// - requests with the same request line wait as one (as coalesce.ts), in a list: the channel is
//   read, the playlist rendered and the answer's header list made once for all of them, then each
//   is written in one loop with `writeHead` of that flat list and `end` of the shared bytes: no
//   promise, closure, header map or per-header `setHeader` per request;
// - the route of a request path is remembered (no path decoding or route pattern per request);
// - nothing is set on a response before its answer; an error sets the CORS headers and goes to
//   http.ts sendError, as on the long way.
// What a request gets is what the long way (server.ts handle, http.ts send) answers: the same
// status, the same headers in the same order, the same body (test/origin/live/blocking-reload.test.ts
// compares the two byte for byte). Conditional requests, and every other request, take the long way.

import * as http from 'node:http';
import { OriginError } from '../errors';
import type { OriginLogger } from '../ops/log';
import { CacheControls, corsHeaders, pushReplyHeaders, send, sendError, setHeaders } from './http';
import { handleLivePlayout, LiveChannels } from './live-playout';
import { Noted, noteOnClose, Observer } from './observe';
import type { PlayoutContext, Reply } from './route-handler';
import { decodePath, matchPresentationRoute, matchTail, PresentationRequest } from './routes';
import { matchLiveRoute } from '../live/live-routes';
import type { ReplyOutput } from './http';

/** A live playlist URL path: its output route, and the Cache-Control values of its location. */
export interface BlockingRoute {
  request: PresentationRequest;
  controls: CacheControls | undefined;
}

/** What the blocking way reads of the server (server.ts). */
export interface BlockingServer {
  ctx: PlayoutContext;
  channels: LiveChannels;
  /** The live HLS playlist a raw path names, or undefined for any other path (or a bad one). */
  route(rawPath: string): BlockingRoute | undefined;
  /** Where a reply is sent from with `controls` (the server's when undefined). */
  output(controls: CacheControls | undefined): ReplyOutput;
  logger: OriginLogger | undefined;
  observer: Observer | undefined;
}

/** Requests waiting for one reply. */
class Group {
  readonly responses: http.ServerResponse[] = [];
  readonly noted: (Noted | undefined)[] = [];
  readonly abort = new AbortController();
  connected = 0;
  made = false;
  /** One listener for every response of the group (no closure per request); idle once made. */
  readonly onClose = (): void => {
    if (!this.made && --this.connected === 0) this.abort.abort();
  };
}

const MEMO_ENTRIES = 4096;

/**
 * The live HLS playlist a raw path names, as server.ts handle() finds it (not a presentation
 * route, a channel's output), with the decoded path; undefined for any other path or a bad one
 * (the long way answers it, errors included).
 */
export function liveHlsPlaylist(rawPath: string): { request: PresentationRequest; segments: string[] } | undefined {
  try {
    const segments = decodePath(rawPath);
    if (matchPresentationRoute(segments) !== undefined) return undefined;
    const live = matchLiveRoute(segments);
    if (live === undefined || live.route.kind !== 'output') return undefined;
    const request = matchTail(live.isml, live.tail);
    return request.route.kind === 'hls-playlist' ? { request, segments } : undefined;
  } catch {
    return undefined;
  }
}

export class BlockingReloads {
  /** Remembered routes by raw path; null: not a live playlist (the long way). */
  private readonly routes = new Map<string, BlockingRoute | null>();
  /** Groups by request line: a dictionary object, as coalesce.ts says why. */
  private readonly groups = Object.create(null) as Record<string, Group | undefined>;
  /** Requests that joined a group (/metrics: origin_coalesced_requests_total). */
  joined = 0;

  constructor(private readonly server: BlockingServer) {}

  /**
   * Takes a GET or HEAD of a live HLS playlist (a raw path ending `.m3u8`, blocking or not) with
   * no conditional header: true when taken (it answers), false when the request takes the long way.
   */
  take(req: http.IncomingMessage, res: http.ServerResponse, started: number): boolean {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const pathEnd = q < 0 ? rawUrl.length : q;
    if (!rawUrl.endsWith('.m3u8', pathEnd)) return false;
    const headers = req.headers;
    if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return false;
    const route = this.route(rawUrl.slice(0, pathEnd));
    if (route === undefined) return false;
    let noted: Noted | undefined;
    const observer = this.server.observer;
    if (observer !== undefined) {
      noted = new Noted(started);
      noted.kind = route.request.route.kind;
      noted.presentation = route.request.ismPath;
      noteOnClose(observer, req, res, noted);
    }
    let g = this.groups[rawUrl];
    if (g === undefined) {
      g = new Group();
      this.groups[rawUrl] = g;
      this.start(rawUrl, g, route, q < 0 ? '' : rawUrl.slice(q + 1));
    } else {
      this.joined++;
      if (noted !== undefined) noted.cache = 'coalesced';
    }
    g.responses.push(res);
    g.noted.push(noted);
    g.connected++;
    res.on('close', g.onClose);
    return true;
  }

  /** Forgets every remembered route (a reload changed the locations). */
  clear(): void {
    this.routes.clear();
  }

  private route(rawPath: string): BlockingRoute | undefined {
    let r = this.routes.get(rawPath);
    if (r === undefined) {
      r = this.server.route(rawPath) ?? null;
      if (rawPath.length > 1024) return r ?? undefined;
      if (this.routes.size >= MEMO_ENTRIES) this.routes.clear();
      this.routes.set(rawPath, r);
    }
    return r ?? undefined;
  }

  private start(key: string, g: Group, route: BlockingRoute, rawQuery: string): void {
    const { ctx, channels } = this.server;
    handleLivePlayout(ctx, channels, route.request, rawQuery, g.abort.signal).then(
      (reply) => {
        delete this.groups[key];
        g.made = true;
        this.answer(g, reply, route.controls);
      },
      (e: unknown) => {
        delete this.groups[key];
        g.made = true;
        this.fail(g, e);
      },
    );
  }

  /** Every request of the group gets the reply: one header list, one body, written in a loop. */
  private answer(g: Group, reply: Reply, controls: CacheControls | undefined): void {
    const out = this.server.output(controls);
    const body = reply.body;
    if (body.type !== 'text' || reply.growing !== undefined) return this.sendEach(g, reply, out);
    const bytes = body.bytes ?? Buffer.from(body.text, 'utf8');
    // What send() sets, in its order: CORS (handle()), the reply's, then Content-Length (sendBytes).
    const head = pushReplyHeaders(corsHeaders(), reply, out.opts);
    head.push('Content-Length', String(bytes.byteLength));
    const { responses, noted } = g;
    for (let i = 0; i < responses.length; i++) {
      const res = responses[i]!;
      const n = noted[i];
      if (n !== undefined && n.cache === undefined) n.cache = reply.cache;
      if (res.destroyed) continue;
      try {
        res.writeHead(200, head);
        res.end(res.req.method === 'HEAD' ? undefined : bytes);
      } catch (e) {
        this.server.logger?.log('error', 'internal', { err: (e as Error)?.stack ?? String(e) });
        res.destroy();
      }
    }
  }

  /** A reply that is not text in memory (never an LL playlist): send() for each, as the long way. */
  private sendEach(g: Group, reply: Reply, out: ReplyOutput): void {
    for (const res of g.responses) {
      setHeaders(res, corsHeaders());
      send(res.req, res, reply, out).catch((e: unknown) => this.failOne(res, e));
    }
  }

  private fail(g: Group, e: unknown): void {
    for (const res of g.responses) this.failOne(res, e);
  }

  /** As server.ts handle's catch: the error through sendError, unless no one is there to read it. */
  private failOne(res: http.ServerResponse, e: unknown): void {
    if (res.destroyed && (e as NodeJS.ErrnoException)?.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    if (e instanceof OriginError && e.code === 'client-gone') return;
    if (!res.headersSent) setHeaders(res, corsHeaders());
    sendError(res, e, this.server.logger);
  }
}
