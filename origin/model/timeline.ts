// Segmentation and sub-clips, computed once and shared by every format (CONTRIBUTING.md design rule 2).
//
// A segment is a run of whole source fragments of one track. With a minimum length L, a new
// segment starts at the first fragment whose start has crossed the next multiple of L on the
// presentation timeline (with a tolerance of L/8, so that an audio fragment starting 0.2 ms
// before a video boundary still starts its segment there). Boundaries are therefore placed on
// the same presentation instants in every track, which keeps renditions switchable.
//
// A sub-clip keeps the fragments whose midpoint lies in [start, end): fragments are GOPs, so
// the cut is on GOP boundaries and the clip's durations are the fragments' exact durations.
// Boundaries depend on the presentation timeline only, so a clip's segments are the unclipped
// presentation's segments cut to the clip: clip segment k is unclipped segment `number - 1 + k`
// cut to the kept fragments (placeSegments), which is how HLS numbers and finds them.

import { originError } from '../errors';
import { Rational } from '../rational';
import { Instant, PresentationTrack, ticksIn } from './presentation';
import { ColumnSegments, ExactSegments, SegmentList } from './segment-list';

export interface Segment {
  /** Source decode time of the first fragment, track timescale. */
  sourceTime: bigint;
  /**
   * Smooth Streaming time: the source time, shifted only when the presentation starts before 0
   * (ffmpeg's AAC priming, tfxd −213333), so that no `t` is negative. Smooth players take `t`
   * as unsigned (shaka 4 asks for `Fragments(audio=0)`, dash.js's MSS writes it into `tfdt`),
   * and content that starts at or after 0 keeps its exact source times.
   */
  smoothTime: bigint;
  /** Output time (source time minus the presentation origin): DASH `$Time$`, `tfdt`. */
  time: bigint;
  /** Exact duration, track timescale. */
  duration: bigint;
  /** Fragment indices [first, first + count). */
  first: number;
  count: number;
  /** Source bytes of the fragments (moof + mdat): the bitrate figures. */
  bytes: number;
}

/** A sub-clip in seconds on the presentation timeline (0 = the presentation's origin). */
export interface Clip {
  start: number;
  end: number | undefined;
}

/** Longest clip offset we accept: a week, well inside float precision at 10 MHz. */
const MAX_OFFSET_SECONDS = 7 * 24 * 3600;

/**
 * Parses a clip offset: seconds (`6`, `6.5`) or `[[h:]mm:]ss[.frac]` (`0:00:06`, `1:02.5`).
 * Anything else is a 400 naming the parameter.
 */
export function parseOffset(text: string, parameter: string): number {
  const m = /^(?:(?:(\d{1,3}):)?(\d{1,2}):)?(\d{1,7})(?:\.(\d{1,9}))?$/.exec(text);
  if (m === null)
    throw originError(
      'bad-time',
      `"${text.slice(0, 40)}" is not a time offset (seconds like 6.5, or h:mm:ss.ff like 0:00:06)`,
      { subject: parameter },
    );
  const [, h, mm, ss, frac] = m;
  if (mm !== undefined && (Number(ss) >= 60 || (h !== undefined && Number(mm) >= 60))) {
    throw originError('bad-time', `"${text}" has minutes or seconds of 60 or more`, { subject: parameter });
  }
  const seconds =
    Number(h ?? 0) * 3600 + Number(mm ?? 0) * 60 + Number(ss) + (frac !== undefined ? Number(`0.${frac}`) : 0);
  if (seconds > MAX_OFFSET_SECONDS)
    throw originError('bad-time', `"${text}" is beyond the longest offset accepted (one week)`, { subject: parameter });
  return seconds;
}

/** `t=<start>[-<end>]`, or `vbegin=<start>` and `vend=<end>`, into a clip; t with either is an error. */
export function parseClip(t: string | undefined, vbegin: string | undefined, vend?: string): Clip | undefined {
  if (t !== undefined && (vbegin !== undefined || vend !== undefined))
    throw originError('bad-time', 'give either t or vbegin/vend, not both', { subject: 't' });
  if (vbegin !== undefined || vend !== undefined) {
    const start = vbegin === undefined ? 0 : parseOffset(vbegin, 'vbegin');
    const end = vend === undefined ? undefined : parseOffset(vend, 'vend');
    if (end !== undefined && end <= start)
      throw originError('bad-time', `vend=${vend} is not after vbegin=${vbegin ?? 0}`, { subject: 'vend' });
    return { start, end };
  }
  if (t === undefined) return undefined;
  const dash = t.indexOf('-');
  const start = parseOffset(dash < 0 ? t : t.slice(0, dash), 't');
  const endText = dash < 0 ? '' : t.slice(dash + 1);
  const end = endText === '' ? undefined : parseOffset(endText, 't');
  if (end !== undefined && end <= start)
    throw originError('bad-time', `end ${endText} is not after start ${t.slice(0, dash)}`, { subject: 't' });
  return { start, end };
}

/** Fragment range of a track kept by a clip (may be empty). */
export function clipRange(
  track: PresentationTrack,
  origin: Instant,
  clip: Clip | undefined,
): { first: number; end: number } {
  const f = track.fragments;
  if (clip === undefined) return { first: 0, end: f.count };
  const ts = track.properties.TimeScale;
  const shift = ticksIn(origin, ts);
  const start = clip.start * ts;
  const end = clip.end === undefined ? Infinity : clip.end * ts;
  let first = -1;
  let last = -1;
  for (let i = 0; i < f.count; i++) {
    const mid = Number(f.times[i]! - shift) + f.durations[i]! / 2;
    if (mid >= start && mid < end) {
      if (first < 0) first = i;
      last = i;
    }
  }
  return first < 0 ? { first: 0, end: 0 } : { first, end: last + 1 };
}

/** Boundaries as ticks: L = num/den seconds → num*ts/den (float is fine: the tolerance is L/8). */
function lengthInTicks(minLength: Rational | undefined, ts: number): number {
  return minLength !== undefined && minLength.num > 0 ? (minLength.num * ts) / minLength.den : 0;
}

/**
 * The segmentation as Segment objects, in BigInt throughout: any time, at any size. The fallback
 * of segmentColumns (the same computation in numbers) where a value is not exact as a number.
 */
export function segmentTrackExact(
  track: PresentationTrack,
  shift: bigint,
  range: { first: number; end: number },
  minLength: Rational | undefined,
): Segment[] {
  const f = track.fragments;
  const smoothShift = shift < 0n ? shift : 0n;
  const out: Segment[] = [];
  const lengthTicks = lengthInTicks(minLength, track.properties.TimeScale);
  // Each BigInt operation allocates: a fragment's time is read once, and a zero shift reuses it
  // (the same values as subtracting 0n, two allocations fewer per segment).
  const shifted = shift !== 0n;
  const smoothShifted = smoothShift !== 0n;
  let current: Segment | undefined;
  let currentSlot = -1;
  for (let i = range.first; i < range.end; i++) {
    const source = f.times[i]!;
    const time = shifted ? source - shift : source;
    const slot = lengthTicks > 0 ? Math.floor((Number(time) + lengthTicks / 8) / lengthTicks) : i;
    if (current === undefined || slot !== currentSlot) {
      const smoothTime = !smoothShifted ? source : source - smoothShift;
      current = {
        sourceTime: source,
        smoothTime,
        time,
        duration: BigInt(f.durations[i]!),
        first: i,
        count: 1,
        bytes: f.sizes[i]!,
      };
      currentSlot = slot;
      out.push(current);
    } else {
      current.duration += BigInt(f.durations[i]!);
      current.count++;
      current.bytes += f.sizes[i]!;
    }
  }
  return out;
}

/**
 * The segments of one track as columns of numbers: the cheap form of a SegmentList
 * (segment-list.ts ColumnSegments).
 *
 * A first MPD of a long presentation needs these for every track (a 2-hour track has 3,600
 * fragments): as Segment objects, five BigInts per segment cost that request tens of milliseconds
 * in allocation and garbage collection. Numbers are exact integers below 2^53, and a track's
 * times are kept as offsets from its first segment's time (`base`, the one BigInt), so even
 * 64-bit UTC times at 10 MHz (above 2^53 themselves) have exact offsets. What does not fit (a
 * track spanning more than 2^53 ticks, 28 years at 10 MHz; or, with a minimum segment length,
 * output times past 2^53, whose slots need the time itself as a number) stays with the objects
 * of segmentTrackExact.
 */
export interface SegmentColumns {
  readonly count: number;
  /** Output time (Segment.time) of segment 0, track timescale; 0n when there is none. */
  readonly base: bigint;
  /** Segment.time − base, exact integers; offsets[0] = 0. */
  readonly offsets: Float64Array;
  /** Segment.duration, exact integers. */
  readonly durations: Float64Array;
  /** Segment.first and Segment.count. */
  readonly firsts: Uint32Array;
  readonly counts: Uint32Array;
  /** Segment.bytes. */
  readonly bytes: Float64Array;
  /**
   * What the writers would otherwise walk the segments again for, taken in the same pass
   * (segmentColumns; absent on the columns of a slice, which a SegmentList then walks once).
   */
  readonly stats?: SegmentStats;
}

export interface SegmentStats {
  /**
   * The largest segment bit rate, bytes·8 / (duration / timescale) over segments with a positive
   * duration, before rounding (view.ts bitrates).
   */
  readonly peak: number;
  /** The sum of the segments' bytes, in segment order. */
  readonly bytes: number;
  /** Whether every segment starts with a sync sample (DASH @startWithSAP). */
  readonly startsWithSync: boolean;
}

/** Index of the high 32-bit word of a 64-bit element on this platform (little-endian: 1). */
const HIGH = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 1 : 0;
const TWO_32 = 0x100000000;
const MAX = Number.MAX_SAFE_INTEGER;

/**
 * segmentTrackExact in numbers (undefined: a value is not exactly representable, see
 * SegmentColumns). Fragment times are read as their two 32-bit words, so that no BigInt is made
 * per fragment: t_i − t_0 = (hi_i − hi_0)·2^32 + (lo_i − lo_0), both terms exact, and their sum
 * exact whenever the true difference is below 2^53; above it the rounded sum is not a safe
 * integer either (rounding is monotonic and 2^53 is representable), which is the test.
 */
export function segmentColumns(
  track: PresentationTrack,
  shift: bigint,
  range: { first: number; end: number },
  minLength: Rational | undefined,
): SegmentColumns | undefined {
  const f = track.fragments;
  const n = Math.max(0, range.end - range.first);
  const offsets = new Float64Array(n);
  const firsts = new Uint32Array(n);
  const counts = new Uint32Array(n);
  if (n === 0)
    return {
      count: 0,
      base: 0n,
      offsets,
      durations: new Float64Array(0),
      firsts,
      counts,
      bytes: new Float64Array(0),
      stats: { peak: 0, bytes: 0, startsWithSync: true },
    };
  const lengthTicks = lengthInTicks(minLength, track.properties.TimeScale);
  const base = f.times[range.first]! - shift;
  // The slot of segmentTrackExact needs Number(time) itself: exact only for a safe base.
  const baseNumber = Number(base);
  if (lengthTicks > 0 && !(baseNumber >= -MAX && baseNumber <= MAX)) return undefined;
  const words = new Int32Array(f.times.buffer, f.times.byteOffset, 2 * f.count);
  const high0 = words[2 * range.first + HIGH]!;
  const low0 = words[2 * range.first + 1 - HIGH]! >>> 0;
  // The checks below are mostly comparisons: this loop runs before the JIT has compiled it. An
  // offset is an integer by construction, so a range check is enough. A duration must be an
  // integer within ±(2^53 − 1) (BigInt() of anything else throws in segmentTrackExact, and only
  // those print alike as a number): the int32 test first, which every real fragment duration
  // passes (2^31 ticks is 214 s at 10 MHz) without a call.
  const ts = track.properties.TimeScale;
  const keyframes = f.keyframes;
  let peak = 0;
  let total = 0;
  let sync = true;
  if (lengthTicks === 0) {
    // One fragment per segment (no minimum length): durations and bytes are the fragments' own
    // (views of the table, which nothing changes once it is built).
    const ownDurations = f.durations.subarray(range.first, range.end);
    const ownBytes = f.sizes.subarray(range.first, range.end);
    counts.fill(1);
    for (let k = 0, i = range.first; k < n; k++, i++) {
      const offset = (words[2 * i + HIGH]! - high0) * TWO_32 + ((words[2 * i + 1 - HIGH]! >>> 0) - low0);
      const d = ownDurations[k]!;
      const end = offset + d;
      if (!(offset >= -MAX && offset <= MAX && ((d | 0) === d || Number.isSafeInteger(d)) && end >= -MAX && end <= MAX))
        return undefined;
      offsets[k] = offset;
      firsts[k] = i;
      const size = ownBytes[k]!;
      total += size;
      const secs = d / ts;
      const rate = (size * 8) / secs;
      if (secs > 0 && rate > peak) peak = rate;
      if (keyframes[i] !== 1) sync = false;
    }
    return {
      count: n,
      base,
      offsets,
      durations: ownDurations,
      firsts,
      counts,
      bytes: ownBytes,
      stats: { peak, bytes: total, startsWithSync: sync },
    };
  }
  const durations = new Float64Array(n);
  const bytes = new Float64Array(n);
  let k = -1;
  let currentSlot = -1;
  let duration = 0;
  // A finished segment's share of the stats (the order of segmentTrackExact's walk).
  const close = (): void => {
    total += bytes[k]!;
    const secs = durations[k]! / ts;
    const rate = (bytes[k]! * 8) / secs;
    if (secs > 0 && rate > peak) peak = rate;
    if (keyframes[firsts[k]!] !== 1) sync = false;
  };
  for (let i = range.first; i < range.end; i++) {
    const offset = (words[2 * i + HIGH]! - high0) * TWO_32 + ((words[2 * i + 1 - HIGH]! >>> 0) - low0);
    const time = baseNumber + offset;
    if (!(offset >= -MAX && offset <= MAX && time >= -MAX && time <= MAX)) return undefined;
    const slot = Math.floor((time + lengthTicks / 8) / lengthTicks);
    if (k < 0 || slot !== currentSlot) {
      if (k >= 0) {
        durations[k] = duration;
        // The segment's end too: the writers' contiguity test (next = offset + duration) adds them.
        const end = offsets[k]! + duration;
        if (!(end >= -MAX && end <= MAX)) return undefined;
        close();
      }
      k++;
      currentSlot = slot;
      offsets[k] = offset;
      firsts[k] = i;
      duration = 0;
    }
    const d = f.durations[i]!;
    duration += d;
    // Every partial sum exact (each a sum of integers within ±(2^53 − 1)).
    if (!(((d | 0) === d || Number.isSafeInteger(d)) && duration >= -MAX && duration <= MAX)) return undefined;
    counts[k]!++;
    bytes[k]! += f.sizes[i]!;
  }
  durations[k] = duration;
  const end = offsets[k]! + duration;
  if (!(end >= -MAX && end <= MAX)) return undefined;
  close();
  const count = k + 1;
  const stats = { peak, bytes: total, startsWithSync: sync };
  return {
    count,
    base,
    offsets: offsets.subarray(0, count),
    durations: durations.subarray(0, count),
    firsts: firsts.subarray(0, count),
    counts: counts.subarray(0, count),
    bytes: bytes.subarray(0, count),
    stats,
  };
}

/**
 * The segments of one track over a fragment range, joined to a minimum length (seconds, 0 = none):
 * the columns, or the Segment objects where a value is not exact as a number.
 */
export function segmentList(
  track: PresentationTrack,
  shift: bigint,
  range: { first: number; end: number },
  minLength: Rational | undefined,
): SegmentList {
  const columns = segmentColumns(track, shift, range, minLength);
  if (columns === undefined) return new ExactSegments(track, segmentTrackExact(track, shift, range, minLength));
  // Segment.smoothTime − Segment.time (see Segment.smoothTime): shift − min(shift, 0).
  return new ColumnSegments(track, columns, shift, shift < 0n ? 0n : shift);
}

/**
 * The segments a clip keeps of a track (undefined: none), and the number (from 1) of the first
 * among the unclipped presentation's segments. `widen`: every unclipped segment holding a
 * fragment the clip keeps, whole (HLS under suppress_query_parameters: a segment URL without the
 * clip must name the unclipped segment's bytes); otherwise those segments cut to the kept
 * fragments (the exact clip).
 */
export function placeSegments(
  track: PresentationTrack,
  origin: Instant,
  clip: Clip | undefined,
  minLength: Rational | undefined,
  widen: boolean,
): { segments: SegmentList; number: number } | undefined {
  const all = { first: 0, end: track.fragments.count };
  const shift = ticksIn(origin, track.properties.TimeScale);
  if (clip === undefined)
    return all.end === 0 ? undefined : { segments: segmentList(track, shift, all, minLength), number: 1 };
  const range = clipRange(track, origin, clip);
  if (range.end === range.first) return undefined;
  const whole = segmentList(track, shift, all, minLength);
  const first = whole.holding(range.first);
  const last = whole.holding(range.end - 1);
  const segments = widen ? whole.slice(Math.max(first, 0), last + 1) : segmentList(track, shift, range, minLength);
  if (first < 0 || segments.count !== last - first + 1) {
    throw originError(
      'clip-numbering',
      `the clip's ${segments.count} segments do not fall in unclipped segments ${first + 1} to ${last + 1}`,
      { subject: track.src },
    );
  }
  return { segments, number: first + 1 };
}
