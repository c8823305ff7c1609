// Envoy's `wasm` logger as the plugin sees it (§2.2, §2.3, §6.22, §6.23): proxy_log levels
// 0..5, a threshold that proxy_get_log_level reports, the line `wasm log<prefix>: <msg>`, and the
// `--component-log-level wasm:trace` call trace (`[host->vm] proxy_on_request_headers(2, 7, 1)`,
// §5.2).
//
// The prefix depends on the context that logs (Envoy's Context::log prints
// `"wasm log{}: {}", log_prefix(), message`; cpp-host include/proxy-wasm/context.h log_prefix()):
//   stream contexts   ` <plugin name> <root_id> <vm_id>`   PluginBase::makeLogPrefix
//   root contexts     ` <root_id> <vm_id>`                 ContextBase::makeRootLogPrefix
//   the VM context    ``                                   (id 0: _initialize, the allocator)
// empty parts omitted, so a plugin with name, root_id and vm_id all "edge" logs
// `wasm log edge edge: …` from on_configure and `wasm log edge edge edge: …` from a request.

import type { LogLevel, PluginSpec } from './http-filter';

/** proxy_log_level_t order; index = the ABI number (§2.2). */
export const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'critical'];
/** spdlog's "off", which proxy_get_log_level may report (§2.2). */
export const LOG_LEVEL_OFF = 6;

export type LogSink = (level: LogLevel, line: string) => void;

const defaultSink: LogSink = (level, line) => process.stderr.write(`[${level}] ${line}\n`);

/** ` a b c` for the non-empty parts (cpp-host makeLogPrefix / makeRootLogPrefix). */
function logPrefix(parts: readonly string[]): string {
  return parts
    .filter((p) => p !== '')
    .map((p) => ` ${p}`)
    .join('');
}

export class PluginLog {
  readonly threshold: number;
  /** Stream contexts: ` <name> <root_id> <vm_id>`. */
  readonly streamPrefix: string;
  /** Root contexts: ` <root_id> <vm_id>` (no plugin name). */
  readonly rootPrefix: string;
  private readonly sink: LogSink;

  constructor(spec: Pick<PluginSpec, 'name' | 'rootId' | 'vmId' | 'log' | 'logLevel'>) {
    this.sink = spec.log ?? defaultSink;
    this.threshold = LOG_LEVELS.indexOf(spec.logLevel ?? 'info');
    this.streamPrefix = logPrefix([spec.name, spec.rootId, spec.vmId]);
    this.rootPrefix = logPrefix([spec.rootId, spec.vmId]);
  }

  enabled(level: number): boolean {
    return level >= this.threshold;
  }

  /** A line on Envoy's wasm logger, if the threshold lets it through. */
  emit(level: number, line: string): void {
    const name = LOG_LEVELS[level];
    if (name !== undefined && this.enabled(level)) this.sink(name, line);
  }

  /** proxy_log and fd_write output: `wasm log<prefix>: <msg>`, the prefix of the context that logs. */
  wasmLog(level: number, prefix: string, message: string): void {
    this.emit(level, `wasm log${prefix}: ${message}`);
  }

  error(line: string): void {
    this.emit(4, line);
  }

  warn(line: string): void {
    this.emit(3, line);
  }

  get tracing(): boolean {
    return this.enabled(0);
  }

  trace(line: string): void {
    this.emit(0, line);
  }
}

/** cpp-host printValues: i32 printed unsigned, i64 as u64, joined by ", ". */
export function printValues(values: ReadonlyArray<number | bigint>): string {
  return values.map((v) => (typeof v === 'bigint' ? BigInt.asUintN(64, v).toString() : String(v >>> 0))).join(', ');
}
