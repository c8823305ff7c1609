// The proxy-wasm layer as plugin code sees it: context base classes, the registration call,
// enums, safe host wrappers and the header-pair codec. Raw imports (imports.ts), raw exports
// (exports.ts, re-exported by the plugin entry file) and the memory hand-off (memory.ts) stay
// behind this barrel: plugin logic never sees a pointer (CONTRIBUTING.md design rule 8).

export { RootContext, HttpContext, RootContextFactory } from './context';
export { setRootContextFactory, MAX_CONFIGURATION_BYTES } from './dispatcher';
export { Action, BufferType, GRPC_STATUS_NONE, LogLevel, MapType, MetricType, Status, StreamType } from './enums';
export { Header, MAX_PAIRS_BYTES, MAX_PAIRS_COUNT, decodePairs, encodePairs, findHeader, parsePairs } from './pairs';
export * from './hostcalls';
