// Timing statistics shared by the benches: n, mean, median, percentiles of a set of samples, and
// timed runs of a function after untimed warm-ups (alone or interleaved with others).

export interface Stats {
  n: number;
  min: number;
  median: number;
  p95: number;
  mean: number;
  max: number;
}

export function stats(samples: number[]): Stats {
  if (samples.length === 0) throw new Error('no samples');
  const s = [...samples].sort((a, b) => a - b);
  // Nearest-rank percentiles.
  const rank = (p: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
  const median = s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return {
    n: s.length,
    min: round(s[0]!),
    median: round(median),
    p95: round(rank(0.95)),
    mean: round(s.reduce((a, b) => a + b, 0) / s.length),
    max: round(s[s.length - 1]!),
  };
}

export const round = (x: number, digits = 3): number => Number(x.toFixed(digits));
export const scale = (st: Stats, by: number): Stats => ({
  n: st.n,
  min: round(st.min * by),
  median: round(st.median * by),
  p95: round(st.p95 * by),
  mean: round(st.mean * by),
  max: round(st.max * by),
});

export const now = (): bigint => process.hrtime.bigint();
export const msSince = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

/** Runs `fn` `warmups` times untimed, then `n` times timed (ms each). */
export async function sample(n: number, warmups: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmups; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    await fn();
    out.push(msSince(t0));
  }
  return out;
}

/**
 * Like `sample` for several functions, interleaved (f1, f2, ... f1, f2, ...), so that drift in
 * machine conditions (other load, thread-pool wake-ups) hits all of them alike and ratios hold.
 */
export async function sampleInterleaved(
  n: number,
  warmups: number,
  fns: Array<() => Promise<unknown>>,
): Promise<number[][]> {
  for (let i = 0; i < warmups; i++) for (const fn of fns) await fn();
  const out: number[][] = fns.map(() => []);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < fns.length; j++) {
      const t0 = now();
      await fns[j]!();
      out[j]!.push(msSince(t0));
    }
  }
  return out;
}

/** Nearest-rank percentile `p` (0–100) of ascending `sorted`; NaN when there is none. */
export const percentileOfSorted = (sorted: number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
