// What /proc says of a process (Linux): its resident memory and its open file descriptors, the two
// figures the hardening suite keeps bounded.

import { readdirSync, readFileSync } from 'node:fs';

/** Resident set size in bytes (VmRSS), or NaN when the process is gone. */
export function rssOf(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? NaN : Number(m[1]) * 1024;
  } catch {
    return NaN;
  }
}

/** Open file descriptors (sockets included), or NaN when the process is gone. */
export function fdsOf(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

export const mib = (bytes: number): string => (bytes / (1 << 20)).toFixed(1);
