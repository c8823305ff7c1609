// build/filter.wasm (compiled from assembly/filter/) as a module: where it is, how one instance
// is made through @assemblyscript/loader, its raw exports and the limits it is built with.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as loader from '@assemblyscript/loader';

/** The module's exports (assembly/filter/index.ts). Strings are managed pointers; i64 is bigint. */
export interface RawFilterExports {
  memory: WebAssembly.Memory;
  compile(text: number): number;
  lastError(): number;
  lastErrorMessage(): number;
  lastErrorHint(): number;
  lastErrorOffset(): number;
  lastAbort(): number;
  canonical(handle: number): number;
  release(handle: number): void;
  clearTracks(): void;
  addTrack(): number;
  trackCount(): number;
  setString(track: number, variable: number, value: number): number;
  setNumber(track: number, variable: number, value: bigint): number;
  setRational(track: number, variable: number, num: bigint, den: bigint): number;
  unset(track: number, variable: number): number;
  evaluate(handle: number): number;
  evaluateMask(handle: number): number;
  resultsPointer(): number;
  variableNames(): number;
  variableType(variable: number): number;
  variableIndex(name: number): number;
  __newString(s: string): number;
  __getString(p: number): string;
}

/** Code units that always exceed the module's 4096-byte text limit (every unit is >= 1 byte). */
export const MAX_TEXT_UNITS = 4097;
/** The module's track table size (assembly/filter/evaluate.ts MAX_TRACKS). */
export const MAX_FILTER_TRACKS = 1024;

/**
 * The repository root, found from this file whether it runs from source (host-glue/, under
 * ts-jest) or compiled (dist/host-glue/): the nearest directory up with our package.json. Without
 * one (an unpacked copy without it), the layout decides: one level up, two from dist/.
 */
export function projectRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'streaming-origin') return dir;
    } catch {
      // no (readable) package.json here: keep walking
    }
    if (path.dirname(dir) === dir) break;
  }
  const up = path.dirname(from);
  return path.basename(up) === 'dist' ? path.dirname(up) : up;
}

export function filterWasmPath(): string {
  return path.join(projectRoot(), 'build', 'filter.wasm');
}

/** One instance of the module: its raw exports (no guard, no cache; tests use it directly). */
export function instantiateFilterModule(source: WebAssembly.Module | Uint8Array<ArrayBuffer>): RawFilterExports {
  return loader.instantiateSync<Record<string, unknown>>(source, {}).exports as unknown as RawFilterExports;
}
