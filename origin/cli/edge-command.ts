// `origin edge --config envoy-config/envoy.yaml [--port 8080] [--upstream URL]`: the embedded
// edge. It reads the bootstrap a user gives Envoy (listener, wasm filter, routes, clusters),
// loads the filter's module through the proxy-wasm host (host-glue/proxy-wasm/host.ts, the same checks and
// call order as Envoy) and proxies to the origin (host-glue/envoy/edge-proxy.ts). With
// --admin-port it also opens the admin listener with the plugin's metrics
// (host-glue/envoy/edge-admin.ts).

import { createHash } from 'node:crypto';
import { EdgeConfigError, LoadedEdgeConfig, loadEdgeConfig } from '../../host-glue/envoy/envoy-config';
import { RunningEdge, startEdgeProxy } from '../../host-glue/envoy/edge-proxy';
import { CreatePlugin, HttpFilterFactory, LogLevel, PluginLoadError } from '../../host-glue/proxy-wasm/http-filter';
import { Registry } from 'prom-client';
import { RunningAdmin, startEdgeAdmin } from '../../host-glue/envoy/edge-admin';
import { registerPluginStats } from '../../host-glue/envoy/edge-stats';
import { eachOption, logLevelArg, portArg, UsageError } from './args';

export const EDGE_USAGE = `Usage: origin edge --config <envoy.yaml> [options]

Runs the edge plugin in front of the origin the way Envoy would: reads the Envoy v3 bootstrap
(the listener, its envoy.filters.http.wasm filter with the module, configuration and failure
policy, the routes and the clusters they name), loads the module through the proxy-wasm host and
proxies every request through it to the origin (keep-alive connections, streamed bodies).
The same file runs under Envoy unchanged: see envoy-config/README.md.

Options:
  --config <file>       the Envoy bootstrap (required), e.g. envoy-config/envoy.yaml; a
                        relative module path in it resolves against the working directory,
                        as in Envoy
  --port <n>            listen on this port instead of the listener's port_value (0 = any free port)
  --host <address>      listen on this address instead of the listener's address
  --upstream <url>      send every route to this origin (http://host:port) instead of the
                        endpoints of the clusters in the file
  --admin-port <n>      open the admin listener on this port (0 = any free port), on the
                        bootstrap's admin address (127.0.0.1 without one): the plugin's
                        metrics at /stats/prometheus and /metrics, as Envoy's admin
                        interface has them; without this option there is none
  --log-level <level>   the plugin's log threshold (proxy_get_log_level, proxy_log):
                        trace, debug, info, warn, error, critical (default info)
  -q, --quiet           no request log on stderr (plugin logs and errors still print)
  -h, --help            this text

Exit codes: 0 stopped by Ctrl-C; 1 the configuration, the module or the listening address is
wrong (the message names the file and line, or Envoy's reason for refusing the module);
2 bad command line.
`;

export interface EdgeArgs {
  config: string;
  port: number | undefined;
  host: string | undefined;
  upstream: URL | undefined;
  /** --admin-port: the admin listener's port; undefined = no admin listener. */
  adminPort?: number | undefined;
  logLevel: LogLevel;
  quiet: boolean;
  help: boolean;
}

export function parseEdgeArgs(argv: readonly string[]): EdgeArgs {
  const a: EdgeArgs = {
    config: '',
    port: undefined,
    host: undefined,
    upstream: undefined,
    adminPort: undefined,
    logLevel: 'info',
    quiet: false,
    help: false,
  };
  eachOption(argv, a, ({ arg, flag, value }) => {
    switch (flag) {
      case '--config':
      case '-c': // Envoy's own spelling
        a.config = value();
        break;
      case '--port':
        a.port = portArg(flag, value());
        break;
      case '--admin-port':
        a.adminPort = portArg(flag, value());
        break;
      case '--host':
        a.host = value();
        break;
      case '--upstream':
        a.upstream = parseUpstream(value());
        break;
      case '--log-level':
        a.logLevel = logLevelArg(flag, value());
        break;
      default:
        throw new UsageError(`unknown argument "${arg}" (origin edge --help)`);
    }
  });
  if (!a.help && a.config === '')
    throw new UsageError('--config <envoy.yaml> is required (the repository has envoy-config/envoy.yaml)');
  return a;
}

function parseUpstream(v: string): URL {
  let u: URL;
  try {
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) throw new Error('no scheme');
    u = new URL(v);
  } catch {
    throw new UsageError(`--upstream must be a URL such as http://127.0.0.1:8081, not "${v}"`);
  }
  if (u.protocol !== 'http:')
    throw new UsageError(`--upstream: origin edge speaks plain HTTP to the origin, not ${u.protocol.slice(0, -1)}`);
  if ((u.pathname !== '/' && u.pathname !== '') || u.search !== '' || u.username !== '')
    throw new UsageError(`--upstream names a server (http://host:port), not a path: "${v}"`);
  return u;
}

export interface StartedEdge {
  edge: RunningEdge;
  config: LoadedEdgeConfig;
  factory: HttpFilterFactory;
  /** The plugin's metrics, named as Envoy's /stats/prometheus names them (edge-stats.ts). */
  registry: Registry;
  /** The admin listener (--admin-port); undefined without one. */
  admin: RunningAdmin | undefined;
  /** Stops the proxy, then the plugin (root context shutdown). */
  close(): Promise<void>;
}

export interface StartEdgeOptions {
  /** Where a relative module path resolves (Envoy: its working directory). */
  cwd?: string;
  /** Request log; none when undefined. */
  log?: (line: string) => void;
  /** The plugin's log lines (default: stderr). */
  pluginLog?: (level: LogLevel, line: string) => void;
  /** The proxy-wasm host; default host-glue/proxy-wasm/host.ts. Tests and benches may pass another. */
  createPlugin?: CreatePlugin;
}

/** Loads the configuration and the plugin, applies the overrides and starts listening. */
/** The envoy.yaml and its wasm filter, loaded through the proxy-wasm host (one worker VM). */
export async function loadEdgeFilter(
  file: string,
  o: {
    cwd?: string | undefined;
    logLevel: LogLevel;
    pluginLog?: ((level: LogLevel, line: string) => void) | undefined;
    createPlugin?: CreatePlugin | undefined;
  },
): Promise<{ config: LoadedEdgeConfig; factory: HttpFilterFactory }> {
  const config = await loadEdgeConfig(file, { cwd: o.cwd });
  const createPlugin = o.createPlugin ?? defaultHost();
  const factory = await createPlugin({
    wasm: config.wasm,
    name: config.plugin.name,
    rootId: config.plugin.rootId,
    vmId: config.plugin.vmId,
    vmConfiguration: config.plugin.vmConfiguration,
    pluginConfiguration: config.plugin.pluginConfiguration,
    failurePolicy: config.plugin.failurePolicy,
    ...(config.plugin.reloadBackoffMs !== undefined ? { reloadBackoffMs: config.plugin.reloadBackoffMs } : {}),
    logLevel: o.logLevel,
    ...(o.pluginLog !== undefined ? { log: o.pluginLog } : {}),
  });
  return { config, factory };
}

export async function startEdge(a: EdgeArgs, o: StartEdgeOptions = {}): Promise<StartedEdge> {
  const loaded = await loadEdgeFilter(a.config, {
    cwd: o.cwd,
    logLevel: a.logLevel,
    pluginLog: o.pluginLog,
    createPlugin: o.createPlugin,
  });
  const config = applyOverrides(loaded.config, a);
  const factory = loaded.factory;
  let edge: RunningEdge;
  try {
    edge = await startEdgeProxy({
      factory,
      config,
      host: config.listener.host,
      port: config.listener.port,
      log: o.log,
    });
  } catch (e) {
    await factory.shutdown();
    throw listenError(e, config.listener.host, config.listener.port, config.file, '--port');
  }
  const registry = new Registry();
  registerPluginStats(registry, factory, config.stats, { warn: o.log });
  let admin: RunningAdmin | undefined;
  if (a.adminPort !== undefined) {
    const host = config.admin?.host ?? '127.0.0.1';
    try {
      admin = await startEdgeAdmin({ host, port: a.adminPort, registry, log: o.log });
    } catch (e) {
      await edge.close();
      await factory.shutdown();
      throw listenError(e, host, a.adminPort, config.file, '--admin-port');
    }
  }
  return {
    edge,
    config,
    factory,
    registry,
    admin,
    close: async () => {
      await admin?.close();
      await edge.close();
      await factory.shutdown();
    },
  };
}

/** A listening failure as the configuration error it is (exit 1), or the error itself. */
function listenError(e: unknown, host: string, port: number, file: string, option: string): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new EdgeConfigError(
      `cannot listen on ${host}:${port}: ${code}${code === 'EADDRINUSE' ? ` (something already listens there: pick another with ${option})` : ''}`,
      file,
      undefined,
    );
  }
  return e;
}

function defaultHost(): CreatePlugin {
  // Loaded on use, like the other commands' heavy modules.
  return (require('../../host-glue/proxy-wasm/host') as { createPlugin: CreatePlugin }).createPlugin;
}

function applyOverrides(c: LoadedEdgeConfig, a: EdgeArgs): LoadedEdgeConfig {
  const listener = { ...c.listener, host: a.host ?? c.listener.host, port: a.port ?? c.listener.port };
  let clusters = c.clusters;
  if (a.upstream !== undefined) {
    const endpoint = { host: a.upstream.hostname.replace(/^\[|\]$/g, ''), port: Number(a.upstream.port || 80) };
    clusters = new Map([...c.clusters].map(([name, cluster]) => [name, { ...cluster, endpoints: [endpoint] }]));
  }
  return { ...c, listener, clusters };
}

/** What `origin edge` prints once listening: where, what it loaded, where requests go. */
export function describeEdge(s: StartedEdge, a: EdgeArgs): string[] {
  const c = s.config;
  const p = c.plugin;
  const module = p.code.kind === 'file' ? p.code.filename : '(inline_bytes)';
  const digest = createHash('sha256').update(c.wasm).digest('hex').slice(0, 16);
  const routes = c.virtualHosts.flatMap((vh) =>
    vh.routes.map((r) => `${vh.domains.join(',')} ${r.match.kind} ${r.match.value} → ${r.cluster}`),
  );
  const clusters = [...c.clusters.values()].map(
    (cl) =>
      `${cl.name} → ${cl.endpoints.map((e) => `${e.host}:${e.port}`).join(', ')}${a.upstream !== undefined ? ' (--upstream)' : ''}`,
  );
  return [
    `origin edge listening on ${s.edge.url}/ (Ctrl-C stops)`,
    `  config         ${c.file} (listener ${c.listener.name || '(unnamed)'}${a.port !== undefined || a.host !== undefined ? ', address from the command line' : ''})`,
    `  plugin         name "${p.name}", root_id "${p.rootId}", vm_id "${p.vmId}", ${p.failurePolicy}`,
    `  module         ${module} (${c.wasm.byteLength} bytes, sha256 ${digest}…)`,
    `  configuration  ${p.pluginConfigurationType}, ${p.pluginConfiguration.byteLength} bytes`,
    `  routes         ${routes.join('; ')}`,
    `  clusters       ${clusters.join('; ')}`,
    ...(s.admin !== undefined
      ? [`  admin          ${s.admin.url}/stats/prometheus and /metrics (the plugin's metrics)`]
      : []),
  ];
}

export async function runEdge(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const a = parseEdgeArgs(argv);
  if (a.help) {
    out.write(EDGE_USAGE);
    return 0;
  }
  let started: StartedEdge;
  try {
    started = await startEdge(a, {
      log: a.quiet ? undefined : (line) => err.write(`${line}\n`),
      pluginLog: (_level, line) => err.write(`${line}\n`),
    });
  } catch (e) {
    if (e instanceof EdgeConfigError) {
      err.write(`origin edge: error: ${e.message}\n`);
      return 1;
    }
    if (e instanceof PluginLoadError) {
      err.write(`origin edge: error: ${a.config}: the wasm filter does not load: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  for (const w of started.config.warnings) err.write(`origin edge: warning: ${w}\n`);
  out.write(`${describeEdge(started, a).join('\n')}\n`);
  const { untilSignal } = require('./serve-command') as typeof import('./serve-command');
  await untilSignal();
  await started.close();
  return 0;
}
