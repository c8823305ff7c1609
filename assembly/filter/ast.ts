// AST of a filter expression: one node class with a kind tag. The parser builds it, canonical.ts
// prints it, program.ts compiles it to the flat code evaluate.ts runs.
// && and || are n-ary (a chain `a&&b&&c` is one node), which keeps the tree shallow for long
// chains and makes the canonical form unique.

import { TYPE_CONDITION, TYPE_NUMBER, TYPE_STRING, VARIABLE_TYPES } from './variables';

export const N_BOOL: i32 = 1; // flag
export const N_NUMBER: i32 = 2; // num/den (den 1 for an integer literal, kept as written)
export const N_STRING: i32 = 3; // str (escapes resolved)
export const N_VARIABLE: i32 = 4; // index: variable index (variables.ts)
export const N_CONSTANT: i32 = 5; // index: constant index; num: its value
export const N_COUNT: i32 = 6; // left: the condition counted
export const N_NOT: i32 = 7; // left
export const N_AND: i32 = 8; // items
export const N_OR: i32 = 9; // items
export const N_COMPARE: i32 = 10; // op, left, right

export const OP_EQ: i32 = 0;
export const OP_NE: i32 = 1;
export const OP_LT: i32 = 2;
export const OP_LE: i32 = 3;
export const OP_GT: i32 = 4;
export const OP_GE: i32 = 5;
export const OP_TEXT: StaticArray<string> = ['==', '!=', '<', '<=', '>', '>='];

export class Node {
  index: i32 = 0;
  op: i32 = 0;
  flag: bool = false; // N_BOOL: the value; N_NUMBER: written as a rational; N_COMPARE: strings
  num: i64 = 0;
  den: i64 = 1;
  str: string = '';
  left: Node | null = null;
  right: Node | null = null;
  items: Array<Node> | null = null;

  constructor(
    public kind: i32,
    public start: i32,
    public end: i32,
  ) {}
}

/** What a node yields: TYPE_CONDITION, TYPE_NUMBER or TYPE_STRING. */
export function typeOf(node: Node): i32 {
  const k = node.kind;
  if (k == N_NUMBER || k == N_CONSTANT || k == N_COUNT) return TYPE_NUMBER;
  if (k == N_STRING) return TYPE_STRING;
  if (k == N_VARIABLE) return VARIABLE_TYPES[node.index];
  return TYPE_CONDITION;
}
