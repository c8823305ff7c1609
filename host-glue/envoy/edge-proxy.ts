// The embedded edge (`origin edge`): a Node HTTP/1.1 proxy that drives one proxy-wasm plugin the
// way Envoy's HTTP connection manager drives envoy.filters.http.wasm, then routes and forwards
// like Envoy's router. Per request (docs/specs.md ABI §1.3, §3.4, §2.6):
//
//   request headers → filter → route on the headers it let through → upstream (keep-alive pool)
//   request body chunks → filter → upstream, streamed
//   response headers (+ x-envoy-upstream-service-time) → filter → client (server per the HCM)
//   response body chunks → filter → client, streamed: a segment is never held whole unless the
//   plugin asks to buffer (body PAUSE, §2.5)
//   stream over (completed, refused or aborted by either side) → end(), exactly once
//
// Replies the proxy makes itself (no route 404, upstream failure 503, timeout 504) are Envoy's
// router replies: they pass through the filter's response callbacks like any response, as in
// Envoy where the wasm filter sits before the router. Replies the plugin makes (a `respond`
// verdict, fail-closed 503 included) are sent as the host built them.

import * as http from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import {
  downstreamHead,
  envoyReplyHeaders,
  requestHeaderList,
  responseHasBody,
  responseHeaderList,
  ServerHeader,
  upstreamRequestHead,
} from './edge-headers';
import { RouteTable, RouteTarget } from './edge-routes';
import { drained, streamInfoOf } from './connection-io';
import { ConnectTimeout, upstreamFailure } from './upstream-failure';
import { EdgeConfig } from './envoy-config';
import { BodyVerdict, HttpFilterFactory, HttpFilterStream, LocalResponse } from '../proxy-wasm/http-filter';

export interface EdgeProxyOptions {
  factory: HttpFilterFactory;
  /** Routes, clusters and connection-manager settings (from the envoy.yaml). */
  config: Pick<EdgeConfig, 'virtualHosts' | 'clusters' | 'server' | 'generateRequestId' | 'suppressEnvoyHeaders'>;
  host: string;
  port: number;
  /** One line per request and proxy errors; none when undefined. */
  log?: (line: string) => void;
}

export interface EdgeStats {
  requests: number;
  /** Upstream TCP connections opened (the keep-alive pool reuses them). */
  upstreamConnections: number;
  upstreamRequests: number;
  /** Replies made by the plugin or by the proxy instead of the origin. */
  localReplies: number;
}

export interface RunningEdge {
  url: string;
  port: number;
  stats: EdgeStats;
  /** Stops listening, closes client and upstream connections. The factory stays the caller's. */
  close(): Promise<void>;
}

const EMPTY = new Uint8Array(0);

interface Shared {
  factory: HttpFilterFactory;
  routes: RouteTable;
  agent: http.Agent;
  server: ServerHeader;
  generateRequestId: boolean;
  suppressEnvoyHeaders: boolean;
  defaultAuthority: string;
  stats: EdgeStats;
  seenSockets: WeakSet<Socket>;
  /** Downstream connection ids (Envoy's connection_id property), numbered from 1. */
  connectionIds: WeakMap<Socket, number>;
  log: ((line: string) => void) | undefined;
}

export async function startEdgeProxy(o: EdgeProxyOptions): Promise<RunningEdge> {
  const stats: EdgeStats = { requests: 0, upstreamConnections: 0, upstreamRequests: 0, localReplies: 0 };
  // LIFO keeps the busiest sockets warm and lets idle ones time out at the origin.
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 256, scheduling: 'lifo' });
  const shared: Shared = {
    factory: o.factory,
    routes: new RouteTable(o.config.virtualHosts, o.config.clusters),
    agent,
    server: o.config.server,
    generateRequestId: o.config.generateRequestId,
    suppressEnvoyHeaders: o.config.suppressEnvoyHeaders,
    defaultAuthority: '',
    stats,
    seenSockets: new WeakSet(),
    connectionIds: new WeakMap(),
    log: o.log,
  };
  let connections = 0;
  // Envoy's default max request headers size is 60 KiB (Node's is 16 KiB).
  const server = http.createServer({ maxHeaderSize: 60 * 1024 }, (req, res) => {
    stats.requests++;
    new Exchange(shared, req, res).run();
  });
  server.keepAliveTimeout = 65_000;
  server.on('connection', (socket: Socket) => shared.connectionIds.set(socket, ++connections));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  shared.defaultAuthority = `${host}:${port}`;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${port}`,
    port,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

/** One request through the filter and the router. */
class Exchange {
  private readonly stream: HttpFilterStream;
  private readonly started = process.hrtime.bigint();
  /** end() was called: no further callbacks. */
  private ended = false;
  /** The client connection closed (finished or aborted). */
  private closed = false;
  private upstream: http.ClientRequest | undefined;
  private upstreamResponse: http.IncomingMessage | undefined;
  private routeTimer: NodeJS.Timeout | undefined;
  private retried = false;
  /** What answered, for the request log. */
  private note = '';

  constructor(
    private readonly s: Shared,
    private readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
  ) {
    this.stream = s.factory.newStream(streamInfoOf(req, s.connectionIds.get(req.socket)));
    res.once('close', () => this.onClose());
  }

  run(): void {
    this.handle().catch((e: unknown) => this.internalError(e));
  }

  private async handle(): Promise<void> {
    const { req } = this;
    const { headers, hasBody } = requestHeaderList(
      { method: req.method ?? 'GET', url: req.url ?? '/', rawHeaders: req.rawHeaders },
      { scheme: 'http', defaultAuthority: this.s.defaultAuthority, generateRequestId: this.s.generateRequestId },
    );
    const verdict = await this.stream.requestHeaders(headers, !hasBody);
    if (this.ended) return;
    if (verdict.kind === 'respond') {
      req.resume();
      return this.sendLocal(verdict.response);
    }
    const head = upstreamRequestHead(verdict.headers);
    const target = this.s.routes.resolve(head.authority, head.path);
    if (target === undefined) {
      req.resume();
      return this.envoyReply(404, '', 'route_not_found');
    }
    if (target.route.hostRewrite !== undefined) head.headers[1] = target.route.hostRewrite;
    if (target.route.timeoutMs > 0 && !this.s.suppressEnvoyHeaders)
      head.headers.push('x-envoy-expected-rq-timeout-ms', String(target.route.timeoutMs));
    this.forward(target, head.method, head.headers, hasBody);
  }

  private forward(target: RouteTarget, method: string, headers: string[], hasBody: boolean): void {
    const sent = process.hrtime.bigint();
    const up = http.request({
      agent: this.s.agent,
      host: target.endpoint.host,
      port: target.endpoint.port,
      method,
      path: target.path,
      headers,
    });
    this.upstream = up;
    this.s.stats.upstreamRequests++;
    this.note = `${target.endpoint.host}:${target.endpoint.port}`;
    up.on('socket', (socket: Socket) => {
      if (this.s.seenSockets.has(socket)) return;
      this.s.seenSockets.add(socket);
      this.s.stats.upstreamConnections++;
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => up.destroy(new ConnectTimeout('connect timeout')),
        target.cluster.connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    up.on('error', (e) => this.onUpstreamError(e, target, method, headers, hasBody));
    up.on('response', (upstreamRes) => {
      const serviceMs = Number(process.hrtime.bigint() - sent) / 1e6;
      this.onUpstreamResponse(upstreamRes, serviceMs).catch((e: unknown) => this.internalError(e));
    });
    if (!hasBody) {
      up.end();
      this.startRouteTimer(target.route.timeoutMs);
    } else {
      this.pumpRequestBody(up, target.route.timeoutMs).catch((e: unknown) => this.internalError(e));
    }
  }

  /** Request body chunks through the filter to the upstream, one at a time (backpressure both ways). */
  private async pumpRequestBody(up: http.ClientRequest, timeoutMs: number): Promise<void> {
    const length = contentLengthOf(this.req.headers['content-length']);
    let received = 0;
    let sentEnd = false;
    let stopped = false;
    try {
      // Never leave this loop early: that would destroy the client's socket (and a local reply
      // being written on it). After a stop the rest of the body is read and dropped.
      for await (const chunk of this.req as AsyncIterable<Buffer>) {
        if (stopped || this.ended || sentEnd) continue;
        received += chunk.byteLength;
        const eos = length !== undefined && received >= length;
        stopped = !(await this.requestBodyVerdict(await this.stream.requestBody(chunk, eos), up));
        sentEnd = eos;
      }
    } catch {
      return; // client aborted mid-body: onClose cleans up
    }
    if (stopped || this.ended) return;
    if (!sentEnd && !(await this.requestBodyVerdict(await this.stream.requestBody(EMPTY, true), up))) return;
    up.end();
    this.startRouteTimer(timeoutMs);
  }

  private async requestBodyVerdict(v: BodyVerdict, up: http.ClientRequest): Promise<boolean> {
    if (this.ended) return false;
    if (v.kind === 'respond') {
      up.destroy();
      await this.sendLocal(v.response);
      return false;
    }
    if (v.kind === 'continue' && v.data.byteLength > 0 && !up.write(v.data)) await drained(up);
    return true;
  }

  private async onUpstreamResponse(ur: http.IncomingMessage, serviceMs: number): Promise<void> {
    this.upstreamResponse = ur;
    if (this.ended) return void ur.destroy();
    const status = ur.statusCode ?? 502;
    const hasBody = responseHasBody(this.req.method ?? 'GET', status, ur.headers['content-length']);
    const verdict = await this.stream.responseHeaders(
      responseHeaderList(status, ur.rawHeaders, this.s.suppressEnvoyHeaders ? undefined : serviceMs),
      !hasBody,
    );
    if (this.ended) return void ur.destroy();
    if (verdict.kind === 'respond') {
      ur.destroy();
      this.clearRouteTimer();
      return this.sendLocal(verdict.response);
    }
    if (!this.writeHead(verdict.headers)) return void ur.destroy();
    if (!hasBody) {
      ur.resume(); // to its end, so the connection returns to the pool
      ur.once('end', () => this.clearRouteTimer());
      this.res.end();
      return;
    }
    await this.pumpResponseBody(ur);
  }

  private async pumpResponseBody(ur: http.IncomingMessage): Promise<void> {
    const length = contentLengthOf(ur.headers['content-length']);
    let received = 0;
    let sentEnd = false;
    try {
      for await (const chunk of ur as AsyncIterable<Buffer>) {
        // Leaving the loop destroys the upstream response and its connection: right when the
        // client is gone or the stream was reset, wrong after the last byte (the loop then ends
        // by itself and the connection goes back to the pool).
        if (this.ended || sentEnd) return;
        received += chunk.byteLength;
        const eos = length !== undefined && received >= length;
        if ((await this.responseBodyVerdict(await this.stream.responseBody(chunk, eos), eos)) === 'stop') return;
        sentEnd = eos;
      }
    } catch {
      // The origin reset the connection mid-body: Envoy resets the client stream.
      this.reset('upstream reset after response started');
      return;
    }
    this.clearRouteTimer();
    if (this.ended || sentEnd) return;
    await this.responseBodyVerdict(await this.stream.responseBody(EMPTY, true), true);
  }

  /** Writes what the filter let through: 'stop' when the exchange ends here, 'done' after the last byte. */
  private async responseBodyVerdict(v: BodyVerdict, eos: boolean): Promise<'go' | 'done' | 'stop'> {
    if (this.ended) return 'stop';
    if (v.kind === 'respond') {
      // Headers are out already: Envoy cannot replace the response any more and resets the stream.
      this.reset('local reply after the response started');
      return 'stop';
    }
    if (v.kind === 'buffer') {
      if (!eos) return 'go';
      this.reset('filter buffered past the end of the body');
      return 'stop';
    }
    if (eos) {
      this.res.end(v.data.byteLength > 0 ? v.data : undefined);
      return 'done';
    }
    if (v.data.byteLength > 0 && !this.res.write(v.data)) await drained(this.res);
    return this.closed ? 'stop' : 'go';
  }

  private onUpstreamError(
    e: NodeJS.ErrnoException,
    target: RouteTarget,
    method: string,
    headers: string[],
    hasBody: boolean,
  ): void {
    if (this.ended || this.upstreamResponse !== undefined) return; // mid-body resets surface in pumpResponseBody
    this.clearRouteTimer();
    // A kept-alive connection the origin closed just as we reused it: retry once on another
    // (only for requests without a body, which nothing has consumed yet).
    if (
      this.upstream?.reusedSocket === true &&
      !hasBody &&
      !this.retried &&
      (e.code === 'ECONNRESET' || e.code === 'EPIPE')
    ) {
      this.retried = true;
      return this.forward(target, method, headers, false);
    }
    const f = upstreamFailure(e);
    this.s.log?.(`edge: upstream ${target.endpoint.host}:${target.endpoint.port}: ${e.code ?? e.message}`);
    this.envoyReply(f.status, f.body, f.details).catch((err: unknown) => this.internalError(err));
  }

  /** Envoy's route timeout: from the end of the request to the end of the upstream response. */
  private startRouteTimer(ms: number): void {
    if (ms <= 0 || this.ended) return;
    this.routeTimer = setTimeout(() => {
      this.routeTimer = undefined;
      if (this.ended) return;
      this.upstream?.destroy();
      if (this.res.headersSent) this.reset('upstream timeout after the response started');
      else
        this.envoyReply(504, 'upstream request timeout', 'upstream_response_timeout').catch((e: unknown) =>
          this.internalError(e),
        );
    }, ms);
  }

  private clearRouteTimer(): void {
    if (this.routeTimer !== undefined) clearTimeout(this.routeTimer);
    this.routeTimer = undefined;
  }

  /** A reply made by the proxy (Envoy's router): through the filter's response callbacks, then out. */
  private async envoyReply(status: number, text: string, details: string): Promise<void> {
    if (this.ended || this.res.headersSent) return;
    this.note = `local ${details}`;
    this.s.stats.localReplies++;
    const body = new TextEncoder().encode(text);
    const head = this.req.method === 'HEAD';
    const noBody = body.byteLength === 0 || head;
    const verdict = await this.stream.responseHeaders(envoyReplyHeaders(status, body), noBody);
    if (this.ended) return;
    if (verdict.kind === 'respond') return this.sendLocal(verdict.response);
    if (!this.writeHead(verdict.headers)) return;
    if (noBody) return void this.res.end();
    await this.responseBodyVerdict(await this.stream.responseBody(body, true), true);
  }

  /** A reply the plugin made (or the host's fail-closed 503): sent as given; HEAD gets headers
   * only. A reply marked `reset` (proxy_close_stream) closes the connection instead, as Envoy. */
  private async sendLocal(response: LocalResponse): Promise<void> {
    if (this.closed) return;
    if (response.reset === true) return this.reset(response.details);
    if (this.res.headersSent) return this.reset('local reply after the response started');
    this.note = `local ${response.details}`;
    this.s.stats.localReplies++;
    if (!this.writeHead(response.headers)) return;
    this.res.end(this.req.method === 'HEAD' || response.body.byteLength === 0 ? undefined : response.body);
  }

  private writeHead(headers: LocalResponse['headers']): boolean {
    const head = downstreamHead(headers, this.s.server);
    try {
      this.res.writeHead(head.status, head.headers);
      return true;
    } catch (e) {
      // A header value Node refuses to write (a control character the filter put in).
      this.s.log?.(`edge: cannot write the response headers: ${(e as Error).message}`);
      this.reset('invalid response headers');
      return false;
    }
  }

  private reset(why: string): void {
    this.note = `reset: ${why}`;
    this.upstream?.destroy();
    this.res.destroy();
  }

  private internalError(e: unknown): void {
    // The host rejects a callback still pending when end() came (the client left): nothing to do.
    if (this.ended && (e as Error)?.name === 'StreamEndedError') return;
    this.s.log?.(`edge: internal error: ${(e as Error)?.stack ?? String(e)}`);
    if (this.closed) return;
    if (this.res.headersSent) return this.reset('internal error');
    this.res.writeHead(500, { 'content-type': 'text/plain', server: this.s.server.name });
    this.res.end('internal error\n');
  }

  /** The client connection is done (response finished, or the client went away). */
  private onClose(): void {
    this.closed = true;
    this.clearRouteTimer();
    if (!this.res.writableFinished) {
      // Aborted: the upstream request (and its connection, mid-response) goes too.
      this.upstream?.destroy();
      this.upstreamResponse?.destroy();
      if (this.note === '') this.note = 'client aborted';
    }
    if (!this.ended) {
      this.ended = true;
      this.stream.end();
    }
    if (this.s.log !== undefined) {
      const ms = Number(process.hrtime.bigint() - this.started) / 1e6;
      const status = this.res.headersSent ? this.res.statusCode : 0;
      this.s.log(
        `${this.req.method} ${String(this.req.url).slice(0, 512)} ${status} ${ms.toFixed(1)} ms ${this.note}${this.res.writableFinished ? '' : ' (aborted)'}`,
      );
    }
  }
}

function contentLengthOf(v: string | undefined): number | undefined {
  if (v === undefined || !/^\s*\d+\s*$/.test(v)) return undefined;
  return Number(v);
}
