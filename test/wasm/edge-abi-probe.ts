// Test-only module (never shipped): exposes the pieces of the proxy-wasm layer that jest cannot
// reach through build/edge.wasm. test/edge-abi/ compiles it with the same flags as the edge
// target and drives it with a minimal stub host.
//   * codec entry points: header pairs <-> JSON text, the JSON parser with limits, tree queries;
//   * a probe plugin whose requests exercise the host wrappers (x-probe request header);
//   * abortNow(): a failing assertion, to check abort -> proxy_log with file and line.
// Results come back through resultPointer()/resultLength() (UTF-8 or raw bytes).

import {
  Action,
  BufferType,
  Header,
  HttpContext,
  LogLevel,
  RootContext,
  StreamType,
  addRequestHeader,
  continueStream,
  currentTimeNanoseconds,
  decodePairs,
  encodePairs,
  getBuffer,
  getBufferSize,
  getPropertyInteger,
  getPropertyString,
  getRequestHeader,
  getRequestHeaders,
  getResponseHeaders,
  log,
  parsePairs,
  removeRequestHeader,
  replaceRequestHeader,
  replaceResponseHeader,
  sendLocalResponseText,
  setBuffer,
  setRootContextFactory,
} from '../../assembly/proxy';
import { liveContextCount } from '../../assembly/proxy/dispatcher';
import { allocateForHost } from '../../assembly/proxy/memory';
import { JsonLimits, JsonValue, parseJson, quoteJson } from '../../assembly/json';

export * from '../../assembly/proxy/exports';

// ------------------------------------------------------------------------------ result hand-off

let result = new ArrayBuffer(0);
let resultPosition: i32 = -1;

function setResultText(text: string): void {
  result = String.UTF8.encode(text, false);
}

export function resultPointer(): usize {
  return changetype<usize>(result);
}
export function resultLength(): i32 {
  return result.byteLength;
}
export function lastPosition(): i32 {
  return resultPosition;
}
export function alloc(size: usize): usize {
  return allocateForHost(size);
}
export function contexts(): i32 {
  return liveContextCount();
}

/** Copies len bytes at ptr (allocated by the test through alloc) into a managed buffer. */
function input(ptr: usize, len: usize): ArrayBuffer {
  const bytes = new ArrayBuffer(<i32>len);
  memory.copy(changetype<usize>(bytes), ptr, len);
  heap.free(ptr);
  return bytes;
}

function pairsToJson(headers: Header[]): string {
  const parts = new Array<string>(0);
  for (let i = 0; i < headers.length; i++) {
    parts.push('[' + quoteJson(headers[i].name) + ',' + quoteJson(headers[i].value) + ']');
  }
  return '[' + parts.join(',') + ']';
}

// ------------------------------------------------------------------------------- pairs codec

/** 1 and the pairs as JSON [["k","v"],...] if well-formed; 0 and "malformed" otherwise. */
export function pairsParse(ptr: usize, len: usize): i32 {
  const parsed = parsePairs(input(ptr, len));
  setResultText(parsed !== null ? pairsToJson(parsed) : 'malformed');
  return parsed !== null ? 1 : 0;
}

/** decodePairs (Envoy's reading: malformed -> empty) as JSON. */
export function pairsDecode(ptr: usize, len: usize): i32 {
  const headers = decodePairs(input(ptr, len));
  setResultText(pairsToJson(headers));
  return headers.length;
}

/** JSON [["k","v"],...] -> serialised pairs in the result; 0 if the JSON is not that shape or
 * the pairs exceed the limits. */
export function pairsEncode(ptr: usize, len: usize): i32 {
  const parsed = parseJson(input(ptr, len));
  const list = parsed.value;
  if (list === null || !list.isArray()) return 0;
  const headers = new Array<Header>(0);
  for (let i = 0; i < list.length; i++) {
    const pair = list.at(i);
    if (pair === null || pair.length != 2) return 0;
    const name = pair.at(0);
    const value = pair.at(1);
    if (name === null || value === null) return 0;
    const nameText = name.asString();
    const valueText = value.asString();
    if (nameText === null || valueText === null) return 0;
    headers.push(new Header(nameText, valueText));
  }
  const bytes = encodePairs(headers);
  if (bytes === null) return 0;
  result = bytes;
  return 1;
}

/** Encodes `count` pairs named "h<i>" with a value of `valueBytes` 'v's: limit tests. */
export function pairsEncodeGenerated(count: i32, valueBytes: i32): i32 {
  const headers = new Array<Header>(0);
  const value = 'v'.repeat(valueBytes);
  for (let i = 0; i < count; i++) headers.push(new Header('h' + i.toString(), value));
  const bytes = encodePairs(headers);
  if (bytes === null) return 0;
  result = bytes;
  return 1;
}

// -------------------------------------------------------------------------------------- JSON

/** 1 and the canonical JSON, or 0 and the error message (position in lastPosition()). */
export function jsonParse(ptr: usize, len: usize, maxDepth: i32, maxBytes: i32): i32 {
  const parsed = parseJson(input(ptr, len), new JsonLimits(maxDepth, maxBytes));
  const value = parsed.value;
  resultPosition = parsed.position;
  setResultText(value !== null ? value.toJson() : parsed.error);
  return value !== null ? 1 : 0;
}

/** Walks `path` (segments separated by '/', array positions in decimal) through the document
 * with the tree API and describes what it finds as JSON; 0 if the document is invalid or the
 * path leads nowhere. */
export function jsonQuery(docPtr: usize, docLen: usize, pathPtr: usize, pathLen: usize): i32 {
  const parsed = parseJson(input(docPtr, docLen));
  const path = String.UTF8.decode(input(pathPtr, pathLen));
  let node = parsed.value;
  if (node === null) return 0;
  const segments = path.length > 0 ? path.split('/') : new Array<string>(0);
  for (let i = 0; i < segments.length; i++) {
    const here: JsonValue = node;
    node = here.isArray() ? here.at(<i32>parseInt(segments[i], 10)) : here.get(segments[i]);
    if (node === null) return 0;
  }
  const found: JsonValue = node;
  const out = JsonValue.newObject();
  out.add('kind', JsonValue.ofNumber(<f64>found.kind));
  const text = found.asString();
  out.add('string', text !== null ? JsonValue.ofString(text) : JsonValue.ofNull());
  out.add('number', JsonValue.ofNumber(found.asNumber(-1)));
  out.add('integer', JsonValue.ofNumber(<f64>found.asInteger(-1)));
  out.add('bool', JsonValue.ofBool(found.asBool(false)));
  out.add('length', JsonValue.ofNumber(<f64>found.length));
  const keys = JsonValue.newArray();
  const names = found.keys();
  for (let i = 0; i < names.length; i++) keys.push(JsonValue.ofString(names[i]));
  out.add('keys', keys);
  setResultText(out.toJson());
  return 1;
}

// ------------------------------------------------------------------------------------- abort

export function abortNow(): void {
  assert(false, 'probe assertion'); // the test looks for this file and line
}

// ------------------------------------------------------------------------------- probe plugin

/** Root: logs what it was configured with. */
class ProbeRoot extends RootContext {
  onConfigure(configuration: ArrayBuffer): bool {
    log(LogLevel.Info, 'configure ' + configuration.byteLength.toString() + ' ' + String.UTF8.decode(configuration));
    return true;
  }

  onVmStart(vmConfiguration: ArrayBuffer): bool {
    return vmConfiguration.byteLength == 0 || String.UTF8.decode(vmConfiguration) != 'fail';
  }

  createHttpContext(contextId: u32): HttpContext | null {
    return new ProbeStream(contextId, this);
  }
}

/** A stream that performs the host calls named by its x-probe request header. */
class ProbeStream extends HttpContext {
  probe: string = '';

  onRequestHeaders(headerCount: u32, endOfStream: bool): Action {
    const probe = getRequestHeader('x-probe');
    this.probe = probe !== null ? probe : '';
    if (this.probe == 'headers') {
      log(LogLevel.Info, 'headers ' + headerCount.toString() + ' ' + pairsToJson(getRequestHeaders()));
    } else if (this.probe == 'rewrite') {
      replaceRequestHeader(':path', '/rewritten?q=1');
      addRequestHeader('x-added', 'yes');
      removeRequestHeader('x-remove-me');
    } else if (this.probe == 'deny') {
      const headers = new Array<Header>(0);
      headers.push(new Header('www-authenticate', 'Basic realm="edge"'));
      headers.push(new Header('x-probe', 'é'));
      sendLocalResponseText(401, 'probe denied', 'no entry', headers);
      return Action.Pause;
    } else if (this.probe == 'property') {
      const path = getPropertyString(['request', 'path']);
      const port = getPropertyInteger(['source', 'port'], -1);
      const missing = getPropertyString(['no', 'such']);
      log(
        LogLevel.Info,
        'property ' +
          (path !== null ? path : 'null') +
          ' ' +
          port.toString() +
          ' ' +
          (missing !== null ? missing : 'null'),
      );
    } else if (this.probe == 'time') {
      log(LogLevel.Info, 'time ' + currentTimeNanoseconds().toString());
    } else if (this.probe == 'missing') {
      const value = getRequestHeader('x-not-there');
      log(LogLevel.Info, 'missing ' + (value !== null ? '"' + value + '"' : 'null'));
    } else if (this.probe == 'pause') {
      return Action.Pause;
    }
    return Action.Continue;
  }

  onRequestBody(bodySize: u32, endOfStream: bool): Action {
    if (this.probe != 'body') return Action.Continue;
    const body = getBuffer(BufferType.HttpRequestBody, 0, bodySize);
    const size = getBufferSize(BufferType.HttpRequestBody);
    log(
      LogLevel.Info,
      'body ' + bodySize.toString() + ' ' + size.toString() + ' ' + (body !== null ? String.UTF8.decode(body) : 'null'),
    );
    setBuffer(BufferType.HttpRequestBody, 0, bodySize, String.UTF8.encode('replaced'));
    return Action.Continue;
  }

  onResponseHeaders(headerCount: u32, endOfStream: bool): Action {
    if (this.probe == 'pause') continueStream(StreamType.HttpRequest);
    if (this.probe == 'response') {
      replaceResponseHeader('x-edge', '1');
      log(LogLevel.Info, 'response ' + pairsToJson(getResponseHeaders()));
    }
    return Action.Continue;
  }

  onLog(): void {
    log(LogLevel.Debug, 'onLog ' + this.id.toString());
  }

  onDelete(): void {
    log(LogLevel.Debug, 'onDelete ' + this.id.toString());
  }
}

setRootContextFactory((contextId: u32): RootContext => new ProbeRoot(contextId));
