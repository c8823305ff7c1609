// Raw host functions of proxy-wasm ABI 0.2.1, exactly as Envoy registers them in module `env`
// (docs/specs.md ABI §2.3; cpp-host include/proxy-wasm/exports.h).
//
// Every hostcall returns an i32 status (§2.1) and writes results through `ret*` pointers into
// module memory (§3.2). `usize` and `u32` both compile to wasm i32 here; the only i64 parameters
// are the metric values. An import whose type differs from Envoy's fails the module load
// ("import type mismatch"), so these declarations are checked against the reference table by
// test/edge-abi/wasm-binary.test.ts. Declaring is free: only functions the plugin actually calls
// become imports (§4.1). ABI-0.1-only names (proxy_get_configuration, proxy_continue_request,
// proxy_continue_response, proxy_clear_route_cache) are deliberately absent: Envoy does not
// register them for a 0.2.1 module and refuses to load a module that imports them (§0).
//
// Plugin code must not import this file; it uses the safe wrappers in hostcalls.ts.

// --- logging, time, timers (§2.3)

@external("env", "proxy_log")
export declare function proxy_log(level: u32, messagePtr: usize, messageSize: usize): u32;

@external("env", "proxy_get_log_level")
export declare function proxy_get_log_level(retLevelPtr: usize): u32;

@external("env", "proxy_get_current_time_nanoseconds")
export declare function proxy_get_current_time_nanoseconds(retTimePtr: usize): u32;

@external("env", "proxy_set_tick_period_milliseconds")
export declare function proxy_set_tick_period_milliseconds(periodMilliseconds: u32): u32;

// --- properties (§3.3): path segments joined by 0x00

@external("env", "proxy_get_property")
export declare function proxy_get_property(pathPtr: usize, pathSize: usize, retValuePtrPtr: usize, retValueSizePtr: usize): u32;

@external("env", "proxy_set_property")
export declare function proxy_set_property(pathPtr: usize, pathSize: usize, valuePtr: usize, valueSize: usize): u32;

// --- buffers (§2.5)

@external("env", "proxy_get_buffer_bytes")
export declare function proxy_get_buffer_bytes(bufferType: u32, start: u32, maxSize: u32, retPtrPtr: usize, retSizePtr: usize): u32;

@external("env", "proxy_get_buffer_status")
export declare function proxy_get_buffer_status(bufferType: u32, retSizePtr: usize, retFlagsPtr: usize): u32;

@external("env", "proxy_set_buffer_bytes")
export declare function proxy_set_buffer_bytes(bufferType: u32, start: u32, size: u32, dataPtr: usize, dataSize: usize): u32;

// --- header maps (§2.3, §2.4, pairs format §3.1)

@external("env", "proxy_get_header_map_pairs")
export declare function proxy_get_header_map_pairs(mapType: u32, retPtrPtr: usize, retSizePtr: usize): u32;

@external("env", "proxy_set_header_map_pairs")
export declare function proxy_set_header_map_pairs(mapType: u32, pairsPtr: usize, pairsSize: usize): u32;

@external("env", "proxy_get_header_map_size")
export declare function proxy_get_header_map_size(mapType: u32, retSizePtr: usize): u32;

@external("env", "proxy_get_header_map_value")
export declare function proxy_get_header_map_value(mapType: u32, keyPtr: usize, keySize: usize, retValuePtrPtr: usize, retValueSizePtr: usize): u32;

@external("env", "proxy_add_header_map_value")
export declare function proxy_add_header_map_value(mapType: u32, keyPtr: usize, keySize: usize, valuePtr: usize, valueSize: usize): u32;

@external("env", "proxy_replace_header_map_value")
export declare function proxy_replace_header_map_value(mapType: u32, keyPtr: usize, keySize: usize, valuePtr: usize, valueSize: usize): u32;

@external("env", "proxy_remove_header_map_value")
export declare function proxy_remove_header_map_value(mapType: u32, keyPtr: usize, keySize: usize): u32;

// --- stream control (§2.3, §2.6); continue/close exist from ABI 0.2.0 on

@external("env", "proxy_send_local_response")
export declare function proxy_send_local_response(
  statusCode: u32,
  detailsPtr: usize, detailsSize: usize,
  bodyPtr: usize, bodySize: usize,
  headersPtr: usize, headersSize: usize,
  grpcStatus: i32,
): u32;

@external("env", "proxy_continue_stream")
export declare function proxy_continue_stream(streamType: u32): u32;

@external("env", "proxy_close_stream")
export declare function proxy_close_stream(streamType: u32): u32;

@external("env", "proxy_set_effective_context")
export declare function proxy_set_effective_context(contextId: u32): u32;

@external("env", "proxy_done")
export declare function proxy_done(): u32;

@external("env", "proxy_get_status")
export declare function proxy_get_status(retCodePtr: usize, retMessagePtrPtr: usize, retMessageSizePtr: usize): u32;

// --- shared data and queues (per vm_id, shared by all workers)

@external("env", "proxy_get_shared_data")
export declare function proxy_get_shared_data(keyPtr: usize, keySize: usize, retValuePtrPtr: usize, retValueSizePtr: usize, retCasPtr: usize): u32;

@external("env", "proxy_set_shared_data")
export declare function proxy_set_shared_data(keyPtr: usize, keySize: usize, valuePtr: usize, valueSize: usize, cas: u32): u32;

@external("env", "proxy_register_shared_queue")
export declare function proxy_register_shared_queue(namePtr: usize, nameSize: usize, retTokenPtr: usize): u32;

@external("env", "proxy_resolve_shared_queue")
export declare function proxy_resolve_shared_queue(vmIdPtr: usize, vmIdSize: usize, namePtr: usize, nameSize: usize, retTokenPtr: usize): u32;

@external("env", "proxy_enqueue_shared_queue")
export declare function proxy_enqueue_shared_queue(token: u32, dataPtr: usize, dataSize: usize): u32;

@external("env", "proxy_dequeue_shared_queue")
export declare function proxy_dequeue_shared_queue(token: u32, retDataPtrPtr: usize, retDataSizePtr: usize): u32;

// --- metrics: the only i64 parameters of the ABI

@external("env", "proxy_define_metric")
export declare function proxy_define_metric(metricType: u32, namePtr: usize, nameSize: usize, retMetricIdPtr: usize): u32;

@external("env", "proxy_increment_metric")
export declare function proxy_increment_metric(metricId: u32, offset: i64): u32;

@external("env", "proxy_record_metric")
export declare function proxy_record_metric(metricId: u32, value: u64): u32;

@external("env", "proxy_get_metric")
export declare function proxy_get_metric(metricId: u32, retValuePtr: usize): u32;

// --- callouts (declared for completeness; no wrappers yet, see context.ts)

@external("env", "proxy_http_call")
export declare function proxy_http_call(
  upstreamPtr: usize, upstreamSize: usize,
  headersPtr: usize, headersSize: usize,
  bodyPtr: usize, bodySize: usize,
  trailersPtr: usize, trailersSize: usize,
  timeoutMilliseconds: u32, retTokenPtr: usize,
): u32;

@external("env", "proxy_grpc_call")
export declare function proxy_grpc_call(
  servicePtr: usize, serviceSize: usize,
  serviceNamePtr: usize, serviceNameSize: usize,
  methodNamePtr: usize, methodNameSize: usize,
  initialMetadataPtr: usize, initialMetadataSize: usize,
  messagePtr: usize, messageSize: usize,
  timeoutMilliseconds: u32, retTokenPtr: usize,
): u32;

@external("env", "proxy_grpc_stream")
export declare function proxy_grpc_stream(
  servicePtr: usize, serviceSize: usize,
  serviceNamePtr: usize, serviceNameSize: usize,
  methodNamePtr: usize, methodNameSize: usize,
  initialMetadataPtr: usize, initialMetadataSize: usize,
  retTokenPtr: usize,
): u32;

@external("env", "proxy_grpc_send")
export declare function proxy_grpc_send(token: u32, messagePtr: usize, messageSize: usize, endOfStream: u32): u32;

@external("env", "proxy_grpc_cancel")
export declare function proxy_grpc_cancel(token: u32): u32;

@external("env", "proxy_grpc_close")
export declare function proxy_grpc_close(token: u32): u32;

@external("env", "proxy_call_foreign_function")
export declare function proxy_call_foreign_function(
  namePtr: usize, nameSize: usize,
  argumentsPtr: usize, argumentsSize: usize,
  retResultsPtrPtr: usize, retResultsSizePtr: usize,
): u32;
