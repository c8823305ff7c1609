// What Envoy accepts from a proxy-wasm ABI 0.2.1 module, transcribed from
// docs/specs.md ABI (§1.1 integration exports, §1.2 callbacks, §2.3 host
// functions, §2.7 WASI). Signatures are written as signature() in wasm-binary.ts prints them.

const i32x = (n: number): string => Array.from({ length: n }, () => 'i32').join(',');

/** Every `env.proxy_*` host function Envoy registers for a 0.2.1 module (§2.3; cpp-host
 * FOR_ALL_HOST_FUNCTIONS plus continue_stream, close_stream, get_log_level). */
export const ENVOY_ENV_IMPORTS_0_2_1: Readonly<Record<string, string>> = {
  proxy_log: `(${i32x(3)})->i32`,
  proxy_get_log_level: '(i32)->i32',
  proxy_get_current_time_nanoseconds: '(i32)->i32',
  proxy_set_tick_period_milliseconds: '(i32)->i32',
  proxy_get_property: `(${i32x(4)})->i32`,
  proxy_set_property: `(${i32x(4)})->i32`,
  proxy_get_buffer_bytes: `(${i32x(5)})->i32`,
  proxy_get_buffer_status: `(${i32x(3)})->i32`,
  proxy_set_buffer_bytes: `(${i32x(5)})->i32`,
  proxy_get_header_map_pairs: `(${i32x(3)})->i32`,
  proxy_get_header_map_value: `(${i32x(5)})->i32`,
  proxy_add_header_map_value: `(${i32x(5)})->i32`,
  proxy_replace_header_map_value: `(${i32x(5)})->i32`,
  proxy_remove_header_map_value: `(${i32x(3)})->i32`,
  proxy_set_header_map_pairs: `(${i32x(3)})->i32`,
  proxy_get_header_map_size: `(${i32x(2)})->i32`,
  proxy_send_local_response: `(${i32x(8)})->i32`,
  proxy_continue_stream: '(i32)->i32',
  proxy_close_stream: '(i32)->i32',
  proxy_set_effective_context: '(i32)->i32',
  proxy_done: '()->i32',
  proxy_get_status: `(${i32x(3)})->i32`,
  proxy_get_shared_data: `(${i32x(5)})->i32`,
  proxy_set_shared_data: `(${i32x(5)})->i32`,
  proxy_register_shared_queue: `(${i32x(3)})->i32`,
  proxy_resolve_shared_queue: `(${i32x(5)})->i32`,
  proxy_enqueue_shared_queue: `(${i32x(3)})->i32`,
  proxy_dequeue_shared_queue: `(${i32x(3)})->i32`,
  proxy_define_metric: `(${i32x(4)})->i32`,
  proxy_increment_metric: '(i32,i64)->i32',
  proxy_record_metric: '(i32,i64)->i32',
  proxy_get_metric: `(${i32x(2)})->i32`,
  proxy_http_call: `(${i32x(10)})->i32`,
  proxy_grpc_call: `(${i32x(12)})->i32`,
  proxy_grpc_stream: `(${i32x(9)})->i32`,
  proxy_grpc_send: `(${i32x(4)})->i32`,
  proxy_grpc_cancel: '(i32)->i32',
  proxy_grpc_close: '(i32)->i32',
  proxy_call_foreign_function: `(${i32x(6)})->i32`,
};

/** Names that exist only for ABI 0.1.0: importing one makes a 0.2.1 module unloadable (§0). */
export const ABI_0_1_ONLY_IMPORTS = [
  'proxy_get_configuration',
  'proxy_continue_request',
  'proxy_continue_response',
  'proxy_clear_route_cache',
];

/** WASI functions every Envoy since ~2021 provides, under both module names (§2.7). */
export const ENVOY_WASI_IMPORTS: Readonly<Record<string, string>> = {
  fd_write: `(${i32x(4)})->i32`,
  fd_read: `(${i32x(4)})->i32`,
  fd_seek: '(i32,i64,i32,i32)->i32',
  fd_close: '(i32)->i32',
  fd_fdstat_get: '(i32,i32)->i32',
  environ_get: '(i32,i32)->i32',
  environ_sizes_get: '(i32,i32)->i32',
  args_get: '(i32,i32)->i32',
  args_sizes_get: '(i32,i32)->i32',
  clock_time_get: '(i32,i64,i32)->i32',
  random_get: '(i32,i32)->i32',
  proc_exit: '(i32)->()',
  path_open: '(i32,i32,i32,i32,i32,i64,i64,i32,i32)->i32',
  fd_prestat_get: '(i32,i32)->i32',
  fd_prestat_dir_name: `(${i32x(3)})->i32`,
};
export const WASI_MODULES = ['wasi_snapshot_preview1', 'wasi_unstable'];

/** Module callbacks Envoy binds, with the types it checks at load time (§1.2, §1.1). */
export const ENVOY_CALLBACK_EXPORTS: Readonly<Record<string, string>> = {
  proxy_on_memory_allocate: '(i32)->i32',
  malloc: '(i32)->i32',
  _initialize: '()->()',
  _start: '()->()',
  main: '(i32,i32)->i32',
  proxy_on_context_create: '(i32,i32)->()',
  proxy_on_vm_start: '(i32,i32)->i32',
  proxy_validate_configuration: '(i32,i32)->i32',
  proxy_on_configure: '(i32,i32)->i32',
  proxy_on_tick: '(i32)->()',
  proxy_on_request_headers: '(i32,i32,i32)->i32',
  proxy_on_request_body: '(i32,i32,i32)->i32',
  proxy_on_request_trailers: '(i32,i32)->i32',
  proxy_on_request_metadata: '(i32,i32)->i32',
  proxy_on_response_headers: '(i32,i32,i32)->i32',
  proxy_on_response_body: '(i32,i32,i32)->i32',
  proxy_on_response_trailers: '(i32,i32)->i32',
  proxy_on_response_metadata: '(i32,i32)->i32',
  proxy_on_log: '(i32)->()',
  proxy_on_done: '(i32)->i32',
  proxy_on_delete: '(i32)->()',
  proxy_on_http_call_response: `(${i32x(5)})->()`,
  proxy_on_grpc_receive_initial_metadata: `(${i32x(3)})->()`,
  proxy_on_grpc_receive: `(${i32x(3)})->()`,
  proxy_on_grpc_receive_trailing_metadata: `(${i32x(3)})->()`,
  proxy_on_grpc_close: `(${i32x(3)})->()`,
  proxy_on_queue_ready: '(i32,i32)->()',
  proxy_on_foreign_function: `(${i32x(3)})->()`,
};

/** The ABI marker: a function export Envoy picks the version by (§0); any signature works. */
export const ABI_MARKER = 'proxy_abi_version_0_2_1';
export const OTHER_ABI_MARKERS = ['proxy_abi_version_0_1_0', 'proxy_abi_version_0_2_0'];
