// One request of the in-process edge (edge-inline.ts) through the filter and the handler: the
// request phase, the tap that queues the handler's head and chunks for the filter, and the
// replies and resets the filter or a failure make.

import * as http from 'node:http';
import { drained } from './connection-io';
import { DownstreamHead, downstreamFields, downstreamHead, requestHeaderList, responseHasBody } from './edge-headers';
import type { Handler, InlineEdge, InlineEdgeOptions, InlineEdgeStats } from './edge-inline';
import { REAL, type EdgeResponse, type WriteCallback } from './edge-response';
import { NO_HEADERS, handlerFields, hasField, httpNow, impliedContentLength } from './handler-head';
import {
  Awaitable,
  BodyVerdict,
  HeaderList,
  HttpFilterStream,
  LocalResponse,
  RequestHeadersVerdict,
  ResponseHeadersVerdict,
} from '../proxy-wasm/http-filter';

const EMPTY = new Uint8Array(0);

/** Bytes the tap holds for the filter before it tells the handler to wait for 'drain'. */
const TAP_HIGH_WATER = 1 << 20;

interface Chunk {
  data: Uint8Array;
  eos: boolean;
  done: WriteCallback | undefined;
}

const isPromise = <T>(v: Awaitable<T>): v is Promise<T> => v instanceof Promise;

/**
 * One request through the filter and the handler. Each filter call whose verdict comes back
 * decided (http-filter.ts Awaitable: the plugin did not pause) is acted on at once, in the same
 * turn; only a held verdict, a request body or socket backpressure waits for a promise.
 */
export class InlineExchange {
  private ended = false;
  private closed = false;
  /** The handler's head, once it wrote one (explicitly or by its first write/end). */
  private head: { status: number; headers: HeaderList } | undefined;
  /** The head went to the filter (its verdict may still be pending). */
  private headTaken = false;
  private readonly queue: Chunk[] = [];
  private queued = 0;
  /** pump() is running, or waiting for a verdict or a drain: it resumes itself. */
  private pumping = false;
  /** The handler's body is complete (end() was called). */
  private finished = false;
  /** The filter replaced the response or the exchange was reset: later writes are dropped. */
  private dropping = false;
  /** The tap told the handler to wait: emit 'drain' once the queue is empty. */
  private needDrain = false;
  private handlerStarted = 0;
  /** The response goes past the filter (HttpFilterStream.responsePassesThrough): the handler's
   * chunks are written as they come, no responseHeaders/responseBody. */
  private passing = false;
  private passedBytes = 0;
  /** Write callbacks of chunks the filter buffered: the host may still hold those very bytes
   * (stream.ts keeps a lone chunk by reference), so they are released once the response is out. */
  private readonly heldDone: WriteCallback[] = [];

  private readonly o: InlineEdgeOptions;
  private readonly stats: InlineEdgeStats;
  private readonly handler: Handler;

  constructor(
    edge: InlineEdge,
    private readonly stream: HttpFilterStream,
    private readonly req: http.IncomingMessage,
    private readonly res: EdgeResponse,
    private readonly authority: string,
  ) {
    this.o = edge.options;
    this.stats = edge.stats;
    this.handler = edge.handler;
    res.exchange = this;
  }

  run(): void {
    try {
      this.requestPhase();
    } catch (e) {
      this.internalError(e);
    }
  }

  private requestPhase(): void {
    const { req } = this;
    const { headers: list, hasBody } = requestHeaderList(
      { method: req.method ?? 'GET', url: req.url ?? '/', rawHeaders: req.rawHeaders },
      { scheme: 'http', defaultAuthority: this.authority, generateRequestId: this.o.generateRequestId },
    );
    const v = this.stream.requestHeaders(list, !hasBody);
    if (isPromise(v)) v.then((r) => this.afterRequestHeaders(r, hasBody)).catch((e: unknown) => this.internalError(e));
    else this.afterRequestHeaders(v, hasBody);
  }

  private afterRequestHeaders(verdict: RequestHeadersVerdict, hasBody: boolean): void {
    if (this.ended) return;
    if (verdict.kind === 'respond') {
      this.req.resume();
      return this.sendLocal(verdict.response);
    }
    if (!hasBody) return this.forward(verdict.headers);
    this.requestBody()
      .then((go) => go && this.forward(verdict.headers))
      .catch((e: unknown) => this.internalError(e));
  }

  /** The request body through the filter, then dropped; false when the filter answered. */
  private async requestBody(): Promise<boolean> {
    let eosSent = false;
    try {
      for await (const chunk of this.req as AsyncIterable<Buffer>) {
        if (this.ended || eosSent) continue; // read to the end, never leave early (edge-proxy.ts)
        const v = await this.stream.requestBody(chunk, false);
        if (v.kind === 'respond') {
          this.sendLocal(v.response);
          eosSent = true;
        }
      }
    } catch {
      return false; // client aborted mid-body: onClose cleans up
    }
    if (this.ended || eosSent) return false;
    const v = await this.stream.requestBody(EMPTY, true);
    if (v.kind === 'respond') {
      this.sendLocal(v.response);
      return false;
    }
    return !this.ended;
  }

  /** Hands the request the filter let through to the handler, with the response tapped. */
  private forward(headers: HeaderList): void {
    const { req, res } = this;
    const fields: http.IncomingHttpHeaders = {};
    const raw: string[] = [];
    for (let i = 0; i < headers.length; i++) {
      const entry = headers[i]!;
      const k = entry[0];
      const v = entry[1];
      if (k.charCodeAt(0) === 58 /* ':' */) {
        if (k === ':path') req.url = v;
        else if (k === ':method') req.method = v;
        else if (k === ':authority') {
          fields.host = v;
          raw.push('host', v);
        }
        continue;
      }
      raw.push(k, v);
      const have = fields[k];
      // Node's joining rules for repeated fields (set-cookie stays a list; the rest join with ", ").
      if (have === undefined) fields[k] = k === 'set-cookie' ? [v] : v;
      else if (Array.isArray(have)) have.push(v);
      else fields[k] = `${have}, ${v}`;
    }
    req.headers = fields;
    (req as { rawHeaders: string[] }).rawHeaders = raw;
    res.tapped = this;
    this.handlerStarted = performance.now();
    this.handler(req, res);
  }

  // -------------------------------------------------------------------------------------------
  // the tap (EdgeResponse calls these)

  /** The head as the handler gave it: headers set with setHeader, then writeHead's own. */
  captureHead(status: number, extra: unknown, ending = false, data?: unknown): void {
    if (this.head !== undefined) return;
    const fields = handlerFields(this.res, extra);
    if (ending) impliedContentLength(status, fields, data);
    // Node adds Date when it writes the head; upstream of Envoy the filter sees the origin's.
    if (!hasField(fields, 'date')) fields.push('date', httpNow());
    if (!this.o.suppressEnvoyHeaders)
      fields.push('x-envoy-upstream-service-time', String(Math.round(performance.now() - this.handlerStarted)));
    if (this.stream.responsePassesThrough?.() === true) return this.passHead(status, fields);
    const list: HeaderList = [[':status', String(status)]];
    for (let i = 0; i < fields.length; i += 2) list.push([fields[i]!, fields[i + 1]!]);
    this.head = { status, headers: list };
    this.pump();
  }

  /**
   * The head past the filter: what the connection manager does to it is still done (`server`,
   * hop-by-hop headers, lowercase names, plus the `date` and upstream service time added by
   * captureHead), only the plugin is not asked, as Envoy does not enter a VM without the
   * callbacks (§1.2).
   */
  private passHead(status: number, fields: string[]): void {
    this.head = { status, headers: NO_HEADERS };
    this.headTaken = true;
    this.passing = true;
    this.stream.responsePassed!(status, 0);
    this.writeDownstream(downstreamFields(status, fields, this.o.server));
  }

  /** A chunk past the filter, unless a reply for this stream came meanwhile (then Envoy resets). */
  private passChunk(data: Uint8Array, eos: boolean, done: WriteCallback | undefined): boolean {
    if (this.stream.responsePassesThrough!() !== true) {
      if (done !== undefined) this.heldDone.push(done);
      this.reset('local reply after the response started');
      return false;
    }
    this.passedBytes += data.byteLength;
    if (!eos) return REAL.write.call(this.res, data, done);
    this.dropping = true; // anything the handler writes after its end() is ignored, as in the tap
    if (done !== undefined) REAL.end.call(this.res, data.byteLength > 0 ? data : undefined, () => done(null));
    else REAL.end.call(this.res, data.byteLength > 0 ? data : undefined);
    return true;
  }

  /** The handler's end(): its last chunk, once. */
  finish(data: unknown, done: WriteCallback | undefined): void {
    if (!this.finished) this.enqueue(data, true, done);
  }

  enqueue(chunk: unknown, eos: boolean, done: WriteCallback | undefined): boolean {
    if (eos) this.finished = true;
    if (this.dropping || this.closed) {
      if (done !== undefined) queueMicrotask(() => done(this.closed ? new Error('the response is closed') : null));
      return false;
    }
    const data =
      chunk === undefined || chunk === null
        ? EMPTY
        : typeof chunk === 'string'
          ? Buffer.from(chunk)
          : (chunk as Uint8Array);
    if (this.passing) return this.passChunk(data, eos, done);
    this.queue.push({ data, eos, done });
    this.queued += data.byteLength;
    this.pump();
    if (this.queued < TAP_HIGH_WATER) return true;
    this.needDrain = true;
    return false;
  }

  /**
   * Head, then chunks, through the filter and out, one at a time. Runs on while verdicts come
   * back decided; a held verdict or a full socket leaves `pumping` set and resumes it later.
   */
  private pump(): void {
    if (this.pumping || this.head === undefined) return;
    this.pumping = true;
    let wait: Promise<void> | undefined;
    try {
      if (!this.headTaken) {
        this.headTaken = true;
        if (!this.dropping) wait = this.sendHead();
      }
      while (wait === undefined && this.queue.length > 0 && !this.closed) {
        const c = this.queue.shift()!;
        this.queued -= c.data.byteLength;
        if (this.dropping) {
          c.done?.(null);
          continue;
        }
        wait = this.sendChunk(c);
      }
    } catch (e) {
      this.pumping = false;
      return this.internalError(e);
    }
    if (wait !== undefined) {
      wait.then(
        () => {
          this.pumping = false;
          this.pump();
        },
        (e: unknown) => {
          this.pumping = false;
          this.internalError(e);
        },
      );
      return;
    }
    this.pumping = false;
    if (this.needDrain && this.queue.length === 0 && !this.closed) {
      this.needDrain = false;
      this.res.emit('drain');
    }
  }

  /** RFC 9112 §6.3, as edge-proxy.ts decides it for an upstream response (responseHasBody). */
  private noBody(): boolean {
    const { status, headers } = this.head!;
    let length: string | undefined;
    for (let i = 0; i < headers.length; i++) if (headers[i]![0] === 'content-length') length = headers[i]![1];
    return !responseHasBody(this.req.method ?? 'GET', status, length);
  }

  private sendHead(): Promise<void> | undefined {
    // end_of_stream with the headers when no body can follow, or when the handler ended with
    // nothing more than what is queued and that is empty (docs/specs.md ABI §1.3).
    const eos = this.noBody() || (this.finished && this.queued === 0);
    const v = this.stream.responseHeaders(this.head!.headers, eos);
    if (isPromise(v)) return v.then((r) => this.afterResponseHeaders(r, eos));
    this.afterResponseHeaders(v, eos);
    return undefined;
  }

  private afterResponseHeaders(verdict: ResponseHeadersVerdict, eos: boolean): void {
    if (this.ended) return;
    if (verdict.kind === 'respond') {
      this.dropping = true;
      return this.sendLocal(verdict.response);
    }
    if (!this.writeHead(verdict.headers)) return;
    if (eos) {
      // Nothing goes through responseBody: end now (a HEAD's queued end has no bytes).
      this.dropping = true;
      REAL.end.call(this.res);
      for (const c of this.queue.splice(0)) c.done?.(null);
      this.queued = 0;
    }
  }

  private sendChunk(c: Chunk): Promise<void> | undefined {
    const v = this.stream.responseBody(c.data, c.eos);
    if (isPromise(v)) return v.then((r) => this.afterChunk(c, r));
    return this.afterChunk(c, v);
  }

  /** A chunk's verdict acted on; a promise when the socket wants a 'drain' first. */
  private afterChunk(c: Chunk, v: BodyVerdict): Promise<void> | undefined {
    if (this.ended || this.closed) return void c.done?.(new Error('the response is closed'));
    if (v.kind === 'respond') {
      // The head is out: Envoy cannot replace the response any more and resets the stream.
      if (c.done !== undefined) this.heldDone.push(c.done);
      return void this.reset('local reply after the response started');
    }
    if (v.kind === 'buffer') {
      if (c.done !== undefined) this.heldDone.push(c.done);
      if (c.eos) this.reset('filter buffered past the end of the body');
      return undefined;
    }
    // The host hands back the very chunk when the filter neither changed nor joined it; the
    // handler's callback then waits for the real write. Otherwise the bytes are a new copy and
    // the chunk is free now.
    const same = v.data === c.data;
    if (!same) c.done?.(null);
    const data = v.data.byteLength > 0 ? v.data : undefined;
    if (c.eos) {
      this.dropping = true;
      if (same && c.done !== undefined) REAL.end.call(this.res, data, () => c.done!(null));
      else REAL.end.call(this.res, data);
      return undefined;
    }
    if (data === undefined) {
      if (same) c.done?.(null);
      return undefined;
    }
    const ok = REAL.write.call(this.res, data, same ? c.done : undefined);
    return ok || this.closed ? undefined : drained(this.res);
  }

  // -------------------------------------------------------------------------------------------

  /** A reply the plugin made (or the host's fail-closed 503): sent as given; HEAD gets headers only. */
  private sendLocal(response: LocalResponse): void {
    if (this.closed) return;
    if (response.reset === true) return this.reset(response.details);
    if (this.res.headersSent) return this.reset('local reply after the response started');
    this.stats.localReplies++;
    this.dropping = true;
    if (!this.writeHead(response.headers)) return;
    REAL.end.call(this.res, this.req.method === 'HEAD' || response.body.byteLength === 0 ? undefined : response.body);
  }
  private writeHead(headers: HeaderList): boolean {
    return this.writeDownstream(downstreamHead(headers, this.o.server));
  }

  private writeDownstream(head: DownstreamHead): boolean {
    const res = this.res;
    // The handler's setHeader calls are in `headers` already (captureHead): the filter's list
    // is the whole head now.
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    try {
      REAL.writeHead.call(res, head.status, head.headers);
      return true;
    } catch (e) {
      this.o.log?.(`edge: cannot write the response headers: ${(e as Error).message}`);
      this.reset('invalid response headers');
      return false;
    }
  }

  private reset(why: string): void {
    this.o.log?.(`edge: reset: ${why}`);
    this.dropping = true;
    this.res.destroy();
  }

  private internalError(e: unknown): void {
    if (this.ended && (e as Error)?.name === 'StreamEndedError') return;
    this.o.log?.(`edge: internal error: ${(e as Error)?.stack ?? String(e)}`);
    if (this.closed) return;
    this.dropping = true;
    if (this.res.headersSent) return void this.res.destroy();
    for (const name of this.res.getHeaderNames()) this.res.removeHeader(name);
    REAL.writeHead.call(this.res, 500, ['content-type', 'text/plain', 'server', this.o.server.name]);
    REAL.end.call(this.res, Buffer.from('internal error\n'));
  }

  /** The response closed (EdgeResponse's 'close'): the stream is over, exactly once. */
  onClose(): void {
    this.closed = true;
    if (this.heldDone.length > 0) {
      const failed = this.res.writableFinished ? null : new Error('the response is closed');
      for (const done of this.heldDone.splice(0)) done(failed);
    }
    if (this.queue.length > 0) for (const c of this.queue.splice(0)) c.done?.(new Error('the response is closed'));
    this.queued = 0;
    if (!this.ended) {
      this.ended = true;
      if (this.passing) this.stream.responsePassed!(this.head!.status, this.passedBytes);
      this.stream.end();
    }
  }
}
