// A parsed filter compiled to flat code for evaluation: the AST walk cost a shadow-stack frame
// per node per track; this runs one loop per track with no calls and no managed objects.
//
// One accumulator holds the current condition. Instructions are 4 i32s: opcode, a, b, c.
//   SET v            acc = v
//   NOT              acc = !acc
//   JUMP_FALSE t     if !acc goto t      (&& chains: the first false item decides)
//   JUMP_TRUE t      if acc goto t       (|| chains)
//   NUMBERS op x y   acc = x op y over exact rationals; false if a property is missing
//   STRINGS op x y   acc = x == y (op EQ) or x != y (op NE) over interned string ids
//   END
// Operands x, y are (index << 2 | source): source VAR (a track property, variable index),
// LITERAL (index into nums/dens, or the interned id itself for strings), COUNT (counts[index]).
// Each count() has its own code, ending with END, placed before the code that uses it and
// evaluated once per evaluation (it does not depend on the track being evaluated).

import { Node, N_BOOL, N_NUMBER, N_STRING, N_VARIABLE, N_CONSTANT, N_COUNT, N_NOT, N_AND, N_OR } from './ast';

export const I_SET: i32 = 0;
export const I_NOT: i32 = 1;
export const I_JUMP_FALSE: i32 = 2;
export const I_JUMP_TRUE: i32 = 3;
export const I_NUMBERS: i32 = 4;
export const I_STRINGS: i32 = 5;
export const I_END: i32 = 6;

export const SOURCE_VAR: i32 = 0;
export const SOURCE_LITERAL: i32 = 1;
export const SOURCE_COUNT: i32 = 2;

/** Strings are compared as ids: the same text always gets the same id (never released). */
const interned = new Map<string, i32>();

export function intern(s: string): i32 {
  if (interned.has(s)) return interned.get(s);
  const id = interned.size;
  interned.set(s, id);
  return id;
}

// Built in growable arrays, then frozen into StaticArrays: their unchecked() reads compile to
// plain loads, Array's do not.
class Builder {
  code: Array<i32> = [];
  nums: Array<i64> = [];
  dens: Array<i64> = [];
  countStarts: Array<i32> = [];
}

export class Program {
  constructor(
    public code: StaticArray<i32>,
    public nums: StaticArray<i64>,
    public dens: StaticArray<i64>,
    public countStarts: StaticArray<i32>,
    public counts: StaticArray<i64>,
    public main: i32,
  ) {}
}

export function compileProgram(root: Node): Program {
  const p = new Builder();
  const body = new Array<i32>(); // main code, assembled after the count() code it refers to
  emitCondition(p, root, body);
  emit(body, I_END, 0, 0, 0);
  const main = p.code.length;
  relocate(p.code, body, main);
  return new Program(
    StaticArray.fromArray(p.code),
    StaticArray.fromArray(p.nums),
    StaticArray.fromArray(p.dens),
    StaticArray.fromArray(p.countStarts),
    new StaticArray<i64>(p.countStarts.length),
    main,
  );
}

function emitCondition(p: Builder, node: Node, out: Array<i32>): void {
  const k = node.kind;
  if (k == N_BOOL) {
    emit(out, I_SET, node.flag ? 1 : 0, 0, 0);
  } else if (k == N_NOT) {
    emitCondition(p, node.left!, out);
    emit(out, I_NOT, 0, 0, 0);
  } else if (k == N_AND || k == N_OR) {
    const items = node.items!;
    const jumps = new Array<i32>();
    for (let i = 0; i < items.length; i++) {
      emitCondition(p, items[i], out);
      if (i + 1 < items.length) {
        jumps.push(out.length + 1);
        emit(out, k == N_AND ? I_JUMP_FALSE : I_JUMP_TRUE, 0, 0, 0);
      }
    }
    for (let i = 0; i < jumps.length; i++) out[jumps[i]] = out.length; // body-relative target
  } else {
    // N_COMPARE (the parser allows nothing else where a condition goes)
    const x = operand(p, node.left!);
    const y = operand(p, node.right!);
    emit(out, node.flag ? I_STRINGS : I_NUMBERS, node.op, x, y);
  }
}

function operand(p: Builder, node: Node): i32 {
  const k = node.kind;
  if (k == N_VARIABLE) return (node.index << 2) | SOURCE_VAR;
  if (k == N_STRING) return (intern(node.str) << 2) | SOURCE_LITERAL;
  if (k == N_NUMBER || k == N_CONSTANT) {
    p.nums.push(node.num);
    p.dens.push(node.den);
    return ((p.nums.length - 1) << 2) | SOURCE_LITERAL;
  }
  // N_COUNT: its own code, appended to p.code now, so inner counts come first
  const inner = new Array<i32>();
  emitCondition(p, node.left!, inner);
  emit(inner, I_END, 0, 0, 0);
  const start = p.code.length;
  relocate(p.code, inner, start);
  p.countStarts.push(start);
  return ((p.countStarts.length - 1) << 2) | SOURCE_COUNT;
}

function emit(out: Array<i32>, op: i32, a: i32, b: i32, c: i32): void {
  out.push(op);
  out.push(a);
  out.push(b);
  out.push(c);
}

// Appends `body` to `code`, turning its body-relative jump targets into absolute ones.
function relocate(code: Array<i32>, body: Array<i32>, base: i32): void {
  for (let i = 0; i < body.length; i += 4) {
    const op = body[i];
    code.push(op);
    code.push(op == I_JUMP_FALSE || op == I_JUMP_TRUE ? body[i + 1] + base : body[i + 1]);
    code.push(body[i + 2]);
    code.push(body[i + 3]);
  }
}
