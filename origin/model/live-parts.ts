// The partial segments of a live track (LL-HLS, draft-pantos-hls-rfc8216bis §4.4.4.9): a part is
// one whole ingest fragment, a segment the run of fragments the view already groups on the epoch
// grid (`hls_minimum_fragment_length`, model/timeline.ts). The view lists whole segments only
// (model/live-window.ts wholeSegments); the fragments after the last of them are the parts of
// the segment being ingested, numbered as the next segment. Computed once per view track and read
// by the playlist writer (manifests/hls-low-latency.ts), the part route and the blocking reload
// (server/live-low-latency.ts), so the three always agree on what (msn, part) names.

import { ViewTrack } from './view';
import { derived } from './view-derived';

/** One part: fragment `fragment` of the track's fragment table. */
export interface Part {
  fragment: number;
  /** Ticks of the track timescale. */
  duration: bigint;
  /** It starts with a sync sample (the index record's flag): EXT-X-PART INDEPENDENT=YES. */
  independent: boolean;
}

/** The position of a part: media sequence number and part index within the segment (from 0). */
export interface PartPosition {
  msn: number;
  part: number;
}

export interface PartLayout {
  /** Number of the view's first segment (EXT-X-MEDIA-SEQUENCE). */
  firstNumber: number;
  /** Number of the last whole (listed) segment. */
  lastWhole: number;
  /** The parts of the segment being ingested (number lastWhole + 1), possibly none yet. */
  growing: Part[];
  /** The newest part: in the growing segment, else the last part of the last whole segment. */
  last: PartPosition;
  /** The longest fragment of the window, ticks: PART-TARGET is at least this. */
  longestPart: bigint;
}

/** The part layout of a live view track (cached per view track). */
export function partLayout(t: ViewTrack): PartLayout {
  return derived(t, 'live parts', () => layoutOf(t));
}

function layoutOf(t: ViewTrack): PartLayout {
  const f = t.track.fragments;
  const s = t.segments;
  const lastSegment = s.segment(s.count - 1);
  const growingFrom = lastSegment.first + lastSegment.count;
  const growing: Part[] = [];
  for (let i = growingFrom; i < f.count; i++) growing.push(partOf(t, i));
  let longest = 0n;
  for (let i = s.segment(0).first; i < f.count; i++) {
    const d = BigInt(f.durations[i]!);
    if (d > longest) longest = d;
  }
  const lastWhole = t.firstNumber + s.count - 1;
  const last =
    growing.length > 0
      ? { msn: lastWhole + 1, part: growing.length - 1 }
      : { msn: lastWhole, part: lastSegment.count - 1 };
  return { firstNumber: t.firstNumber, lastWhole, growing, last, longestPart: longest };
}

function partOf(t: ViewTrack, fragment: number): Part {
  const f = t.track.fragments;
  return { fragment, duration: BigInt(f.durations[fragment]!), independent: f.keyframes[fragment] === 1 };
}

/** The parts of listed segment k of the view track (its fragments, in order). */
export function segmentParts(t: ViewTrack, k: number): Part[] {
  const seg = t.segments.segment(k);
  const out: Part[] = [];
  for (let i = seg.first; i < seg.first + seg.count; i++) out.push(partOf(t, i));
  return out;
}

/**
 * The part at (msn, part), or undefined when the track does not hold it (yet, or any more):
 * a listed segment's part, or one of the growing segment.
 */
export function partAt(t: ViewTrack, at: PartPosition): Part | undefined {
  const layout = partLayout(t);
  if (at.msn === layout.lastWhole + 1) return layout.growing[at.part];
  const k = at.msn - t.firstNumber;
  if (k < 0 || k >= t.segments.count) return undefined;
  return segmentParts(t, k)[at.part];
}

/**
 * Whether a blocking request's target is there (rfc8216bis §6.2.5.2): with a part, that part
 * exists or a later segment does (a part index past a segment's last means the next segment's
 * first part); without, the segment `msn` is whole.
 */
export function holdsTarget(layout: PartLayout, msn: number, part: number | undefined): boolean {
  if (part === undefined) return msn <= layout.lastWhole;
  return msn < layout.last.msn || (msn === layout.last.msn && part <= layout.last.part);
}
