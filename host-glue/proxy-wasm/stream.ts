// One HTTP stream through the plugin: Envoy's wasm HTTP filter (Context::decodeHeaders & co)
// and the parts of its filter manager the plugin can observe, behind the HttpFilterStream seam.
//
// Order (§1.3): on_context_create just before on_request_headers; request body chunks; response
// headers and body; end(): on_log (maps read-only), on_done (result ignored), on_delete.
//
// Maps (§2.4): a map is available while its callback runs and while the stream is stopped in it;
// a Continue (or proxy_continue_stream, for either direction, as Envoy does) drops the request
// map. on_log reads the maps the proxy will log (the final request and response).
//
// Stops (§1.2, §6.10): headers PAUSE (or 3, 4, >4, or any value after a local reply) holds the
// seam call's promise until proxy_continue_stream, a local reply, or end(). Body PAUSE buffers:
// the seam answers `buffer`, the next chunk is added and the callback sees the cumulative size;
// at end of stream a stop waits for proxy_continue_stream like headers do.
//
// Local replies (§2.6, Envoy FilterManager::sendLocalReply): deferred until the callback returns;
// before any response headers they travel through this plugin's on_response_headers/body (result
// ignored, the reply's body cannot be paused); once response headers entered the filter they are
// sent directly (no plugin callbacks); once headers went downstream the stream is reset.
//
// Failure (§5.1, §6.15): a trap fails the VM. Fail-closed: this stream gets the 503
// `wasm_fail_stream` (once), no further callbacks; fail-open: the callback counts as Continue.

import { BufferType, DataStatus, HeadersStatus, MapType, StreamType, WasmResult } from './abi';
import { ContextBase, type BufferRef, type LocalReplyArgs, type PluginInfo, type RootContext } from './context';
import type {
  Awaitable,
  BodyVerdict,
  HeaderList,
  HttpFilterStream,
  LocalResponse,
  RequestHeadersVerdict,
  ResponseHeadersVerdict,
  StreamInfo,
} from './http-filter';
import { CLOSE_STREAM_DETAILS, failStreamReply, prepareLocalReply, resetReply } from './local-reply';
import { latin1String } from './pairs';
import type { StreamFacts } from './properties';
import type { WasmVm } from './vm';

/** A seam promise rejected because end() came first (client gone while the plugin held it). */
export class StreamEndedError extends Error {
  override name = 'StreamEndedError';
}

/** A body buffer the plugin can rewrite (§2.5: only replace/prepend at 0 and append). */
interface BodyBox {
  data: Uint8Array;
}

function boxBuffer(box: BodyBox): BufferRef {
  return {
    get bytes() {
      return box.data;
    },
    copyFrom(start, length, data) {
      if (start === 0) box.data = concat(data, box.data.subarray(Math.min(length, box.data.length)));
      else if (start >= box.data.length) box.data = concat(box.data, data);
      else return WasmResult.BadArgument;
      return WasmResult.Ok;
    },
  };
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

const EMPTY = new Uint8Array(0);

function isHead(headers: HeaderList): boolean {
  for (let i = 0; i < headers.length; i++) {
    const entry = headers[i]!;
    if (entry[0] === ':method' && entry[1] === 'HEAD') return true;
  }
  return false;
}

/** How a seam callback ended: go on, wait (held until continue/reply/end), or hold a body chunk. */
type Outcome = 'continue' | 'stop' | 'buffer';

/** The plugin callback a seam call runs. */
const enum Step {
  RequestHeaders,
  RequestBody,
  ResponseHeaders,
  ResponseBody,
}
type Resolution = { kind: 'continue' } | { kind: 'buffer' } | { kind: 'respond'; response: LocalResponse };

const CONTINUE: Resolution = Object.freeze({ kind: 'continue' });
const BUFFER: Resolution = Object.freeze({ kind: 'buffer' });

/** After a Continue the plugin cannot reach the request map again (§2.4) and on_log only reads
 * it: the verdict hands out the map itself. */
function requestVerdict(r: Resolution, map: HeaderList): RequestHeadersVerdict {
  return r.kind === 'respond' ? r : { kind: 'continue', headers: map };
}

/**
 * Where a seam call's outcome goes. Until the callback returns it only records what settle()
 * decided (the call then answers with the value itself); if nothing was decided, a promise is
 * made and the waiter settles it later (resume / finish / end).
 */
class Waiter {
  value: Resolution | null = null;
  error: Error | null = null;
  private settle: { resolve(v: Resolution): void; reject(e: Error): void } | null = null;

  resolve(v: Resolution): void {
    if (this.settle !== null) this.settle.resolve(v);
    else this.value ??= v;
  }

  reject(e: Error): void {
    if (this.settle !== null) this.settle.reject(e);
    else this.error ??= e;
  }

  promise(): Promise<Resolution> {
    return new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }
}

/** Per direction: the maps and buffers Envoy's filter holds pointers to. */
class Side {
  /** The proxy's map for this direction (what goes on, what the access log sees). */
  map: HeaderList | null = null;
  /** Envoy's request_headers_ / response_headers_: non-null while the plugin may use it. */
  headers: HeaderList | null = null;
  /** The chunk handed to the current body callback (request_body_buffer_). */
  visible: BodyBox | null = null;
  /** Data the filter manager holds back while the plugin stops (the buffered body). */
  readonly held: BodyBox = { data: EMPTY };
  /** The last body callback returned PAUSE: the next one sees the whole buffered body. */
  buffering = false;
  waiter: Waiter | null = null;
  continueRequested = false;
  /** Seam callbacks of this side in progress (a continue inside one is settled after it). */
  depth = 0;

  takeHeld(): Uint8Array {
    const data = this.held.data;
    this.held.data = EMPTY;
    return data;
  }
}

/** §1.2: a headers callback's i32 as Envoy turns it into FilterHeadersStatus; true = stopped. */
function headersStopped(raw: number, forcedStop: boolean): boolean {
  if (forcedStop || raw > HeadersStatus.StopAllIterationAndWatermark) return true;
  // 1 (PAUSE) is StopAllIterationAndWatermark without allow_on_headers_stop_iteration; Envoy's
  // convertFilterHeadersStatus maps ContinueAndEndStream (2) to Continue.
  return raw !== HeadersStatus.Continue && raw !== HeadersStatus.ContinueAndEndStream;
}

/** §1.2: a body callback's i32 as Envoy turns it into FilterDataStatus. */
function dataStatus(raw: number, forcedStop: boolean): DataStatus {
  return forcedStop || raw > DataStatus.StopIterationNoBuffer ? DataStatus.StopIterationNoBuffer : (raw as DataStatus);
}

export class HttpStream extends ContextBase implements HttpFilterStream {
  private readonly request = new Side();
  private readonly response = new Side();
  /** Made on the first proxy_set_property (most streams never have filter state). */
  private filterState: Map<string, Uint8Array> | null = null;
  /** Wall-clock start as performance.now(); request.time is made from it when read. */
  private readonly startNow = performance.now();
  /** performance.now() at end(): request.duration is made from the two when read. */
  private endNow = 0;
  private bytesReceived = 0;
  private bytesSent = 0;
  private responseCode: number | null = null;
  private responseCodeDetails: string | null = null;
  private isHeadRequest = false;
  private logPhase = false;
  private destroyed = false;
  private ended = false;
  /** cpp-host stream_failed_ / Envoy failure_local_reply_sent_. */
  private streamFailed = false;
  private failureLocalReplySent = false;
  /** Filter manager state: response headers entered the encoder chain / went downstream. */
  private encoderEntered = false;
  private headersSentDownstream = false;
  private replyState: 'none' | 'encoding' | 'sent' = 'none';
  private encodingReply: LocalResponse | null = null;
  /** The stream's answer once decided (local reply, 503, reset): every later seam call gets it. */
  private outcome: LocalResponse | null = null;

  constructor(
    vm: WasmVm,
    plugin: PluginInfo,
    private readonly info: StreamInfo,
  ) {
    super(vm, plugin, vm.allocContextId());
  }

  get root(): RootContext {
    return this.vm.rootContext;
  }

  // ------------------------------------------------------------------------------ the seam

  requestHeaders(headers: HeaderList, endOfStream: boolean): Awaitable<RequestHeadersVerdict> {
    const side = this.request;
    const map = (side.map = headers); // the stream's from now on (http-filter.ts)
    this.isHeadRequest = isHead(headers);
    const v = this.run(side, Step.RequestHeaders, endOfStream, EMPTY);
    // Decided during the call (the usual case): the verdict itself, no promise.
    return v instanceof Promise ? v.then((r) => requestVerdict(r, map)) : requestVerdict(v, map);
  }

  requestBody(chunk: Uint8Array, endOfStream: boolean): Awaitable<BodyVerdict> {
    this.bytesReceived += chunk.length;
    const v = this.run(this.request, Step.RequestBody, endOfStream, chunk);
    return v instanceof Promise ? v.then((r) => this.bodyVerdict(this.request, r)) : this.bodyVerdict(this.request, v);
  }

  responseHeaders(headers: HeaderList, endOfStream: boolean): Awaitable<ResponseHeadersVerdict> {
    const side = this.response;
    if (this.outcome === null) {
      side.map = headers;
      this.encoderEntered = true;
      this.noteResponse(headers, 'via_upstream');
    }
    const v = this.run(side, Step.ResponseHeaders, endOfStream, EMPTY);
    return v instanceof Promise ? v.then((r) => this.responseVerdict(r, headers)) : this.responseVerdict(v, headers);
  }

  responseBody(chunk: Uint8Array, endOfStream: boolean): Awaitable<BodyVerdict> {
    const v = this.run(this.response, Step.ResponseBody, endOfStream, chunk);
    return v instanceof Promise
      ? v.then((r) => this.sent(this.bodyVerdict(this.response, r)))
      : this.sent(this.bodyVerdict(this.response, v));
  }

  responsePassesThrough(): boolean {
    return !this.vm.reachesResponses && this.outcome === null && !this.ended && !this.failed && this.inVmContextCreated;
  }

  responsePassed(status: number, bodyBytes: number): void {
    if (this.outcome !== null) return;
    this.encoderEntered = true;
    this.headersSentDownstream = true;
    this.responseCode = status;
    this.responseCodeDetails = 'via_upstream';
    this.bytesSent += bodyBytes;
  }

  private responseVerdict(r: Resolution, headers: HeaderList): ResponseHeadersVerdict {
    if (r.kind === 'respond') return r;
    this.headersSentDownstream = true;
    const side = this.response;
    side.headers = null;
    return { kind: 'continue', headers: side.map ?? headers };
  }

  private bodyVerdict(side: Side, r: Resolution): BodyVerdict {
    return r.kind === 'continue' ? { kind: 'continue', data: side.takeHeld() } : r;
  }

  private sent(r: BodyVerdict): BodyVerdict {
    if (r.kind === 'continue') this.bytesSent += r.data.length;
    return r;
  }

  /** Envoy Context::log then onDestroy: on_log, on_done (result ignored), on_delete (§1.3). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.endNow = performance.now();
    this.rejectWaiter(this.request);
    this.rejectWaiter(this.response);
    if (!this.inVmContextCreated) this.onCreate(); // the access-log path creates it (§1.3 item 7)
    this.logPhase = true;
    this.callIfAlive('proxy_on_log');
    this.logPhase = false;
    if (!this.destroyed && this.inVmContextCreated) {
      this.destroyed = true;
      this.callIfAlive('proxy_on_done');
      this.callIfAlive('proxy_on_delete');
    }
    this.vm.contexts.delete(this.id);
  }

  private rejectWaiter(side: Side): void {
    side.waiter?.reject(new StreamEndedError('stream ended while the plugin held it'));
    side.waiter = null;
  }

  private callIfAlive(name: 'proxy_on_log' | 'proxy_on_done' | 'proxy_on_delete'): void {
    if (this.failed || !this.vm.has(name)) return;
    try {
      if (name === 'proxy_on_done') this.vm.callWord(this, name, this.id);
      else this.vm.callVoid(this, name, this.id);
    } finally {
      this.vm.afterCallActions();
    }
  }

  // ------------------------------------------------------------------------------ seam plumbing

  /**
   * Runs one seam callback. Decided during the call: the resolution itself (no promise made);
   * a 'stop' answers a promise left pending (see settle / resume); a throw, a rejected one.
   * The callbacks are a switch over methods, not closures: this runs several times per request.
   */
  private run(side: Side, step: Step, endOfStream: boolean, chunk: Uint8Array): Resolution | Promise<Resolution> {
    if (this.outcome !== null) return { kind: 'respond', response: this.outcome };
    if (this.ended) return Promise.reject(new StreamEndedError('stream already ended'));
    const waiter = new Waiter();
    side.waiter = waiter;
    side.continueRequested = false;
    side.depth++;
    let result: Outcome;
    try {
      switch (step) {
        case Step.RequestHeaders:
          result = this.requestHeadersStep(endOfStream);
          break;
        case Step.ResponseHeaders:
          result = this.responseHeadersStep(endOfStream);
          break;
        case Step.RequestBody:
          result = this.bodyStep(side, 'proxy_on_request_body', chunk, endOfStream);
          break;
        case Step.ResponseBody:
          result = this.bodyStep(side, 'proxy_on_response_body', chunk, endOfStream);
          break;
      }
    } catch (e) {
      return Promise.reject(e);
    } finally {
      side.depth--;
    }
    this.settle(side, result);
    if (waiter.value !== null) return waiter.value;
    if (waiter.error !== null) return Promise.reject(waiter.error);
    return waiter.promise();
  }

  private requestHeadersStep(endOfStream: boolean): Outcome {
    const side = this.request;
    this.onCreate();
    side.headers = side.map;
    const stopped = this.onHeaders('proxy_on_request_headers', side.map!.length, endOfStream);
    if (!stopped) side.headers = null;
    return stopped ? 'stop' : 'continue';
  }

  private responseHeadersStep(endOfStream: boolean): Outcome {
    const side = this.response;
    // Envoy encodeHeaders: no VM call for a stream the VM never saw or that already failed.
    if (!this.inVmContextCreated || this.failureLocalReplySent) return 'continue';
    side.headers = side.map;
    const stopped = this.onHeaders('proxy_on_response_headers', side.map!.length, endOfStream);
    if (!stopped) side.headers = null;
    return stopped ? 'stop' : 'continue';
  }

  private bodyStep(
    side: Side,
    callback: 'proxy_on_request_body' | 'proxy_on_response_body',
    chunk: Uint8Array,
    endOfStream: boolean,
  ): Outcome {
    // Envoy decodeData/encodeData: no VM call before on_context_create or after the 503.
    if (!this.inVmContextCreated || (side === this.response && this.failureLocalReplySent)) {
      side.held.data = concat(side.held.data, chunk);
      return 'continue';
    }
    const visible = side.buffering ? side.held : { data: chunk };
    if (side.buffering) side.held.data = concat(side.held.data, chunk); // addDecodedData
    side.visible = visible;
    const status = this.onBody(callback, visible.data.length, endOfStream);
    side.buffering = status === DataStatus.StopIterationAndBuffer;
    // Continue, Buffer and Watermark keep the data; NoBuffer leaves it to the plugin (dropped).
    if (status !== DataStatus.StopIterationNoBuffer && visible !== side.held) {
      side.held.data = concat(side.held.data, visible.data);
    }
    if (status === DataStatus.Continue) {
      side.visible = null;
      return 'continue';
    }
    return endOfStream ? 'stop' : 'buffer';
  }

  private settle(side: Side, result: Outcome): void {
    const waiter = side.waiter;
    if (waiter === null) return;
    if (this.outcome !== null) {
      side.waiter = null;
      waiter.resolve({ kind: 'respond', response: this.outcome });
    } else if (result === 'continue' || side.continueRequested) {
      side.waiter = null;
      side.continueRequested = false;
      waiter.resolve(CONTINUE);
    } else if (result === 'buffer') {
      side.waiter = null;
      waiter.resolve(BUFFER);
    }
  }

  /** The deferred continueDecoding/continueEncoding of proxy_continue_stream. */
  private resume(side: Side): void {
    if (this.outcome !== null || this.ended) return;
    side.continueRequested = true;
    if (side.depth === 0) this.settle(side, 'stop');
  }

  // ------------------------------------------------------------------------------ calls into the VM

  private onCreate(): void {
    if (!this.failed && !this.inVmContextCreated && this.vm.has('proxy_on_context_create')) {
      try {
        this.vm.callVoid(this, 'proxy_on_context_create', this.id, this.root.id);
      } finally {
        this.vm.afterCallActions();
      }
    }
    this.inVmContextCreated = true;
  }

  /** cpp-host ContextBase::onRequestHeaders/onResponseHeaders with CHECK_FAIL_HTTP; true = stopped. */
  private onHeaders(
    callback: 'proxy_on_request_headers' | 'proxy_on_response_headers',
    count: number,
    endOfStream: boolean,
  ): boolean {
    const before = this.checkFail();
    if (before !== 'ok') return before === 'closed';
    if (!this.vm.has(callback)) return false;
    try {
      const raw = this.vm.callWord(this, callback, this.id, count, endOfStream ? 1 : 0);
      const after = this.checkFail();
      if (after !== 'ok') return after === 'closed';
      return headersStopped(raw, this.vm.stopIteration);
    } finally {
      this.vm.afterCallActions();
    }
  }

  private onBody(
    callback: 'proxy_on_request_body' | 'proxy_on_response_body',
    size: number,
    endOfStream: boolean,
  ): DataStatus {
    const before = this.checkFail();
    if (before !== 'ok') return before === 'open' ? DataStatus.Continue : DataStatus.StopIterationNoBuffer;
    if (!this.vm.has(callback)) return DataStatus.Continue;
    return this.vm.withAfterCallActions(() => {
      const raw = this.vm.callWord(this, callback, this.id, size, endOfStream ? 1 : 0);
      const after = this.checkFail();
      if (after !== 'ok') return after === 'open' ? DataStatus.Continue : DataStatus.StopIterationNoBuffer;
      return dataStatus(raw, this.vm.stopIteration);
    });
  }

  /** cpp-host CHECK_FAIL: fail-open bypasses; fail-closed answers 503 once per stream. */
  private checkFail(): 'ok' | 'open' | 'closed' {
    if (!this.failed) return 'ok';
    if (this.plugin.failurePolicy === 'FAIL_OPEN') return 'open';
    if (!this.streamFailed) {
      this.streamFailed = true;
      this.sendReply(failStreamReply(), false); // Envoy failStream: never through the failed VM
      this.failureLocalReplySent = true;
    }
    return 'closed';
  }

  // ------------------------------------------------------------------------------ local replies

  /** Envoy FilterManager::sendLocalReply: via the filter chain, directly, or a reset. */
  private sendReply(reply: LocalResponse, throughPlugin: boolean): void {
    if (this.ended || this.replyState === 'sent') return;
    if (this.replyState === 'encoding') {
      this.encodingReply = reply; // headers not downstream yet: the new reply replaces it directly
      return;
    }
    if (!this.encoderEntered) {
      this.replyState = 'encoding';
      this.encodingReply = reply;
      if (throughPlugin) this.encodeThroughPlugin(reply);
      this.finish(this.encodingReply);
    } else if (!this.headersSentDownstream) {
      this.finish(reply);
    } else {
      this.finish(resetReply(reply.details));
    }
  }

  /** §6.12: the plugin's own on_response_headers / on_response_body see its local reply. */
  private encodeThroughPlugin(reply: LocalResponse): void {
    const side = this.response;
    this.encoderEntered = true;
    side.map = reply.headers; // the plugin edits the reply's own header list
    this.noteResponse(reply.headers, reply.details);
    if (!this.inVmContextCreated || this.failureLocalReplySent) return;
    const endOfStream = reply.body.length === 0;
    side.headers = side.map;
    this.onHeaders('proxy_on_response_headers', reply.headers.length, endOfStream); // a stop is ignored
    side.headers = null;
    if (this.encodingReply !== reply || endOfStream) return;
    const box: BodyBox = { data: reply.body };
    side.visible = box;
    this.onBody('proxy_on_response_body', box.data.length, true);
    side.visible = null;
    if (this.encodingReply === reply) this.encodingReply = { ...reply, body: box.data };
  }

  private finish(reply: LocalResponse | null): void {
    if (reply === null) return;
    this.replyState = 'sent';
    this.encodingReply = null;
    this.outcome = reply;
    if (!reply.reset) {
      this.response.map = reply.headers;
      this.noteResponse(reply.headers, reply.details);
    }
    this.settle(this.request, 'stop');
    this.settle(this.response, 'stop');
  }

  private resetStream(): void {
    if (this.ended || this.replyState === 'sent') return;
    this.finish(resetReply(this.responseCodeDetails ?? CLOSE_STREAM_DETAILS));
  }

  private noteResponse(headers: HeaderList, details: string): void {
    let status = NaN;
    for (let i = 0; i < headers.length; i++) {
      const entry = headers[i]!;
      if (entry[0] === ':status') {
        status = Number(entry[1]);
        break;
      }
    }
    this.responseCode = Number.isInteger(status) ? status : null;
    this.responseCodeDetails = details;
  }

  // ------------------------------------------------------------------------------ what the hostcalls see

  override getMap(type: MapType): HeaderList | null {
    if (type === MapType.RequestHeaders) return this.request.headers;
    if (type === MapType.ResponseHeaders) return this.response.headers;
    return null; // trailers are not carried by the seam; callout maps never exist here
  }

  override getConstMap(type: MapType): HeaderList | null {
    if (type === MapType.RequestHeaders) return this.logPhase ? this.request.map : this.request.headers;
    if (type === MapType.ResponseHeaders) return this.logPhase ? this.response.map : this.response.headers;
    return null;
  }

  override get accessLogPhase(): boolean {
    return this.logPhase;
  }

  protected override bodyBuffer(type: BufferType.HttpRequestBody | BufferType.HttpResponseBody): BufferRef | null {
    const side = type === BufferType.HttpRequestBody ? this.request : this.response;
    if (side.buffering) return boxBuffer(side.held);
    return side.visible === null ? null : boxBuffer(side.visible);
  }

  override sendLocalResponse(args: LocalReplyArgs): void {
    const reply = prepareLocalReply({ ...args, isHeadRequest: this.isHeadRequest });
    this.vm.addAfterCallAction(() => this.sendReply(reply, true));
  }

  /** Envoy Context::continueStream: deferred, and the request maps are released either way. */
  override continueStream(type: StreamType): WasmResult {
    switch (type) {
      case StreamType.HttpRequest:
        this.vm.addAfterCallAction(() => this.resume(this.request));
        break;
      case StreamType.HttpResponse:
        this.vm.addAfterCallAction(() => this.resume(this.response));
        break;
      case StreamType.Downstream:
        return WasmResult.Ok;
      default:
        return WasmResult.Unimplemented;
    }
    this.request.headers = null;
    this.request.visible = null;
    return WasmResult.Ok;
  }

  /** Envoy Context::closeStream: a deferred reset with details `wasm_close_stream`. */
  override closeStream(type: StreamType): WasmResult {
    if (type === StreamType.HttpRequest || type === StreamType.HttpResponse) {
      this.vm.addAfterCallAction(() => this.resetStream());
    }
    return WasmResult.Ok;
  }

  protected override streamFacts(): StreamFacts {
    return {
      info: this.info,
      startTimeNs: BigInt(Math.round((performance.timeOrigin + this.startNow) * 1e6)),
      requestHeaders: this.request.headers ?? (this.logPhase ? this.request.map : null),
      responseHeaders: this.response.headers ?? (this.logPhase ? this.response.map : null),
      responseCode: this.responseCode,
      responseCodeDetails: this.responseCodeDetails,
      durationNs: this.ended ? BigInt(Math.round((this.endNow - this.startNow) * 1e6)) : null,
      bytesReceived: this.bytesReceived,
      bytesSent: this.bytesSent,
      filterState: (this.filterState ??= new Map()),
    };
  }

  override setProperty(path: Uint8Array, value: Uint8Array): WasmResult {
    (this.filterState ??= new Map()).set(latin1String(path), value);
    return WasmResult.Ok;
  }
}

/** A stream past a failed VM with fail-open: the filter is not installed (§5.1). */
export class BypassStream implements HttpFilterStream {
  responsePassesThrough(): boolean {
    return true;
  }
  responsePassed(): void {}
  requestHeaders(headers: HeaderList): RequestHeadersVerdict {
    return { kind: 'continue', headers };
  }
  requestBody(chunk: Uint8Array): BodyVerdict {
    return { kind: 'continue', data: chunk };
  }
  responseHeaders(headers: HeaderList): ResponseHeadersVerdict {
    return { kind: 'continue', headers };
  }
  responseBody(chunk: Uint8Array): BodyVerdict {
    return { kind: 'continue', data: chunk };
  }
  end(): void {}
}

/** A stream past a failed VM with fail-closed: Envoy's stub filter answers 503 `wasm_fail_stream`. */
export class FailedStream implements HttpFilterStream {
  private readonly reply = failStreamReply();
  requestHeaders(): RequestHeadersVerdict {
    return { kind: 'respond', response: this.reply };
  }
  requestBody(): BodyVerdict {
    return { kind: 'respond', response: this.reply };
  }
  responseHeaders(): ResponseHeadersVerdict {
    return { kind: 'respond', response: this.reply };
  }
  responseBody(): BodyVerdict {
    return { kind: 'respond', response: this.reply };
  }
  end(): void {}
}
