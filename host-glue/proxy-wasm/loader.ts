// Envoy's load-time checks of a module, in cpp-host's order and with its wording (§6 items 1-4):
//
//   1. parse                 "Failed to parse corrupted Wasm module"      (BytecodeUtil)
//   2. ABI marker            "Missing or unknown Proxy-Wasm ABI version"  (WasmBase::load, §0)
//   3. compile               "Failed to load Wasm bytecode"
//   4. link every import     "Failed to load Wasm module due to a missing import: m.n"
//                            "... due to an import type mismatch: m.n, want: <module's> -> ...,
//                             but host exports: <host's> -> ..."           (V8::link, §2.8)
//   5. look up the exports   "Bad function signature for: <name>, want: ... but the module
//                             exports: ..."                                (getModuleFunctionImpl)
//                            "Wasm module is missing malloc function."     (getFunctions, §1.1)
//
// The result is shared by every VM of the plugin (base, canary, worker): cpp-host re-links each
// clone against the same tables, so the answers cannot differ.

import {
  ABI_MARKERS,
  FailState,
  MODULE_FUNCTIONS,
  hostFunctionTable,
  printValTypes,
  sameSig,
  type AbiVersion,
  type FuncSig,
  type ModuleFunctionName,
} from './abi';
import { WasmBinaryError, readModuleLayout, type ModuleLayout } from './wasm-binary';

/** The reasons Envoy would log, first one first; the load is refused. */
export class LoadFailure extends Error {
  override name = 'LoadFailure';
  constructor(
    readonly failState: FailState,
    readonly reasons: string[],
  ) {
    super(reasons[0]);
  }
}

export interface CheckedModule {
  module: WebAssembly.Module;
  abi: AbiVersion;
  layout: ModuleLayout;
  /** Host functions registered for this ABI (`module.name` -> type). */
  hostFunctions: Map<string, FuncSig>;
  /** Module functions cpp-host binds: present, of the right type, after its lookup rules. */
  functions: Set<ModuleFunctionName>;
  allocator: 'malloc' | 'proxy_on_memory_allocate';
}

/** §0: the first *function* export whose name is an ABI marker decides the version. */
export function abiVersionOf(layout: ModuleLayout): AbiVersion | null {
  for (const e of layout.exports) {
    if (e.kind === 'function' && Object.hasOwn(ABI_MARKERS, e.name)) {
      return ABI_MARKERS[e.name as keyof typeof ABI_MARKERS];
    }
  }
  return null;
}

/** V8::link: the first import Envoy cannot satisfy ends the link. */
function linkError(layout: ModuleLayout, host: Map<string, FuncSig>): string | null {
  for (const i of layout.imports) {
    const key = `${i.module}.${i.name}`;
    if (i.kind === 'global') return `Failed to load Wasm module due to a missing import: ${key}`;
    if (i.kind !== 'function') continue; // imported memory and tables are created for the module
    const want = host.get(key);
    if (want === undefined) return `Failed to load Wasm module due to a missing import: ${key}`;
    if (!sameSig(i.type!, want)) {
      return (
        `Failed to load Wasm module due to an import type mismatch: ${key}, want: ` +
        `${printValTypes(i.type!.params)} -> ${printValTypes(i.type!.results)}, but host exports: ` +
        `${printValTypes(want.params)} -> ${printValTypes(want.results)}`
      );
    }
  }
  return null;
}

/** WasmBase::getFunctions: which exports get bound, and every signature complaint. */
function bindFunctions(layout: ModuleLayout): { functions: Set<ModuleFunctionName>; reasons: string[] } {
  const exported = new Map(layout.exports.filter((e) => e.kind === 'function').map((e) => [e.name, e.type!]));
  const functions = new Set<ModuleFunctionName>();
  const reasons: string[] = [];
  const get = (name: ModuleFunctionName): boolean => {
    const type = exported.get(name);
    if (type === undefined) return false;
    const want = MODULE_FUNCTIONS[name]!;
    if (!sameSig(type, want)) {
      reasons.push(
        `Bad function signature for: ${name}, want: ${printValTypes(want.params)} -> ` +
          `${printValTypes(want.results)}, but the module exports: ${printValTypes(type.params)} -> ` +
          `${printValTypes(type.results)}`,
      );
      return false;
    }
    functions.add(name);
    return true;
  };
  // §1.1: _initialize (then main or __main_void) or else _start; malloc before the allocator alias.
  if (get('_initialize')) {
    if (!get('main')) get('__main_void');
  } else {
    get('_start');
  }
  if (!get('malloc') && !get('proxy_on_memory_allocate')) reasons.push('Wasm module is missing malloc function.');
  const entryPoints = new Set(['_initialize', 'main', '__main_void', '_start', 'malloc', 'proxy_on_memory_allocate']);
  for (const name of Object.keys(MODULE_FUNCTIONS) as ModuleFunctionName[]) {
    if (!entryPoints.has(name)) get(name);
  }
  return { functions, reasons };
}

export async function loadModule(bytes: Uint8Array): Promise<CheckedModule> {
  let layout: ModuleLayout;
  try {
    layout = readModuleLayout(bytes);
  } catch (e) {
    if (!(e instanceof WasmBinaryError)) throw e;
    throw new LoadFailure(FailState.UnableToInitializeCode, ['Failed to parse corrupted Wasm module', e.message]);
  }
  const abi = abiVersionOf(layout);
  if (abi === null)
    throw new LoadFailure(FailState.UnableToInitializeCode, ['Missing or unknown Proxy-Wasm ABI version']);
  if (abi === '0.1.0') {
    // Envoy accepts 0.1.0 with different callback arities and hostcalls; this host does not (§6.1).
    throw new LoadFailure(FailState.UnableToInitializeCode, [
      'Proxy-Wasm ABI 0.1.0 is not supported by this host (only 0.2.0 and 0.2.1)',
    ]);
  }
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(new Uint8Array(bytes));
  } catch (e) {
    throw new LoadFailure(FailState.UnableToInitializeCode, ['Failed to load Wasm bytecode', String(e)]);
  }
  const hostFunctions = hostFunctionTable(abi);
  const link = linkError(layout, hostFunctions);
  if (link !== null) throw new LoadFailure(FailState.UnableToInitializeCode, [link, 'Failed to initialize Wasm code']);
  const { functions, reasons } = bindFunctions(layout);
  if (reasons.length > 0) {
    const missingMalloc = reasons.includes('Wasm module is missing malloc function.') && reasons.length === 1;
    throw new LoadFailure(missingMalloc ? FailState.MissingFunction : FailState.UnableToInitializeCode, [
      ...reasons,
      'Failed to initialize Wasm code',
    ]);
  }
  const allocator = functions.has('malloc') ? 'malloc' : 'proxy_on_memory_allocate';
  return { module, abi, layout, hostFunctions, functions, allocator };
}
