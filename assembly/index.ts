// Edge plugin entry point (proxy-wasm ABI 0.2.1).
//
// Until the wasm edge runtime issue lands this module is deliberately minimal, but it already
// obeys the load rules of ../shared/reference/proxy-wasm-abi.md §4.2 so that Envoy accepts it:
// the ABI marker export, an allocator export, `_initialize` instead of a start section, only
// `env.proxy_*` imports, and `abort` routed to proxy_log (no `env.abort` import).

// proxy-wasm ABI 0.2.1 §2.3: all hostcalls return i32 (a WasmResult).
@external("env", "proxy_log")
declare function proxy_log(level: u32, messagePtr: usize, messageSize: usize): u32;

const LOG_CRITICAL: u32 = 5;
// FilterHeadersStatus::Continue (ABI 0.2.1 §1.2).
const CONTINUE: u32 = 0;

function logCritical(message: string): void {
  const bytes = String.UTF8.encode(message);
  proxy_log(LOG_CRITICAL, changetype<usize>(bytes), <usize>bytes.byteLength);
}

// Reached by any failed assertion or throw. The generated code traps right after this returns,
// so the best we can do is say where it happened.
@global
function abortHandler(message: string | null, fileName: string | null, line: u32, column: u32): void {
  logCritical(
    "abort: " + (message !== null ? message : "") + " at " + (fileName !== null ? fileName : "?") +
      ":" + line.toString() + ":" + column.toString(),
  );
}

// Marker export: Envoy selects the ABI version by the presence of this function; it is never called.
export function proxy_abi_version_0_2_1(): void {}

// Unmanaged memory for data the host hands to the module (ABI §3: host calls this, then writes).
export function proxy_on_memory_allocate(size: usize): usize {
  return heap.alloc(size);
}

export function proxy_on_vm_start(rootContextId: u32, vmConfigurationSize: u32): u32 {
  return 1;
}

export function proxy_on_configure(rootContextId: u32, pluginConfigurationSize: u32): u32 {
  return 1;
}

export function proxy_on_context_create(contextId: u32, parentContextId: u32): void {}

export function proxy_on_request_headers(contextId: u32, headerCount: u32, endOfStream: u32): u32 {
  return CONTINUE;
}

export function proxy_on_response_headers(contextId: u32, headerCount: u32, endOfStream: u32): u32 {
  return CONTINUE;
}

export function proxy_on_log(contextId: u32): void {}

export function proxy_on_done(contextId: u32): u32 {
  return 1;
}

export function proxy_on_delete(contextId: u32): void {}
