// HTTP hostcalls: header maps, body buffers, local replies and stream control, with cpp-host's
// argument checks (src/exports.cc) and Envoy's map/buffer semantics (context.cc):
//
//   type > max                  -> BAD_ARGUMENT (before anything else)
//   bad pointer                 -> INVALID_MEMORY_ACCESS
//   map not available           -> value lookup BAD_ARGUMENT (NOT_FOUND in on_log), pairs OK/empty,
//                                  any write BAD_ARGUMENT (§2.4, §6.9)
//   keys                        -> lowercased (ASCII), first value only, pseudo-headers kept first
//   set_header_map_pairs        -> strict pairs; malformed = empty list = wipes the map (§3.1)
//   send_local_response         -> deferred to after the callback, forces a stop (§2.6)

import {
  BUFFER_TYPE_MAX,
  MAP_TYPE_MAX,
  STREAM_TYPE_MAX,
  WasmResult,
  type BufferType,
  type MapType,
  type StreamType,
} from './abi';
import type { HeaderList } from './http-filter';
import { fromHeaderList, latin1Bytes, latin1String, toHeaderList } from './pairs';
import type { WasmVm } from './vm';

/** Envoy LowerCaseString: ASCII only. Keys are nearly always lower case already: scan first. */
export const lowerAscii = (s: string): string => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return s.replace(/[A-Z]/g, (u) => u.toLowerCase());
  }
  return s;
};

/** First entry named `name`, or undefined (a loop: this runs for every header lookup). */
function findEntry(map: HeaderList, name: string): [string, string] | undefined {
  for (let i = 0; i < map.length; i++) {
    const entry = map[i]!;
    if (entry[0] === name) return entry;
  }
  return undefined;
}

/** Envoy's header list keeps pseudo-headers before regular ones (HeaderMapImpl). */
export function addHeader(map: HeaderList, key: string, value: string): void {
  if (key.startsWith(':')) {
    let at = 0;
    while (at < map.length && map[at]![0].startsWith(':')) at++;
    map.splice(at, 0, [key, value]);
  } else {
    map.push([key, value]);
  }
}

export function removeHeader(map: HeaderList, key: string): void {
  for (let i = map.length - 1; i >= 0; i--) if (map[i]![0] === key) map.splice(i, 1);
}

const badMap = (type: number): boolean => type >>> 0 > MAP_TYPE_MAX;

function proxy_get_header_map_value(
  vm: WasmVm,
  type: number,
  keyPtr: number,
  keySize: number,
  retPtr: number,
  retSize: number,
): number {
  if (badMap(type)) return WasmResult.BadArgument;
  const ctx = vm.context;
  const key = vm.memory.readLatin1(keyPtr, keySize);
  if (key === null) return WasmResult.InvalidMemoryAccess;
  const map = ctx.getConstMap(type as MapType);
  if (map === null) return ctx.accessLogPhase ? WasmResult.NotFound : WasmResult.BadArgument;
  const entry = findEntry(map, lowerAscii(key));
  if (entry === undefined) return WasmResult.NotFound;
  return vm.copyOutLatin1(entry[1], retPtr, retSize) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

function proxy_get_header_map_pairs(vm: WasmVm, type: number, retPtr: number, retSize: number): number {
  if (badMap(type)) return WasmResult.BadArgument;
  const map = vm.context.getConstMap(type as MapType) ?? [];
  const bytes = map.length === 0 ? new Uint8Array(0) : fromHeaderList(map);
  return vm.copyOut(bytes, retPtr, retSize) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

/** add / replace share the reads and the availability check. */
function writeHeader(
  vm: WasmVm,
  type: number,
  keyPtr: number,
  keySize: number,
  valuePtr: number,
  valueSize: number,
  apply: (map: HeaderList, key: string, value: string) => void,
): number {
  if (badMap(type)) return WasmResult.BadArgument;
  const ctx = vm.context;
  const key = vm.memory.readLatin1(keyPtr, keySize);
  const value = vm.memory.readLatin1(valuePtr, valueSize);
  if (key === null || value === null) return WasmResult.InvalidMemoryAccess;
  const map = ctx.getMap(type as MapType);
  if (map === null) return WasmResult.BadArgument;
  apply(map, lowerAscii(key), value);
  ctx.onHeadersModified(type as MapType);
  return WasmResult.Ok;
}

function proxy_add_header_map_value(vm: WasmVm, type: number, k: number, ks: number, v: number, vs: number): number {
  return writeHeader(vm, type, k, ks, v, vs, addHeader);
}

/** Current Envoy setCopy: every entry of the key removed, then one added. */
function replaceHeader(map: HeaderList, key: string, value: string): void {
  removeHeader(map, key);
  addHeader(map, key, value);
}

function proxy_replace_header_map_value(
  vm: WasmVm,
  type: number,
  k: number,
  ks: number,
  v: number,
  vs: number,
): number {
  return writeHeader(vm, type, k, ks, v, vs, replaceHeader);
}

function proxy_remove_header_map_value(vm: WasmVm, type: number, keyPtr: number, keySize: number): number {
  if (badMap(type)) return WasmResult.BadArgument;
  const ctx = vm.context;
  const key = vm.memory.readLatin1(keyPtr, keySize);
  if (key === null) return WasmResult.InvalidMemoryAccess;
  const map = ctx.getMap(type as MapType);
  if (map === null) return WasmResult.BadArgument;
  removeHeader(map, lowerAscii(key));
  ctx.onHeadersModified(type as MapType);
  return WasmResult.Ok;
}

function proxy_set_header_map_pairs(vm: WasmVm, type: number, ptr: number, size: number): number {
  if (badMap(type)) return WasmResult.BadArgument;
  const ctx = vm.context;
  const bytes = vm.memory.read(ptr, size);
  if (bytes === null) return WasmResult.InvalidMemoryAccess;
  const map = ctx.getMap(type as MapType);
  if (map === null) return WasmResult.BadArgument;
  const pairs = toHeaderList(bytes); // malformed -> [] -> the map is wiped, as in Envoy
  map.splice(0, map.length);
  for (const [k, v] of pairs) addHeader(map, lowerAscii(k), v);
  ctx.onHeadersModified(type as MapType);
  return WasmResult.Ok;
}

/** Envoy answers the map's byteSize (keys + values), not the serialized size (§8). */
function proxy_get_header_map_size(vm: WasmVm, type: number, retSize: number): number {
  if (badMap(type)) return WasmResult.BadArgument;
  const map = vm.context.getMap(type as MapType);
  if (map === null) return WasmResult.BadArgument;
  const size = map.reduce((n, [k, v]) => n + latin1Bytes(k).length + latin1Bytes(v).length, 0);
  return vm.memory.setU32(retSize, size) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

const badBuffer = (type: number): boolean => type >>> 0 > BUFFER_TYPE_MAX;

/** §2.5: clamp to the buffer; nothing to copy -> OK with 0/0, no allocation. */
function proxy_get_buffer_bytes(
  vm: WasmVm,
  type: number,
  start: number,
  length: number,
  retPtr: number,
  retSize: number,
): number {
  if (badBuffer(type)) return WasmResult.BadArgument;
  const buffer = vm.context.getBuffer(type as BufferType);
  if (buffer === null) return WasmResult.NotFound;
  const from = start >>> 0;
  let count = length >>> 0; // cpp-host's 64-bit Word: start + length cannot overflow for wasm32
  const size = buffer.bytes.length;
  if (from > size) count = 0;
  else if (from + count > size) count = size - from;
  if (count === 0) {
    return vm.memory.setU32(retPtr, 0) && vm.memory.setU32(retSize, 0) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
  }
  return vm.copyOut(buffer.bytes.slice(from, from + count), retPtr, retSize)
    ? WasmResult.Ok
    : WasmResult.InvalidMemoryAccess;
}

function proxy_get_buffer_status(vm: WasmVm, type: number, lengthPtr: number, flagsPtr: number): number {
  if (badBuffer(type)) return WasmResult.BadArgument;
  const buffer = vm.context.getBuffer(type as BufferType);
  if (buffer === null) return WasmResult.NotFound;
  if (!vm.memory.setU32(lengthPtr, buffer.bytes.length)) return WasmResult.InvalidMemoryAccess;
  return vm.memory.setU32(flagsPtr, 0) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

function proxy_set_buffer_bytes(
  vm: WasmVm,
  type: number,
  start: number,
  length: number,
  dataPtr: number,
  dataSize: number,
): number {
  if (badBuffer(type)) return WasmResult.BadArgument;
  const buffer = vm.context.getBuffer(type as BufferType);
  if (buffer === null) return WasmResult.NotFound;
  const data = vm.memory.read(dataPtr, dataSize);
  if (data === null) return WasmResult.InvalidMemoryAccess;
  return buffer.copyFrom(start >>> 0, length >>> 0, data);
}

function proxy_send_local_response(
  vm: WasmVm,
  status: number,
  detailsPtr: number,
  detailsSize: number,
  bodyPtr: number,
  bodySize: number,
  headersPtr: number,
  headersSize: number,
  grpcStatus: number,
): number {
  const ctx = vm.context;
  const details = vm.memory.read(detailsPtr, detailsSize);
  const body = vm.memory.read(bodyPtr, bodySize);
  const headers = vm.memory.read(headersPtr, headersSize);
  if (details === null || body === null || headers === null) return WasmResult.InvalidMemoryAccess;
  ctx.sendLocalResponse({
    status: status >>> 0,
    details: latin1String(details),
    body,
    headers: toHeaderList(headers), // malformed -> no extra headers
    grpcStatus: grpcStatus | 0,
  });
  vm.stopIteration = true; // PR proxy-wasm-cpp-host#88: whatever the callback returns
  return WasmResult.Ok;
}

const badStream = (type: number): boolean => type >>> 0 > STREAM_TYPE_MAX;

function proxy_continue_stream(vm: WasmVm, type: number): number {
  if (badStream(type)) return WasmResult.BadArgument;
  return vm.context.continueStream(type as StreamType);
}

function proxy_close_stream(vm: WasmVm, type: number): number {
  if (badStream(type)) return WasmResult.BadArgument;
  return vm.context.closeStream(type as StreamType);
}

export const HTTP_HOSTCALLS = {
  proxy_get_header_map_value,
  proxy_get_header_map_pairs,
  proxy_add_header_map_value,
  proxy_replace_header_map_value,
  proxy_remove_header_map_value,
  proxy_set_header_map_pairs,
  proxy_get_header_map_size,
  proxy_get_buffer_bytes,
  proxy_get_buffer_status,
  proxy_set_buffer_bytes,
  proxy_send_local_response,
  proxy_continue_stream,
  proxy_close_stream,
};
