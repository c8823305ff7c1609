// A small reader for the sections of a wasm binary that decide whether Envoy loads a module:
// types, imports, functions, exports, start, memory (WebAssembly core spec §5.5). JS can list
// imports and exports but not their types, and Envoy type-checks both
// (docs/specs.md ABI §1.1, §2.3), so the tests read the bytes themselves.

export type ValueType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128' | 'funcref' | 'externref';

export interface FuncType {
  params: ValueType[];
  results: ValueType[];
}

export interface WasmImport {
  module: string;
  name: string;
  kind: 'func' | 'table' | 'memory' | 'global' | 'tag';
  /** For functions: the signature. */
  type?: FuncType;
}

export interface WasmExport {
  name: string;
  kind: 'func' | 'table' | 'memory' | 'global' | 'tag';
  index: number;
  /** For functions: the signature. */
  type?: FuncType;
}

export interface WasmModuleInfo {
  sectionIds: number[];
  types: FuncType[];
  imports: WasmImport[];
  exports: WasmExport[];
  /** Index of the start function, if the module has a start section (id 8). */
  start: number | null;
  /** Memories defined (not imported) by the module. */
  memories: number;
}

const VALUE_TYPES: Record<number, ValueType> = {
  0x7f: 'i32',
  0x7e: 'i64',
  0x7d: 'f32',
  0x7c: 'f64',
  0x7b: 'v128',
  0x70: 'funcref',
  0x6f: 'externref',
};
const KINDS = ['func', 'table', 'memory', 'global', 'tag'] as const;

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
    if (this.at >= this.end) throw new Error(`wasm: read past the end at ${this.at}`);
    return this.bytes[this.at++]!;
  }

  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) throw new Error(`wasm: LEB128 too long at ${this.at}`);
    }
  }

  name(): string {
    const length = this.u32();
    const text = Buffer.from(this.bytes.subarray(this.at, this.at + length)).toString('utf8');
    this.at += length;
    return text;
  }

  valueType(): ValueType {
    const code = this.byte();
    const type = VALUE_TYPES[code];
    if (type === undefined) throw new Error(`wasm: unknown value type 0x${code.toString(16)} at ${this.at - 1}`);
    return type;
  }

  limits(): void {
    const flags = this.byte();
    this.u32();
    if (flags & 1) this.u32();
  }
}

/** Reads the sections Envoy cares about from a wasm binary. */
export function readWasmModule(bytes: Uint8Array): WasmModuleInfo {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new Error('wasm: missing \\0asm magic');
  }
  const info: WasmModuleInfo = { sectionIds: [], types: [], imports: [], exports: [], start: null, memories: 0 };
  const functionTypeIndices: number[] = []; // of defined functions
  const importedFunctionTypes: number[] = [];
  const outer = new Reader(bytes, 8);
  while (!outer.done) {
    const id = outer.byte();
    const size = outer.u32();
    const r = new Reader(bytes, outer.at, outer.at + size);
    outer.at += size;
    info.sectionIds.push(id);
    switch (id) {
      case 1: {
        // type
        for (let n = r.u32(); n > 0; n--) {
          const form = r.byte();
          if (form !== 0x60) throw new Error(`wasm: type form 0x${form.toString(16)} is not func`);
          const params: ValueType[] = [];
          for (let p = r.u32(); p > 0; p--) params.push(r.valueType());
          const results: ValueType[] = [];
          for (let q = r.u32(); q > 0; q--) results.push(r.valueType());
          info.types.push({ params, results });
        }
        break;
      }
      case 2: {
        // import
        for (let n = r.u32(); n > 0; n--) {
          const module = r.name();
          const name = r.name();
          const kind = KINDS[r.byte()];
          if (kind === undefined) throw new Error('wasm: unknown import kind');
          const entry: WasmImport = { module, name, kind };
          if (kind === 'func') {
            const typeIndex = r.u32();
            importedFunctionTypes.push(typeIndex);
            entry.type = info.types[typeIndex];
          } else if (kind === 'table') {
            r.valueType();
            r.limits();
          } else if (kind === 'memory') {
            r.limits();
          } else if (kind === 'global') {
            r.valueType();
            r.byte();
          } else {
            r.byte();
            r.u32();
          }
          info.imports.push(entry);
        }
        break;
      }
      case 3: // function
        for (let n = r.u32(); n > 0; n--) functionTypeIndices.push(r.u32());
        break;
      case 5: // memory
        info.memories = r.u32();
        break;
      case 7: {
        // export
        for (let n = r.u32(); n > 0; n--) {
          const name = r.name();
          const kind = KINDS[r.byte()];
          if (kind === undefined) throw new Error('wasm: unknown export kind');
          const index = r.u32();
          info.exports.push({ name, kind, index });
        }
        break;
      }
      case 8: // start
        info.start = r.u32();
        break;
      default:
        break;
    }
  }
  // Function index space: imported functions first, then defined ones.
  const allFunctionTypes = [...importedFunctionTypes, ...functionTypeIndices];
  for (const e of info.exports) {
    if (e.kind === 'func') {
      const typeIndex = allFunctionTypes[e.index];
      e.type = typeIndex === undefined ? undefined : info.types[typeIndex];
    }
  }
  return info;
}

/** "(i32,i32)->i32" style, as in the reference tables. */
export function signature(type: FuncType | undefined): string {
  if (type === undefined) return '?';
  return `(${type.params.join(',')})->${type.results.length === 0 ? '()' : type.results.join(',')}`;
}
