// createPlugin: what Envoy does with one envoy.filters.http.wasm config on one worker (§1.3,
// §6 items 1-6 and 15):
//
//   load checks   loader.ts (marker, imports, export signatures, allocator) -> PluginLoadError
//   base VM       instantiate + _initialize/_start; a trap or 0 refuses the load
//   canary        a fresh VM: _initialize, on_context_create(1, 0), on_vm_start, on_configure;
//                 a 0 or a trap refuses the configuration; then the canary is discarded
//   worker VM     the same sequence; it serves every stream (newStream -> HttpStream)
//   failure       once the worker's VM failed: FAIL_CLOSED (default) answers every new stream
//                 503 `wasm_fail_stream`; FAIL_OPEN skips the filter; FAIL_RELOAD builds a new
//                 worker VM for the next stream (after a RuntimeError, at most once per backoff)

import { FailState } from './abi';
import type { PluginInfo, RootContext } from './context';
import {
  PluginLoadError,
  type CreatePlugin,
  type HttpFilterFactory,
  type HttpFilterStream,
  type PluginSpec,
  type StreamInfo,
} from './http-filter';
import { LoadFailure, loadModule, type CheckedModule } from './loader';
import { PluginLog } from './log';
import { CUSTOM_STAT_NAMESPACE, CustomStats } from './metrics';
import { BypassStream, FailedStream } from './failed-stream';
import { HttpStream } from './stream';
import { WasmVm } from './vm';

/** How long shutdown() waits for a root that returned 0 from on_done to call proxy_done(). */
const SHUTDOWN_GRACE_MS = 1000;
const DEFAULT_RELOAD_BACKOFF_MS = 1000;

/** A started (and configured) VM, or why Envoy refuses it: the error's message and log lines. */
type BringUp = { vm: WasmVm; root: RootContext | null } | { message: string; log: string[] };

function bringUp(checked: CheckedModule, plugin: PluginInfo, configure: boolean): BringUp {
  const vm = new WasmVm(checked, plugin);
  // vm.fail() has already logged a trap; these are the lines Envoy adds after it.
  const refused = (line: string): BringUp => {
    vm.dispose();
    return { message: vm.failure ?? line, log: [line] };
  };
  try {
    vm.instantiate();
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    vm.dispose();
    return { message: detail, log: [detail, 'Failed to initialize Wasm code'] };
  }
  if (!vm.start()) return refused('Failed to initialize Wasm code');
  if (!configure) return { vm, root: null };
  const root = vm.createRootContext();
  if (!root.onStart()) return refused('Failed to start base Wasm');
  if (!root.onConfigure()) return refused('Failed to configure base Wasm plugin');
  return { vm, root };
}

/** Envoy refuses the filter: log its lines, throw with the first reason. */
function refuse(plugin: PluginInfo, message: string, log: string[]): never {
  for (const line of log) plugin.log.error(line);
  plugin.log.error(`Unable to create Wasm HTTP filter ${plugin.name}`);
  throw new PluginLoadError(message);
}

export class ProxyWasmPlugin implements HttpFilterFactory {
  /** The worker VM and its root context; null if the worker never came up (see below). */
  private worker: { vm: WasmVm; root: RootContext } | null;
  private loadedAt = Date.now();
  private reloadCount = 0;
  private shuttingDown: Promise<void> | null = null;

  constructor(
    private readonly checked: CheckedModule,
    private readonly plugin: PluginInfo,
    worker: { vm: WasmVm; root: RootContext } | null,
    private readonly reloadBackoffMs: number,
  ) {
    this.worker = worker;
  }

  newStream(info: StreamInfo): HttpFilterStream {
    if (this.failState !== FailState.Ok) this.maybeReload();
    if (this.worker === null || this.failState !== FailState.Ok) {
      return this.plugin.failurePolicy === 'FAIL_OPEN' ? new BypassStream() : new FailedStream();
    }
    return new HttpStream(this.worker.vm, this.plugin, info);
  }

  /** §5.1 FAIL_RELOAD: only after a runtime error, at most once per backoff period. */
  private maybeReload(): void {
    if (this.plugin.failurePolicy !== 'FAIL_RELOAD' || this.failState !== FailState.RuntimeError) return;
    if (Date.now() - this.loadedAt < this.reloadBackoffMs) return;
    this.loadedAt = Date.now();
    const next = bringUp(this.checked, this.plugin, true);
    if ('message' in next || next.root === null) {
      if ('log' in next) for (const line of next.log) this.plugin.log.error(line);
      return;
    }
    this.worker?.vm.dispose();
    this.worker = { vm: next.vm, root: next.root };
    this.reloadCount++;
  }

  /** Root context shutdown (§1.3): on_done, then on_delete now or after proxy_done(). Idempotent. */
  shutdown(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return Promise.resolve();
    this.shuttingDown ??= worker.root.shutdown(SHUTDOWN_GRACE_MS).then(() => worker.vm.dispose());
    return this.shuttingDown;
  }

  // Introspection for tests and the CLI (not part of the seam).

  /** The worker VM's FailState (0 = healthy; a worker that never started counts as StartFailed). */
  get failState(): FailState {
    return this.worker === null ? FailState.StartFailed : this.worker.vm.failState;
  }

  /** How many times FAIL_RELOAD replaced the worker VM. */
  get reloads(): number {
    return this.reloadCount;
  }

  /** Contexts alive in the worker VM (VM context and root included). */
  get liveContexts(): number {
    return this.worker?.vm.contexts.size ?? 0;
  }

  /** A custom counter's or gauge's value by the name the plugin defined it with (Envoy's stat is
   * `wasmcustom.<name>`). */
  metric(name: string): bigint | undefined {
    return this.plugin.stats.find(`${CUSTOM_STAT_NAMESPACE}.${name}`)?.value;
  }

  /** The plugin's custom metrics, as Envoy's stats store holds them (exporters read these). */
  get stats(): CustomStats {
    return this.plugin.stats;
  }
}

export const createPlugin: CreatePlugin = async (spec: PluginSpec) => createProxyWasmPlugin(spec);

/** createPlugin with the concrete type (tests use its introspection). */
export async function createProxyWasmPlugin(spec: PluginSpec): Promise<ProxyWasmPlugin> {
  const plugin: PluginInfo = {
    name: spec.name,
    rootId: spec.rootId,
    vmId: spec.vmId,
    vmConfiguration: spec.vmConfiguration,
    pluginConfiguration: spec.pluginConfiguration,
    failurePolicy: spec.failurePolicy,
    log: new PluginLog(spec),
    stats: new CustomStats(),
  };
  let checked: CheckedModule;
  try {
    checked = await loadModule(spec.wasm);
  } catch (e) {
    if (e instanceof LoadFailure) refuse(plugin, e.reasons[0]!, e.reasons);
    throw e;
  }
  // The base VM and the canary decide whether Envoy accepts the configuration at all.
  for (const configure of [false, true]) {
    const up = bringUp(checked, plugin, configure);
    if ('message' in up) refuse(plugin, up.message, up.log);
    up.vm.dispose();
  }
  // A worker that fails after the canary passed is not a refused configuration: the failure
  // policy applies to its requests (§2.8 "If the VM could not be created on a worker").
  const up = bringUp(checked, plugin, true);
  let worker: { vm: WasmVm; root: RootContext } | null = null;
  if ('message' in up) {
    for (const line of up.log) plugin.log.error(line);
    const policy = spec.failurePolicy === 'FAIL_OPEN' ? 'open' : 'closed';
    plugin.log.error(`Plugin configured to fail ${policy} failed to load`);
  } else {
    worker = { vm: up.vm, root: up.root! };
  }
  return new ProxyWasmPlugin(checked, plugin, worker, spec.reloadBackoffMs ?? DEFAULT_RELOAD_BACKOFF_MS);
}
