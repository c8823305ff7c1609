// What Linux's /proc says of a process tree (proc(5)), without side effects on import, so that
// the tests of workers and signals (test/origin/server/cli-origin.ts) share it with the bench.

import { readFileSync } from 'node:fs';

/** The pids of a process's children (Linux /proc; none when it has gone). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((x) => x !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/** Resident set size of a process in MiB (VmRSS of /proc/<pid>/status); NaN when it has gone. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? NaN : Number(m[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** The deepest descendant along first children (an `origin serve --workers 1` primary: its worker). */
export function deepestDescendant(pid: number): number {
  let at = pid;
  for (let kids = childrenOf(at); kids.length > 0; kids = childrenOf(at)) at = kids[0]!;
  return at;
}
