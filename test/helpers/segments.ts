// Segment objects for tests: what a view track's SegmentList holds, as plain objects to compare
// and map over, and the segmentation as Segment objects (the oracle of the fast paths).

import { Instant, PresentationTrack, ticksIn } from '../../origin/model/presentation';
import { Rational } from '../../origin/rational';
import { ExactSegments, SegmentList } from '../../origin/model/segment-list';
import { Segment, segmentTrackExact } from '../../origin/model/timeline';
import { ViewTrack } from '../../origin/model/view';

/** Every segment of a view track (or a list) as an object, in order. */
export function segmentsOf(t: ViewTrack | SegmentList): Segment[] {
  const list = 'firstNumber' in t ? t.segments : t;
  return Array.from({ length: list.count }, (_, i) => list.segment(i));
}

/** Segments of one track over a fragment range, joined to a minimum length (seconds, 0 = none). */
export function segmentTrack(
  track: PresentationTrack,
  origin: Instant,
  range: { first: number; end: number },
  minLength: Rational | undefined,
): Segment[] {
  return segmentTrackExact(track, ticksIn(origin, track.properties.TimeScale), range, minLength);
}

/** A SegmentList of given Segment objects (the exact form), of `track` or of none (no stats). */
export function segmentListOf(segments: Segment[], track?: PresentationTrack): SegmentList {
  return new ExactSegments(track ?? NO_TRACK, segments);
}

const NO_TRACK = {
  properties: { TimeScale: 1 },
  fragments: { keyframes: new Uint8Array(0) },
} as unknown as PresentationTrack;
