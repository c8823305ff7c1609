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
