// One VM: one instance of the module with its own memory and globals, like one cpp-host WasmBase
// on one Envoy worker. It owns what cpp-host keeps per VM:
//
//   * the import object, every hostcall wrapped with the restricted-callback check (§1.1) and the
//     `[vm->host]` trace (§5.2);
//   * the calls into the module: current context saved/restored, `[host->vm]` trace, and a trap
//     (any exception) marks the VM failed with "Function: <name> failed: <message>" plus the
//     in-VM backtrace (§5.1, §6.15) — the caller sees 0 / nothing and checks `failState`;
//   * `_initialize` (+ `main(0,0)`) or `_start` under the start-up allow-list (§6.5);
//   * the allocator, malloc first, under its allow-list, and copying results into the module
//     (ptr/size pairs, 0/0 for empty values, §3.2);
//   * context ids (0 = VM context, root = 1, streams 2, 3, ...), the effective context (§2.3)
//     and the after-VM-call actions (§6.11).

import { FailState, MALLOC_ALLOWED, START_ALLOWED, type ModuleFunctionName } from './abi';
import { RootContext, VmContext, type ContextBase, type PluginInfo } from './context';
import { MetricIds } from './metrics';
import { ENV_HOSTCALLS, type Hostcall } from './hostcalls';
import type { CheckedModule } from './loader';
import { functionAt } from './wasm-binary';
import { printValues } from './log';
import { GuestMemory } from './memory';
import { WASI_HOSTCALLS } from './wasi';

/** A trap raised by the host (restricted_callback, ...): V8 reports it as an Error. */
export class HostTrap extends Error {
  override name = 'Error';
}

type ExportFn = (...args: number[]) => number | undefined;

interface CallSiteLike {
  getFileName(): string | null;
  getPosition(): number;
}

/**
 * Module byte offsets of the wasm frames of a trap, innermost first. V8 keeps structured frames
 * until `stack` is first read; reading them as CallSites avoids depending on how the embedder
 * formats stacks (source-map-support, installed by jest, rewrites wasm frames).
 */
function wasmFrameOffsets(err: Error): number[] {
  const saved = Error.prepareStackTrace;
  let stack: unknown;
  try {
    Error.prepareStackTrace = (_e, sites) => sites;
    stack = err.stack;
  } finally {
    Error.prepareStackTrace = saved;
  }
  if (Array.isArray(stack)) {
    return (stack as CallSiteLike[])
      .filter((s) => s.getFileName()?.startsWith('wasm://') === true)
      .map((s) => s.getPosition());
  }
  return [...String(stack ?? '').matchAll(/wasm-function\[\d+\]:0x([0-9a-f]+)/g)].map((m) => parseInt(m[1]!, 16));
}

/**
 * The callbacks through which a module can see or change a stream's response once its request
 * went upstream: the response's own, on_log (reads the response map), and those that run outside
 * any stream's callbacks and may reach it through proxy_set_effective_context. A module with none
 * of them leaves responses alone; on_done and on_delete run after the response.
 */
const RESPONSE_REACHING: readonly ModuleFunctionName[] = [
  'proxy_on_response_headers',
  'proxy_on_response_body',
  'proxy_on_response_trailers',
  'proxy_on_response_metadata',
  'proxy_on_log',
  'proxy_on_tick',
  'proxy_on_http_call_response',
  'proxy_on_grpc_receive',
  'proxy_on_grpc_close',
  'proxy_on_grpc_receive_initial_metadata',
  'proxy_on_grpc_receive_trailing_metadata',
  'proxy_on_queue_ready',
  'proxy_on_foreign_function',
];

/** Context ids are 0 (the VM context) and up: negative keys mark free slots. */
const EMPTY_SLOT = -1;
const DEAD_SLOT = -2;
const MIN_SLOTS = 64;

/**
 * The live contexts by id (a Map's get/set/delete/has/size): an open-addressing table with linear
 * probing, slot = id & mask. Neither a Map nor a dictionary object: a stream context is added and
 * removed per request under ever-new ids. A Map keeps rebuilding its table, each obsolete table
 * linked to its successor (for iterators); once one is promoted, that chain keeps later tables and
 * their streams alive through young-generation collections (measured: ~2 kB promoted per request).
 * A dictionary object re-hashes on those inserts and deletes, ~0.27 µs a pair. Ids are handed out
 * in order, so the live ones sit in neighbouring slots and a lookup is one or two probes. A delete
 * leaves a tombstone (shifting the run back would walk every live neighbour); the table is
 * rebuilt without them once live and dead slots fill half of it.
 */
export class ContextTable {
  private keys: number[] = new Array<number>(MIN_SLOTS).fill(EMPTY_SLOT);
  private values: (ContextBase | undefined)[] = new Array<ContextBase | undefined>(MIN_SLOTS).fill(undefined);
  private mask = MIN_SLOTS - 1;
  private count = 0;
  private dead = 0;

  get size(): number {
    return this.count;
  }

  private slot(id: number): number {
    if (!(id >= 0)) return -1;
    const keys = this.keys;
    const mask = this.mask;
    for (let i = id & mask; ; i = (i + 1) & mask) {
      const k = keys[i]!;
      if (k === id) return i;
      if (k === EMPTY_SLOT) return -1;
    }
  }

  get(id: number): ContextBase | undefined {
    const i = this.slot(id);
    return i < 0 ? undefined : this.values[i];
  }

  has(id: number): boolean {
    return this.slot(id) >= 0;
  }

  set(id: number, context: ContextBase): void {
    if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`context id ${id}`);
    const found = this.slot(id);
    if (found >= 0) {
      this.values[found] = context;
      return;
    }
    // Live and dead slots under half the table: probe runs stay short and always end.
    if ((this.count + this.dead + 1) * 2 > this.keys.length)
      this.rebuild((this.count + 1) * 4 > this.keys.length ? this.keys.length * 2 : this.keys.length);
    const keys = this.keys;
    const mask = this.mask;
    let i = id & mask;
    while (keys[i] !== EMPTY_SLOT && keys[i] !== DEAD_SLOT) i = (i + 1) & mask;
    if (keys[i] === DEAD_SLOT) this.dead--;
    keys[i] = id;
    this.values[i] = context;
    this.count++;
  }

  delete(id: number): boolean {
    const i = this.slot(id);
    if (i < 0) return false;
    this.keys[i] = DEAD_SLOT;
    this.values[i] = undefined;
    this.count--;
    this.dead++;
    return true;
  }

  /** The live entries into a table of `capacity` slots, without tombstones. */
  private rebuild(capacity: number): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    this.keys = new Array<number>(capacity).fill(EMPTY_SLOT);
    this.values = new Array<ContextBase | undefined>(capacity).fill(undefined);
    this.mask = capacity - 1;
    this.dead = 0;
    for (let i = 0; i < oldKeys.length; i++) {
      const id = oldKeys[i]!;
      if (id < 0) continue;
      let j = id & this.mask;
      while (this.keys[j] !== EMPTY_SLOT) j = (j + 1) & this.mask;
      this.keys[j] = id;
      this.values[j] = oldValues[i];
    }
  }
}

export class WasmVm {
  failState = FailState.Ok;
  /** The first failure message (what refused a load, or what failed the VM). */
  failure: string | null = null;
  /** cpp-host stop_iteration_: a local reply was sent during the current callback (§1.2). */
  stopIteration = false;
  readonly contexts = new ContextTable();
  /** The module exports a callback that can see or change a response (RESPONSE_REACHING). */
  reachesResponses = true;
  memory: GuestMemory = new GuestMemory(new WebAssembly.Memory({ initial: 0 }));
  readonly vmContext: VmContext;
  /** This VM's custom metric ids (proxy_define_metric), naming stats of the plugin's store. */
  readonly metrics: MetricIds;
  private root: RootContext | null = null;
  private nextContextId = 1;
  private current: ContextBase | null = null;
  private effectiveId = 0;
  private allowed: ReadonlySet<string> | null = null;
  private readonly afterCall: Array<() => void> = [];
  private readonly exports = new Map<ModuleFunctionName, ExportFn>();
  private readonly failListeners: Array<(state: FailState) => void> = [];
  private disposed = false;

  constructor(
    readonly checked: CheckedModule,
    readonly plugin: PluginInfo,
  ) {
    this.vmContext = new VmContext(this, plugin);
    this.metrics = new MetricIds(plugin.stats);
  }

  get rootContext(): RootContext {
    if (this.root === null) throw new Error('no root context yet');
    return this.root;
  }

  /** Links and instantiates (a start section runs here); throws what instantiation throws. */
  instantiate(): void {
    const instance = new WebAssembly.Instance(this.checked.module, this.buildImports());
    for (const value of Object.values(instance.exports)) {
      if (value instanceof WebAssembly.Memory) {
        this.memory = new GuestMemory(value);
        break;
      }
    }
    for (const name of this.checked.functions) this.exports.set(name, instance.exports[name] as ExportFn);
    this.reachesResponses = RESPONSE_REACHING.some((name) => this.exports.has(name));
  }

  private buildImports(): WebAssembly.Imports {
    const imports: Record<string, Record<string, WebAssembly.ImportValue>> = {};
    for (const i of this.checked.layout.imports) {
      const ns = (imports[i.module] ??= {});
      if (i.kind === 'function') {
        ns[i.name] = this.hostFunction(i.module, i.name, i.type?.params.length ?? -1);
      } else if (i.kind === 'memory') {
        const { min, max, shared } = i.limits!;
        const memory = new WebAssembly.Memory(
          max === undefined ? { initial: min } : { initial: min, maximum: max, shared },
        );
        this.memory = new GuestMemory(memory);
        ns[i.name] = memory;
      } else if (i.kind === 'table') {
        const { min, max } = i.limits!;
        ns[i.name] = new WebAssembly.Table(
          max === undefined ? { element: 'anyfunc', initial: min } : { element: 'anyfunc', initial: min, maximum: max },
        );
      }
    }
    return imports;
  }

  private hostFunction(
    module: string,
    name: string,
    arity: number,
  ): (...args: Array<number | bigint>) => number | void {
    const key = `${module}.${name}`;
    const impl: Hostcall | undefined = module === 'env' ? ENV_HOSTCALLS[name] : WASI_HOSTCALLS[name];
    if (impl === undefined) throw new Error(`no implementation for registered hostcall ${key}`);
    const log = this.plugin.log;
    const enter = (args: ArrayLike<number | bigint>): void => {
      if (log.tracing) log.trace(`[vm->host] ${key}(${printValues(Array.from(args))})`);
      if (this.current === null) {
        // §1.1: a start section runs before any context exists; Envoy would dereference null.
        throw new HostTrap(`${key} called from the wasm start section, before any context exists (Envoy would crash)`);
      }
      if (this.allowed !== null && !this.allowed.has(key)) throw new HostTrap('restricted_callback');
    };
    const leave = (result: number | undefined | void): number | void => {
      if (log.tracing) log.trace(`[vm<-host] ${key} return: ${result === undefined ? 'void' : result >>> 0}`);
      return result;
    };
    const f = impl as (vm: WasmVm, ...args: Array<number | bigint>) => number | undefined | void;
    // Fixed-arity wrappers for the hot HTTP calls (no rest array, no spread per call); the
    // checks and the trace are the same as the generic one below.
    type A = number | bigint;
    switch (arity) {
      case 1:
        return (a: A) => {
          if (log.tracing || this.current === null || this.allowed !== null) enter([a]);
          return leave(f(this, a));
        };
      case 3:
        return (a: A, b: A, c: A) => {
          if (log.tracing || this.current === null || this.allowed !== null) enter([a, b, c]);
          return leave(f(this, a, b, c));
        };
      case 5:
        return (a: A, b: A, c: A, d: A, e: A) => {
          if (log.tracing || this.current === null || this.allowed !== null) enter([a, b, c, d, e]);
          return leave(f(this, a, b, c, d, e));
        };
      default:
        return (...args: A[]) => {
          enter(args);
          return leave(f(this, ...args));
        };
    }
  }

  /** cpp-host WasmBase::startVm (§6.5). */
  start(): boolean {
    this.allowed = START_ALLOWED;
    try {
      if (this.has('_initialize')) {
        this.callVoid(this.vmContext, '_initialize');
        if (this.failState === FailState.Ok) {
          if (this.has('main')) this.callWord(this.vmContext, 'main', 0, 0);
          else if (this.has('__main_void')) this.callWord(this.vmContext, '__main_void');
        }
      } else if (this.has('_start')) {
        this.callVoid(this.vmContext, '_start');
      }
    } finally {
      this.allowed = null;
    }
    return this.failState === FailState.Ok;
  }

  createRootContext(): RootContext {
    this.root = new RootContext(this, this.plugin, this.allocContextId());
    return this.root;
  }

  /** Monotonic, never reused (§1.3 item 4). */
  allocContextId(): number {
    return this.nextContextId++;
  }

  has(name: ModuleFunctionName): boolean {
    return this.exports.has(name);
  }

  callWord(
    ctx: ContextBase,
    name: ModuleFunctionName,
    a?: number,
    b?: number,
    c?: number,
    d?: number,
    e?: number,
  ): number {
    return this.call(ctx, name, a, b, c, d, e) ?? 0;
  }

  callVoid(
    ctx: ContextBase,
    name: ModuleFunctionName,
    a?: number,
    b?: number,
    c?: number,
    d?: number,
    e?: number,
  ): void {
    this.call(ctx, name, a, b, c, d, e);
  }

  /** Up to five i32 arguments (every proxy_on_* callback); undefined ones are not passed. */
  private call(
    ctx: ContextBase,
    name: ModuleFunctionName,
    a?: number,
    b?: number,
    c?: number,
    d?: number,
    e?: number,
  ): number | undefined {
    const fn = this.exports.get(name);
    if (fn === undefined || this.disposed) return undefined;
    const savedCurrent = this.current;
    const savedEffective = this.effectiveId;
    this.current = ctx;
    this.effectiveId = 0;
    const log = this.plugin.log;
    if (log.tracing) log.trace(`[host->vm] ${name}(${printValues([a, b, c, d, e].filter((x) => x !== undefined))})`);
    try {
      const result =
        e !== undefined
          ? fn(a!, b!, c!, d!, e)
          : d !== undefined
            ? fn(a!, b!, c!, d)
            : c !== undefined
              ? fn(a!, b!, c)
              : b !== undefined
                ? fn(a!, b)
                : a !== undefined
                  ? fn(a)
                  : fn();
      if (log.tracing) log.trace(`[host<-vm] ${name} return: ${result === undefined ? 'void' : result >>> 0}`);
      return result === undefined ? undefined : result >>> 0;
    } catch (err) {
      this.fail(FailState.RuntimeError, this.failMessage(name, err));
      return undefined;
    } finally {
      this.current = savedCurrent;
      this.effectiveId = savedEffective;
    }
  }

  /** "Function: <name> failed: Uncaught RuntimeError: unreachable" + backtrace (V8::getFailMessage). */
  private failMessage(name: string, e: unknown): string {
    const err = e instanceof Error ? e : new Error(String(e));
    const message = `Function: ${name} failed: Uncaught ${err.name}: ${err.message}`;
    const layout = this.checked.layout;
    if (layout.functionNames.size === 0) return message;
    const lines = wasmFrameOffsets(err).map((offset, i) => {
      const index = functionAt(layout, offset);
      const fname =
        index === undefined ? 'unknown' : (layout.functionNames.get(index) ?? `unknown(function index:${index})`);
      return `${String(i).padStart(3)}:  0x${offset.toString(16)} - ${fname}`;
    });
    return lines.length === 0 ? message : [message, 'Proxy-Wasm plugin in-VM backtrace:', ...lines].join('\n');
  }

  fail(state: FailState, message: string): void {
    this.plugin.log.error(message);
    this.failure ??= message;
    const first = this.failState === FailState.Ok;
    this.failState = state;
    this.root?.stopTicks();
    if (first) for (const listener of this.failListeners) listener(state);
  }

  onFail(listener: (state: FailState) => void): void {
    this.failListeners.push(listener);
  }

  /** cpp-host contextOrEffectiveContext(). */
  get context(): ContextBase {
    if (this.effectiveId !== 0) {
      const effective = this.contexts.get(this.effectiveId);
      if (effective !== undefined) return effective;
    }
    return this.current!;
  }

  /** proxy_set_effective_context: lasts until the current call into the module returns. */
  setEffectiveContext(id: number): boolean {
    if (!this.contexts.has(id)) return false;
    this.effectiveId = id;
    return true;
  }

  addAfterCallAction(action: () => void): void {
    this.afterCall.push(action);
  }

  /** cpp-host DeferAfterCallActions around a callback: reset the stop flag, run queued actions. */
  withAfterCallActions<T>(fn: () => T): T {
    try {
      return fn();
    } finally {
      this.afterCallActions();
    }
  }

  /** The end of a DeferAfterCallActions scope (for callers that inline the try/finally). */
  afterCallActions(): void {
    this.stopIteration = false;
    while (this.afterCall.length > 0) this.afterCall.shift()!();
  }

  /** cpp-host WasmBase::allocMemory: 0 on failure (the hostcall then answers INVALID_MEMORY_ACCESS). */
  allocate(size: number): number {
    const saved = this.allowed;
    this.allowed = MALLOC_ALLOWED;
    let pointer: number;
    try {
      pointer = this.callWord(this.vmContext, this.checked.allocator, size);
    } finally {
      this.allowed = saved;
    }
    return pointer !== 0 && this.memory.inBounds(pointer, size) ? pointer : 0;
  }

  /** cpp-host copyToPointerSize (§3.2): empty -> 0/0 without allocating. */
  copyOut(data: Uint8Array, ptrPtr: number, sizePtr: number): boolean {
    let pointer = 0;
    if (data.length > 0) {
      pointer = this.allocate(data.length);
      // The allocator may have grown memory: GuestMemory re-reads memory.buffer on every access.
      if (pointer === 0 || !this.memory.write(pointer, data)) return false;
    }
    return this.memory.setU32(ptrPtr, pointer) && this.memory.setU32(sizePtr, data.length);
  }

  /** copyOut of a latin1 string (a HeaderList key or value): one byte per char, no copy in between. */
  copyOutLatin1(text: string, ptrPtr: number, sizePtr: number): boolean {
    let pointer = 0;
    if (text.length > 0) {
      pointer = this.allocate(text.length);
      if (pointer === 0 || !this.memory.writeLatin1(pointer, text)) return false;
    }
    return this.memory.setU32(ptrPtr, pointer) && this.memory.setU32(sizePtr, text.length);
  }

  dispose(): void {
    this.root?.stopTicks();
    this.disposed = true;
  }
}
