// Shared pieces of the edge plugin tests: build/edge.wasm loaded through the real proxy-wasm
// host (host-glue/proxy-wasm/host.ts, the same load checks, call order and local-reply handling as Envoy),
// one request at a time through the HttpFilterStream seam, and signing helpers written
// independently of the plugin (Node's crypto) so a shared mistake cannot pass.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { createProxyWasmPlugin, type ProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';
import type { FailurePolicy, HeaderList, LogLevel, StreamInfo } from '../../../host-glue/proxy-wasm/http-filter';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const EDGE_WASM = path.join(ROOT, 'build', 'edge.wasm');
export const INFO: StreamInfo = { remoteAddress: '192.0.2.7', remotePort: 50123, protocol: 'HTTP/1.1' };

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourcesUnder(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

let wasmBytes: Uint8Array | null = null;

/** build/edge.wasm (built if missing; a stale one fails loudly rather than testing old code). */
export function edgeWasm(): Uint8Array {
  if (wasmBytes !== null) return wasmBytes;
  if (!existsSync(EDGE_WASM)) execFileSync('npm', ['run', 'build:wasm'], { cwd: ROOT, stdio: 'pipe' });
  const built = statSync(EDGE_WASM).mtimeMs;
  const stale = [...sourcesUnder(path.join(ROOT, 'assembly')), path.join(ROOT, 'asconfig.json')].filter(
    (f) =>
      !f.includes(`${path.sep}testing${path.sep}`) &&
      !f.includes(`${path.sep}probe${path.sep}`) &&
      statSync(f).mtimeMs > built,
  );
  if (stale.length > 0)
    throw new Error(`build/edge.wasm is older than ${path.relative(ROOT, stale[0]!)}: run npm run build:wasm`);
  wasmBytes = new Uint8Array(readFileSync(EDGE_WASM));
  return wasmBytes;
}

export interface LoadedEdge {
  plugin: ProxyWasmPlugin;
  /** Every log line, `[level] line`. */
  logs: string[];
}

const open: ProxyWasmPlugin[] = [];

/** The plugin with this configuration (an object is sent as JSON, a string as is). */
export async function loadEdge(
  config: unknown,
  o: { logLevel?: LogLevel; failurePolicy?: FailurePolicy } = {},
): Promise<LoadedEdge> {
  const logs: string[] = [];
  const text = typeof config === 'string' ? config : JSON.stringify(config);
  const plugin = await createProxyWasmPlugin({
    wasm: edgeWasm(),
    name: 'edge',
    rootId: 'edge',
    vmId: 'edge',
    vmConfiguration: new Uint8Array(0),
    pluginConfiguration: new Uint8Array(Buffer.from(text, 'utf8')),
    failurePolicy: o.failurePolicy ?? 'FAIL_CLOSED',
    log: (level, line) => logs.push(`[${level}] ${line}`),
    logLevel: o.logLevel ?? 'info',
  });
  open.push(plugin);
  return { plugin, logs };
}

/** What loading a refused configuration logged (the host throws PluginLoadError). */
export async function refusal(config: unknown): Promise<string[]> {
  const logs: string[] = [];
  const text = typeof config === 'string' ? config : JSON.stringify(config);
  await expect(
    createProxyWasmPlugin({
      wasm: edgeWasm(),
      name: 'edge',
      rootId: 'edge',
      vmId: 'edge',
      vmConfiguration: new Uint8Array(0),
      pluginConfiguration: new Uint8Array(Buffer.from(text, 'utf8')),
      failurePolicy: 'FAIL_CLOSED',
      log: (level, line) => logs.push(`[${level}] ${line}`),
      logLevel: 'info',
    }),
  ).rejects.toThrow('Failed to configure base Wasm plugin');
  return logs;
}

export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((p) => p.shutdown()));
}

export interface Outcome {
  /** 0 when the request went on upstream. */
  status: number;
  /** The :path sent upstream (when it went on). */
  forwarded: string;
  headers: Record<string, string>;
  body: string;
  details: string;
}

/** One request (headers only, end of stream) through the plugin. */
export async function send(
  plugin: ProxyWasmPlugin,
  target: string,
  extra: HeaderList = [],
  method = 'GET',
): Promise<Outcome> {
  const s = plugin.newStream(INFO);
  try {
    const v = await s.requestHeaders(
      [[':authority', 'edge.test'], [':path', target], [':method', method], [':scheme', 'http'], ...extra],
      true,
    );
    if (v.kind === 'continue') {
      const forwarded = v.headers.find(([k]) => k === ':path')?.[1] ?? '';
      return { status: 0, forwarded, headers: Object.fromEntries(v.headers), body: '', details: '' };
    }
    const r = v.response;
    const headers = Object.fromEntries(r.headers);
    return {
      status: Number(headers[':status']),
      forwarded: '',
      headers,
      body: Buffer.from(r.body).toString('utf8'),
      details: r.details,
    };
  } finally {
    s.end();
  }
}

// ------------------------------------------------------------------------------------ signing

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
export const hex8 = (seconds: number): string => seconds.toString(16).padStart(8, '0');

/** hex MD5(secret + scope + timestamp), as mod_auth_token and the reference's tutorial define it. */
export function tokenHash(secret: string, scope: string, timestamp: string): string {
  return createHash('md5')
    .update(secret + scope + timestamp)
    .digest('hex');
}

/** /<prefix>/<hash>/<ts><rel>, signed over `scope` (the rel path up to the .ism by default). */
export function signed(
  secret: string,
  prefix: string,
  rel: string,
  seconds: number,
  scope = rel.replace(/(\.isml?)\/.*$/i, '$1'),
): string {
  const ts = hex8(seconds);
  return `/${prefix}/${tokenHash(secret, scope, ts)}/${ts}${rel}`;
}

export const basicHeader = (user: string, password: string): [string, string] => [
  'authorization',
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`,
];
