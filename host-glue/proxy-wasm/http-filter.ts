// The seam between the proxy-wasm host (host-glue/host*.ts) and whatever drives HTTP through it
// (the embedded edge `origin edge`, the host tests). It mirrors what Envoy's HTTP connection
// manager hands a filter: header lists in, a verdict out, body chunks streamed, then the
// end-of-stream calls. No Node HTTP types cross it, so the host stays testable in-process.
//
// The host implements HttpFilterFactory for one loaded plugin (one "worker" VM); the proxy calls
// newStream() per request and drives the stream in Envoy's order (docs/specs.md ABI §1.3):
// requestHeaders → requestBody* → responseHeaders → responseBody* → end().

import type { CustomStats } from './metrics';

/**
 * A header map as Envoy presents it: lowercase names, in order, duplicates kept. Request maps
 * start with the pseudo-headers `:authority`, `:path` (with the query), `:method`, `:scheme`;
 * response maps with `:status`.
 */
export type HeaderList = Array<[string, string]>;

/** A response the filter produced itself (proxy_send_local_response, or the fail-closed 503). */
export interface LocalResponse {
  /** `:status` first, then the headers Envoy would send (§2.6 rules already applied). */
  headers: HeaderList;
  body: Uint8Array;
  /** Response-code details, e.g. `wasm_fail_stream` (spaces replaced by `_`). */
  details: string;
  /**
   * Envoy resets the stream instead of answering: proxy_close_stream (details
   * `wasm_close_stream`), or a failure/local reply after the response headers already went
   * downstream (§2.6). Send nothing more and close the connection. `headers`/`body` then hold
   * a bare 503 for a proxy that cannot reset. (Optional: added after the first version.)
   */
  reset?: boolean;
}

export type RequestHeadersVerdict =
  /** Forward upstream with these (possibly rewritten) headers; route on the new `:path`. */
  | { kind: 'continue'; headers: HeaderList }
  /** Answer the client with this response; nothing goes upstream. */
  | { kind: 'respond'; response: LocalResponse };

export type ResponseHeadersVerdict =
  | { kind: 'continue'; headers: HeaderList }
  /** The plugin replaced the upstream response by a local reply (send it instead; drop upstream's body). */
  | { kind: 'respond'; response: LocalResponse };

export type BodyVerdict =
  /** Send these bytes on (everything held so far, possibly modified); may be empty. */
  | { kind: 'continue'; data: Uint8Array }
  /** The plugin asked to buffer (body PAUSE): hold the data, call again with the next chunk. */
  | { kind: 'buffer' }
  | { kind: 'respond'; response: LocalResponse };

export interface StreamInfo {
  /** Downstream peer, for `source.address` / `source.port` properties. */
  remoteAddress: string;
  remotePort: number;
  /** `HTTP/1.1`, for the `request.protocol` property. */
  protocol: string;
  /** Optional: the listener side, for `destination.address` / `destination.port`. */
  localAddress?: string;
  localPort?: number;
  /** Optional: the downstream connection's id, for `connection_id` / `connection.id`. */
  connectionId?: number;
}

/**
 * A verdict decided during the call (the usual case: the plugin returned Continue or replied) is
 * returned as is; one the plugin holds (a PAUSE until proxy_continue_stream) is a promise. A
 * caller that awaits either way is correct; a proxy on the hot path handles the plain value
 * without a microtask per step. A failure is always a rejected promise, never a throw.
 */
export type Awaitable<T> = T | Promise<T>;

/**
 * The lists passed in become the stream's (the plugin may edit them in place); the lists in a
 * verdict are the stream's too and must not be modified by the caller.
 */
export interface HttpFilterStream {
  /** Settles when the plugin continues (after a PAUSE, when it calls proxy_continue_stream) or replies. */
  requestHeaders(headers: HeaderList, endOfStream: boolean): Awaitable<RequestHeadersVerdict>;
  requestBody(chunk: Uint8Array, endOfStream: boolean): Awaitable<BodyVerdict>;
  responseHeaders(headers: HeaderList, endOfStream: boolean): Awaitable<ResponseHeadersVerdict>;
  responseBody(chunk: Uint8Array, endOfStream: boolean): Awaitable<BodyVerdict>;
  /** Stream over (completed, reset or refused): on_log, on_done, on_delete. Idempotent. */
  end(): void;
  /**
   * Optional: true while nothing the plugin exports can see or change this stream's response,
   * so Envoy would never enter the VM for it (§1.2: a missing callback is skipped). The module
   * has no response, log, timer or callout callbacks, and the stream is undecided (no local
   * reply, no failure). A proxy may then send the response past the filter, without
   * responseHeaders/responseBody, and tell the stream with responsePassed(); it asks again
   * before each body chunk, because a reply for this stream can still come from another
   * stream's callback (proxy_set_effective_context).
   */
  responsePassesThrough?(): boolean;
  /** The response went past the filter: its status (with the head) and body bytes (at the end),
   * what the stream's properties report (`response.code`, `response.size`). */
  responsePassed?(status: number, bodyBytes: number): void;
}

export interface HttpFilterFactory {
  newStream(info: StreamInfo): HttpFilterStream;
  /** Root context shutdown (proxy_on_done / proxy_on_delete of the root, §1.3). */
  shutdown(): Promise<void>;
  /** Optional: the plugin's custom metrics (proxy_define_metric) as Envoy's stats store holds
   * them, for the admin interface and the origin's /metrics (host-glue/envoy/edge-stats.ts). */
  readonly stats?: CustomStats;
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'critical';

/** envoy.extensions.wasm.v3.PluginConfig failure_policy (fail_open: true = FAIL_OPEN), §5.1. */
export type FailurePolicy = 'FAIL_CLOSED' | 'FAIL_OPEN' | 'FAIL_RELOAD';

/** One plugin as an envoy.yaml declares it (envoy.filters.http.wasm typed_config.config). */
export interface PluginSpec {
  /** The module bytes (vm_config.code.local.filename). */
  wasm: Uint8Array;
  /** `name`, `root_id` and `vm_config.vm_id` of the PluginConfig. */
  name: string;
  rootId: string;
  vmId: string;
  /** vm_config.configuration and configuration: StringValue/BytesValue passed raw, Struct as JSON. */
  vmConfiguration: Uint8Array;
  pluginConfiguration: Uint8Array;
  failurePolicy: FailurePolicy;
  /** Log sink: Envoy's lines (`wasm log<prefix>: <msg>`, log.ts) and their level; default stderr. */
  log?: (level: LogLevel, line: string) => void;
  /** Threshold reported by proxy_get_log_level and applied to proxy_log; default info. */
  logLevel?: LogLevel;
  /** FAIL_RELOAD: least time between two VM reloads (Envoy reload_config.backoff); default 1000 ms. */
  reloadBackoffMs?: number;
}

/** Envoy would refuse the module or its configuration; the message is Envoy's wording. */
export class PluginLoadError extends Error {
  override name = 'PluginLoadError';
}

/** Implemented by host-glue/proxy-wasm/host.ts: validation VM (canary) + one worker VM, started and configured. */
export type CreatePlugin = (spec: PluginSpec) => Promise<HttpFilterFactory>;
