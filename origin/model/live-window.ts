// The DVR window and the epoch grid of a live view (docs/design/live.md). The window is a clip of
// the view: the fragments whose midpoint lies within `dvr_window_length` seconds of the live edge
// (timeline.ts clipRange), so it slides a whole fragment at a time. Numbers are on the epoch grid:
// segment k of a track is ⌊(t − anchor)/D + 1/8⌋ (gridNumber) with D the track's fragment duration (the DASH-IF
// ingest spec's dual-encoder rule puts boundaries at K × D since the Unix epoch), so two origins
// fed the same encoders name a segment alike whatever their windows.

import { Rational } from '../rational';
import { LiveDescription } from './live';
import { PresentationTrack } from './presentation';
import { SegmentList } from './segment-list';
import { Clip } from './timeline';

/** The clip a live view lists: the DVR window ending at the live edge. */
export function liveWindow(live: LiveDescription): Clip {
  return { start: Math.max(0, live.edgeSeconds - live.dvrWindowSeconds), end: undefined };
}

/**
 * The grid duration D of a track's segments in the view, ticks: the most frequent segment
 * duration (ties: the longer). A steady encoder's segments all have it; a short last fragment
 * (end of stream) or one after a restart does not move it.
 */
export function gridDuration(segments: SegmentList): bigint {
  const counts = new Map<bigint, number>();
  let best = 0n;
  let bestCount = 0;
  for (let i = 0; i < segments.count; i++) {
    const d = segments.duration(i);
    const n = (counts.get(d) ?? 0) + 1;
    counts.set(d, n);
    if (n > bestCount || (n === bestCount && d > best)) {
      best = d;
      bestCount = n;
    }
  }
  return best;
}

/**
 * The number of the view's first segment on the epoch grid, ⌊(t + D/8) / D⌋ (output times are
 * anchor-relative): the slot rule of timeline.ts, so that audio starting its 1024-sample AAC
 * priming before the video grid (ffmpeg, live-notes §4.1) gets the number of the video it plays with.
 */
export function gridNumber(segments: SegmentList): number {
  const d = gridDuration(segments);
  if (segments.count === 0 || d <= 0n) return 1;
  const t = segments.time(0) + d / 8n;
  const q = t / d;
  return Number(t % d !== 0n && t < 0n ? q - 1n : q);
}

/**
 * The segments a live view lists: without a first one that starts inside its slot, and, until the
 * end of stream, without a last one that can still grow (wholeSegments). A first segment starts
 * inside its slot when the archive starts there (an origin that began hearing the encoders
 * mid-slot, or a purge at an archive file boundary off the grid): the URL of its slot (the HLS
 * media sequence number) names the whole slot on every other origin and after the slot's start
 * is gone, so it is not listed until the window leaves it.
 */
export function listedSegments(
  segments: SegmentList,
  minLength: Rational | undefined,
  timescale: number,
  ended: boolean,
): SegmentList {
  const from = startsInsideSlot(segments, minLength, timescale) ? segments.slice(1, segments.count) : segments;
  return ended ? from : wholeSegments(from, minLength, timescale);
}

function startsInsideSlot(segments: SegmentList, minLength: Rational | undefined, timescale: number): boolean {
  if (minLength === undefined || minLength.num <= 0 || segments.count === 0) return false;
  const l = (minLength.num * timescale) / minLength.den;
  const start = Number(segments.time(0));
  const slot = Math.floor((start + l / 8) / l);
  return start - slot * l > l / 8;
}

/**
 * The segments without the last one while it can still grow: with a minimum segment length L, a
 * segment is whole once its media reaches the next multiple of L (the tolerance of timeline.ts,
 * L/8); before that, the next fragment joins it, and a URL must not name other bytes later.
 * Without L every segment is one fragment, whole when it is archived.
 */
export function wholeSegments(segments: SegmentList, minLength: Rational | undefined, timescale: number): SegmentList {
  if (minLength === undefined || minLength.num <= 0 || segments.count === 0) return segments;
  const l = (minLength.num * timescale) / minLength.den;
  const last = segments.count - 1;
  const start = Number(segments.time(last));
  const slot = Math.floor((start + l / 8) / l);
  const end = start + Number(segments.duration(last));
  return end + l / 8 >= (slot + 1) * l ? segments : segments.slice(0, last);
}

/**
 * The `mfhd` sequence number of fragment i of a track (ISO/IEC 14496-12 §8.8.5: increasing). VOD:
 * its position from 1. Live: the table's positions move as old files are purged, and a segment's
 * bytes must not, so the number comes from the fragment's time: tenths of a second since the
 * anchor, modulo 2^32 (increasing for fragments of 100 ms and longer).
 */
export function fragmentSequenceNumber(track: PresentationTrack, i: number): number {
  if (track.archive === undefined) return i + 1;
  const tenths = (track.fragments.times[i]! * 10n) / BigInt(track.properties.TimeScale);
  return Number(BigInt.asUintN(32, tenths));
}
