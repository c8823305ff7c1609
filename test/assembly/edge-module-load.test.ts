// The edge module must load in Envoy (proxy-wasm ABI 0.2.1): only env.proxy_* imports, the ABI
// marker, an allocator, memory, `_initialize` and no start section
// (docs/specs.md ABI §4.2 checklist). `npm test` builds it first.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

const wasm = readFileSync(path.join(ROOT, 'build', 'edge.wasm'));
const wasmModule = new WebAssembly.Module(wasm);

test('imports only env.proxy_* functions', () => {
  const imports = WebAssembly.Module.imports(wasmModule);
  expect(imports.length).toBeGreaterThan(0);
  for (const i of imports) {
    expect(i.kind).toBe('function');
    expect(`${i.module}.${i.name}`).toMatch(/^env\.proxy_[a-z_]+$/);
  }
});

test('exports what Envoy looks for', () => {
  const exports = new Set(WebAssembly.Module.exports(wasmModule).map((e) => e.name));
  for (const name of [
    'proxy_abi_version_0_2_1',
    'memory',
    'proxy_on_memory_allocate',
    '_initialize',
    'proxy_on_context_create',
    'proxy_on_request_headers',
    'proxy_on_delete',
  ]) {
    expect(exports).toContain(name);
  }
});

test('has no start section (Envoy calls _initialize instead)', () => {
  // Walk the sections (WebAssembly core spec §5.5): id byte, LEB128 size.
  let at = 8;
  const ids: number[] = [];
  while (at < wasm.length) {
    const id = wasm[at++]!;
    let size = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = wasm[at++]!;
      size |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    ids.push(id);
    at += size;
  }
  expect(ids).not.toContain(8);
});

test('instantiates with recording stubs and initialises without calling the host', () => {
  // Exact import signatures and a full lifecycle are in test/assembly/proxy/edge-module.test.ts.
  const calls: string[] = [];
  const env: Record<string, () => number> = {};
  for (const i of WebAssembly.Module.imports(wasmModule)) {
    env[i.name] = () => {
      calls.push(i.name);
      return 0;
    };
  }
  const instance = new WebAssembly.Instance(wasmModule, { env });
  (instance.exports['_initialize'] as () => void)();
  expect(calls).toEqual([]);
  const alloc = instance.exports['proxy_on_memory_allocate'] as (n: number) => number;
  expect(alloc(64)).toBeGreaterThan(0);
});
