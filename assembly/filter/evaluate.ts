// Evaluation of a compiled filter (program.ts) over a table of tracks. The parser has checked
// every type, so evaluation cannot fail: a property a track lacks makes any comparison with it
// false.
// Numbers are exact rationals num/den (den > 0) compared by cross-multiplication in 128 bits,
// so no value that fits an i64 can overflow.

import {
  Program, I_SET, I_NOT, I_JUMP_FALSE, I_JUMP_TRUE, I_NUMBERS, I_STRINGS, SOURCE_VAR, SOURCE_LITERAL,
} from "./program";
import { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT } from "./ast";
import { VARIABLE_COUNT } from "./variables";

export const MAX_TRACKS: i32 = 1024;

/** Track properties, struct-of-arrays: slot = track * VARIABLE_COUNT + variable index. A number
 * is nums/dens with dens 0 when the track lacks it; a string is an interned id (program.ts),
 * -1 when the track lacks it. The three arrays always hold at least count * VARIABLE_COUNT elements
 * (add() makes sure of it): that is what makes the unchecked() reads below safe. */
export class TrackTable {
  count: i32 = 0;
  nums: StaticArray<i64> = new StaticArray<i64>(0);
  dens: StaticArray<i64> = new StaticArray<i64>(0);
  strs: StaticArray<i32> = new StaticArray<i32>(0);

  clear(): void {
    this.count = 0;
  }

  /** A new track with no properties; its index, or -1 past MAX_TRACKS. */
  add(): i32 {
    if (this.count >= MAX_TRACKS) return -1;
    const base = this.count * VARIABLE_COUNT;
    if (base + VARIABLE_COUNT > this.strs.length) this.grow(max(this.count * 2, 16));
    for (let v = 0; v < VARIABLE_COUNT; v++) {
      this.nums[base + v] = 0;
      this.dens[base + v] = 0;
      this.strs[base + v] = -1;
    }
    return this.count++;
  }

  // Capacity for `tracks` tracks (StaticArrays: their unchecked() reads are plain loads).
  private grow(tracks: i32): void {
    const size = tracks * VARIABLE_COUNT;
    const nums = new StaticArray<i64>(size);
    const dens = new StaticArray<i64>(size);
    const strs = new StaticArray<i32>(size);
    for (let i = 0; i < this.strs.length; i++) {
      nums[i] = this.nums[i];
      dens[i] = this.dens[i];
      strs[i] = this.strs[i];
    }
    this.nums = nums;
    this.dens = dens;
    this.strs = strs;
  }

  /** The slot of a property, or -1 for a bad track or variable index. */
  slot(track: i32, variable: i32): i32 {
    if (track < 0 || track >= this.count || variable < 0 || variable >= VARIABLE_COUNT) return -1;
    return track * VARIABLE_COUNT + variable;
  }
}

/** Evaluates `p` for every track, writing 1/0 into `out[track]`; returns the number kept. */
export function evaluateAll(p: Program, table: TrackTable, out: StaticArray<u8>): i32 {
  const starts = p.countStarts;
  for (let c = 0; c < starts.length; c++) {
    let n: i64 = 0;
    for (let t = 0; t < table.count; t++) if (run(p, table, starts[c], t)) n++;
    p.counts[c] = n;
  }
  let kept = 0;
  const n = min(table.count, out.length);
  for (let t = 0; t < n; t++) {
    const keep = run(p, table, p.main, t);
    out[t] = keep ? 1 : 0;
    if (keep) kept++;
  }
  return kept;
}

// One track through the code from `pc` to its END. Operand indices and jump targets come from
// compileProgram(), never from input, and track slots are in range by construction
// (0 <= track < count, variable < VARIABLE_COUNT): hence unchecked().
function run(p: Program, table: TrackTable, pc: i32, track: i32): bool {
  const code = p.code;
  const strs = table.strs;
  const base = track * VARIABLE_COUNT;
  let acc = false;
  while (true) {
    const op = unchecked(code[pc]);
    const a = unchecked(code[pc + 1]);
    if (op == I_NUMBERS) {
      acc = false;
      const x = unchecked(code[pc + 2]);
      const y = unchecked(code[pc + 3]);
      pc += 4;
      if (!loadNumber(p, table, base, x)) continue;
      const xn = loadedNum, xd = loadedDen;
      if (!loadNumber(p, table, base, y)) continue;
      acc = holdsOrder(a, compareRationals(xn, xd, loadedNum, loadedDen));
    } else if (op == I_STRINGS) {
      const x = unchecked(code[pc + 2]);
      const y = unchecked(code[pc + 3]);
      pc += 4;
      const xs = (x & 3) == SOURCE_VAR ? unchecked(strs[base + (x >> 2)]) : x >> 2;
      const ys = (y & 3) == SOURCE_VAR ? unchecked(strs[base + (y >> 2)]) : y >> 2;
      acc = xs >= 0 && ys >= 0 && (xs == ys) == (a == OP_EQ);
    } else if (op == I_JUMP_FALSE) {
      pc = acc ? pc + 4 : a;
    } else if (op == I_JUMP_TRUE) {
      pc = acc ? a : pc + 4;
    } else if (op == I_NOT) {
      acc = !acc;
      pc += 4;
    } else if (op == I_SET) {
      acc = a != 0;
      pc += 4;
    } else {
      return acc; // I_END
    }
  }
  return acc;
}

// loadNumber() leaves its value here (no allocation on the evaluation path).
let loadedNum: i64 = 0;
let loadedDen: i64 = 1;

@inline
function loadNumber(p: Program, table: TrackTable, base: i32, operand: i32): bool {
  const source = operand & 3;
  const index = operand >> 2;
  if (source == SOURCE_VAR) {
    loadedDen = unchecked(table.dens[base + index]);
    loadedNum = unchecked(table.nums[base + index]);
    return loadedDen != 0;
  }
  if (source == SOURCE_LITERAL) {
    loadedNum = unchecked(p.nums[index]);
    loadedDen = unchecked(p.dens[index]);
    return true;
  }
  loadedNum = unchecked(p.counts[index]);
  loadedDen = 1;
  return true;
}

@inline
function holdsOrder(op: i32, order: i32): bool {
  if (op == OP_EQ) return order == 0;
  if (op == OP_NE) return order != 0;
  if (op == OP_LT) return order < 0;
  if (op == OP_LE) return order <= 0;
  if (op == OP_GT) return order > 0;
  return order >= 0; // OP_GE
}

/** Sign of a/b - c/d for b, d > 0: compares a*d with c*b as signed 128-bit products. */
@inline
export function compareRationals(a: i64, b: i64, c: i64, d: i64): i32 {
  if (b == d) return a < c ? -1 : a > c ? 1 : 0;
  multiply128(a, d);
  const hi = productHi;
  const lo = productLo;
  multiply128(c, b);
  if (hi != productHi) return hi < productHi ? -1 : 1;
  if (lo != productLo) return <u64>lo < <u64>productLo ? -1 : 1;
  return 0;
}

let productHi: i64 = 0;
let productLo: i64 = 0;

// Signed 64x64 -> 128-bit product into productHi:productLo (32-bit limbs, no overflow).
function multiply128(x: i64, y: i64): void {
  const negative = (x < 0) != (y < 0);
  const ux: u64 = x < 0 ? 0 - <u64>x : <u64>x;
  const uy: u64 = y < 0 ? 0 - <u64>y : <u64>y;
  const x0 = ux & 0xffffffff, x1 = ux >> 32;
  const y0 = uy & 0xffffffff, y1 = uy >> 32;
  const p00 = x0 * y0, p01 = x0 * y1, p10 = x1 * y0, p11 = x1 * y1;
  const mid = (p00 >> 32) + (p01 & 0xffffffff) + (p10 & 0xffffffff);
  let lo: u64 = (p00 & 0xffffffff) | (mid << 32);
  let hi: u64 = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  if (negative) {
    lo = ~lo + 1;
    hi = ~hi + (lo == 0 ? 1 : 0);
  }
  productHi = <i64>hi;
  productLo = <i64>lo;
}
