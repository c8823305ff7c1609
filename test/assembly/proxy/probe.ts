// Builds and loads test/wasm/edge-abi-probe.ts, the test-only module that exposes the
// AssemblyScript layer's codecs and a probe plugin. Compiled with the edge target's flags
// (asconfig.json), cached in the OS temp directory by a hash of the sources so that parallel
// jest workers compile it once.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { StubHost } from './stub-host';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ENTRY = 'test/wasm/edge-abi-probe.ts';

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    )
    .sort();
}

/** The edge target's flags, from asconfig.json, applied to the probe entry. */
function edgeFlags(): string[] {
  const config = JSON.parse(readFileSync(path.join(ROOT, 'asconfig.json'), 'utf8')) as {
    targets: { release: { optimizeLevel: number; runtime: string; exportStart: string; use: string[] } };
  };
  const t = config.targets.release;
  return [
    `-O${t.optimizeLevel}`,
    '--runtime',
    t.runtime,
    '--exportStart',
    t.exportStart,
    ...t.use.flatMap((u) => ['--use', u]),
  ];
}

export function probeWasmPath(): string {
  const hash = createHash('sha256');
  for (const file of [...sources('assembly/proxy'), ...sources('assembly/json'), ENTRY, 'asconfig.json']) {
    hash.update(file).update(readFileSync(path.join(ROOT, file)));
  }
  const target = path.join(tmpdir(), `edge-abi-probe-${hash.digest('hex').slice(0, 16)}.wasm`);
  if (existsSync(target)) return target;
  const work = mkdtempSync(path.join(tmpdir(), 'edge-abi-probe-'));
  try {
    // An empty config file: otherwise asc applies the project's asconfig.json target, whose
    // textFile would overwrite build/edge.wat.
    const config = path.join(work, 'asconfig.json');
    writeFileSync(config, '{"targets":{},"options":{}}');
    const out = path.join(work, 'probe.wasm');
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules', 'assemblyscript', 'bin', 'asc.js'),
        ENTRY,
        '--config',
        config,
        '--outFile',
        out,
        ...edgeFlags(),
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    renameSync(out, target); // atomic: a concurrent worker sees the whole file or none
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return target;
}

let compiled: WebAssembly.Module | null = null;

export function probeModule(): WebAssembly.Module {
  if (compiled === null) compiled = new WebAssembly.Module(readFileSync(probeWasmPath()));
  return compiled;
}

/** A fresh probe instance on a fresh stub host, _initialize already run. */
export function newProbe(): { host: StubHost; probe: Probe } {
  const host = new StubHost();
  host.instantiate(probeModule());
  host.call('_initialize');
  return { host, probe: new Probe(host) };
}

/** Typed access to the probe's exports. */
export class Probe {
  constructor(readonly host: StubHost) {}

  private input(data: Uint8Array): [number, number] {
    const ptr = this.host.call('alloc', data.length);
    this.host.bytes().set(data, ptr);
    return [ptr, data.length];
  }

  resultBytes(): Uint8Array {
    return this.host.read(this.host.call('resultPointer'), this.host.call('resultLength'));
  }

  resultText(): string {
    return Buffer.from(this.resultBytes()).toString('utf8');
  }

  pairsParse(bytes: Uint8Array): { ok: boolean; text: string } {
    const ok = this.host.call('pairsParse', ...this.input(bytes)) === 1;
    return { ok, text: this.resultText() };
  }

  pairsDecode(bytes: Uint8Array): string {
    this.host.call('pairsDecode', ...this.input(bytes));
    return this.resultText();
  }

  pairsEncode(pairs: Array<[string, string]>): Uint8Array | null {
    const ok = this.host.call('pairsEncode', ...this.input(Buffer.from(JSON.stringify(pairs), 'utf8'))) === 1;
    return ok ? this.resultBytes() : null;
  }

  pairsEncodeGenerated(count: number, valueBytes: number): Uint8Array | null {
    return this.host.call('pairsEncodeGenerated', count, valueBytes) === 1 ? this.resultBytes() : null;
  }

  jsonParse(
    input: Uint8Array | string,
    maxDepth = 32,
    maxBytes = 1 << 20,
  ): { ok: boolean; text: string; position: number } {
    const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
    const ok = this.host.call('jsonParse', ...this.input(bytes), maxDepth, maxBytes) === 1;
    return { ok, text: this.resultText(), position: this.host.call('lastPosition') };
  }

  jsonQuery(document: string, queryPath: string): unknown {
    const ok =
      this.host.call(
        'jsonQuery',
        ...this.input(Buffer.from(document, 'utf8')),
        ...this.input(Buffer.from(queryPath, 'utf8')),
      ) === 1;
    return ok ? JSON.parse(this.resultText()) : null;
  }
}
