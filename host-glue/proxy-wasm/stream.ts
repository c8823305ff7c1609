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

import { BufferType, DataStatus, MapType, StreamType, WasmResult } from './abi';
import { type BufferRef, type LocalReplyArgs, type PluginInfo, type RootContext } from './context';
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
import { CLOSE_STREAM_DETAILS, prepareLocalReply, resetReply } from './local-reply';
import { latin1String } from './pairs';
import type { StreamFacts } from './properties';
import { StreamCalls } from './stream-calls';
import {
  BUFFER,
  CONTINUE,
  EMPTY,
  Side,
  StreamEndedError,
  Waiter,
  boxBuffer,
  concat,
  isHead,
  requestVerdict,
  type BodyBox,
  type Resolution,
} from './stream-state';
import type { WasmVm } from './vm';

/** How a seam callback ended: go on, wait (held until continue/reply/end), or hold a body chunk. */
type Outcome = 'continue' | 'stop' | 'buffer';

/** The plugin callback a seam call runs. */
const enum Step {
  RequestHeaders,
  RequestBody,
  ResponseHeaders,
  ResponseBody,
}

export class HttpStream extends StreamCalls implements HttpFilterStream {
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

  // ------------------------------------------------------------------------------ local replies

  /** Envoy FilterManager::sendLocalReply: via the filter chain, directly, or a reset. */
  protected sendReply(reply: LocalResponse, throughPlugin: boolean): void {
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
