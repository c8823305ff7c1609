// Reads the Envoy v3 bootstrap a user gives Envoy (envoy-config/envoy.yaml) for `origin edge`:
// the listener, the HTTP connection manager with its envoy.filters.http.wasm filter (module,
// configurations, failure policy), its routes, and the clusters they name. The same file runs
// under Envoy unchanged; what origin edge cannot do the same way is an error naming file, line
// and field, never a silent difference.
//
// Facts from envoyproxy/data-plane-api (docs/specs.md ABI §5.1, §5.2):
// - filters are chosen by typed_config "@type" (the `name` is only a label), and the router must
//   be the last HTTP filter;
// - PluginConfig.configuration / VmConfig.configuration are google.protobuf.Any:
//   StringValue and BytesValue reach the plugin raw, Struct as its JSON text;
// - failure_policy UNSPECIFIED (or absent) falls back to the deprecated fail_open (false → FAIL_CLOSED);
// - a relative vm_config.code.local.filename is opened by Envoy relative to its working
//   directory; origin edge does the same (loadEdgeConfig's `cwd`), so one file works for both.
//
// parseEnvoyConfig() does no I/O (it takes the text); loadEdgeConfig() reads the yaml and the module.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FailurePolicy } from '../proxy-wasm/http-filter';
import { EdgeConfigError, YamlCursor } from './edge-yaml';
import { TYPE_URL, boolValue, enumOf, knownFields, typeUrl } from './envoy-proto';
import { StatsTagConfig, TagProducer } from './stats-tags';
import { readPlugin } from './wasm-plugin-config';

export { EdgeConfigError } from './edge-yaml';
export { TYPE_URL } from './envoy-proto';

export type ServerHeaderTransformation = 'OVERWRITE' | 'APPEND_IF_ABSENT' | 'PASS_THROUGH';

export interface RouteMatch {
  kind: 'prefix' | 'path' | 'path_separated_prefix' | 'safe_regex';
  /** The prefix or path; for safe_regex, the regex (it must match the whole path, as Envoy's). */
  value: string;
  caseSensitive: boolean;
}

export interface RouteEntry {
  match: RouteMatch;
  cluster: string;
  /** route.prefix_rewrite: replaces the matched prefix (prefix matches only). */
  prefixRewrite: string | undefined;
  /** route.host_rewrite_literal: the upstream Host / :authority. */
  hostRewrite: string | undefined;
  /** route.timeout in ms (Envoy's default 15 s); 0 disables it. */
  timeoutMs: number;
}

export interface VirtualHost {
  name: string;
  domains: string[];
  routes: RouteEntry[];
}

export interface Endpoint {
  host: string;
  port: number;
}

export interface Cluster {
  name: string;
  endpoints: Endpoint[];
  /** connect_timeout in ms (Envoy's default 5 s). */
  connectTimeoutMs: number;
}

export type ConfigurationType = 'StringValue' | 'BytesValue' | 'Struct' | 'none';

export interface WasmPluginConfig {
  name: string;
  rootId: string;
  vmId: string;
  runtime: string;
  /** The module: a file (absolute after loadEdgeConfig; as written after parseEnvoyConfig) or inline bytes. */
  code: { kind: 'file'; filename: string; line: number | undefined } | { kind: 'inline'; bytes: Uint8Array };
  vmConfiguration: Uint8Array;
  pluginConfiguration: Uint8Array;
  pluginConfigurationType: ConfigurationType;
  failurePolicy: FailurePolicy;
  /** reload_config.backoff.base_interval in ms (FAIL_RELOAD); undefined: Envoy's 1 s. */
  reloadBackoffMs: number | undefined;
}

export interface EdgeConfig {
  /** The yaml file, as given. */
  file: string;
  listener: { name: string; host: string; port: number };
  /** The bootstrap's admin listener (`admin.address`); undefined when it has none. */
  admin: { host: string; port: number } | undefined;
  /** stats_config: how stat names become metric names and labels (stats-tags.ts). */
  stats: StatsTagConfig;
  plugin: WasmPluginConfig;
  virtualHosts: VirtualHost[];
  clusters: Map<string, Cluster>;
  server: { name: string; transformation: ServerHeaderTransformation };
  /** HCM generate_request_id (default true): add `x-request-id` when the request has none. */
  generateRequestId: boolean;
  /** Router suppress_envoy_headers: no x-envoy-upstream-service-time / x-envoy-expected-rq-timeout-ms. */
  suppressEnvoyHeaders: boolean;
  /** Fields origin edge reads past without acting on them (printed by the CLI). */
  warnings: string[];
}

export interface LoadedEdgeConfig extends EdgeConfig {
  /** The module bytes (from the file or inline). */
  wasm: Uint8Array;
}

/** Reads `file` and the module it names; relative module paths resolve against `cwd`, as Envoy's. */
export async function loadEdgeConfig(file: string, options: { cwd?: string } = {}): Promise<LoadedEdgeConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw new EdgeConfigError(
      `${file}: cannot read the Envoy configuration: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      file,
      undefined,
    );
  }
  const config = parseEnvoyConfig(text, file);
  const code = config.plugin.code;
  if (code.kind === 'inline') return { ...config, wasm: code.bytes };
  const cwd = options.cwd ?? process.cwd();
  const filename = path.resolve(cwd, code.filename);
  let wasm: Uint8Array;
  try {
    wasm = new Uint8Array(await fs.readFile(filename));
  } catch (e) {
    const why =
      (e as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'no such file'
        : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
    const relative = path.isAbsolute(code.filename)
      ? ''
      : ` (a relative path resolves against the working directory ${cwd}, as in Envoy)`;
    const hint = /edge\.wasm$/.test(filename) ? '; `npm run build:wasm` builds build/edge.wasm' : '';
    throw new EdgeConfigError(
      `${file}${code.line !== undefined ? `:${code.line}` : ''}: vm_config.code.local.filename: ${filename}: ${why}${relative}${hint}`,
      file,
      code.line,
    );
  }
  return { ...config, plugin: { ...config.plugin, code: { ...code, filename } }, wasm };
}

/** Parses an Envoy v3 bootstrap (YAML or JSON text). `file` only names it in errors. */
export function parseEnvoyConfig(text: string, file: string): EdgeConfig {
  const root = YamlCursor.parse(text, file);
  const warnings: string[] = [];
  const resources = root.need('static_resources', 'origin edge reads a static bootstrap');
  const found = findWasmListener(resources);
  const hcm = found.hcm;
  if (hcm.has('rds') || !hcm.has('route_config'))
    (hcm.field('rds') ?? hcm).fail('origin edge needs an inline route_config (rds is dynamic configuration)');
  const virtualHosts = readVirtualHosts(hcm.need('route_config'), warnings);
  const clusters = readClusters(resources, virtualHosts, warnings);
  return {
    file,
    listener: found.listener,
    admin: readAdmin(root),
    stats: readStatsConfig(root, warnings),
    plugin: readPlugin(found.filters.wasm),
    virtualHosts: virtualHosts.map((v) => v.value),
    clusters,
    server: {
      name: hcm.field('server_name')?.str() ?? 'envoy',
      transformation: enumOf(
        hcm.field('server_header_transformation'),
        ['OVERWRITE', 'APPEND_IF_ABSENT', 'PASS_THROUGH'],
        'OVERWRITE',
      ),
    },
    generateRequestId: boolValue(hcm.field('generate_request_id')) ?? true,
    suppressEnvoyHeaders: found.filters.router.field('suppress_envoy_headers')?.bool() ?? false,
    warnings,
  };
}

/** admin.address.socket_address (Envoy's admin interface: its /stats/prometheus). */
function readAdmin(root: YamlCursor): EdgeConfig['admin'] {
  const socket = root.field('admin')?.field('address')?.need('socket_address', 'the admin interface listens on TCP');
  if (socket === undefined) return undefined;
  return { host: socket.need('address').str(), port: socket.need('port_value').uint(65535) };
}

/**
 * stats_config (envoy.config.metrics.v3.StatsConfig): stats_tags and use_all_default_tags, checked
 * as Envoy checks them when it builds its tag producer (a bad entry refuses the bootstrap).
 */
function readStatsConfig(root: YamlCursor, warnings: string[]): StatsTagConfig {
  const c = root.field('stats_config');
  if (c === undefined) return { tags: [], useAllDefaultTags: true };
  knownFields(
    c,
    ['stats_tags', 'use_all_default_tags', 'stats_matcher', 'histogram_bucket_settings'],
    'envoy.config.metrics.v3.StatsConfig',
  );
  for (const unread of ['stats_matcher', 'histogram_bucket_settings'])
    if (c.has(unread))
      warnings.push(`${c.path}.${unread}: origin edge exports every plugin stat with Envoy's defaults`);
  const tags = (c.field('stats_tags')?.list() ?? []).map((t) => {
    knownFields(t, ['tag_name', 'regex', 'fixed_value'], 'envoy.config.metrics.v3.TagSpecifier');
    if (t.has('regex') && t.has('fixed_value')) t.fail('regex and fixed_value are one of a kind (tag_value): give one');
    const regex = t.field('regex');
    if (regex !== undefined && Buffer.byteLength(regex.str()) > 1024) regex.fail('at most 1024 bytes (Envoy)');
    return {
      name: t.field('tag_name')?.str() ?? '',
      ...(regex !== undefined ? { regex: regex.str() } : {}),
      ...(t.has('fixed_value') ? { fixedValue: t.need('fixed_value').str() } : {}),
    };
  });
  const config: StatsTagConfig = { tags, useAllDefaultTags: boolValue(c.field('use_all_default_tags')) ?? true };
  try {
    new TagProducer(config);
  } catch (e) {
    (c.field('stats_tags') ?? c).fail(
      e instanceof SyntaxError ? `a regex does not compile: ${e.message}` : (e as Error).message,
    );
  }
  return config;
}

interface WasmListener {
  listener: EdgeConfig['listener'];
  hcm: YamlCursor;
  filters: { wasm: YamlCursor; router: YamlCursor };
}

/** The one listener whose HTTP connection manager has the wasm filter. */
function findWasmListener(resources: YamlCursor): WasmListener {
  const listeners = resources.need('listeners').list();
  const candidates: WasmListener[] = [];
  for (const l of listeners) {
    for (const chain of l.need('filter_chains').list()) {
      for (const f of chain.need('filters').list()) {
        const typed = f.need('typed_config');
        if (typeUrl(typed) !== TYPE_URL.hcm) continue;
        const filters = readHttpFilters(typed);
        if (filters !== undefined) candidates.push({ listener: readListenerAddress(l), hcm: typed, filters });
      }
    }
  }
  if (candidates.length === 0)
    resources
      .need('listeners')
      .fail(
        `no listener has an HTTP connection manager with an envoy.filters.http.wasm filter (typed_config "@type": ${TYPE_URL.wasm})`,
      );
  if (candidates.length > 1)
    resources
      .need('listeners')
      .fail(`origin edge runs one listener with one wasm filter; ${candidates.length} filter chains have one`);
  return candidates[0]!;
}

function readListenerAddress(l: YamlCursor): EdgeConfig['listener'] {
  const socket = l.need('address').need('socket_address', 'origin edge listens on TCP');
  const protocol = socket.field('protocol')?.str() ?? 'TCP';
  if (protocol !== 'TCP') socket.need('protocol').fail(`origin edge listens on TCP, not ${protocol}`);
  return {
    name: l.field('name')?.str() ?? '',
    host: socket.need('address').str(),
    port: socket.need('port_value').uint(65535),
  };
}

/** The wasm filter's and the router's typed_config when this filter chain has a wasm filter
 * (then the chain is checked: the wasm filter, then the router last); undefined otherwise. */
function readHttpFilters(hcm: YamlCursor): { wasm: YamlCursor; router: YamlCursor } | undefined {
  const filters = hcm
    .need('http_filters')
    .list()
    .filter((f) => f.field('disabled')?.bool() !== true);
  const typeOf = (f: YamlCursor): string | undefined =>
    f.has('typed_config') ? typeUrl(f.need('typed_config')) : undefined;
  const wasm = filters.filter((f) => typeOf(f) === TYPE_URL.wasm);
  if (wasm.length === 0) return undefined;
  if (wasm.length > 1) wasm[1]!.fail('origin edge runs one wasm filter per listener; this is the second');
  filters.forEach((f, i) => {
    if (f.has('config_discovery'))
      f.need('config_discovery').fail('origin edge needs the filter inline (typed_config), not config_discovery');
    const type = typeOf(f) ?? f.need('typed_config', 'Envoy picks the filter by its "@type"').str();
    if (type === TYPE_URL.router) {
      if (i !== filters.length - 1) f.fail('the router (envoy.filters.http.router) must be the last HTTP filter');
    } else if (type !== TYPE_URL.wasm) {
      f.need('typed_config')
        .need('@type')
        .fail(`origin edge runs only the wasm filter and the router; it cannot run ${type}`);
    }
  });
  const last = filters[filters.length - 1]!;
  if (typeOf(last) !== TYPE_URL.router)
    hcm.need('http_filters').fail(`the last HTTP filter must be the router (typed_config "@type": ${TYPE_URL.router})`);
  return { wasm: wasm[0]!.need('typed_config'), router: last.need('typed_config') };
}

/** route_config.virtual_hosts, keeping each cursor for the clusters check. */
function readVirtualHosts(
  routeConfig: YamlCursor,
  warnings: string[],
): Array<{ value: VirtualHost; routes: Array<{ cluster: YamlCursor }> }> {
  return routeConfig
    .need('virtual_hosts')
    .list()
    .map((vh) => {
      const routes = vh
        .need('routes')
        .list()
        .map((r) => readRoute(r, warnings));
      const domains = vh
        .need('domains')
        .list()
        .map((d) => d.str().toLowerCase());
      if (domains.length === 0) vh.need('domains').fail('a virtual host needs at least one domain ("*" for any)');
      return { value: { name: vh.field('name')?.str() ?? '', domains, routes: routes.map((r) => r.value) }, routes };
    });
}

/**
 * A safe_regex match's regex (RE2, matched against the whole path without the query): refused
 * when JavaScript would read it differently (lookaround, backreferences: RE2 has neither) or not
 * at all; no prefix_rewrite with it, as Envoy.
 */
function routeRegex(r: YamlCursor, action: YamlCursor): string {
  const regex = r.need('regex');
  const text = regex.str();
  if (/\(\?<?[=!]|\\[1-9]/.test(text)) regex.fail('RE2 has no lookaround or backreferences');
  try {
    new RegExp(text);
  } catch (e) {
    regex.fail(`not a regular expression: ${(e as Error).message}`);
  }
  if (action.has('prefix_rewrite')) action.need('prefix_rewrite').fail('prefix_rewrite needs a prefix or path match');
  return text;
}

function readRoute(r: YamlCursor, warnings: string[]): { value: RouteEntry; cluster: YamlCursor } {
  const m = r.need('match');
  const kinds = (['prefix', 'path', 'path_separated_prefix', 'safe_regex'] as const).filter((k) => m.has(k));
  if (kinds.length !== 1)
    m.fail('origin edge matches routes by exactly one of prefix, path, path_separated_prefix or safe_regex');
  if (m.has('headers') || m.has('query_parameters'))
    m.fail('origin edge matches routes by path only (no headers or query_parameters)');
  const kind = kinds[0]!;
  if (r.has('direct_response') || r.has('redirect'))
    r.fail('origin edge supports routes to a cluster only (no direct_response or redirect)');
  const action = r.need('route', 'the route action naming the cluster');
  for (const unsupported of [
    'cluster_header',
    'weighted_clusters',
    'cluster_specifier_plugin',
    'regex_rewrite',
    'path_rewrite_policy',
    'host_rewrite_header',
    'host_rewrite_path_regex',
  ]) {
    if (action.has(unsupported))
      action
        .need(unsupported)
        .fail(
          'not supported by origin edge (it routes to a named cluster, with prefix_rewrite and host_rewrite_literal)',
        );
  }
  // What Envoy does with these, origin edge does not: read, said, and the rest of the file honoured.
  for (const [key, why] of [
    ['hash_policy', 'origin edge balances round robin (no consistent hashing)'],
    ['retry_policy', 'origin edge does not retry'],
  ] as const)
    if (action.has(key)) warnings.push(`${action.need(key).path}: ${why}`);
  const cluster = action.need('cluster');
  const value = kind === 'safe_regex' ? routeRegex(m.need(kind), action) : m.need(kind).str();
  return {
    cluster,
    value: {
      match: { kind, value, caseSensitive: boolValue(m.field('case_sensitive')) ?? true },
      cluster: cluster.str(),
      prefixRewrite: action.field('prefix_rewrite')?.str(),
      hostRewrite: action.field('host_rewrite_literal')?.str(),
      timeoutMs: action.field('timeout')?.durationMs() ?? 15_000,
    },
  };
}

function readClusters(
  resources: YamlCursor,
  virtualHosts: ReturnType<typeof readVirtualHosts>,
  warnings: string[],
): Map<string, Cluster> {
  const byName = new Map<string, YamlCursor>();
  for (const c of resources.field('clusters')?.list() ?? []) byName.set(c.need('name').str(), c);
  const clusters = new Map<string, Cluster>();
  for (const vh of virtualHosts) {
    for (const route of vh.routes) {
      const name = route.cluster.str();
      if (clusters.has(name)) continue;
      const c =
        byName.get(name) ??
        route.cluster.fail(
          `unknown cluster "${name}" (static_resources.clusters has ${[...byName.keys()].map((n) => `"${n}"`).join(', ') || 'none'})`,
        );
      clusters.set(name, readCluster(c, warnings));
    }
  }
  return clusters;
}

function readCluster(c: YamlCursor, warnings: string[]): Cluster {
  const type = c.field('type')?.str() ?? 'STATIC';
  if (!['STATIC', 'STRICT_DNS', 'LOGICAL_DNS'].includes(type))
    c.need('type').fail(`origin edge needs the endpoints in the file (STATIC, STRICT_DNS or LOGICAL_DNS), not ${type}`);
  if (c.has('transport_socket'))
    c.need('transport_socket').fail('origin edge connects to the origin over plain HTTP/1.1 (no upstream TLS)');
  if (c.has('typed_extension_protocol_options'))
    warnings.push(
      `${c.path}.typed_extension_protocol_options: origin edge speaks HTTP/1.1 to the origin whatever these options say`,
    );
  const endpoints: Endpoint[] = [];
  for (const group of c.need('load_assignment', 'the endpoints').need('endpoints').list()) {
    for (const lb of group.need('lb_endpoints').list()) {
      const socket = lb.need('endpoint').need('address').need('socket_address');
      endpoints.push({ host: socket.need('address').str(), port: socket.need('port_value').uint(65535) });
    }
  }
  if (endpoints.length === 0) c.need('load_assignment').fail('the cluster has no endpoint');
  const lb = c.field('lb_policy')?.str();
  if (lb !== undefined && lb !== 'ROUND_ROBIN')
    warnings.push(`${c.need('lb_policy').path}: ${lb}: origin edge balances round robin`);
  if (c.has('health_checks'))
    warnings.push(
      `${c.need('health_checks').path}: origin edge does no health checks (every endpoint stays in the rotation)`,
    );
  return { name: c.need('name').str(), endpoints, connectTimeoutMs: c.field('connect_timeout')?.durationMs() ?? 5000 };
}
