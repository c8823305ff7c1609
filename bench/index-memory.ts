// The index bench's memory: the fragment tables' bytes and the heap a retained index keeps,
// measured with global.gc against a control loop that keeps nothing.

import { IndexMode } from '../origin/media/media-file';
import { FragmentTable, MediaFile } from '../origin/model/media';
import { indexSequential } from './index-reads';

export function tableBytes(f: FragmentTable): number {
  return (
    f.times.byteLength + f.durations.byteLength + f.offsets.byteLength + f.sizes.byteLength + f.keyframes.byteLength
  );
}

export function gcOrThrow(): () => void {
  const gc = globalThis.gc;
  if (typeof gc !== 'function')
    throw new Error('global.gc is not exposed: run node with --expose-gc (bench/run.js re-executes itself with it)');
  return () => void gc();
}

async function settledMemory(): Promise<{ heapUsed: number; arrayBuffers: number; external: number }> {
  const gc = gcOrThrow();
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, external: m.external };
}

export interface HeapMeasurement {
  mode: IndexMode;
  copies: number;
  heapUsedDelta: number;
  arrayBuffersDelta: number;
  /** (heapUsed + arrayBuffers) after minus before, per retained copy of the 3-file index. */
  bytesPerCopy: number;
  /** The same loop without retaining the results: what indexing leaves behind that is not the index. */
  controlBytesPerCopy: number;
}

// Each phase runs in its own async function: a suspended async frame can keep its last awaited
// value alive, which would put a dead index copy into a "before" figure and skew the delta.
async function indexDiscarding(files: string[], mode: IndexMode, copies: number): Promise<void> {
  for (let i = 0; i < copies; i++) await indexSequential(files, mode);
}

async function indexRetaining(files: string[], mode: IndexMode, copies: number): Promise<MediaFile[][]> {
  const kept: MediaFile[][] = [];
  for (let i = 0; i < copies; i++) kept.push(await indexSequential(files, mode));
  return kept;
}

async function controlDelta(files: string[], mode: IndexMode, copies: number): Promise<number> {
  const c0 = await settledMemory();
  await indexDiscarding(files, mode, copies);
  const c1 = await settledMemory();
  return c1.heapUsed + c1.arrayBuffers - (c0.heapUsed + c0.arrayBuffers);
}

async function retainedDelta(
  files: string[],
  mode: IndexMode,
  copies: number,
): Promise<{ heapUsed: number; arrayBuffers: number; fragments: number }> {
  const before = await settledMemory();
  const kept = await indexRetaining(files, mode, copies);
  const after = await settledMemory();
  // Use `kept` after the measurement so it is certainly alive during it.
  let fragments = 0;
  for (const copy of kept) for (const m of copy) for (const t of m.tracks) fragments += t.fragments.count;
  return {
    heapUsed: after.heapUsed - before.heapUsed,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
    fragments,
  };
}

export async function measureHeap(files: string[], mode: IndexMode, copies: number): Promise<HeapMeasurement> {
  // Control: index `copies` times, keep nothing.
  const control = await controlDelta(files, mode, copies);
  const retained = await retainedDelta(files, mode, copies);
  if (retained.fragments === 0) throw new Error('no fragments retained');
  return {
    mode,
    copies,
    heapUsedDelta: retained.heapUsed,
    arrayBuffersDelta: retained.arrayBuffers,
    bytesPerCopy: Math.round((retained.heapUsed + retained.arrayBuffers) / copies),
    controlBytesPerCopy: Math.round(control / copies),
  };
}
