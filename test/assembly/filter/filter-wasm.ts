// Test-side access to build/filter.wasm. The loader itself lives in host-glue/filter/filter-module.ts;
// this adds what only tests need: buildFilterWasm() compiles assembly/filter/ with asc when the
// .wasm is missing or older than a source (jest runs from source, without `npm run build`); each
// jest worker compiles into its own temporary file and renames it into place, so parallel test
// files never read a half-written module. FilterWasm is a thin, unguarded wrapper over the raw
// exports for tests that poke at the boundary itself.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  filterWasmPath,
  instantiateFilterModule,
  projectRoot,
  RawFilterExports,
} from '../../../host-glue/filter/filter-module';

export const ROOT = projectRoot();
export const WASM = filterWasmPath();
const SOURCES = path.join(ROOT, 'assembly', 'filter');

/** The asc command line (the one package.json's build:wasm runs for the filter). */
export const ASC_ARGS = ['--config', 'assembly/filter/asconfig.json', '--target', 'release'];

export function buildFilterWasm(): string {
  const newest = Math.max(...readdirSync(SOURCES).map((f) => statSync(path.join(SOURCES, f)).mtimeMs));
  if (existsSync(WASM) && statSync(WASM).mtimeMs >= newest) return WASM;
  const tmp = path.join(mkdtempSync(path.join(os.tmpdir(), 'filter-wasm-')), 'filter.wasm');
  const asc = path.join(ROOT, 'node_modules', 'assemblyscript', 'bin', 'asc.js');
  const run = spawnSync(process.execPath, [asc, ...ASC_ARGS, '-o', tmp, '-t', tmp.replace(/\.wasm$/, '.wat')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`asc failed:\n${run.stdout}\n${run.stderr}`);
  renameSync(tmp, WASM);
  return WASM;
}

type RawExports = RawFilterExports;

/** A track as the tests write it: property name -> string, integer, or [num, den]. */
export type TrackValue = string | number | bigint | [number, number];
export type Track = Record<string, TrackValue>;

export interface CompileError {
  error: string;
  message: string;
  offset: number;
  hint: string;
}

export class FilterWasm {
  readonly raw: RawExports;
  readonly variables: string[];

  constructor(bytes: Buffer) {
    this.raw = instantiateFilterModule(new Uint8Array(bytes));
    this.variables = this.str(this.raw.variableNames()).split(',');
  }

  private str(p: number): string {
    return this.raw.__getString(p);
  }

  compile(text: string): number {
    return this.raw.compile(this.raw.__newString(text));
  }

  error(): CompileError {
    const r = this.raw;
    return {
      error: this.str(r.lastError()),
      message: this.str(r.lastErrorMessage()),
      offset: r.lastErrorOffset(),
      hint: this.str(r.lastErrorHint()),
    };
  }

  canonical(handle: number): string {
    return this.str(this.raw.canonical(handle));
  }

  /** Compile, return canonical text or throw with the error (test convenience). */
  canon(text: string): string {
    const h = this.compile(text);
    if (h === 0) throw new Error(`${text}: ${this.error().error}`);
    const out = this.canonical(h);
    this.raw.release(h);
    return out;
  }

  setTracks(tracks: Track[]): void {
    const r = this.raw;
    r.clearTracks();
    for (const track of tracks) {
      const t = r.addTrack();
      for (const [name, value] of Object.entries(track)) {
        const v = r.variableIndex(r.__newString(name));
        if (v < 0) throw new Error(`unknown property ${name}`);
        const ok =
          typeof value === 'string'
            ? r.setString(t, v, r.__newString(value))
            : Array.isArray(value)
              ? r.setRational(t, v, BigInt(value[0]), BigInt(value[1]))
              : r.setNumber(t, v, BigInt(value));
        if (ok !== 1) throw new Error(`could not set ${name}=${String(value)}`);
      }
    }
  }

  /** Per-track results of a compiled handle, read from the module's result buffer. */
  evaluate(handle: number): boolean[] {
    const r = this.raw;
    const kept = r.evaluate(handle);
    if (kept < 0) throw new Error(`bad handle ${handle}`);
    const bytes = new Uint8Array(r.memory.buffer, r.resultsPointer(), r.trackCount());
    return Array.from(bytes, (b) => b === 1);
  }

  /** Compile + evaluate + release: the list of kept track indices. */
  select(text: string): number[] {
    const h = this.compile(text);
    if (h === 0) throw new Error(`${text}: ${this.error().error}`);
    const kept = this.evaluate(h);
    this.raw.release(h);
    return kept.flatMap((k, i) => (k ? [i] : []));
  }
}

export function loadFilterWasm(): FilterWasm {
  return new FilterWasm(readFileSync(buildFilterWasm()));
}
