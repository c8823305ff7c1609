// The raw module exports Envoy binds (docs/specs.md ABI §1.1, §1.2), with the
// exact wasm types it type-checks at load time: u32/bool/usize are i32, nothing is i64, and
// proxy_on_context_create / proxy_on_tick / proxy_on_log / proxy_on_delete return nothing.
// The plugin entry file re-exports this module (`export * from "./proxy/exports"`); each function
// only converts integers and hands over to the dispatcher.
//
// Not exported: proxy_validate_configuration (deprecated in Envoy), the metadata callbacks
// (always Continue), http/grpc callout, queue and foreign-function callbacks (no wrappers yet),
// TCP callbacks, and `malloc` (Envoy prefers `malloc` when present, §1.1; exporting only
// proxy_on_memory_allocate leaves one allocator and one code path).

import './abort';
import { allocateForHost } from './memory';
import * as dispatch from './dispatcher';

/** ABI marker: Envoy picks ABI 0.2.1 by the presence of this function; never called (§0). */
export function proxy_abi_version_0_2_1(): void {}

/** The allocator the host calls from inside hostcalls to hand over results (§3.2). */
export function proxy_on_memory_allocate(size: usize): usize {
  return allocateForHost(size);
}

export function proxy_on_context_create(contextId: u32, parentContextId: u32): void {
  dispatch.onContextCreate(contextId, parentContextId);
}

export function proxy_on_vm_start(rootContextId: u32, vmConfigurationSize: u32): u32 {
  return dispatch.onVmStart(rootContextId, vmConfigurationSize) ? 1 : 0;
}

export function proxy_on_configure(rootContextId: u32, pluginConfigurationSize: u32): u32 {
  return dispatch.onConfigure(rootContextId, pluginConfigurationSize) ? 1 : 0;
}

export function proxy_on_tick(rootContextId: u32): void {
  dispatch.onTick(rootContextId);
}

export function proxy_on_request_headers(contextId: u32, headerCount: u32, endOfStream: u32): u32 {
  return <u32>dispatch.onRequestHeaders(contextId, headerCount, endOfStream != 0);
}

export function proxy_on_request_body(contextId: u32, bodySize: u32, endOfStream: u32): u32 {
  return <u32>dispatch.onRequestBody(contextId, bodySize, endOfStream != 0);
}

export function proxy_on_request_trailers(contextId: u32, trailerCount: u32): u32 {
  return <u32>dispatch.onRequestTrailers(contextId, trailerCount);
}

export function proxy_on_response_headers(contextId: u32, headerCount: u32, endOfStream: u32): u32 {
  return <u32>dispatch.onResponseHeaders(contextId, headerCount, endOfStream != 0);
}

export function proxy_on_response_body(contextId: u32, bodySize: u32, endOfStream: u32): u32 {
  return <u32>dispatch.onResponseBody(contextId, bodySize, endOfStream != 0);
}

export function proxy_on_response_trailers(contextId: u32, trailerCount: u32): u32 {
  return <u32>dispatch.onResponseTrailers(contextId, trailerCount);
}

export function proxy_on_log(contextId: u32): void {
  dispatch.onLog(contextId);
}

export function proxy_on_done(contextId: u32): u32 {
  return dispatch.onDone(contextId) ? 1 : 0;
}

export function proxy_on_delete(contextId: u32): void {
  dispatch.onDelete(contextId);
}
