// Context dispatch: context id -> RootContext / HttpContext object, for the raw proxy_on_*
// exports in exports.ts (docs/specs.md ABI §1.2, §1.3).
//
// Every entry point tolerates ids it does not know (a callback for a stream whose plugin made no
// HttpContext, or a host that calls out of order): it does nothing and answers Continue / true.
// AssemblyScript's Map.get throws on a missing key, which would trap, so lookups go through has().

import { Action, BufferType } from './enums';
import { HttpContext, RootContext, RootContextFactory } from './context';
import { getBuffer, logError } from './hostcalls';

/** Largest plugin / VM configuration the layer reads (bytes). */
export const MAX_CONFIGURATION_BYTES: u32 = 1 << 20;

let rootFactory: RootContextFactory | null = null;
const roots = new Map<u32, RootContext>();
const streams = new Map<u32, HttpContext>();

/** Registers the plugin. Call once from the plugin module's top level. */
export function setRootContextFactory(factory: RootContextFactory): void {
  rootFactory = factory;
}

/** Number of live contexts (roots + streams): for tests of proxy_on_delete. */
export function liveContextCount(): i32 {
  return roots.size + streams.size;
}

export function onContextCreate(contextId: u32, parentContextId: u32): void {
  if (parentContextId == 0) {
    const factory = rootFactory;
    if (factory !== null) roots.set(contextId, factory(contextId));
    return;
  }
  if (!roots.has(parentContextId)) return;
  const stream = roots.get(parentContextId).createHttpContext(contextId);
  if (stream !== null) streams.set(contextId, stream);
}

/** Reads a configuration buffer of `size` bytes; null (after logging why) if it cannot. */
function readConfiguration(type: BufferType, size: u32, what: string): ArrayBuffer | null {
  if (size == 0) return new ArrayBuffer(0);
  if (size > MAX_CONFIGURATION_BYTES) {
    logError(
      what + ' is ' + size.toString() + ' bytes, more than the ' + MAX_CONFIGURATION_BYTES.toString() + ' accepted',
    );
    return null;
  }
  const bytes = getBuffer(type, 0, size);
  if (bytes === null) logError(what + ' of ' + size.toString() + ' bytes could not be read');
  return bytes;
}

export function onVmStart(rootContextId: u32, vmConfigurationSize: u32): bool {
  if (!roots.has(rootContextId)) return true;
  const bytes = readConfiguration(BufferType.VmConfiguration, vmConfigurationSize, 'VM configuration');
  if (bytes === null) return false;
  return roots.get(rootContextId).onVmStart(bytes);
}

export function onConfigure(rootContextId: u32, pluginConfigurationSize: u32): bool {
  if (!roots.has(rootContextId)) return true;
  const bytes = readConfiguration(BufferType.PluginConfiguration, pluginConfigurationSize, 'plugin configuration');
  if (bytes === null) return false;
  return roots.get(rootContextId).onConfigure(bytes);
}

export function onTick(rootContextId: u32): void {
  if (roots.has(rootContextId)) roots.get(rootContextId).onTick();
}

export function onRequestHeaders(contextId: u32, headerCount: u32, endOfStream: bool): Action {
  return streams.has(contextId) ? streams.get(contextId).onRequestHeaders(headerCount, endOfStream) : Action.Continue;
}

export function onRequestBody(contextId: u32, bodySize: u32, endOfStream: bool): Action {
  return streams.has(contextId) ? streams.get(contextId).onRequestBody(bodySize, endOfStream) : Action.Continue;
}

export function onRequestTrailers(contextId: u32, trailerCount: u32): Action {
  return streams.has(contextId) ? streams.get(contextId).onRequestTrailers(trailerCount) : Action.Continue;
}

export function onResponseHeaders(contextId: u32, headerCount: u32, endOfStream: bool): Action {
  return streams.has(contextId) ? streams.get(contextId).onResponseHeaders(headerCount, endOfStream) : Action.Continue;
}

export function onResponseBody(contextId: u32, bodySize: u32, endOfStream: bool): Action {
  return streams.has(contextId) ? streams.get(contextId).onResponseBody(bodySize, endOfStream) : Action.Continue;
}

export function onResponseTrailers(contextId: u32, trailerCount: u32): Action {
  return streams.has(contextId) ? streams.get(contextId).onResponseTrailers(trailerCount) : Action.Continue;
}

export function onLog(contextId: u32): void {
  if (streams.has(contextId)) streams.get(contextId).onLog();
}

export function onDone(contextId: u32): bool {
  if (streams.has(contextId)) return streams.get(contextId).onDone();
  if (roots.has(contextId)) return roots.get(contextId).onDone();
  return true;
}

/** Last callback of a context: the object is dropped here and collected by the GC later. */
export function onDelete(contextId: u32): void {
  if (streams.has(contextId)) {
    const stream = streams.get(contextId);
    streams.delete(contextId);
    stream.onDelete();
    return;
  }
  if (roots.has(contextId)) {
    const root = roots.get(contextId);
    roots.delete(contextId);
    root.onDelete();
  }
}
