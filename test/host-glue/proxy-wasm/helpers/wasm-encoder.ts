// A small wasm module encoder for hand-assembled test modules (WebAssembly core spec §5: type,
// import, function, memory, global, export, start, code, data and `name` sections). Enough to
// build exactly the modules Envoy refuses or accepts, without an external tool.

export type V = 'i32' | 'i64' | 'f32' | 'f64';
const VAL: Record<V, number> = { i32: 0x7f, i64: 0x7e, f32: 0x7d, f64: 0x7c };

export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    const done = (n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0);
    out.push(done ? b : b | 0x80);
    if (done) return out;
  }
}

const name = (s: string): number[] => {
  const b = [...Buffer.from(s, 'utf8')];
  return [...uleb(b.length), ...b];
};
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

/** Instruction helpers (opcodes of §5.4). */
export const op = {
  i32: (n: number): number[] => [0x41, ...sleb(n | 0)],
  i64: (n: number): number[] => [0x42, ...sleb(n)],
  call: (f: number): number[] => [0x10, ...uleb(f)],
  drop: [0x1a],
  unreachable: [0x00],
  localGet: (i: number): number[] => [0x20, ...uleb(i)],
  localSet: (i: number): number[] => [0x21, ...uleb(i)],
  i32Eq: [0x46],
  i32Store: (offset = 0): number[] => [0x36, 0x02, ...uleb(offset)],
  i32Load: (offset = 0): number[] => [0x28, 0x02, ...uleb(offset)],
};

interface Func {
  type: number;
  body: number[];
  locals: V[];
}

export class ModuleBuilder {
  private readonly types: string[] = [];
  private readonly imports: number[][] = [];
  private readonly funcs: Func[] = [];
  private readonly exports: number[][] = [];
  private readonly data: number[][] = [];
  private readonly names: Array<[number, string]> = [];
  private importedFuncs = 0;
  private memoryPages: number | null = null;
  private globals: number[][] = [];
  private startFunc: number | null = null;

  private type(params: V[], results: V[]): number {
    const key = `${params.join(',')}->${results.join(',')}`;
    let i = this.types.indexOf(key);
    if (i < 0) i = this.types.push(key) - 1;
    return i;
  }

  /** A function import; returns its function index. */
  importFunc(module: string, field: string, params: V[], results: V[] = ['i32']): number {
    if (this.funcs.length > 0) throw new Error('imports must come before functions');
    this.imports.push([...name(module), ...name(field), 0x00, ...uleb(this.type(params, results))]);
    return this.importedFuncs++;
  }

  importGlobal(module: string, field: string, type: V = 'i32'): this {
    this.imports.push([...name(module), ...name(field), 0x03, VAL[type], 0x00]);
    return this;
  }

  importMemory(module: string, field: string, min: number): this {
    this.imports.push([...name(module), ...name(field), 0x02, 0x00, ...uleb(min)]);
    return this;
  }

  /** A defined function (body without the final `end`); exported under `exportName` if given. */
  func(exportName: string | null, params: V[], results: V[], body: number[], locals: V[] = []): number {
    const index = this.importedFuncs + this.funcs.push({ type: this.type(params, results), body, locals }) - 1;
    if (exportName !== null) this.exportFunc(exportName, index);
    return index;
  }

  exportFunc(exportName: string, index: number): this {
    this.exports.push([...name(exportName), 0x00, ...uleb(index)]);
    return this;
  }

  /** An i32 global exported under `exportName` (e.g. a marker that is not a function). */
  exportedGlobal(exportName: string, value = 0): this {
    const index = this.globals.push([VAL.i32, 0x00, ...op.i32(value), 0x0b]) - 1;
    this.exports.push([...name(exportName), 0x03, ...uleb(index)]);
    return this;
  }

  memory(pages = 1): this {
    this.memoryPages = pages;
    this.exports.push([...name('memory'), 0x02, 0x00]);
    return this;
  }

  dataAt(offset: number, bytes: number[] | Uint8Array): this {
    this.data.push([0x00, ...op.i32(offset), 0x0b, ...uleb(bytes.length), ...bytes]);
    return this;
  }

  start(index: number): this {
    this.startFunc = index;
    return this;
  }

  /** Adds a `name` custom section entry (function index -> name). */
  nameFunc(index: number, functionName: string): this {
    this.names.push([index, functionName]);
    return this;
  }

  bytes(): Uint8Array {
    const types = this.types.map((key) => {
      const [p, r] = key.split('->') as [string, string];
      const list = (s: string): number[] => vec(s === '' ? [] : s.split(',').map((t) => [VAL[t as V]]));
      return [0x60, ...list(p), ...list(r)];
    });
    const out = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
    out.push(...section(1, vec(types)));
    if (this.imports.length > 0) out.push(...section(2, vec(this.imports)));
    out.push(...section(3, vec(this.funcs.map((f) => uleb(f.type)))));
    if (this.memoryPages !== null) out.push(...section(5, vec([[0x00, ...uleb(this.memoryPages)]])));
    if (this.globals.length > 0) out.push(...section(6, vec(this.globals)));
    out.push(...section(7, vec(this.exports)));
    if (this.startFunc !== null) out.push(...section(8, uleb(this.startFunc)));
    const code = this.funcs.map((f) => {
      const locals = vec(f.locals.map((t) => [0x01, VAL[t]]));
      const body = [...locals, ...f.body, 0x0b];
      return [...uleb(body.length), ...body];
    });
    out.push(...section(10, vec(code)));
    if (this.data.length > 0) out.push(...section(11, vec(this.data)));
    if (this.names.length > 0) {
      const map = vec(this.names.map(([i, n]) => [...uleb(i), ...name(n)]));
      out.push(...section(0, [...name('name'), 0x01, ...uleb(map.length), ...map]));
    }
    return Uint8Array.from(out);
  }
}

/**
 * The smallest module Envoy accepts: ABI 0.2.1 marker, memory, an allocator returning a fixed
 * scratch address, and whatever `extend` adds (imports first, then functions).
 */
export function minimalPlugin(
  extend?: (m: ModuleBuilder) => void,
  options: { allocator?: string | null; marker?: string } = {},
): Uint8Array {
  const m = new ModuleBuilder();
  extend?.(m);
  m.func(options.marker ?? 'proxy_abi_version_0_2_1', [], [], []);
  const allocator = options.allocator === undefined ? 'proxy_on_memory_allocate' : options.allocator;
  if (allocator !== null) m.func(allocator, ['i32'], ['i32'], op.i32(4096));
  m.memory(1);
  return m.bytes();
}
