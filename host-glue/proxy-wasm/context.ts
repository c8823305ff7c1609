// Contexts as cpp-host/Envoy keep them: the one interface the hostcalls talk to (maps, buffers,
// stream control, properties), with Envoy's answers for a context that has no HTTP stream, and
// the root (plugin) context with its start-up, tick and shutdown calls (§1.3, §2.4, §2.5).
// The HTTP stream context (stream.ts) overrides the stream parts.

import { BufferType, FailState, MapType, StreamType, WasmResult } from './abi';
import type { FailurePolicy, HeaderList } from './http-filter';
import type { PluginLog } from './log';
import type { CustomStats } from './metrics';
import type { QueueOwner } from './shared-state';
import { lookupProperty, type StreamFacts } from './properties';
import type { WasmVm } from './vm';

/** What the host knows of the plugin (envoy.extensions.wasm.v3.PluginConfig). */
export interface PluginInfo {
  name: string;
  rootId: string;
  vmId: string;
  vmConfiguration: Uint8Array;
  pluginConfiguration: Uint8Array;
  failurePolicy: FailurePolicy;
  log: PluginLog;
  /** Custom metrics, shared by every VM of the plugin as Envoy's stats store is (metrics.ts). */
  stats: CustomStats;
}

/** A buffer as proxy_get_buffer_bytes / proxy_set_buffer_bytes see it (§2.5). */
export interface BufferRef {
  readonly bytes: Uint8Array;
  copyFrom(start: number, length: number, data: Uint8Array): WasmResult;
}

/** cpp-host BufferBase over a string: readable, never writable (BAD_ARGUMENT). */
export const constBuffer = (bytes: Uint8Array): BufferRef => ({ bytes, copyFrom: () => WasmResult.BadArgument });

const EMPTY = new Uint8Array(0);

/** The local reply a plugin asked for (proxy_send_local_response arguments, §2.6). */
export interface LocalReplyArgs {
  status: number;
  details: string;
  body: Uint8Array;
  headers: HeaderList;
  grpcStatus: number;
}

export abstract class ContextBase {
  readonly id: number;
  /** Plugin configuration readable (on_configure and the root's first on_context_create, §2.5). */
  tempPlugin = false;
  /** cpp-host in_vm_context_created_. */
  inVmContextCreated = false;

  constructor(
    readonly vm: WasmVm,
    readonly plugin: PluginInfo,
    id: number,
  ) {
    this.id = id;
    vm.contexts.set(id, this);
  }

  abstract get root(): RootContext;

  /** What `wasm log` lines from this context carry (log.ts): a stream's is the plugin's prefix. */
  get logPrefix(): string {
    return this.plugin.log.streamPrefix;
  }

  /** Envoy Context::getMap: the writable map, null when not available in this callback. */
  getMap(_type: MapType): HeaderList | null {
    return null;
  }

  /** Envoy Context::getConstMap: readable map (access-log maps during on_log). */
  getConstMap(_type: MapType): HeaderList | null {
    return null;
  }

  get accessLogPhase(): boolean {
    return false;
  }

  onHeadersModified(_type: MapType): void {}

  /** Envoy Context::getBuffer; null -> NOT_FOUND. */
  getBuffer(type: BufferType): BufferRef | null {
    switch (type) {
      case BufferType.VmConfiguration:
        return constBuffer(this.plugin.vmConfiguration);
      case BufferType.PluginConfiguration:
        return this.tempPlugin ? constBuffer(this.plugin.pluginConfiguration) : null;
      case BufferType.HttpCallResponseBody:
        return null; // no callout response is ever current (no clusters in this host)
      case BufferType.HttpRequestBody:
      case BufferType.HttpResponseBody:
        return this.bodyBuffer(type) ?? constBuffer(EMPTY);
      default:
        return constBuffer(EMPTY);
    }
  }

  protected bodyBuffer(_type: BufferType.HttpRequestBody | BufferType.HttpResponseBody): BufferRef | null {
    return null;
  }

  /** Without decoder callbacks (root contexts) Envoy ignores the call and returns OK (§2.6). */
  sendLocalResponse(_args: LocalReplyArgs): void {}

  /** Envoy Context::continueStream without stream callbacks: nothing to continue. */
  continueStream(type: StreamType): WasmResult {
    return type === StreamType.Upstream ? WasmResult.Unimplemented : WasmResult.Ok;
  }

  closeStream(_type: StreamType): WasmResult {
    return WasmResult.Ok;
  }

  /** The stream facts properties are read from; null for contexts without a stream. */
  protected streamFacts(): StreamFacts | null {
    return null;
  }

  getProperty(path: Uint8Array): { result: WasmResult; value?: Uint8Array } {
    return lookupProperty(path, { plugin: this.plugin, rootId: this.plugin.rootId, stream: this.streamFacts() });
  }

  /** Envoy Context::setProperty: filter state `wasm.<path>` of the stream; NOT_FOUND without one. */
  setProperty(_path: Uint8Array, _value: Uint8Array): WasmResult {
    return WasmResult.NotFound;
  }

  get failed(): boolean {
    return this.vm.failState !== FailState.Ok;
  }
}

/** The context id 0 cpp-host uses for `_initialize` and the allocator (§1.3 item 4). */
export class VmContext extends ContextBase {
  constructor(vm: WasmVm, plugin: PluginInfo) {
    super(vm, plugin, 0);
  }

  get root(): RootContext {
    return this.vm.rootContext;
  }

  /** cpp-host builds the VM context without a root log prefix: `wasm log: <msg>`. */
  override get logPrefix(): string {
    return '';
  }
}

/** The plugin's root context (id 1 in every VM). */
export class RootContext extends ContextBase implements QueueOwner {
  private tick: NodeJS.Timeout | null = null;
  private doneResolver: (() => void) | null = null;

  get root(): RootContext {
    return this;
  }

  /** cpp-host makeRootLogPrefix: ` <root_id> <vm_id>`, without the plugin name. */
  override get logPrefix(): string {
    return this.plugin.log.rootPrefix;
  }

  /** cpp-host ContextBase::onStart: on_context_create(root, 0) then on_vm_start(root, vm cfg size). */
  onStart(): boolean {
    return this.vm.withAfterCallActions(() => {
      if (this.vm.has('proxy_on_context_create')) {
        this.tempPlugin = true;
        this.vm.callVoid(this, 'proxy_on_context_create', this.id, 0);
        this.tempPlugin = false;
        this.inVmContextCreated = true;
      }
      if (this.failed || !this.vm.has('proxy_on_vm_start')) return !this.failed;
      return this.vm.callWord(this, 'proxy_on_vm_start', this.id, this.plugin.vmConfiguration.length) !== 0;
    });
  }

  /** cpp-host ContextBase::onConfigure: plugin configuration readable only during the call. */
  onConfigure(): boolean {
    if (this.failed) return true;
    if (!this.vm.has('proxy_on_configure')) return true;
    return this.vm.withAfterCallActions(() => {
      this.tempPlugin = true;
      const ok = this.vm.callWord(this, 'proxy_on_configure', this.id, this.plugin.pluginConfiguration.length) !== 0;
      this.tempPlugin = false;
      return ok && !this.failed;
    });
  }

  /** proxy_set_tick_period_milliseconds: a repeating timer on the root context; 0 stops it. */
  setTickPeriod(ms: number): void {
    this.stopTicks();
    if (ms === 0) return;
    this.tick = setInterval(() => this.onTick(), ms);
    this.tick.unref();
  }

  /** proxy_on_queue_ready, posted by an enqueue (never re-entrant, §2.3). */
  notifyQueueReady(token: number): void {
    if (this.failed || !this.vm.has('proxy_on_queue_ready')) return;
    this.vm.withAfterCallActions(() => this.vm.callVoid(this, 'proxy_on_queue_ready', this.id, token));
  }

  stopTicks(): void {
    if (this.tick !== null) clearInterval(this.tick);
    this.tick = null;
  }

  private onTick(): void {
    if (this.failed || !this.vm.has('proxy_on_tick')) {
      this.stopTicks();
      return;
    }
    this.vm.withAfterCallActions(() => this.vm.callVoid(this, 'proxy_on_tick', this.id));
  }

  /**
   * Root shutdown (cpp-host WasmBase::startShutdown): on_done; 1 -> on_delete now, 0 -> wait for
   * the plugin's proxy_done() (bounded by `graceMs`, Envoy drains with its own timeout).
   */
  shutdown(graceMs: number): Promise<void> {
    if (this.failed) {
      this.stopTicks();
      return Promise.resolve();
    }
    const doneNow =
      !this.vm.has('proxy_on_done') ||
      this.vm.withAfterCallActions(() => this.vm.callWord(this, 'proxy_on_done', this.id) !== 0);
    if (doneNow || this.failed) {
      this.onDelete();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.doneResolver = null;
        this.stopTicks();
        resolve();
      }, graceMs);
      timer.unref();
      this.doneResolver = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** proxy_done(): only meaningful while the root waits in on_done (§2.3); NOT_FOUND otherwise. */
  done(): WasmResult {
    const resolve = this.doneResolver;
    if (resolve === null) return WasmResult.NotFound;
    this.doneResolver = null;
    this.vm.addAfterCallAction(() => {
      this.onDelete();
      resolve();
    });
    return WasmResult.Ok;
  }

  private onDelete(): void {
    this.stopTicks();
    if (this.inVmContextCreated && !this.failed && this.vm.has('proxy_on_delete')) {
      this.vm.withAfterCallActions(() => this.vm.callVoid(this, 'proxy_on_delete', this.id));
    }
    this.vm.contexts.delete(this.id);
  }
}
