// The `env` hostcalls other than HTTP (hostcalls-http.ts): logging, time, timers, properties,
// context control, shared data/queues, metrics and the callouts this host has no upstreams for.
// Semantics: cpp-host src/exports.cc + Envoy context.cc as summarised in §2.3.

import { WasmResult } from './abi';
import { HTTP_HOSTCALLS } from './hostcalls-http';
import { latin1String, toHeaderList } from './pairs';
import * as shared from './shared-state';
import type { WasmVm } from './vm';

// Hostcalls take the VM and the raw wasm arguments (i32 as number, i64 as bigint).
export type Hostcall = (vm: WasmVm, ...args: never[]) => number | undefined | void;

const utf8 = new TextDecoder('utf-8');

/** §2.3: level > 5 -> BAD_ARGUMENT; printed on the wasm logger if the threshold allows. */
function proxy_log(vm: WasmVm, level: number, ptr: number, size: number): number {
  if (level >>> 0 > 5) return WasmResult.BadArgument;
  const message = vm.memory.read(ptr, size);
  if (message === null) return WasmResult.InvalidMemoryAccess;
  vm.plugin.log.wasmLog(level, vm.context.logPrefix, utf8.decode(message));
  return WasmResult.Ok;
}

function proxy_get_log_level(vm: WasmVm, retLevel: number): number {
  return vm.memory.setU32(retLevel, vm.plugin.log.threshold) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

/** Wall clock in ns since the epoch, sub-millisecond from the monotonic clock. */
export function nowNanoseconds(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
}

function proxy_get_current_time_nanoseconds(vm: WasmVm, retTime: number): number {
  // nowNanoseconds() without the BigInt: the same double, written as two u32 halves.
  const ns = Math.round((performance.timeOrigin + performance.now()) * 1e6);
  return vm.memory.setU64Number(retTime, ns) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

function proxy_set_tick_period_milliseconds(vm: WasmVm, ms: number): number {
  vm.context.root.setTickPeriod(ms >>> 0);
  return WasmResult.Ok;
}

function proxy_get_property(vm: WasmVm, pathPtr: number, pathSize: number, retPtr: number, retSize: number): number {
  const path = vm.memory.read(pathPtr, pathSize);
  if (path === null) return WasmResult.InvalidMemoryAccess;
  const { result, value } = vm.context.getProperty(path);
  if (result !== WasmResult.Ok) return result;
  return vm.copyOut(value!, retPtr, retSize) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

function proxy_set_property(
  vm: WasmVm,
  pathPtr: number,
  pathSize: number,
  valuePtr: number,
  valueSize: number,
): number {
  const path = vm.memory.read(pathPtr, pathSize);
  const value = vm.memory.read(valuePtr, valueSize);
  if (path === null || value === null) return WasmResult.InvalidMemoryAccess;
  return vm.context.setProperty(path, value);
}

function proxy_set_effective_context(vm: WasmVm, id: number): number {
  return vm.setEffectiveContext(id >>> 0) ? WasmResult.Ok : WasmResult.BadArgument;
}

function proxy_done(vm: WasmVm): number {
  return vm.context.root.done();
}

/** Callout status of the root context: never set, there are no callouts (code 0, empty message). */
function proxy_get_status(vm: WasmVm, codePtr: number, msgPtr: number, msgSize: number): number {
  if (!vm.memory.setU32(codePtr, 0)) return WasmResult.InvalidMemoryAccess;
  return vm.copyOut(new Uint8Array(0), msgPtr, msgSize) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

// -------------------------------------------------------------------------------- shared data & queues

function proxy_get_shared_data(
  vm: WasmVm,
  keyPtr: number,
  keySize: number,
  retPtr: number,
  retSize: number,
  casPtr: number,
): number {
  const key = vm.memory.read(keyPtr, keySize);
  if (key === null) return WasmResult.InvalidMemoryAccess;
  const { result, value, cas } = shared.getSharedData(vm.plugin.vmId, latin1String(key));
  if (result !== WasmResult.Ok) return result;
  if (!vm.copyOut(value!, retPtr, retSize)) return WasmResult.InvalidMemoryAccess;
  return vm.memory.setU32(casPtr, cas!) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

function proxy_set_shared_data(
  vm: WasmVm,
  keyPtr: number,
  keySize: number,
  valuePtr: number,
  valueSize: number,
  cas: number,
): number {
  const key = vm.memory.read(keyPtr, keySize);
  const value = vm.memory.read(valuePtr, valueSize);
  if (key === null || value === null) return WasmResult.InvalidMemoryAccess;
  return shared.setSharedData(vm.plugin.vmId, latin1String(key), value, cas >>> 0);
}

function proxy_register_shared_queue(vm: WasmVm, namePtr: number, nameSize: number, tokenPtr: number): number {
  const name = vm.memory.read(namePtr, nameSize);
  if (name === null) return WasmResult.InvalidMemoryAccess;
  const token = shared.registerQueue(vm.plugin.vmId, latin1String(name), vm.context.root);
  return vm.memory.setU32(tokenPtr, token) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

function proxy_resolve_shared_queue(
  vm: WasmVm,
  vmIdPtr: number,
  vmIdSize: number,
  namePtr: number,
  nameSize: number,
  tokenPtr: number,
): number {
  const vmId = vm.memory.read(vmIdPtr, vmIdSize);
  const name = vm.memory.read(namePtr, nameSize);
  if (vmId === null || name === null) return WasmResult.InvalidMemoryAccess;
  const token = shared.resolveQueue(vmId.length === 0 ? vm.plugin.vmId : latin1String(vmId), latin1String(name));
  if (token === undefined) return WasmResult.NotFound;
  return vm.memory.setU32(tokenPtr, token) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

function proxy_enqueue_shared_queue(vm: WasmVm, token: number, ptr: number, size: number): number {
  const data = vm.memory.read(ptr, size);
  if (data === null) return WasmResult.InvalidMemoryAccess;
  return shared.enqueue(token >>> 0, data);
}

function proxy_dequeue_shared_queue(vm: WasmVm, token: number, retPtr: number, retSize: number): number {
  const { result, value } = shared.dequeue(token >>> 0);
  if (result !== WasmResult.Ok) return result;
  return vm.copyOut(value!, retPtr, retSize) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

// -------------------------------------------------------------------------------- metrics

// The rules are Envoy's, kept with the ids and the store in metrics.ts.

function proxy_define_metric(vm: WasmVm, type: number, namePtr: number, nameSize: number, idPtr: number): number {
  const name = vm.memory.read(namePtr, nameSize);
  if (name === null) return WasmResult.InvalidMemoryAccess;
  const { result, id } = vm.metrics.define(type, latin1String(name));
  if (result !== WasmResult.Ok) return result;
  return vm.memory.setU32(idPtr, id) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

function proxy_increment_metric(vm: WasmVm, id: number, delta: bigint): number {
  return vm.metrics.increment(id, delta);
}

function proxy_record_metric(vm: WasmVm, id: number, value: bigint): number {
  return vm.metrics.record(id, value);
}

function proxy_get_metric(vm: WasmVm, id: number, retValue: number): number {
  const { result, value } = vm.metrics.get(id);
  if (result !== WasmResult.Ok) return result;
  return vm.memory.setU64(retValue, value) ? WasmResult.Ok : WasmResult.InvalidMemoryAccess;
}

// -------------------------------------------------------------------------------- callouts

/** No clusters exist in this host: Envoy answers BAD_ARGUMENT for an unknown cluster. */
function proxy_http_call(
  vm: WasmVm,
  upPtr: number,
  upSize: number,
  hdrPtr: number,
  hdrSize: number,
  bodyPtr: number,
  bodySize: number,
  trlPtr: number,
  trlSize: number,
  _timeout: number,
  tokenPtr: number,
): number {
  const reads = [
    vm.memory.read(upPtr, upSize),
    vm.memory.read(hdrPtr, hdrSize),
    vm.memory.read(bodyPtr, bodySize),
    vm.memory.read(trlPtr, trlSize),
  ];
  if (reads.includes(null)) return WasmResult.InvalidMemoryAccess;
  toHeaderList(reads[1]!); // parsed like Envoy, unused
  if (!vm.memory.setU32(tokenPtr, 0)) return WasmResult.InvalidMemoryAccess;
  return WasmResult.BadArgument;
}

/** gRPC to an unknown cluster: Envoy answers PARSE_FAILURE (kept for ABI 0.1 compatibility). */
function grpcUnknownCluster(vm: WasmVm, ...spans: number[]): number {
  for (let i = 0; i + 1 < spans.length; i += 2)
    if (vm.memory.read(spans[i]!, spans[i + 1]!) === null) return WasmResult.InvalidMemoryAccess;
  return WasmResult.ParseFailure;
}

function proxy_grpc_call(
  vm: WasmVm,
  a: number,
  b: number,
  c: number,
  d: number,
  e: number,
  f: number,
  g: number,
  h: number,
  i: number,
  j: number,
): number {
  return grpcUnknownCluster(vm, a, b, c, d, e, f, g, h, i, j);
}

function proxy_grpc_stream(
  vm: WasmVm,
  a: number,
  b: number,
  c: number,
  d: number,
  e: number,
  f: number,
  g: number,
  h: number,
): number {
  return grpcUnknownCluster(vm, a, b, c, d, e, f, g, h);
}

const noSuchCallout = (): number => WasmResult.NotFound;

function proxy_grpc_send(vm: WasmVm, _token: number, ptr: number, size: number): number {
  return vm.memory.read(ptr, size) === null ? WasmResult.InvalidMemoryAccess : WasmResult.NotFound;
}

/**
 * Envoy's foreign functions; only `clear_route_cache` (1.33+) means something here, and it is a
 * no-op: the proxy routes after the filter anyway (§3.4).
 */
function proxy_call_foreign_function(
  vm: WasmVm,
  namePtr: number,
  nameSize: number,
  argsPtr: number,
  argsSize: number,
  resultsPtr: number,
  resultsSizePtr: number,
): number {
  const name = vm.memory.read(namePtr, nameSize);
  if (name === null || vm.memory.read(argsPtr, argsSize) === null) return WasmResult.InvalidMemoryAccess;
  if (latin1String(name) !== 'clear_route_cache') return WasmResult.NotFound;
  if (resultsPtr !== 0 && !vm.memory.setU32(resultsPtr, 0)) return WasmResult.InvalidMemoryAccess;
  if (resultsSizePtr !== 0 && !vm.memory.setU32(resultsSizePtr, 0)) return WasmResult.InvalidMemoryAccess;
  return WasmResult.Ok;
}

export const ENV_HOSTCALLS: Record<string, Hostcall> = {
  ...HTTP_HOSTCALLS,
  proxy_log,
  proxy_get_log_level,
  proxy_get_current_time_nanoseconds,
  proxy_set_tick_period_milliseconds,
  proxy_get_property,
  proxy_set_property,
  proxy_set_effective_context,
  proxy_done,
  proxy_get_status,
  proxy_get_shared_data,
  proxy_set_shared_data,
  proxy_register_shared_queue,
  proxy_resolve_shared_queue,
  proxy_enqueue_shared_queue,
  proxy_dequeue_shared_queue,
  proxy_define_metric,
  proxy_increment_metric,
  proxy_record_metric,
  proxy_get_metric,
  proxy_http_call,
  proxy_grpc_call,
  proxy_grpc_stream,
  proxy_grpc_send,
  proxy_grpc_close: noSuchCallout,
  proxy_grpc_cancel: noSuchCallout,
  proxy_call_foreign_function,
  emscripten_notify_memory_growth: () => undefined,
  pthread_equal: (_vm: WasmVm, a: number, b: number) => (a === b ? 1 : 0),
};
