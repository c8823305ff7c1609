// Boundary of the filter module: what the Node origin calls through @assemblyscript/loader.
// Strings cross as managed AssemblyScript strings (the host makes them with __newString and
// reads results with __getString); numbers as i32/i64 (i64 is a BigInt on the JS side).
// Track strings are interned on setString (program.ts): evaluation compares ids, and the
// intern table keeps every distinct string it has seen for the life of the instance.
// Nothing here throws: every bad handle, track or variable index returns 0 / -1 / "".
//
//   compile(text) -> handle > 0, or 0 with lastError() / lastErrorOffset() / lastErrorHint()
//   canonical(handle) -> canonical text ("" for an unknown handle)
//   release(handle)
//   clearTracks(); addTrack() -> track index; setString / setNumber / setRational
//   evaluate(handle) -> tracks kept (or -1), 1/0 per track at resultsPointer()
//   evaluateMask(handle) -> the same for tracks 0..31 as bits (bit 31 makes it negative)
//   variableNames() -> the variable table, canonical names joined by "," in index order

export { lastAbort } from './abort';
import { parse } from './parser';
import { canonicalText } from './canonical';
import { Node } from './ast';
import { FilterError } from './errors';
import { TrackTable, MAX_TRACKS, evaluateAll } from './evaluate';
import { Program, compileProgram, intern } from './program';
import {
  VARIABLE_NAMES,
  VARIABLE_TYPES,
  VARIABLE_COUNT,
  TYPE_NUMBER,
  TYPE_STRING,
  variableIndex as lookupVariable,
} from './variables';

export { FILTER_MAX_BYTES, FILTER_MAX_DEPTH } from './parser';
export const MAX_COMPILED: i32 = 4096;

class Compiled {
  constructor(
    public tree: Node,
    public program: Program,
  ) {}
}

const compiled = new Map<i32, Compiled>();
let nextHandle: i32 = 1;
let lastFailure: FilterError | null = null;
const tracks = new TrackTable();
const results = new StaticArray<u8>(MAX_TRACKS);

export function compile(text: string): i32 {
  if (compiled.size >= MAX_COMPILED) {
    lastFailure = new FilterError('too many compiled filters', 0, 'release() filters no longer used');
    return 0;
  }
  const parsed = parse(text);
  if (parsed.node === null) {
    lastFailure = parsed.error;
    return 0;
  }
  // The canonical text must compile too (canonical(parse(canonical(x))) == canonical(x)): it
  // can be longer and deeper than the input, since it parenthesises && inside ||.
  const node = parsed.node!;
  const canonicalForm = canonicalText(node);
  if (canonicalForm != text) {
    const again = parse(canonicalForm);
    if (again.node === null) {
      lastFailure = new FilterError(
        'canonical form past the limits (' + again.error!.message + ')',
        0,
        'it parenthesises && inside ||; shorten the filter or nest less',
      );
      return 0;
    }
  }
  lastFailure = null;
  // Handles stay positive i32s; a wrapped counter skips handles still in use.
  while (nextHandle <= 0 || compiled.has(nextHandle)) nextHandle = nextHandle <= 0 ? 1 : nextHandle + 1;
  const handle = nextHandle++;
  compiled.set(handle, new Compiled(node, compileProgram(node)));
  return handle;
}

export function lastError(): string {
  const e = lastFailure;
  return e === null ? '' : e.format();
}

export function lastErrorMessage(): string {
  const e = lastFailure;
  return e === null ? '' : e.message;
}

export function lastErrorHint(): string {
  const e = lastFailure;
  return e === null ? '' : e.hint;
}

export function lastErrorOffset(): i32 {
  const e = lastFailure;
  return e === null ? -1 : e.offset;
}

export function canonical(handle: i32): string {
  return compiled.has(handle) ? canonicalText(compiled.get(handle).tree) : '';
}

export function release(handle: i32): void {
  if (compiled.has(handle)) compiled.delete(handle);
}

export function clearTracks(): void {
  tracks.clear();
}

export function addTrack(): i32 {
  return tracks.add();
}

export function trackCount(): i32 {
  return tracks.count;
}

/** 1 when set; 0 for a bad track, a bad index or a variable that is not a string. */
export function setString(track: i32, variable: i32, value: string): i32 {
  const slot = tracks.slot(track, variable);
  if (slot < 0 || VARIABLE_TYPES[variable] != TYPE_STRING) return 0;
  tracks.strs[slot] = intern(value);
  return 1;
}

export function setNumber(track: i32, variable: i32, value: i64): i32 {
  return setRational(track, variable, value, 1);
}

/** num/den, den != 0 (a negative den flips both signs; i64.MIN_VALUE as den is refused). */
export function setRational(track: i32, variable: i32, num: i64, den: i64): i32 {
  const slot = tracks.slot(track, variable);
  if (slot < 0 || VARIABLE_TYPES[variable] != TYPE_NUMBER) return 0;
  if (den == 0 || den == i64.MIN_VALUE || (den < 0 && num == i64.MIN_VALUE)) return 0;
  if (den < 0) {
    num = -num;
    den = -den;
  }
  tracks.nums[slot] = num;
  tracks.dens[slot] = den;
  return 1;
}

/** Removes a property from a track (it then compares false). */
export function unset(track: i32, variable: i32): i32 {
  const slot = tracks.slot(track, variable);
  if (slot < 0) return 0;
  tracks.strs[slot] = -1;
  tracks.dens[slot] = 0;
  return 1;
}

export function evaluate(handle: i32): i32 {
  if (!compiled.has(handle)) return -1;
  return evaluateAll(compiled.get(handle).program, tracks, results);
}

export function evaluateMask(handle: i32): i32 {
  if (!compiled.has(handle)) return 0;
  evaluateAll(compiled.get(handle).program, tracks, results);
  let mask = 0;
  const n = min(tracks.count, 32);
  for (let t = 0; t < n; t++) if (results[t] != 0) mask |= 1 << t;
  return mask;
}

/** Address of the per-track results of the last evaluate(): trackCount() bytes, 1 = kept. */
export function resultsPointer(): usize {
  return changetype<usize>(results);
}

export function variableNames(): string {
  let out = '';
  for (let i = 0; i < VARIABLE_COUNT; i++) out += (i > 0 ? ',' : '') + VARIABLE_NAMES[i];
  return out;
}

/** 1 number, 2 string, -1 for a bad index. */
export function variableType(variable: i32): i32 {
  return variable >= 0 && variable < VARIABLE_COUNT ? VARIABLE_TYPES[variable] : -1;
}

/** Index of a name or alias (case-insensitive), or -1. */
export function variableIndex(name: string): i32 {
  return lookupVariable(name);
}
