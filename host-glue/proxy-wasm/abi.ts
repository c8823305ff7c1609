// The proxy-wasm ABI as Envoy links it: every host function (import) with its exact wasm type,
// every module function (export) Envoy looks up with the type it checks, and the enums of the
// wire. Tables, not code: the loader (vm.ts) compares a module against them, the hostcall
// files implement the rows. Authority: the proxy-wasm ABI as docs/specs.md lists it (§ numbers below).

/** Wasm value types as cpp-host prints them in its load errors (`i32 i32 -> void`). */
export type ValType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128' | 'funcref' | 'externref';

export interface FuncSig {
  params: readonly ValType[];
  results: readonly ValType[];
}

const sig = (params: string, results = 'i32'): FuncSig => ({
  params: params === '' ? [] : (params.split(' ') as ValType[]),
  results: results === '' ? [] : (results.split(' ') as ValType[]),
});
/** N × i32 -> i32, the shape of almost every proxy_* hostcall (§2.3). */
const words = (n: number): FuncSig => ({ params: Array<ValType>(n).fill('i32'), results: ['i32'] });

// ------------------------------------------------------------------------------------ versions

/** §0: the marker exports, in the order cpp-host's BytecodeUtil::getAbiVersion recognises them. */
export const ABI_MARKERS = {
  proxy_abi_version_0_1_0: '0.1.0',
  proxy_abi_version_0_2_0: '0.2.0',
  proxy_abi_version_0_2_1: '0.2.1',
} as const;
export type AbiVersion = (typeof ABI_MARKERS)[keyof typeof ABI_MARKERS];

// ------------------------------------------------------------------------------------ imports

/** §2.3: `env.proxy_*` registered for every 0.2.x module (cpp-host FOR_ALL_HOST_FUNCTIONS). */
const PROXY_COMMON: Record<string, FuncSig> = {
  proxy_log: words(3),
  proxy_get_status: words(3),
  proxy_set_property: words(4),
  proxy_get_property: words(4),
  proxy_send_local_response: words(8),
  proxy_get_shared_data: words(5),
  proxy_set_shared_data: words(5),
  proxy_register_shared_queue: words(3),
  proxy_resolve_shared_queue: words(5),
  proxy_dequeue_shared_queue: words(3),
  proxy_enqueue_shared_queue: words(3),
  proxy_get_header_map_value: words(5),
  proxy_add_header_map_value: words(5),
  proxy_replace_header_map_value: words(5),
  proxy_remove_header_map_value: words(3),
  proxy_get_header_map_pairs: words(3),
  proxy_set_header_map_pairs: words(3),
  proxy_get_header_map_size: words(2),
  proxy_get_buffer_status: words(3),
  proxy_get_buffer_bytes: words(5),
  proxy_set_buffer_bytes: words(5),
  proxy_http_call: words(10),
  proxy_grpc_call: words(12),
  proxy_grpc_stream: words(9),
  proxy_grpc_close: words(1),
  proxy_grpc_cancel: words(1),
  proxy_grpc_send: words(4),
  proxy_set_tick_period_milliseconds: words(1),
  proxy_get_current_time_nanoseconds: words(1),
  proxy_define_metric: words(4),
  proxy_increment_metric: sig('i32 i64'),
  proxy_record_metric: sig('i32 i64'),
  proxy_get_metric: words(2),
  proxy_set_effective_context: words(1),
  proxy_done: words(0),
  proxy_call_foreign_function: words(6),
  proxy_continue_stream: words(1),
  proxy_close_stream: words(1),
};

/** Registered in `env` whatever the ABI, for Emscripten builds (§2.3 last row). */
const EMSCRIPTEN: Record<string, FuncSig> = {
  emscripten_notify_memory_growth: sig('i32', ''),
  pthread_equal: words(2),
};

/**
 * §2.7: the WASI functions Envoy provides, registered under both `wasi_snapshot_preview1` and
 * `wasi_unstable`: the safe set of every Envoy since 2021 plus the Dec 2024 additions
 * (Envoy ≈1.33+). The 2026 inert stubs are deliberately absent: a module importing them loads
 * only in the newest Envoy.
 */
export const WASI_FUNCTIONS: Record<string, FuncSig> = {
  fd_write: words(4),
  fd_read: words(4),
  fd_seek: sig('i32 i64 i32 i32'),
  fd_close: words(1),
  fd_fdstat_get: words(2),
  environ_get: words(2),
  environ_sizes_get: words(2),
  args_get: words(2),
  args_sizes_get: words(2),
  clock_time_get: sig('i32 i64 i32'),
  random_get: words(2),
  proc_exit: sig('i32', ''),
  path_open: sig('i32 i32 i32 i32 i32 i64 i64 i32 i32'),
  fd_prestat_get: words(2),
  fd_prestat_dir_name: words(3),
  fd_fdstat_set_flags: words(2),
  sched_yield: words(0),
  poll_oneoff: words(4),
};
export const WASI_MODULES = ['wasi_snapshot_preview1', 'wasi_unstable'] as const;

/**
 * Every `module.name` a module of this ABI version may import, with the type Envoy registers.
 * §0: 0.2.1 adds proxy_get_log_level; the ABI-0.1-only names are absent, so importing them
 * fails the load like any unknown import.
 */
export function hostFunctionTable(abi: AbiVersion): Map<string, FuncSig> {
  const table = new Map<string, FuncSig>();
  const proxy: Record<string, FuncSig> = { ...PROXY_COMMON };
  if (abi === '0.2.1') proxy['proxy_get_log_level'] = words(1);
  for (const [name, type] of Object.entries({ ...EMSCRIPTEN, ...proxy })) table.set(`env.${name}`, type);
  for (const module of WASI_MODULES) {
    for (const [name, type] of Object.entries(WASI_FUNCTIONS)) table.set(`${module}.${name}`, type);
  }
  return table;
}

// ------------------------------------------------------------------------------------ exports

/**
 * §1.1/§1.2: the module functions cpp-host looks up (WasmBase::getFunctions), in its lookup
 * order, with the exact type V8::getModuleFunctionImpl checks. A present export of another type
 * fails the load ("Bad function signature for: ..."); absent ones are skipped.
 */
export const MODULE_FUNCTIONS: Record<string, FuncSig> = {
  _initialize: sig('', ''),
  main: words(2),
  __main_void: words(0),
  _start: sig('', ''),
  malloc: words(1),
  proxy_on_memory_allocate: words(1),
  proxy_validate_configuration: words(2),
  proxy_on_vm_start: words(2),
  proxy_on_configure: words(2),
  proxy_on_tick: sig('i32', ''),
  proxy_on_context_create: sig('i32 i32', ''),
  proxy_on_new_connection: words(1),
  proxy_on_downstream_data: words(3),
  proxy_on_upstream_data: words(3),
  proxy_on_downstream_connection_close: sig('i32 i32', ''),
  proxy_on_upstream_connection_close: sig('i32 i32', ''),
  proxy_on_request_body: words(3),
  proxy_on_request_trailers: words(2),
  proxy_on_request_metadata: words(2),
  proxy_on_response_body: words(3),
  proxy_on_response_trailers: words(2),
  proxy_on_response_metadata: words(2),
  proxy_on_http_call_response: sig('i32 i32 i32 i32 i32', ''),
  proxy_on_grpc_receive: sig('i32 i32 i32', ''),
  proxy_on_grpc_close: sig('i32 i32 i32', ''),
  proxy_on_grpc_receive_initial_metadata: sig('i32 i32 i32', ''),
  proxy_on_grpc_receive_trailing_metadata: sig('i32 i32 i32', ''),
  proxy_on_queue_ready: sig('i32 i32', ''),
  proxy_on_done: words(1),
  proxy_on_log: sig('i32', ''),
  proxy_on_delete: sig('i32', ''),
  // 0.2.x bind the 3-argument headers callbacks (§0) and on_foreign_function.
  proxy_on_request_headers: words(3),
  proxy_on_response_headers: words(3),
  proxy_on_foreign_function: sig('i32 i32 i32', ''),
};
export type ModuleFunctionName = keyof typeof MODULE_FUNCTIONS;

// ------------------------------------------------------------------------------------ restricted callbacks

/** §1.1: hostcalls allowed while `_initialize`/`main`/`_start` run (cpp-host WasmBase::startVm). */
export const START_ALLOWED: ReadonlySet<string> = new Set([
  'env.emscripten_notify_memory_growth',
  'env.proxy_log',
  ...[
    'fd_write',
    'args_sizes_get',
    'args_get',
    'environ_sizes_get',
    'environ_get',
    'clock_time_get',
    'clock_res_get',
    'random_get',
    'poll_oneoff',
    'fd_fdstat_get',
    'fd_fdstat_set_flags',
    'fd_prestat_get',
    'fd_prestat_dir_name',
  ].flatMap((f) => WASI_MODULES.map((m) => `${m}.${f}`)),
]);

/** §1.1: hostcalls allowed while the allocator runs inside a hostcall (WasmBase::allocMemory). */
export const MALLOC_ALLOWED: ReadonlySet<string> = new Set([
  'env.proxy_log',
  ...['fd_write', 'clock_time_get', 'poll_oneoff'].flatMap((f) => WASI_MODULES.map((m) => `${m}.${f}`)),
]);

// ------------------------------------------------------------------------------------ enums (§2.1, §2.2)

export enum WasmResult {
  Ok = 0,
  NotFound = 1,
  BadArgument = 2,
  SerializationFailure = 3,
  ParseFailure = 4,
  BadExpression = 5,
  InvalidMemoryAccess = 6,
  Empty = 7,
  CasMismatch = 8,
  ResultMismatch = 9,
  InternalFailure = 10,
  BrokenConnection = 11,
  Unimplemented = 12,
}

export enum MapType {
  RequestHeaders = 0,
  RequestTrailers = 1,
  ResponseHeaders = 2,
  ResponseTrailers = 3,
  GrpcReceiveInitialMetadata = 4,
  GrpcReceiveTrailingMetadata = 5,
  HttpCallResponseHeaders = 6,
  HttpCallResponseTrailers = 7,
}
export const MAP_TYPE_MAX = 7;

export enum BufferType {
  HttpRequestBody = 0,
  HttpResponseBody = 1,
  DownstreamData = 2,
  UpstreamData = 3,
  HttpCallResponseBody = 4,
  GrpcReceiveBuffer = 5,
  VmConfiguration = 6,
  PluginConfiguration = 7,
  CallData = 8,
}
export const BUFFER_TYPE_MAX = 8;

export enum StreamType {
  HttpRequest = 0,
  HttpResponse = 1,
  Downstream = 2,
  Upstream = 3,
}
export const STREAM_TYPE_MAX = 3;

export enum MetricType {
  Counter = 0,
  Gauge = 1,
  Histogram = 2,
}

/** cpp-host FailState (§5.1). */
export enum FailState {
  Ok = 0,
  UnableToCreateVm = 1,
  UnableToCloneVm = 2,
  MissingFunction = 3,
  UnableToInitializeCode = 4,
  StartFailed = 5,
  ConfigureFailed = 6,
  RuntimeError = 7,
}

/** §1.2: what the module's i32 from a headers callback means (cpp-host FilterHeadersStatus). */
export enum HeadersStatus {
  Continue = 0,
  StopIteration = 1,
  ContinueAndEndStream = 2,
  StopAllIterationAndBuffer = 3,
  StopAllIterationAndWatermark = 4,
}

/** §1.2: body callbacks (cpp-host FilterDataStatus). */
export enum DataStatus {
  Continue = 0,
  StopIterationAndBuffer = 1,
  StopIterationAndWatermark = 2,
  StopIterationNoBuffer = 3,
}

/** §2.7: WASI errno values Envoy returns. */
export enum Errno {
  Success = 0,
  Badf = 8,
  Fault = 21,
  Inval = 28,
  Noent = 44,
  Nosys = 52,
  Notsup = 58,
}

/** §5.1 limits and §3.1 pair limits (cpp-host include/proxy-wasm/limits.h). */
export const LIMITS = {
  pairsMaxCount: 1024,
  pairsMaxBytes: 1024 * 1024,
  randomGetMaxBytes: 64 * 1024,
} as const;

/** cpp-host printValTypes: `i32 i32` or `void`. */
export function printValTypes(types: readonly ValType[]): string {
  return types.length === 0 ? 'void' : types.join(' ');
}

export function sameSig(a: FuncSig, b: FuncSig): boolean {
  return a.params.join() === b.params.join() && a.results.join() === b.results.join();
}
