// Edge plugin module (build/edge.wasm), proxy-wasm ABI 0.2.1.
//
// The root context reads the JSON configuration (edge/config.ts: locations with auth_token,
// auth_basic, rewrite and validate_filter) and refuses one it cannot honour, so that Envoy
// refuses it too. Each request's :path then goes through edge/pipeline.ts: normalisation, the
// location's checks and rewrites, and either a new :path upstream or a local reply. Everything
// about the ABI lives in ./proxy (raw imports/exports, memory hand-off, header pairs, context
// dispatch, abort -> proxy_log); the edge code sees strings and byte arrays only. Its counters
// (edge/metrics.ts) are defined in on_vm_start and counted per request. Load rules it
// satisfies (docs/specs.md ABI §4.2): ABI marker, allocator, `_initialize`
// instead of a start section, only `env.proxy_*` imports, no hostcall from top-level code.
//
// It never traps on a request (a trap fails every later request of the worker, §5.1): sizes are
// bounded before work, lookups check before they index, and the fuzz test of
// test/edge-plugin/ sends it random paths, queries and headers through the Node host.

import {
  Action,
  Header,
  HttpContext,
  LogLevel,
  RootContext,
  currentTimeNanoseconds,
  getRequestHeader,
  getRequestHeaderBytes,
  isLogEnabled,
  logDebug,
  logError,
  logInfo,
  replaceRequestHeader,
  sendLocalResponseText,
  setRootContextFactory,
} from './proxy';
import { parseJson } from './json';
import { EdgeConfig, parseEdgeConfig } from './edge/config';
import { decide } from './edge/pipeline';
import { Refusal, Verdict, refusalCode, refusalDetails, refusalStatus } from './edge/refusals';
import { countVerdict, defineEdgeMetrics } from './edge/metrics';

// Only the callbacks this plugin acts in. Envoy skips a callback the module does not export
// (docs/specs.md ABI §1.2): without the response, body, trailer, log, tick and done callbacks it
// never enters the VM for a response, a body or a finished stream, and a proxy may send the
// response past the filter (host-glue/envoy/edge-inline.ts). proxy_on_delete stays: it drops the
// stream's state.
export {
  proxy_abi_version_0_2_1,
  proxy_on_memory_allocate,
  proxy_on_context_create,
  proxy_on_vm_start,
  proxy_on_configure,
  proxy_on_request_headers,
  proxy_on_delete,
} from './proxy/exports';

/** Access-Control-Expose-Headers as the origin sends it on every response (origin/server/http.ts). */
const EXPOSE_HEADERS = 'Content-Length, Content-Range, ETag, Last-Modified, X-Origin-Error';

/** The plugin instance of one worker: holds the configuration read in onConfigure. */
class EdgeRoot extends RootContext {
  config: EdgeConfig = new EdgeConfig();

  /** The plugin's counters (edge/metrics.ts): once per VM, before any request. */
  onVmStart(vmConfiguration: ArrayBuffer): bool {
    defineEdgeMetrics();
    return true;
  }

  onConfigure(configuration: ArrayBuffer): bool {
    // An absent configuration means {} (Envoy hands over 0 bytes).
    if (configuration.byteLength == 0) {
      this.config = new EdgeConfig();
      logInfo('edge: no configuration, using {}');
      return true;
    }
    const json = parseJson(configuration);
    const value = json.value;
    if (value === null) {
      logError('edge: invalid JSON configuration at byte ' + json.position.toString() + ': ' + json.error);
      return false;
    }
    if (!value.isObject()) {
      logError('edge: the configuration must be a JSON object');
      return false;
    }
    const result = parseEdgeConfig(value);
    const config = result.config;
    if (config === null) {
      logError('edge: configuration refused: ' + result.error);
      return false;
    }
    this.config = config;
    logInfo('edge: ' + describe(config));
    return true;
  }

  createHttpContext(contextId: u32): HttpContext | null {
    return new EdgeStream(contextId, this, this.config);
  }
}

/** The configuration in one log line: prefixes and what is on (never secrets). */
function describe(config: EdgeConfig): string {
  const n = config.locations.length;
  if (n == 0) return 'no locations: paths are normalised, no location rules';
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i++) parts[i] = config.locations[i].describe();
  return n.toString() + (n == 1 ? ' location: ' : ' locations: ') + parts.join('; ');
}

class EdgeStream extends HttpContext {
  constructor(
    id: u32,
    root: RootContext,
    private readonly config: EdgeConfig,
  ) {
    super(id, root);
  }

  onRequestHeaders(headerCount: u32, endOfStream: bool): Action {
    const config = this.config;
    // Raw bytes, checked byte for byte (target.ts parseTargetBytes says why not a string).
    const raw = getRequestHeaderBytes(':path');
    if (raw === null) return this.reply(Verdict.refuse(Refusal.BadPath, 'no :path'), null);
    const bytes = Uint8Array.wrap(raw);
    // Host calls only when a location could use the answer.
    const authorization = config.hasBasic ? getRequestHeaderBytes('authorization') : null;
    const now: i64 = config.hasToken ? <i64>(currentTimeNanoseconds() / 1_000_000_000) : 0;
    const verdict = decide(config, bytes, authorization !== null ? Uint8Array.wrap(authorization) : null, now);
    if (verdict.refused) return this.reply(verdict, bytes);
    // The verdict's target is ASCII and every byte was checked, so equal text means equal bytes:
    // compared in place, no decoded copy of :path.
    const changed = !sameAscii(verdict.target, bytes);
    if (changed) replaceRequestHeader(':path', verdict.target);
    countVerdict(verdict);
    if (isLogEnabled(LogLevel.Debug)) {
      const target = String.UTF8.decode(raw, false);
      logDebug('edge: ' + method() + ' ' + printable(target) + (changed ? ' -> ' + printable(verdict.target) : ''));
    }
    return Action.Continue;
  }

  /** The local reply of a refusal (Envoy sends it after this callback; §2.6). */
  private reply(verdict: Verdict, target: Uint8Array | null): Action {
    countVerdict(verdict);
    const refusal = verdict.refusal;
    const headers = new Array<Header>(0);
    headers.push(new Header('content-type', 'text/plain; charset=utf-8'));
    headers.push(new Header('cache-control', 'no-store'));
    headers.push(new Header('access-control-allow-origin', '*'));
    headers.push(new Header('access-control-expose-headers', EXPOSE_HEADERS));
    headers.push(new Header('x-origin-error', refusalCode(refusal)));
    if (verdict.challenge.length > 0) headers.push(new Header('www-authenticate', verdict.challenge));
    const details = refusalDetails(refusal);
    if (isLogEnabled(LogLevel.Debug)) {
      const shown = target !== null ? printable(latin1(target)) : '-';
      logDebug(
        'edge: ' +
          method() +
          ' ' +
          shown +
          ' -> ' +
          refusalStatus(refusal).toString() +
          ' ' +
          details +
          ': ' +
          printable(verdict.message),
      );
    }
    sendLocalResponseText(refusalStatus(refusal), details, verdict.message + '\n', headers);
    return Action.Pause;
  }
}

/** `text` (ASCII) equals `bytes` unit for byte. */
function sameAscii(text: string, bytes: Uint8Array): bool {
  const n = bytes.length;
  if (text.length != n) return false;
  const t = changetype<usize>(text);
  const b = bytes.dataStart;
  for (let i = 0; i < n; i++) {
    if (<u32>load<u16>(t + ((<usize>i) << 1)) != <u32>load<u8>(b + <usize>i)) return false;
  }
  return true;
}

/** The request's method for a debug line (looked up only when one is written). */
function method(): string {
  const m = getRequestHeader(':method');
  return m !== null ? printable(m) : '-';
}

/** Bytes as one character each (for a log line of a refused target, which may hold any byte). */
function latin1(bytes: Uint8Array): string {
  const n = min(bytes.length, 300);
  let out = '';
  for (let i = 0; i < n; i++) out += String.fromCharCode(<i32>bytes[i]);
  return bytes.length > n ? out + '...' : out;
}

/** At most 256 characters of `text` with everything but printable ASCII shown as '?' (log lines). */
function printable(text: string): string {
  const n = min(text.length, 256);
  let out = '';
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    out += c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '?';
  }
  return text.length > n ? out + '...' : out;
}

// Top-level code runs in _initialize: registering the factory calls no host function.
setRootContextFactory((contextId: u32): RootContext => new EdgeRoot(contextId));
