// A reader for the few sections of a wasm binary the loader must see and JavaScript cannot:
// WebAssembly.Module.imports()/exports() give names and kinds but not function types, and a JS
// function satisfies any import type at link time. Envoy's V8 compares types (§1.1, §2.8), so we
// read them here. WebAssembly core spec §5.5 (binary format); only what the checks need.

import type { FuncSig, ValType } from './abi';

export type ExternKind = 'function' | 'table' | 'memory' | 'global';

export interface Limits {
  min: number;
  max?: number;
  shared: boolean;
}

export interface ImportEntry {
  module: string;
  name: string;
  kind: ExternKind;
  /** Function imports. */
  type?: FuncSig;
  /** Memory and table imports (the host must create them). */
  limits?: Limits;
}

export interface ExportEntry {
  name: string;
  kind: ExternKind;
  index: number;
  /** Function exports. */
  type?: FuncSig;
}

export interface ModuleLayout {
  imports: ImportEntry[];
  /** In binary order: cpp-host takes the first ABI marker it meets (§0). */
  exports: ExportEntry[];
  hasStartSection: boolean;
  /** The `name` custom section's function names, for in-VM backtraces (§5.1). */
  functionNames: Map<number, string>;
  /** Where each defined function's body lies in the module (absolute byte offsets). */
  functionBodies: Array<{ index: number; start: number; end: number }>;
}

/** The function whose body contains module byte `offset` (a trap's position), if any. */
export function functionAt(layout: ModuleLayout, offset: number): number | undefined {
  return layout.functionBodies.find((b) => offset >= b.start && offset < b.end)?.index;
}

export class WasmBinaryError extends Error {
  override name = 'WasmBinaryError';
}

const VAL_TYPES: Record<number, ValType> = {
  0x7f: 'i32',
  0x7e: 'i64',
  0x7d: 'f32',
  0x7c: 'f64',
  0x7b: 'v128',
  0x70: 'funcref',
  0x6f: 'externref',
};
const KINDS: ExternKind[] = ['function', 'table', 'memory', 'global'];

/** A bounds-checked cursor; every read names the offset it failed at. */
class Reader {
  constructor(
    private readonly bytes: Uint8Array,
    public at = 0,
    private readonly end = bytes.length,
  ) {}

  get done(): boolean {
    return this.at >= this.end;
  }

  byte(): number {
    if (this.at >= this.end) throw new WasmBinaryError(`unexpected end at offset ${this.at}`);
    return this.bytes[this.at++]!;
  }

  /** Unsigned LEB128, at most 32 bits (§5.2.2). */
  u32(): number {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) throw new WasmBinaryError(`u32 out of range at offset ${this.at}`);
        return result;
      }
    }
    throw new WasmBinaryError(`LEB128 too long at offset ${this.at}`);
  }

  bytesOf(n: number): Uint8Array {
    if (n > this.end - this.at) throw new WasmBinaryError(`${n} bytes past the end at offset ${this.at}`);
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  name(): string {
    return new TextDecoder('utf-8', { fatal: true }).decode(this.bytesOf(this.u32()));
  }

  valType(): ValType {
    const code = this.byte();
    const t = VAL_TYPES[code];
    if (t === undefined)
      throw new WasmBinaryError(`unknown value type 0x${code.toString(16)} at offset ${this.at - 1}`);
    return t;
  }

  limits(): Limits {
    const flags = this.byte();
    const min = this.u32();
    const max = flags & 1 ? this.u32() : undefined;
    return max === undefined ? { min, shared: (flags & 2) !== 0 } : { min, max, shared: (flags & 2) !== 0 };
  }
}

function readTypes(r: Reader): FuncSig[] {
  const types: FuncSig[] = [];
  for (let n = r.u32(); n > 0; n--) {
    const form = r.byte();
    if (form !== 0x60) throw new WasmBinaryError(`type form 0x${form.toString(16)} at offset ${r.at - 1}`);
    const params = Array.from({ length: r.u32() }, () => r.valType());
    const results = Array.from({ length: r.u32() }, () => r.valType());
    types.push({ params, results });
  }
  return types;
}

function readImport(r: Reader, types: FuncSig[]): ImportEntry {
  const module = r.name();
  const name = r.name();
  const kind = KINDS[r.byte()];
  switch (kind) {
    case 'function':
      return { module, name, kind, type: typeAt(types, r.u32(), r.at) };
    case 'table':
      r.valType();
      return { module, name, kind, limits: r.limits() };
    case 'memory':
      return { module, name, kind, limits: r.limits() };
    case 'global':
      r.valType();
      r.byte(); // mutability
      return { module, name, kind };
    default:
      throw new WasmBinaryError(`unknown import kind at offset ${r.at - 1}`);
  }
}

function typeAt(types: FuncSig[], index: number, at: number): FuncSig {
  const t = types[index];
  if (t === undefined) throw new WasmBinaryError(`type index ${index} out of range at offset ${at}`);
  return t;
}

/** `name` custom section, subsection 1 (function names): a name map of index -> name. */
function readFunctionNames(r: Reader, into: Map<number, string>): void {
  while (!r.done) {
    const id = r.byte();
    const size = r.u32();
    const sub = new Reader(r.bytesOf(size));
    if (id !== 1) continue;
    for (let n = sub.u32(); n > 0; n--) into.set(sub.u32(), sub.name());
  }
}

/** Reads the layout of a module; throws WasmBinaryError on anything it cannot parse. */
export function readModuleLayout(bytes: Uint8Array): ModuleLayout {
  const r = new Reader(bytes);
  const magic = r.bytesOf(8);
  if (magic[0] !== 0 || magic[1] !== 0x61 || magic[2] !== 0x73 || magic[3] !== 0x6d || magic[4] !== 1) {
    throw new WasmBinaryError('not a wasm module (bad magic or version)');
  }
  let types: FuncSig[] = [];
  const imports: ImportEntry[] = [];
  const functionTypes: FuncSig[] = [];
  const rawExports: Array<{ name: string; kind: ExternKind; index: number }> = [];
  const functionNames = new Map<number, string>();
  const functionBodies: ModuleLayout['functionBodies'] = [];
  let importedFunctions = 0;
  let hasStartSection = false;
  while (!r.done) {
    const id = r.byte();
    const size = r.u32();
    const base = r.at;
    const section = new Reader(r.bytesOf(size));
    switch (id) {
      case 0: {
        if (section.name() === 'name') {
          try {
            readFunctionNames(section, functionNames);
          } catch {
            functionNames.clear(); // a broken name section only costs the backtrace names
          }
        }
        break;
      }
      case 1:
        types = readTypes(section);
        break;
      case 2:
        for (let n = section.u32(); n > 0; n--) imports.push(readImport(section, types));
        for (const i of imports) if (i.kind === 'function') functionTypes.push(i.type!);
        importedFunctions = functionTypes.length;
        break;
      case 3:
        for (let n = section.u32(); n > 0; n--) functionTypes.push(typeAt(types, section.u32(), section.at));
        break;
      case 7:
        for (let n = section.u32(); n > 0; n--) {
          const name = section.name();
          const kind = KINDS[section.byte()];
          if (kind === undefined) throw new WasmBinaryError(`unknown export kind at offset ${section.at - 1}`);
          rawExports.push({ name, kind, index: section.u32() });
        }
        break;
      case 8:
        hasStartSection = true;
        break;
      case 10:
        for (let n = section.u32(), i = 0; i < n; i++) {
          const bodySize = section.u32();
          const start = base + section.at;
          section.bytesOf(bodySize);
          functionBodies.push({ index: importedFunctions + i, start, end: start + bodySize });
        }
        break;
      default:
        break;
    }
  }
  const exports = rawExports.map((e): ExportEntry => {
    if (e.kind !== 'function') return e;
    return { ...e, type: typeAt(functionTypes, e.index, 0) };
  });
  return { imports, exports, hasStartSection, functionNames, functionBodies };
}
