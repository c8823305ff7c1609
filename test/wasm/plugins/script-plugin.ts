// Entry of the scriptable test plugin with only proxy_on_memory_allocate as its allocator
// (what build/edge.wasm exports). See runtime.ts.
export {
  proxy_abi_version_0_2_1,
  proxy_on_memory_allocate,
  proxy_on_context_create,
  proxy_on_vm_start,
  proxy_on_configure,
  proxy_on_request_headers,
  proxy_on_request_body,
  proxy_on_response_headers,
  proxy_on_response_body,
  proxy_on_log,
  proxy_on_done,
  proxy_on_delete,
  proxy_on_tick,
  proxy_on_queue_ready,
} from './runtime';
