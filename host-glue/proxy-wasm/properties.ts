// proxy_get_property path resolution and value encoding, as Envoy's Context::getProperty does it
// (§3.3, §6.21):
//
//   path     = segments joined by 0x00 (a trailing 0x00 is tolerated; "request.path" with a dot is
//              ONE top-level name and is not found)
//   first    = a CEL attribute (request, response, source, destination, connection), else one of
//              the Wasm tokens plugin_name / plugin_root_id / plugin_vm_id / connection_id, else
//              the filter state `wasm.<name>` written by proxy_set_property
//   further  = map keys
//   encoding = strings raw; int64/uint64/timestamp (ns since epoch)/duration (ns) 8-byte LE;
//              bool 1 byte; maps as pairs (§3.1); a map that cannot list its keys ->
//              SERIALIZATION_FAILURE
//
// Header-derived request attributes read Envoy's *current* request map: during
// on_request_headers (or while the request is stopped) and in on_log. After the request
// continued, `request.path` is NOT_FOUND in Envoy too (extensions/filters/common/expr/context.cc).

import { WasmResult } from './abi';
import type { HeaderList, StreamInfo } from './http-filter';
import { latin1Bytes, latin1String, serializePairs, type BytePair } from './pairs';

/** What a stream context exposes to property lookups. */
export interface StreamFacts {
  info: StreamInfo;
  /** ns since epoch, when the stream started (request.time). */
  startTimeNs: bigint;
  /** Envoy's activation maps: the current map, or the access-log map during on_log; else null. */
  requestHeaders: HeaderList | null;
  responseHeaders: HeaderList | null;
  responseCode: number | null;
  responseCodeDetails: string | null;
  /** ns, only once the request completed (request.duration). */
  durationNs: bigint | null;
  bytesReceived: number;
  bytesSent: number;
  filterState: Map<string, Uint8Array>;
}

export interface PropertyScope {
  plugin: { name: string; vmId: string };
  rootId: string;
  stream: StreamFacts | null;
}

type Value =
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'int64'; value: bigint }
  | { kind: 'uint64'; value: bigint }
  | { kind: 'bool'; value: boolean }
  | MapValue;

interface MapValue {
  kind: 'map';
  get(key: string): Value | undefined;
  /** null: the map cannot list its keys (Envoy's attribute wrappers) -> SERIALIZATION_FAILURE. */
  entries(): Array<[string, Value]> | null;
}

const str = (s: string): Value => ({ kind: 'bytes', bytes: latin1Bytes(s) });
const int64 = (n: number | bigint): Value => ({ kind: 'int64', value: BigInt(n) });

/** A record of lazily computed attributes (Envoy's RequestWrapper & co: no key listing). */
function attributes(fields: Record<string, () => Value | undefined>): MapValue {
  return { kind: 'map', get: (key) => (Object.hasOwn(fields, key) ? fields[key]!() : undefined), entries: () => null };
}

/** Envoy's HeadersWrapper: lookups join repeated values with ","; keys listed once, in order. */
function headerMap(headers: HeaderList | null): MapValue {
  const joined = new Map<string, string>();
  for (const [k, v] of headers ?? []) joined.set(k, joined.has(k) ? `${joined.get(k)},${v}` : v);
  return {
    kind: 'map',
    get: (key) => (joined.has(key.toLowerCase()) ? str(joined.get(key.toLowerCase())!) : undefined),
    entries: () => [...joined].map(([k, v]) => [k, str(v)]),
  };
}

function header(headers: HeaderList | null, name: string): Value | undefined {
  const entry = headers?.find(([k]) => k === name);
  return entry === undefined ? undefined : str(entry[1]);
}

function requestAttributes(s: StreamFacts): MapValue {
  const h = s.requestHeaders;
  const path = (): string | undefined => h?.find(([k]) => k === ':path')?.[1];
  return attributes({
    path: () => header(h, ':path'),
    url_path: () => (path() === undefined ? undefined : str(path()!.split('?')[0]!)),
    host: () => header(h, ':authority'),
    scheme: () => header(h, ':scheme'),
    method: () => header(h, ':method'),
    referer: () => header(h, 'referer'),
    useragent: () => header(h, 'user-agent'),
    id: () => header(h, 'x-request-id'),
    query: () => {
      const p = path();
      if (p === undefined) return undefined;
      const q = p.indexOf('?');
      return str(q < 0 ? '' : p.slice(q + 1).split('#')[0]!);
    },
    headers: () => headerMap(h),
    time: () => int64(s.startTimeNs),
    protocol: () => str(s.info.protocol),
    duration: () => (s.durationNs === null ? undefined : int64(s.durationNs)),
    size: () => {
      const cl = h?.find(([k]) => k === 'content-length')?.[1];
      if (cl === undefined) return int64(s.bytesReceived);
      return /^\d+$/.test(cl) ? int64(BigInt(cl)) : undefined;
    },
  });
}

function responseAttributes(s: StreamFacts): MapValue {
  return attributes({
    code: () => (s.responseCode === null ? undefined : int64(s.responseCode)),
    code_details: () => (s.responseCodeDetails === null ? undefined : str(s.responseCodeDetails)),
    headers: () => headerMap(s.responseHeaders),
    trailers: () => headerMap(null),
    size: () => int64(s.bytesSent),
  });
}

/** Envoy's address attributes: `address` is "ip:port" ("[v6]:port"), `port` an int64. */
function endpoint(address: string | undefined, port: number | undefined): MapValue {
  const hostPort =
    address === undefined ? undefined : address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  return attributes({
    address: () => (hostPort === undefined ? undefined : str(hostPort)),
    port: () => (port === undefined ? undefined : int64(port)),
  });
}

function topLevel(name: string, scope: PropertyScope): Value | undefined {
  const s = scope.stream;
  if (s !== null) {
    switch (name) {
      case 'request':
        return requestAttributes(s);
      case 'response':
        return responseAttributes(s);
      case 'source':
        return endpoint(s.info.remoteAddress, s.info.remotePort);
      case 'destination':
        return endpoint(s.info.localAddress, s.info.localPort);
      case 'connection':
        return attributes({
          id: () =>
            s.info.connectionId === undefined ? undefined : { kind: 'uint64', value: BigInt(s.info.connectionId) },
          mtls: () => ({ kind: 'bool', value: false }),
          requested_server_name: () => str(''),
        });
    }
  }
  switch (name) {
    case 'plugin_name':
      return str(scope.plugin.name);
    case 'plugin_root_id':
      return str(scope.rootId);
    case 'plugin_vm_id':
      return str(scope.plugin.vmId);
    case 'connection_id':
      return s?.info.connectionId === undefined ? undefined : { kind: 'uint64', value: BigInt(s.info.connectionId) };
  }
  const state = s?.filterState.get(name);
  return state === undefined ? undefined : { kind: 'bytes', bytes: state };
}

function serialize(value: Value): Uint8Array | null {
  switch (value.kind) {
    case 'bytes':
      return value.bytes;
    case 'int64':
    case 'uint64': {
      const out = new Uint8Array(8);
      new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, value.value), true);
      return out;
    }
    case 'bool':
      return Uint8Array.of(value.value ? 1 : 0);
    case 'map': {
      const entries = value.entries();
      if (entries === null) return null;
      const pairs: BytePair[] = [];
      for (const [k, v] of entries) {
        const bytes = serialize(v);
        if (bytes === null) return null;
        pairs.push([latin1Bytes(k), bytes]);
      }
      return serializePairs(pairs);
    }
  }
}

export function lookupProperty(path: Uint8Array, scope: PropertyScope): { result: WasmResult; value?: Uint8Array } {
  const text = latin1String(path);
  let value: Value | undefined;
  // Envoy walks segments while `start < size`: a trailing NUL ends the walk, an empty path never
  // selects anything (and an unselected value fails to serialize).
  for (let start = 0, first = true; start < text.length; first = false) {
    let end = text.indexOf('\0', start);
    if (end < 0) end = text.length;
    const part = text.slice(start, end);
    start = end + 1;
    const next: Value | undefined = first ? topLevel(part, scope) : value?.kind === 'map' ? value.get(part) : undefined;
    if (next === undefined) return { result: WasmResult.NotFound };
    value = next;
  }
  const bytes = value === undefined ? null : serialize(value);
  return bytes === null ? { result: WasmResult.SerializationFailure } : { result: WasmResult.Ok, value: bytes };
}
