// What a plugin implements (docs/specs.md ABI §1.2, §1.3): one RootContext
// per plugin instance (context id 1, ... with parent 0; it reads the configuration) and one
// HttpContext per HTTP stream (ids 2, 3, ... with the root as parent). Every method has a
// pass-through default, so a plugin overrides only what it needs. None of them sees a pointer;
// host data is fetched with the wrappers in hostcalls.ts while the callback runs.
//
// Envoy's rules that shape this API:
//   * the plugin configuration is readable only inside onConfigure: keep what you need (§2.5);
//   * request headers are readable only inside onRequestHeaders (and while paused from it),
//     response headers only inside onResponseHeaders: copy what later callbacks need into the
//     HttpContext (§2.4);
//   * a local reply is run through this plugin's own onResponseHeaders/onResponseBody (§2.6);
//   * end of stream is onLog, then onDone, then onDelete in Envoy; do not rely on the order (§1.3).

import { Action } from './enums';

export class RootContext {
  constructor(public readonly id: u32) {}

  /** proxy_on_vm_start with the VM configuration bytes (usually empty). false = Envoy fails the VM. */
  onVmStart(vmConfiguration: ArrayBuffer): bool {
    return true;
  }

  /** proxy_on_configure with the plugin configuration bytes (empty if none was given).
   * false = Envoy refuses the configuration (startup fails, xDS update NACKed). */
  onConfigure(configuration: ArrayBuffer): bool {
    return true;
  }

  /** proxy_on_tick, after setTickPeriodMilliseconds. */
  onTick(): void {}

  /** A new HTTP stream of this plugin; null = no per-stream behaviour (requests pass through). */
  createHttpContext(contextId: u32): HttpContext | null {
    return null;
  }

  /** true = may be deleted now; false = call done() later (root contexts only). */
  onDone(): bool {
    return true;
  }

  /** Last call; the layer drops the object afterwards. */
  onDelete(): void {}
}

export class HttpContext {
  constructor(
    public readonly id: u32,
    public readonly root: RootContext,
  ) {}

  /** `headerCount` entries are readable now with getRequestHeader(s). */
  onRequestHeaders(headerCount: u32, endOfStream: bool): Action {
    return Action.Continue;
  }

  /** `bodySize` = bytes visible now (all buffered bytes if the previous call returned Pause). */
  onRequestBody(bodySize: u32, endOfStream: bool): Action {
    return Action.Continue;
  }

  onRequestTrailers(trailerCount: u32): Action {
    return Action.Continue;
  }

  onResponseHeaders(headerCount: u32, endOfStream: bool): Action {
    return Action.Continue;
  }

  onResponseBody(bodySize: u32, endOfStream: bool): Action {
    return Action.Continue;
  }

  onResponseTrailers(trailerCount: u32): Action {
    return Action.Continue;
  }

  /** Access-log phase: request and response headers are readable (read-only). */
  onLog(): void {}

  /** Envoy deletes HTTP streams whatever this returns. */
  onDone(): bool {
    return true;
  }

  /** Last call; the layer drops the object afterwards. */
  onDelete(): void {}
}

/** Makes the plugin's root context for a new root context id. Registered from top-level code of
 * the plugin module (runs in _initialize, which must not call the host apart from proxy_log). */
export type RootContextFactory = (contextId: u32) => RootContext;
