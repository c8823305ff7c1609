// Segmentation and sub-clips, computed once and shared by every format (house style §2).
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
// cut to the kept fragments (clipSegments), which is how HLS numbers and finds them.

import { OriginError } from '../errors';
import { Rational } from '../rational';
import { Instant, PresentationTrack, ticksIn } from '../presentation/presentation';

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
  if (m === null) throw new OriginError('bad-request', `"${text.slice(0, 40)}" is not a time offset (seconds like 6.5, or h:mm:ss.ff like 0:00:06)`, parameter, 'bad-time');
  const [, h, mm, ss, frac] = m;
  if (mm !== undefined && (Number(ss) >= 60 || (h !== undefined && Number(mm) >= 60))) {
    throw new OriginError('bad-request', `"${text}" has minutes or seconds of 60 or more`, parameter, 'bad-time');
  }
  const seconds = Number(h ?? 0) * 3600 + Number(mm ?? 0) * 60 + Number(ss) + (frac !== undefined ? Number(`0.${frac}`) : 0);
  if (seconds > MAX_OFFSET_SECONDS) throw new OriginError('bad-request', `"${text}" is beyond the longest offset accepted (one week)`, parameter, 'bad-time');
  return seconds;
}

/** `t=<start>[-<end>]` and `vbegin=<start>` into a clip; both given is an error. */
export function parseClip(t: string | undefined, vbegin: string | undefined): Clip | undefined {
  if (t !== undefined && vbegin !== undefined) throw new OriginError('bad-request', 'give either t or vbegin, not both', 't', 'bad-time');
  if (vbegin !== undefined) return { start: parseOffset(vbegin, 'vbegin'), end: undefined };
  if (t === undefined) return undefined;
  const dash = t.indexOf('-');
  const start = parseOffset(dash < 0 ? t : t.slice(0, dash), 't');
  const endText = dash < 0 ? '' : t.slice(dash + 1);
  const end = endText === '' ? undefined : parseOffset(endText, 't');
  if (end !== undefined && end <= start) throw new OriginError('bad-request', `end ${endText} is not after start ${t.slice(0, dash)}`, 't', 'bad-time');
  return { start, end };
}

/** Fragment range of a track kept by a clip (may be empty). */
export function clipRange(track: PresentationTrack, origin: Instant, clip: Clip | undefined): { first: number; end: number } {
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

/** Segments of one track over a fragment range, joined to a minimum length (seconds, 0 = none). */
export function segmentTrack(track: PresentationTrack, origin: Instant, range: { first: number; end: number }, minLength: Rational | undefined): Segment[] {
  const f = track.fragments;
  const ts = track.properties.TimeScale;
  const shift = ticksIn(origin, ts);
  const smoothShift = shift < 0n ? shift : 0n;
  const out: Segment[] = [];
  // Boundaries as exact ticks: L = num/den seconds → num*ts/den ticks (float is fine for the
  // comparison: the tolerance is L/8).
  const lengthTicks = minLength !== undefined && minLength.num > 0 ? (minLength.num * ts) / minLength.den : 0;
  let current: Segment | undefined;
  let currentSlot = -1;
  for (let i = range.first; i < range.end; i++) {
    const time = f.times[i]! - shift;
    const slot = lengthTicks > 0 ? Math.floor((Number(time) + lengthTicks / 8) / lengthTicks) : i;
    if (current === undefined || slot !== currentSlot) {
      current = { sourceTime: f.times[i]!, smoothTime: f.times[i]! - smoothShift, time, duration: 0n, first: i, count: 0, bytes: 0 };
      currentSlot = slot;
      out.push(current);
    }
    current.duration += BigInt(f.durations[i]!);
    current.count++;
    current.bytes += f.sizes[i]!;
  }
  return out;
}

/** The segments of a track over a clip, placed in the unclipped presentation's segmentation. */
export interface ClipSegments {
  segments: Segment[];
  /** Number (from 1) of `segments[0]` among the unclipped presentation's segments. */
  number: number;
}

/**
 * The segments a clip keeps of a track (undefined: none), numbered as the unclipped
 * presentation numbers them. `widen`: every unclipped segment holding a fragment the clip keeps,
 * whole (HLS under suppress_query_parameters: a segment URL without the clip must name the
 * unclipped segment's bytes); otherwise those segments cut to the kept fragments (the exact clip).
 */
export function clipSegments(track: PresentationTrack, origin: Instant, clip: Clip | undefined, minLength: Rational | undefined, widen: boolean): ClipSegments | undefined {
  const all = { first: 0, end: track.fragments.count };
  if (clip === undefined) return all.end === 0 ? undefined : { segments: segmentTrack(track, origin, all, minLength), number: 1 };
  const range = clipRange(track, origin, clip);
  if (range.end === range.first) return undefined;
  const whole = segmentTrack(track, origin, all, minLength);
  const holding = (fragment: number): number => whole.findIndex((s) => fragment >= s.first && fragment < s.first + s.count);
  const first = holding(range.first);
  const last = holding(range.end - 1);
  const segments = widen ? whole.slice(first, last + 1) : segmentTrack(track, origin, range, minLength);
  if (first < 0 || segments.length !== last - first + 1) {
    throw new OriginError('internal', `the clip's ${segments.length} segments do not fall in unclipped segments ${first + 1} to ${last + 1}`, track.src, 'clip-numbering');
  }
  return { segments, number: first + 1 };
}
