// Enumerations of proxy-wasm ABI 0.2.1 (docs/specs.md ABI §1.2, §2.1, §2.2).
// Plain i32/u32 enums: they cross the boundary as the same integers.

/** proxy_status_t (§2.1). 5, 9 and 11 are Envoy's, not in the spec table. */
export enum Status {
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

/** proxy_log_level_t (§2.2). proxy_get_log_level may also report 6 = off. */
export enum LogLevel {
  Trace = 0,
  Debug = 1,
  Info = 2,
  Warn = 3,
  Error = 4,
  Critical = 5,
  Off = 6,
}

/** proxy_map_type_t (§2.2). */
export enum MapType {
  HttpRequestHeaders = 0,
  HttpRequestTrailers = 1,
  HttpResponseHeaders = 2,
  HttpResponseTrailers = 3,
  GrpcCallInitialMetadata = 4,
  GrpcCallTrailingMetadata = 5,
  HttpCallResponseHeaders = 6,
  HttpCallResponseTrailers = 7,
}

/** proxy_buffer_type_t (§2.2). */
export enum BufferType {
  HttpRequestBody = 0,
  HttpResponseBody = 1,
  DownstreamData = 2,
  UpstreamData = 3,
  HttpCallResponseBody = 4,
  GrpcCallMessage = 5,
  VmConfiguration = 6,
  PluginConfiguration = 7,
  ForeignFunctionArguments = 8,
}

/** proxy_stream_type_t (§2.2). */
export enum StreamType {
  HttpRequest = 0,
  HttpResponse = 1,
  Downstream = 2,
  Upstream = 3,
}

/** proxy_metric_type_t (§2.2). */
export enum MetricType {
  Counter = 0,
  Gauge = 1,
  Histogram = 2,
}

/**
 * proxy_action_t returned by the HTTP callbacks (§1.2). Envoy turns Pause from a headers callback
 * into StopAllIterationAndWatermark (unless allow_on_headers_stop_iteration), and from a body
 * callback into StopIterationAndBuffer; anything after proxy_send_local_response is a stop anyway.
 */
export enum Action {
  Continue = 0,
  Pause = 1,
}

/** gRPC status "none" for proxy_send_local_response (§2.2): Envoy maps values outside 0..16 to no grpc-status. */
export const GRPC_STATUS_NONE: i32 = -1;
