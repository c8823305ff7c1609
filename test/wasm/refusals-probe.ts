// Test-only module (never shipped): the edge plugin's refusals (assembly/edge/refusals.ts) as plain
// exports, so that docs/reference/errors.md prints the mapping the plugin is compiled with
// (test/assembly/edge/refusals-probe.ts compiles it with asc and calls it through
// @assemblyscript/loader).

import { Refusal, refusalCode, refusalDetails, refusalStatus } from '../../assembly/edge/refusals';

/** Members of Refusal (the last one + 1); the reader checks it against the enum's source. */
export function refusalCount(): i32 {
  return <i32>Refusal.RewriteBadPath + 1;
}

export function status(r: i32): u32 {
  return refusalStatus(<Refusal>r);
}

export function details(r: i32): string {
  return refusalDetails(<Refusal>r);
}

export function code(r: i32): string {
  return refusalCode(<Refusal>r);
}
