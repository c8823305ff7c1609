// Safe wrappers over the raw hostcalls of imports.ts: strings and byte arrays in, results out.
// Plugin code calls only these; no pointer escapes this file and memory.ts.
// Semantics are Envoy's (docs/specs.md ABI §2.3-§2.6, §3.3): where a wrapper
// returns null, the host said NOT_FOUND, refused the call, or returned something impossible.

import * as raw from './imports';
import { BufferType, GRPC_STATUS_NONE, LogLevel, MapType, MetricType, Status, StreamType } from './enums';
import { RET_PTR, RET_SIZE, RET_U64, clearReturnSlots, dataOf, sizeOf, takeBytes, takeString } from './memory';
import { Header, decodePairs, encodePairs } from './pairs';

function utf8(text: string): ArrayBuffer {
  return String.UTF8.encode(text, false);
}

/** A static buffer for header names: the names a plugin asks for (":path", "authorization")
 * are short ASCII, written here instead of into a new buffer per call. */
const KEY_CAPACITY: i32 = 256;
const KEY: usize = memory.data(KEY_CAPACITY);

/** Writes an ASCII `name` into KEY and returns its length, or -1 (then encode it normally). */
function asciiKey(name: string): i32 {
  const n = name.length;
  if (n > KEY_CAPACITY) return -1;
  const chars = changetype<usize>(name);
  for (let i = 0; i < n; i++) {
    const c = load<u16>(chars + ((<usize>i) << 1));
    if (c >= 0x80) return -1;
    store<u8>(KEY + <usize>i, <u8>c);
  }
  return n;
}

// ------------------------------------------------------------------------------------ logging

/** proxy_log (§2.3). Envoy filters by its `wasm` logger level itself. */
export function log(level: LogLevel, message: string): Status {
  if (<u32>level > <u32>LogLevel.Critical) return Status.BadArgument;
  const bytes = utf8(message);
  return <Status>raw.proxy_log(<u32>level, dataOf(bytes), sizeOf(bytes));
}

export function logTrace(message: string): void {
  log(LogLevel.Trace, message);
}
export function logDebug(message: string): void {
  log(LogLevel.Debug, message);
}
export function logInfo(message: string): void {
  log(LogLevel.Info, message);
}
export function logWarn(message: string): void {
  log(LogLevel.Warn, message);
}
export function logError(message: string): void {
  log(LogLevel.Error, message);
}
export function logCritical(message: string): void {
  log(LogLevel.Critical, message);
}

/** Envoy's current `wasm` log level (0..5, 6 = off); Trace if the host cannot say. */
export function getLogLevel(): LogLevel {
  clearReturnSlots();
  if (raw.proxy_get_log_level(RET_PTR) != Status.Ok) return LogLevel.Trace;
  const level = load<u32>(RET_PTR);
  return level > <u32>LogLevel.Off ? LogLevel.Off : <LogLevel>level;
}

/** Whether a message at `level` would be logged: lets callers skip building expensive lines. */
export function isLogEnabled(level: LogLevel): bool {
  return <u32>level >= <u32>getLogLevel();
}

// ------------------------------------------------------------------------------- time, timers

/** Wall clock, nanoseconds since the Unix epoch; 0 if unavailable. */
export function currentTimeNanoseconds(): u64 {
  clearReturnSlots();
  if (raw.proxy_get_current_time_nanoseconds(RET_U64) != Status.Ok) return 0;
  return load<u64>(RET_U64);
}

/** Root context timer (proxy_on_tick); 0 disables it. */
export function setTickPeriodMilliseconds(milliseconds: u32): Status {
  return <Status>raw.proxy_set_tick_period_milliseconds(milliseconds);
}

// ---------------------------------------------------------------------------------- properties

/** Path segments joined by 0x00 (§3.3): ["request", "path"], never "request.path". */
function propertyPath(path: string[]): ArrayBuffer {
  let joined = '';
  for (let i = 0, n = path.length; i < n; i++) {
    if (i > 0) joined += '\0';
    joined += path[i];
  }
  return utf8(joined);
}

/** Raw property value (strings raw, integers 8-byte LE, maps/lists in pairs format), or null. */
export function getProperty(path: string[]): ArrayBuffer | null {
  const key = propertyPath(path);
  clearReturnSlots();
  if (raw.proxy_get_property(dataOf(key), sizeOf(key), RET_PTR, RET_SIZE) != Status.Ok) return null;
  return takeBytes();
}

/** A string-valued property (e.g. ["request", "url_path"]), or null. */
export function getPropertyString(path: string[]): string | null {
  const key = propertyPath(path);
  clearReturnSlots();
  if (raw.proxy_get_property(dataOf(key), sizeOf(key), RET_PTR, RET_SIZE) != Status.Ok) return null;
  return takeString();
}

/** An integer-valued property (8-byte little-endian, §3.3), or `fallback`. */
export function getPropertyInteger(path: string[], fallback: i64): i64 {
  const value = getProperty(path);
  if (value === null || value.byteLength != 8) return fallback;
  return load<i64>(changetype<usize>(value));
}

/** Sets filter state `wasm.<path>` (Envoy). */
export function setProperty(path: string[], value: ArrayBuffer): Status {
  const key = propertyPath(path);
  return <Status>raw.proxy_set_property(dataOf(key), sizeOf(key), dataOf(value), sizeOf(value));
}

// ------------------------------------------------------------------------------------- buffers

/** Up to `maxSize` bytes of a buffer from `start` (§2.5): empty when there is nothing to copy,
 * null if the buffer is unavailable in this callback (e.g. the plugin configuration outside
 * proxy_on_configure) or the host refused. */
export function getBuffer(type: BufferType, start: u32, maxSize: u32): ArrayBuffer | null {
  clearReturnSlots();
  if (raw.proxy_get_buffer_bytes(<u32>type, start, maxSize, RET_PTR, RET_SIZE) != Status.Ok) return null;
  return takeBytes();
}

/** Current size of a buffer in bytes, or -1 if unavailable. */
export function getBufferSize(type: BufferType): i64 {
  clearReturnSlots();
  if (raw.proxy_get_buffer_status(<u32>type, RET_PTR, RET_SIZE) != Status.Ok) return -1;
  return <i64>load<u32>(RET_PTR);
}

/** Envoy supports only start = 0 (drain `size` bytes, then prepend `data`: start 0, size = body
 * length replaces the body) and start >= length (append); anything else is BAD_ARGUMENT. */
export function setBuffer(type: BufferType, start: u32, size: u32, data: ArrayBuffer): Status {
  return <Status>raw.proxy_set_buffer_bytes(<u32>type, start, size, dataOf(data), sizeOf(data));
}

// --------------------------------------------------------------------------------- header maps

/** First value of header `name` (Envoy lower-cases the key), "" for an empty value, or null if
 * absent or the map is unavailable in this callback (§2.4). */
export function getHeader(map: MapType, name: string): string | null {
  const key = utf8(name);
  clearReturnSlots();
  const status = raw.proxy_get_header_map_value(<u32>map, dataOf(key), sizeOf(key), RET_PTR, RET_SIZE);
  if (status != Status.Ok) return null;
  return takeString();
}

/** First value of header `name` as the host's raw bytes, or null like getHeader. For values that
 * must be checked byte for byte: getHeader's UTF-8 decoding is lenient (an overlong "\xC0\xAE"
 * reads as ".", a lead byte at the end is dropped), so the string can differ from the bytes. */
export function getHeaderBytes(map: MapType, name: string): ArrayBuffer | null {
  const n = asciiKey(name);
  if (n < 0) {
    const key = utf8(name);
    clearReturnSlots();
    if (raw.proxy_get_header_map_value(<u32>map, dataOf(key), sizeOf(key), RET_PTR, RET_SIZE) != Status.Ok) return null;
    return takeBytes();
  }
  clearReturnSlots();
  const status = raw.proxy_get_header_map_value(<u32>map, KEY, <usize>n, RET_PTR, RET_SIZE);
  if (status != Status.Ok) return null;
  return takeBytes();
}

/** All entries in order, duplicates kept; empty if unavailable or malformed (§3.1). */
export function getHeaders(map: MapType): Header[] {
  clearReturnSlots();
  if (raw.proxy_get_header_map_pairs(<u32>map, RET_PTR, RET_SIZE) != Status.Ok) return new Array<Header>(0);
  const bytes = takeBytes();
  return bytes !== null ? decodePairs(bytes) : new Array<Header>(0);
}

/** Replaces the whole map. Refused (BadArgument) if it exceeds the pairs limits, because Envoy
 * would read an oversized buffer as an empty map and wipe every header. */
export function setHeaders(map: MapType, headers: Header[]): Status {
  const pairs = encodePairs(headers);
  if (pairs === null) return Status.BadArgument;
  return <Status>raw.proxy_set_header_map_pairs(<u32>map, dataOf(pairs), sizeOf(pairs));
}

/** Appends an entry (a duplicate name makes a second entry). Never use on :path. */
export function addHeader(map: MapType, name: string, value: string): Status {
  const key = utf8(name);
  const bytes = utf8(value);
  return <Status>raw.proxy_add_header_map_value(<u32>map, dataOf(key), sizeOf(key), dataOf(bytes), sizeOf(bytes));
}

/** Sets `name` to exactly one entry with `value` (adds it if absent). */
export function replaceHeader(map: MapType, name: string, value: string): Status {
  const n = asciiKey(name);
  if (n >= 0 && asciiValue(value)) {
    return <Status>(
      raw.proxy_replace_header_map_value(<u32>map, KEY, <usize>n, dataOf(valueBuffer), <usize>value.length)
    );
  }
  const key = utf8(name);
  const bytes = utf8(value);
  return <Status>raw.proxy_replace_header_map_value(<u32>map, dataOf(key), sizeOf(key), dataOf(bytes), sizeOf(bytes));
}

/** A reused buffer for ASCII header values (a rewritten :path on every request); grows as needed. */
let valueBuffer = new ArrayBuffer(1024);

/** Writes an ASCII `value` into valueBuffer (its UTF-8 is its code units); false if it is not ASCII. */
function asciiValue(value: string): bool {
  const n = value.length;
  if (n > valueBuffer.byteLength) {
    if (n > 1 << 20) return false; // a header that long: let utf8() handle it once
    valueBuffer = new ArrayBuffer(max(n, valueBuffer.byteLength << 1));
  }
  const out = changetype<usize>(valueBuffer);
  const chars = changetype<usize>(value);
  for (let i = 0; i < n; i++) {
    const c = load<u16>(chars + ((<usize>i) << 1));
    if (c >= 0x80) return false;
    store<u8>(out + <usize>i, <u8>c);
  }
  return true;
}

/** Removes every entry named `name` (Ok even if absent). */
export function removeHeader(map: MapType, name: string): Status {
  const key = utf8(name);
  return <Status>raw.proxy_remove_header_map_value(<u32>map, dataOf(key), sizeOf(key));
}

export function getRequestHeader(name: string): string | null {
  return getHeader(MapType.HttpRequestHeaders, name);
}
export function getRequestHeaders(): Header[] {
  return getHeaders(MapType.HttpRequestHeaders);
}
export function getRequestHeaderBytes(name: string): ArrayBuffer | null {
  return getHeaderBytes(MapType.HttpRequestHeaders, name);
}
export function setRequestHeaders(headers: Header[]): Status {
  return setHeaders(MapType.HttpRequestHeaders, headers);
}
export function addRequestHeader(name: string, value: string): Status {
  return addHeader(MapType.HttpRequestHeaders, name, value);
}
export function replaceRequestHeader(name: string, value: string): Status {
  return replaceHeader(MapType.HttpRequestHeaders, name, value);
}
export function removeRequestHeader(name: string): Status {
  return removeHeader(MapType.HttpRequestHeaders, name);
}

export function getResponseHeader(name: string): string | null {
  return getHeader(MapType.HttpResponseHeaders, name);
}
export function getResponseHeaders(): Header[] {
  return getHeaders(MapType.HttpResponseHeaders);
}
export function setResponseHeaders(headers: Header[]): Status {
  return setHeaders(MapType.HttpResponseHeaders, headers);
}
export function addResponseHeader(name: string, value: string): Status {
  return addHeader(MapType.HttpResponseHeaders, name, value);
}
export function replaceResponseHeader(name: string, value: string): Status {
  return replaceHeader(MapType.HttpResponseHeaders, name, value);
}
export function removeResponseHeader(name: string): Status {
  return removeHeader(MapType.HttpResponseHeaders, name);
}

// ------------------------------------------------------------------------------ stream control

/** Local reply (§2.6). Deferred by Envoy until the current callback returns, which is then forced
 * to stop; the reply passes this plugin's own response callbacks. `details` becomes the response
 * code details (spaces -> '_'). Content-type text/plain is added by Envoy for a non-empty body
 * without one. BadArgument without a hostcall if the headers exceed the pairs limits. */
export function sendLocalResponse(
  statusCode: u32,
  details: string,
  body: ArrayBuffer,
  headers: Header[],
  grpcStatus: i32 = GRPC_STATUS_NONE,
): Status {
  const pairs = encodePairs(headers);
  if (pairs === null) return Status.BadArgument;
  const detailBytes = utf8(details);
  return <Status>(
    raw.proxy_send_local_response(
      statusCode,
      dataOf(detailBytes),
      sizeOf(detailBytes),
      dataOf(body),
      sizeOf(body),
      dataOf(pairs),
      sizeOf(pairs),
      grpcStatus,
    )
  );
}

/** sendLocalResponse with a text body (UTF-8). */
export function sendLocalResponseText(statusCode: u32, details: string, body: string, headers: Header[]): Status {
  return sendLocalResponse(statusCode, details, utf8(body), headers);
}

/** Resumes a stream paused by returning Action.Pause (deferred until the callback returns). */
export function continueStream(stream: StreamType): Status {
  return <Status>raw.proxy_continue_stream(<u32>stream);
}

export function continueRequest(): Status {
  return continueStream(StreamType.HttpRequest);
}
export function continueResponse(): Status {
  return continueStream(StreamType.HttpResponse);
}

/** Resets the stream (deferred; details `wasm_close_stream`). */
export function closeStream(stream: StreamType): Status {
  return <Status>raw.proxy_close_stream(<u32>stream);
}

/** Makes later hostcalls of this callback act on another context (e.g. a stream from a root tick). */
export function setEffectiveContext(contextId: u32): Status {
  return <Status>raw.proxy_set_effective_context(contextId);
}

/** Tells the host a root context that returned false from onDone has finished. */
export function done(): Status {
  return <Status>raw.proxy_done();
}

// -------------------------------------------------------------------------- shared data, metrics

/** A value of the per-vm_id store shared by all workers, with its compare-and-swap token. */
export class SharedData {
  constructor(
    public value: ArrayBuffer,
    public cas: u32,
  ) {}
}

export function getSharedData(key: string): SharedData | null {
  const name = utf8(key);
  clearReturnSlots();
  // The cas slot is the u64 slot's first half (u32 LE); pointer and size use the other two.
  const status = raw.proxy_get_shared_data(dataOf(name), sizeOf(name), RET_PTR, RET_SIZE, RET_U64);
  if (status != Status.Ok) return null;
  const cas = load<u32>(RET_U64);
  const value = takeBytes();
  return value !== null ? new SharedData(value, cas) : null;
}

/** cas 0 = unconditional; CasMismatch if another worker wrote in between. */
export function setSharedData(key: string, value: ArrayBuffer, cas: u32 = 0): Status {
  const name = utf8(key);
  return <Status>raw.proxy_set_shared_data(dataOf(name), sizeOf(name), dataOf(value), sizeOf(value), cas);
}

/** Defines a metric; its id (Envoy encodes the type in the low 2 bits), or -1 on failure. */
export function defineMetric(type: MetricType, name: string): i64 {
  const bytes = utf8(name);
  clearReturnSlots();
  if (raw.proxy_define_metric(<u32>type, dataOf(bytes), sizeOf(bytes), RET_PTR) != Status.Ok) return -1;
  return <i64>load<u32>(RET_PTR);
}

/** Counters need delta > 0 (else BadArgument); gauges may go down. */
export function incrementMetric(metricId: u32, delta: i64): Status {
  return <Status>raw.proxy_increment_metric(metricId, delta);
}

export function recordMetric(metricId: u32, value: u64): Status {
  return <Status>raw.proxy_record_metric(metricId, value);
}

/** Current metric value, or `fallback`. */
export function getMetric(metricId: u32, fallback: u64): u64 {
  clearReturnSlots();
  if (raw.proxy_get_metric(metricId, RET_U64) != Status.Ok) return fallback;
  return load<u64>(RET_U64);
}
