// Drives the host the way the edge proxy does (the HttpFilterFactory / HttpFilterStream seam)
// and reads the plugin's view back from the log: the scriptable test plugin reports every action
// as `#<context id> <report>` on proxy_log (plugins/runtime.ts).

import { createProxyWasmPlugin, type ProxyWasmPlugin } from '../../../../host-glue/proxy-wasm/host';
import type {
  FailurePolicy,
  HeaderList,
  LogLevel,
  PluginSpec,
  StreamInfo,
} from '../../../../host-glue/proxy-wasm/http-filter';
import { testPlugin, type TestPluginEntry } from './test-plugins';

export const NAME = 'test_plugin';
export const ROOT_ID = 'test_root';
export const VM_ID = 'test_vm';
export const PREFIX = `wasm log ${NAME} ${ROOT_ID} ${VM_ID}: `;

export const INFO: StreamInfo = { remoteAddress: '10.1.2.3', remotePort: 43210, protocol: 'HTTP/1.1' };

export interface LogLine {
  level: LogLevel;
  line: string;
}

export class LogCapture {
  readonly lines: LogLine[] = [];
  readonly sink = (level: LogLevel, line: string): void => {
    this.lines.push({ level, line });
  };

  /** The plugin's reports, `#<ctx> ` stripped, optionally for one context id. */
  reports(ctx?: number): string[] {
    const out: string[] = [];
    for (const { line } of this.lines) {
      const m = /^wasm log [^:]*: #(\d+) (.*)$/s.exec(line);
      if (m !== null && (ctx === undefined || Number(m[1]) === ctx)) out.push(m[2]!);
    }
    return out;
  }

  /** The one report starting with `start` (fails the test if there is not exactly one). */
  report(start: string, ctx?: number): string {
    const found = this.reports(ctx).filter((r) => r.startsWith(start));
    if (found.length !== 1)
      throw new Error(`expected one report "${start}…", got ${JSON.stringify(found)}\n${this.dump()}`);
    return found[0]!;
  }

  /** `called …` reports (the plugin's `all trace`), for call-order checks. */
  calls(ctx?: number): string[] {
    return this.reports(ctx)
      .filter((r) => r.startsWith('called '))
      .map((r) => r.slice('called '.length));
  }

  text(): string[] {
    return this.lines.map((l) => l.line);
  }

  dump(): string {
    return this.lines.map((l) => `[${l.level}] ${l.line}`).join('\n');
  }

  clear(): void {
    this.lines.length = 0;
  }
}

export interface LoadOptions {
  /** Plugin configuration: the script (one rule per line). */
  script?: string;
  /** VM configuration: rules for vm_start. */
  vmScript?: string;
  failurePolicy?: FailurePolicy;
  logLevel?: LogLevel;
  wasm?: Uint8Array;
  entry?: TestPluginEntry;
  vmId?: string;
  reloadBackoffMs?: number;
}

const enc = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));

export function spec(options: LoadOptions, logs: LogCapture): PluginSpec {
  return {
    wasm: options.wasm ?? testPlugin(options.entry),
    name: NAME,
    rootId: ROOT_ID,
    vmId: options.vmId ?? VM_ID,
    vmConfiguration: enc(options.vmScript ?? ''),
    pluginConfiguration: enc(options.script ?? ''),
    failurePolicy: options.failurePolicy ?? 'FAIL_CLOSED',
    log: logs.sink,
    logLevel: options.logLevel ?? 'info',
    ...(options.reloadBackoffMs === undefined ? {} : { reloadBackoffMs: options.reloadBackoffMs }),
  };
}

const open: ProxyWasmPlugin[] = [];

/** Loads a plugin (shut down by `closeAll` in afterEach). */
export async function load(options: LoadOptions = {}): Promise<{ plugin: ProxyWasmPlugin; logs: LogCapture }> {
  const logs = new LogCapture();
  const plugin = await createProxyWasmPlugin(spec(options, logs));
  open.push(plugin);
  return { plugin, logs };
}

export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((p) => p.shutdown()));
}

/** A request map as Envoy hands it over: pseudo-headers first (§3.4). */
export function request(path = '/a', extra: HeaderList = [], method = 'GET'): HeaderList {
  return [[':authority', 'edge.test'], [':path', path], [':method', method], [':scheme', 'http'], ...extra];
}

export const response = (status = 200, extra: HeaderList = []): HeaderList => [[':status', String(status)], ...extra];

export const bytes = (s: string): Uint8Array => enc(s);

/** An unsigned 64-bit integer as the hex of its 8 little-endian bytes (an integer property). */
export const u64le = (n: bigint): string => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b.toString('hex');
};

/** The value bytes of a `prop` report (`... hex=<bytes>`). */
export const hexOf = (report: string): string => /hex=([0-9a-f]*)/.exec(report)![1]!;
export const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

/** Resolves true if `p` settles within `ms` (to tell a held promise from a settled one). */
export async function settlesWithin(p: unknown, ms: number): Promise<boolean> {
  // A seam verdict decided during the call is a plain value (http-filter.ts Awaitable): settled.
  if (!(p instanceof Promise)) return true;
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return settled;
}
