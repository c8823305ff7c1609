// A seeded pseudo-random generator (mulberry32) for the fuzzing and the corpus's random flips: a
// failing case reproduces from the seed each suite prints. HARDENING_SEED overrides the default.

/** The seed of this run: HARDENING_SEED, or the fixed default that CI runs. */
export function suiteSeed(fallback: number): number {
  const s = process.env['HARDENING_SEED'];
  if (s === undefined || s === '') return fallback;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff)
    throw new Error(`HARDENING_SEED must be a 32-bit integer, not ${s}`);
  return n;
}

export class Prng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}
