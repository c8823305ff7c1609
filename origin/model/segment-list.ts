// The segments of one view track, as every writer reads them (CONTRIBUTING.md design rule 2: computed once,
// shared by every format). One interface, two forms behind it:
//
// - the columns (timeline.ts SegmentColumns): numbers, exact below 2^53, made in one pass over
//   the fragment table without a BigInt per fragment. A first MPD of a 2-hour presentation has
//   18,000 segments; as objects of five BigInts each they cost that request tens of milliseconds
//   in allocation and garbage collection;
// - the Segment objects of timeline.ts segmentTrackExact, where a value is not exact as a number
//   (a track spanning more than 2^53 ticks; output times past 2^53 with a minimum length).
//
// A writer never knows which form it reads: the accessors return exact BigInts either way, and
// what a writer would otherwise walk every segment for (the peak rate, the longest segment,
// whether every segment starts with a sync sample, the comparison of two timelines) is answered
// here, from numbers where the form allows. A Segment object is made only by segment(i), for the
// segment routes.

import type { PresentationTrack } from './presentation';
import type { Segment, SegmentColumns, SegmentStats } from './timeline';

export interface SegmentList {
  readonly count: number;
  /** Output time (Segment.time: DASH `$Time$`, `tfdt`), track timescale. */
  time(i: number): bigint;
  /** Source decode time (Segment.sourceTime). */
  sourceTime(i: number): bigint;
  /** Smooth Streaming time (Segment.smoothTime): the output time plus a per-track constant. */
  smoothTime(i: number): bigint;
  /** Exact duration, track timescale. */
  duration(i: number): bigint;
  /** Index of the first source fragment of segment i. */
  first(i: number): number;
  /** How many source fragments segment i holds. */
  fragments(i: number): number;
  /** Source bytes of segment i (moof + mdat). */
  bytes(i: number): number;
  /** Whether segment i starts where segment i − 1 ends (false for segment 0). */
  contiguous(i: number): boolean;
  /** Whether segments i and j last equally long. */
  sameDuration(i: number, j: number): boolean;
  /** Whether both lists have the same count, durations, and times relative to their first. */
  sameShape(other: SegmentList): boolean;
  /** The end (time + duration) of the last segment; a list has at least one segment. */
  readonly end: bigint;
  /** Taken with the columns, or walked once on first use. */
  readonly stats: SegmentStats;
  /** The longest segment's duration (walked once, on first use). */
  readonly longest: bigint;
  /** Index of the first segment whose output (or Smooth) time is `time`, −1 if none. */
  indexOfTime(time: bigint, clock?: 'output' | 'smooth'): number;
  /** Index of the segment holding a source fragment, −1 if none. */
  holding(fragment: number): number;
  /** Segments [start, end) as a list of their own. */
  slice(start: number, end: number): SegmentList;
  /** Segment i as an object (the segment routes). */
  segment(i: number): Segment;
}

/** The largest segment bit rate, in the order and arithmetic of timeline.ts segmentColumns. */
function statsOf(list: SegmentList, durations: (k: number) => number, track: PresentationTrack): SegmentStats {
  const ts = track.properties.TimeScale;
  const keyframes = track.fragments.keyframes;
  let peak = 0;
  let bytes = 0;
  let startsWithSync = true;
  for (let k = 0; k < list.count; k++) {
    const size = list.bytes(k);
    bytes += size;
    const secs = durations(k) / ts;
    const rate = (size * 8) / secs;
    if (secs > 0 && rate > peak) peak = rate;
    if (keyframes[list.first(k)] !== 1) startsWithSync = false;
  }
  return { peak, bytes, startsWithSync };
}

/** The columns form. */
export class ColumnSegments implements SegmentList {
  readonly count: number;
  #stats: SegmentStats | undefined;
  #longest: bigint | undefined;

  constructor(
    private readonly track: PresentationTrack,
    private readonly c: SegmentColumns,
    /** Segment.sourceTime − Segment.time, and Segment.smoothTime − Segment.time. */
    private readonly shift: bigint,
    private readonly smoothDelta: bigint,
  ) {
    this.count = c.count;
    this.#stats = c.stats;
  }

  time(i: number): bigint {
    return this.c.base + BigInt(this.c.offsets[i]!);
  }

  sourceTime(i: number): bigint {
    return this.time(i) + this.shift;
  }

  smoothTime(i: number): bigint {
    return this.time(i) + this.smoothDelta;
  }

  duration(i: number): bigint {
    return BigInt(this.c.durations[i]!);
  }

  first(i: number): number {
    return this.c.firsts[i]!;
  }

  fragments(i: number): number {
    return this.c.counts[i]!;
  }

  bytes(i: number): number {
    return this.c.bytes[i]!;
  }

  contiguous(i: number): boolean {
    // Offsets and segment ends are exact integers (segmentColumns checks both).
    const c = this.c;
    return i > 0 && c.offsets[i] === c.offsets[i - 1]! + c.durations[i - 1]!;
  }

  sameDuration(i: number, j: number): boolean {
    return this.c.durations[i] === this.c.durations[j];
  }

  sameShape(other: SegmentList): boolean {
    if (other.count !== this.count) return false;
    // offsets[0] = 0 in both: equal offsets are equal times relative to the first.
    if (other instanceof ColumnSegments)
      return sameNumbers(this.c.offsets, other.c.offsets) && sameNumbers(this.c.durations, other.c.durations);
    return sameShapeOf(this, other);
  }

  get end(): bigint {
    const c = this.c;
    return c.base + BigInt(c.offsets[c.count - 1]! + c.durations[c.count - 1]!);
  }

  get stats(): SegmentStats {
    this.#stats ??= statsOf(this, (k) => this.c.durations[k]!, this.track);
    return this.#stats;
  }

  get longest(): bigint {
    if (this.#longest === undefined) {
      let most = 0;
      for (let k = 0; k < this.count; k++) if (this.c.durations[k]! > most) most = this.c.durations[k]!;
      this.#longest = BigInt(most);
    }
    return this.#longest;
  }

  indexOfTime(time: bigint, clock: 'output' | 'smooth' = 'output'): number {
    const offset = Number(time - (clock === 'smooth' ? this.smoothDelta : 0n) - this.c.base);
    if (!Number.isSafeInteger(offset)) return -1;
    return this.c.offsets.indexOf(offset);
  }

  holding(fragment: number): number {
    // Segments are disjoint ascending fragment runs: the last starting at or before it.
    const c = this.c;
    let lo = 0;
    let hi = c.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (c.firsts[mid]! <= fragment) lo = mid + 1;
      else hi = mid;
    }
    const k = lo - 1;
    return k >= 0 && fragment < c.firsts[k]! + c.counts[k]! ? k : -1;
  }

  slice(start: number, end: number): SegmentList {
    const c = this.c;
    const from = c.offsets[start] ?? 0;
    const offsets = c.offsets.slice(start, end).map((x) => x - from);
    // Differences of exact integers, exact while they stay below 2^53 (ends included).
    const exact = offsets.every((x, k) => Number.isSafeInteger(x) && Number.isSafeInteger(x + c.durations[start + k]!));
    if (!exact)
      return new ExactSegments(
        this.track,
        Array.from({ length: end - start }, (_, k) => this.segment(start + k)),
      );
    const columns: SegmentColumns = {
      count: offsets.length,
      base: offsets.length > 0 ? this.time(start) : 0n,
      offsets,
      durations: c.durations.subarray(start, end),
      firsts: c.firsts.subarray(start, end),
      counts: c.counts.subarray(start, end),
      bytes: c.bytes.subarray(start, end),
    };
    return new ColumnSegments(this.track, columns, this.shift, this.smoothDelta);
  }

  segment(i: number): Segment {
    const time = this.time(i);
    return {
      sourceTime: time + this.shift,
      smoothTime: time + this.smoothDelta,
      time,
      duration: this.duration(i),
      first: this.first(i),
      count: this.fragments(i),
      bytes: this.bytes(i),
    };
  }
}

/** The Segment objects form: where a value is not exact as a number. */
export class ExactSegments implements SegmentList {
  readonly count: number;
  #stats: SegmentStats | undefined;
  #longest: bigint | undefined;

  constructor(
    private readonly track: PresentationTrack,
    private readonly segments: readonly Segment[],
  ) {
    this.count = segments.length;
  }

  time(i: number): bigint {
    return this.segments[i]!.time;
  }

  sourceTime(i: number): bigint {
    return this.segments[i]!.sourceTime;
  }

  smoothTime(i: number): bigint {
    return this.segments[i]!.smoothTime;
  }

  duration(i: number): bigint {
    return this.segments[i]!.duration;
  }

  first(i: number): number {
    return this.segments[i]!.first;
  }

  fragments(i: number): number {
    return this.segments[i]!.count;
  }

  bytes(i: number): number {
    return this.segments[i]!.bytes;
  }

  contiguous(i: number): boolean {
    const s = this.segments;
    return i > 0 && s[i]!.time === s[i - 1]!.time + s[i - 1]!.duration;
  }

  sameDuration(i: number, j: number): boolean {
    return this.segments[i]!.duration === this.segments[j]!.duration;
  }

  sameShape(other: SegmentList): boolean {
    return other.count === this.count && sameShapeOf(this, other);
  }

  get end(): bigint {
    const last = this.segments[this.count - 1]!;
    return last.time + last.duration;
  }

  get stats(): SegmentStats {
    this.#stats ??= statsOf(this, (k) => Number(this.segments[k]!.duration), this.track);
    return this.#stats;
  }

  get longest(): bigint {
    if (this.#longest === undefined) {
      let most = 0n;
      for (const s of this.segments) if (s.duration > most) most = s.duration;
      this.#longest = most;
    }
    return this.#longest;
  }

  indexOfTime(time: bigint, clock: 'output' | 'smooth' = 'output'): number {
    return clock === 'smooth'
      ? this.segments.findIndex((s) => s.smoothTime === time)
      : this.segments.findIndex((s) => s.time === time);
  }

  holding(fragment: number): number {
    return this.segments.findIndex((s) => fragment >= s.first && fragment < s.first + s.count);
  }

  slice(start: number, end: number): SegmentList {
    return new ExactSegments(this.track, this.segments.slice(start, end));
  }

  segment(i: number): Segment {
    return { ...this.segments[i]! };
  }
}

/** sameShape in BigInts, for lists of either form (of equal count). */
function sameShapeOf(a: SegmentList, b: SegmentList): boolean {
  if (a.count === 0) return true;
  const a0 = a.time(0);
  const b0 = b.time(0);
  for (let i = 0; i < a.count; i++)
    if (a.duration(i) !== b.duration(i) || a.time(i) - a0 !== b.time(i) - b0) return false;
  return true;
}

function sameNumbers(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  // Equal bytes are equal numbers (the columns hold no NaN), compared natively; unequal bytes
  // can still be equal numbers (0 and −0), so they take the loop.
  if (Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength)))
    return true;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
