// Edge plugin module (build/edge.wasm), proxy-wasm ABI 0.2.1.
//
// This plugin only passes requests through: it reads and validates its JSON
// configuration (refusing invalid JSON so that Envoy refuses the configuration) and logs one
// debug line per request. Everything about the ABI lives in ./proxy (raw imports/exports,
// memory hand-off, header pairs, context dispatch, abort -> proxy_log); the plugin sees only
// context objects, strings and byte arrays. Load rules it satisfies
// (../shared/reference/proxy-wasm-abi.md §4.2): ABI marker, allocator, `_initialize` instead of
// a start section, only `env.proxy_*` imports, no hostcall from top-level code.

import {
  Action,
  HttpContext,
  RootContext,
  LogLevel,
  getRequestHeader,
  isLogEnabled,
  logDebug,
  logError,
  logInfo,
  setRootContextFactory,
} from "./proxy";
import { JsonValue, parseJson } from "./json";

export * from "./proxy/exports";

/** The plugin instance of one worker: holds the configuration read in onConfigure. */
class EdgeRoot extends RootContext {
  configuration: JsonValue = JsonValue.newObject();

  onConfigure(configuration: ArrayBuffer): bool {
    // An absent configuration means {} (Envoy hands over 0 bytes).
    if (configuration.byteLength == 0) {
      this.configuration = JsonValue.newObject();
      logInfo("edge: no configuration, using {}");
      return true;
    }
    const result = parseJson(configuration);
    const value = result.value;
    if (value === null) {
      logError("edge: invalid JSON configuration at byte " + result.position.toString() + ": " + result.error);
      return false;
    }
    if (!value.isObject()) {
      logError("edge: the configuration must be a JSON object");
      return false;
    }
    this.configuration = value;
    // Member names only: values (token secrets, in the next issue) stay out of the log.
    logInfo(
      "edge: configuration of " + configuration.byteLength.toString() + " bytes, members: [" +
        value.keys().join(", ") + "]",
    );
    return true;
  }

  createHttpContext(contextId: u32): HttpContext | null {
    return new EdgeStream(contextId, this);
  }
}

/** One HTTP stream: pass-through. */
class EdgeStream extends HttpContext {
  onRequestHeaders(headerCount: u32, endOfStream: bool): Action {
    // Two header lookups per request only when someone will read the line.
    if (isLogEnabled(LogLevel.Debug)) {
      const method = getRequestHeader(":method");
      const path = getRequestHeader(":path");
      logDebug("edge: " + (method !== null ? method : "-") + " " + (path !== null ? path : "-"));
    }
    return Action.Continue;
  }
}

// Top-level code runs in _initialize: registering the factory calls no host function.
setRootContextFactory((contextId: u32): RootContext => new EdgeRoot(contextId));
