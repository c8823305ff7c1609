// The host functions the scriptable test plugin (runtime.ts) imports: proxy-wasm ABI 0.2.1
// (docs/specs.md ABI §2.3) as raw `@external("env", "proxy_…")` declarations, and the two WASI
// calls its abort handler and log use. No SDK, no dependency on assembly/.

@external("env", "proxy_log")
export declare function proxy_log(level: u32, ptr: usize, size: usize): u32;
@external("env", "proxy_get_log_level")
export declare function proxy_get_log_level(retLevel: usize): u32;
@external("env", "proxy_get_current_time_nanoseconds")
export declare function proxy_get_current_time_nanoseconds(retTime: usize): u32;
@external("env", "proxy_set_tick_period_milliseconds")
export declare function proxy_set_tick_period_milliseconds(ms: u32): u32;
@external("env", "proxy_get_buffer_bytes")
export declare function proxy_get_buffer_bytes(type: u32, start: u32, max: u32, retPtr: usize, retSize: usize): u32;
@external("env", "proxy_get_buffer_status")
export declare function proxy_get_buffer_status(type: u32, retSize: usize, retFlags: usize): u32;
@external("env", "proxy_set_buffer_bytes")
export declare function proxy_set_buffer_bytes(type: u32, start: u32, size: u32, ptr: usize, len: usize): u32;
@external("env", "proxy_get_header_map_pairs")
export declare function proxy_get_header_map_pairs(type: u32, retPtr: usize, retSize: usize): u32;
@external("env", "proxy_set_header_map_pairs")
export declare function proxy_set_header_map_pairs(type: u32, ptr: usize, size: usize): u32;
@external("env", "proxy_get_header_map_value")
export declare function proxy_get_header_map_value(type: u32, keyPtr: usize, keySize: usize, retPtr: usize, retSize: usize): u32;
@external("env", "proxy_add_header_map_value")
export declare function proxy_add_header_map_value(type: u32, keyPtr: usize, keySize: usize, valuePtr: usize, valueSize: usize): u32;
@external("env", "proxy_replace_header_map_value")
export declare function proxy_replace_header_map_value(type: u32, keyPtr: usize, keySize: usize, valuePtr: usize, valueSize: usize): u32;
@external("env", "proxy_remove_header_map_value")
export declare function proxy_remove_header_map_value(type: u32, keyPtr: usize, keySize: usize): u32;
@external("env", "proxy_get_header_map_size")
export declare function proxy_get_header_map_size(type: u32, retSize: usize): u32;
@external("env", "proxy_send_local_response")
export declare function proxy_send_local_response(status: u32, detailsPtr: usize, detailsSize: usize, bodyPtr: usize,
  bodySize: usize, headersPtr: usize, headersSize: usize, grpcStatus: i32): u32;
@external("env", "proxy_continue_stream")
export declare function proxy_continue_stream(type: u32): u32;
@external("env", "proxy_close_stream")
export declare function proxy_close_stream(type: u32): u32;
@external("env", "proxy_set_effective_context")
export declare function proxy_set_effective_context(id: u32): u32;
@external("env", "proxy_get_property")
export declare function proxy_get_property(pathPtr: usize, pathSize: usize, retPtr: usize, retSize: usize): u32;
@external("env", "proxy_set_property")
export declare function proxy_set_property(pathPtr: usize, pathSize: usize, valuePtr: usize, valueSize: usize): u32;
@external("env", "proxy_done")
export declare function proxy_done(): u32;
@external("env", "proxy_get_shared_data")
export declare function proxy_get_shared_data(keyPtr: usize, keySize: usize, retPtr: usize, retSize: usize, retCas: usize): u32;
@external("env", "proxy_set_shared_data")
export declare function proxy_set_shared_data(keyPtr: usize, keySize: usize, valuePtr: usize, valueSize: usize, cas: u32): u32;
@external("env", "proxy_define_metric")
export declare function proxy_define_metric(type: u32, namePtr: usize, nameSize: usize, retId: usize): u32;
@external("env", "proxy_increment_metric")
export declare function proxy_increment_metric(id: u32, delta: i64): u32;
@external("env", "proxy_record_metric")
export declare function proxy_record_metric(id: u32, value: u64): u32;
@external("env", "proxy_get_metric")
export declare function proxy_get_metric(id: u32, retValue: usize): u32;
@external("wasi_snapshot_preview1", "fd_write")
export declare function fd_write(fd: u32, iovs: usize, iovsLen: usize, retWritten: usize): u32;
@external("wasi_snapshot_preview1", "proc_exit")
export declare function proc_exit(code: u32): void;
