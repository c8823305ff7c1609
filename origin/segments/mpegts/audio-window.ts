// Which audio fragments a multiplexed MPEG-TS segment reads: those of the audio view track that
// overlap the segment's video time window (segments/hls-segments.ts readMuxedAudio).
//
// The rule (overlappingFragmentsPlain, the definition): fragment i of [first, end) is taken when
// start(i) < to and start(i) + duration(i) > from, times compared exactly across the two
// timescales as audio ticks × the video timescale against video ticks × the audio timescale;
// fragments ascend in time, so the walk stops at the first start ≥ to. Walked from `first`, that
// costs one step (and a few BigInts) per fragment before the segment: ~900 for the last segment of
// a 30-minute track. overlappingFragments finds where to start by binary search instead: no
// fragment starting before from − (the longest duration) can reach `from`, and starts ascend.

import type { FragmentTable } from '../../model/media';

/** The segment's window, and how audio fragment times are put on its scale. */
export interface AudioWindow {
  /** Ticks subtracted from an audio fragment time (outputShift), audio timescale. */
  shift: bigint;
  /** The video timescale: audio ticks are multiplied by it. */
  tsV: bigint;
  /** Video ticks × the audio timescale (undefined: open ended). */
  from: bigint | undefined;
  to: bigint | undefined;
}

/** Fragments [first, end) of `f` overlapping `w`: the walk the rule describes, from `first`. */
export function overlappingFragmentsPlain(f: FragmentTable, first: number, end: number, w: AudioWindow): number[] {
  const { shift, tsV } = w;
  const out: number[] = [];
  for (let i = first; i < end; i++) {
    const start = (f.times[i]! - shift) * tsV;
    if (w.to !== undefined && start >= w.to) break;
    const stop = start + BigInt(f.durations[i]!) * tsV;
    if (w.from !== undefined && stop <= w.from) continue;
    out.push(i);
  }
  return out;
}

const longestByTable = new WeakMap<FragmentTable, number>();

/** The longest fragment duration of a table (ticks), computed once per table. */
export function longestDuration(f: FragmentTable): number {
  let d = longestByTable.get(f);
  if (d === undefined) {
    d = 0;
    for (let i = 0; i < f.count; i++) if (f.durations[i]! > d) d = f.durations[i]!;
    longestByTable.set(f, d);
  }
  return d;
}

/**
 * The first i in [first, end) for which `before(i)` is false (end when there is none), by binary
 * search: `before` must hold for a prefix of the range and not after it (true, then false).
 */
export function firstNotBefore(first: number, end: number, before: (i: number) => boolean): number {
  let lo = first;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The same fragments as overlappingFragmentsPlain, the walk started by binary search near `from`. */
export function overlappingFragments(f: FragmentTable, first: number, end: number, w: AudioWindow): number[] {
  const { shift, tsV, from } = w;
  if (from === undefined) return overlappingFragmentsPlain(f, first, end, w);
  // The first i with start(i) + longest > from (× tsV): every fragment before it ends at or
  // before `from`, so the walk skips none it would take.
  const longest = BigInt(longestDuration(f));
  const lo = firstNotBefore(first, end, (i) => (f.times[i]! - shift + longest) * tsV <= from);
  return overlappingFragmentsPlain(f, lo, end, w);
}
