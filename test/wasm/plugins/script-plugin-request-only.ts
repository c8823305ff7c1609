// Entry of the scriptable test plugin without any callback that can see a response (no response,
// log, tick or queue callbacks), as build/edge.wasm: the host may then send responses past it
// (HttpFilterStream.responsePassesThrough). See runtime.ts.
export {
  proxy_abi_version_0_2_1,
  proxy_on_memory_allocate,
  proxy_on_context_create,
  proxy_on_vm_start,
  proxy_on_configure,
  proxy_on_request_headers,
  proxy_on_request_body,
  proxy_on_done,
  proxy_on_delete,
} from './runtime';
