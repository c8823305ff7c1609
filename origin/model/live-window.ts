// The DVR window and the epoch grid of a live view (docs/design/live.md). The window is a clip of
// the view (liveWindow: the DVR window at the live edge, or the request's time controls), so it
// slides a whole fragment at a time. Numbers are on the epoch grid:
// segment k of a track is ⌊(t − anchor)/D + 1/8⌋ (gridSlot) with D the track's grid (liveGrid) (the DASH-IF
// ingest spec's dual-encoder rule puts boundaries at K × D since the Unix epoch), so two origins
// fed the same encoders name a segment alike whatever their windows.

import { Rational } from '../rational';
import { LiveDescription } from './live';
import { LiveRange } from './live-time';
import { PresentationTrack } from './presentation';
import { SegmentList } from './segment-list';
import { Clip } from './timeline';

/** A request's time controls on a channel (docs/guide/live.md#time-controls). */
export interface LiveControls {
  /** `t`, or `vbegin`/`vend`, seconds from the anchor (model/live-time.ts); undefined: none. */
  range: LiveRange | undefined;
  /** `time_shift`: seconds the live point of this view lies behind the live edge. */
  timeShiftSeconds: number;
  /** `dvr_window_length` given in the query, seconds; undefined: the channel's alone. */
  queryWindowSeconds: number | undefined;
}

/** What a live view lists, and the live description its writers read. */
export interface LiveViewWindow {
  clip: Clip;
  /**
   * The channel's description as this view sees it: `ended` also when the requested range ends
   * before the view's live point (no media can join it: the archive only grows forward, so the
   * writers close it: static MPD, ENDLIST); `dvrWindowSeconds` the depth from the live edge
   * back to the view's start (DASH timeShiftBufferDepth, Smooth DVRWindowLength), which a time
   * shift deepens: a DASH client counts the buffer back from its own clock, the live edge.
   */
  live: LiveDescription;
}

/**
 * The window a live view lists. Without a range: the DVR window, `dvr_window_length` seconds (the
 * channel's, or a query's if smaller: the reference's override "is capped by" the channel's),
 * ending at the live point, which is the live edge moved back by `time_shift` (the newest
 * fragment's end stands for "now", as MediaPackage's time-shift reads it, live-notes §2.2). With
 * a range: the range, cut at the live point, and to a query's `dvr_window_length` before its end
 * (the channel's window does not bound a range: a range reaches into the archive, which
 * `--archiving` keeps longer than the window). The clip keeps fragments by their midpoint
 * (timeline.ts clipRange), so the window slides a whole fragment at a time.
 */
export function liveWindow(live: LiveDescription, c: LiveControls): LiveViewWindow {
  const point = live.edgeSeconds - c.timeShiftSeconds;
  const shifted = c.timeShiftSeconds > 0;
  if (c.range === undefined) {
    const window = Math.min(live.dvrWindowSeconds, c.queryWindowSeconds ?? Infinity);
    const start = Math.max(0, point - window);
    // window + shift exactly (edge − start would round): Smooth writes it in 10 MHz ticks.
    const depth = start > 0 ? window + c.timeShiftSeconds : live.edgeSeconds;
    return { clip: { start, end: shifted ? point : undefined }, live: { ...live, dvrWindowSeconds: depth } };
  }
  const ends = c.range.end !== undefined && c.range.end <= point;
  const end = ends ? c.range.end : shifted ? point : undefined;
  let start = Math.max(c.range.start ?? 0, live.archiveStartSeconds, 0);
  if (c.queryWindowSeconds !== undefined) start = Math.max(start, (end ?? point) - c.queryWindowSeconds);
  return {
    clip: { start, end },
    live: { ...live, ended: live.ended || ends, dvrWindowSeconds: Math.max(0, live.edgeSeconds - start) },
  };
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
 * The grid D a live track's segments are numbered on. With a minimum segment length L (ticks),
 * segments are cut where the media reaches the next multiple of L (timeline.ts), so when the
 * encoder's fragments are no longer than L each segment starts in the slot after the one before:
 * D = L, whatever the segments' own durations. ffmpeg's 1.92-s fragments make 4-s HLS segments of
 * 3.84 s and 5.76 s; numbered on their most frequent duration (3.84 s) the slots drift from the
 * segments, and a count of contiguous segments depends on where an archive starts (two origins,
 * a purge). Longer fragments (each a segment of its own), or no L: the most frequent duration.
 */
function liveGrid(segments: SegmentList, track: PresentationTrack, minTicks: bigint): bigint {
  const d = gridDuration(segments);
  if (minTicks <= 0n || segments.count === 0) return d;
  const f = track.fragments.durations;
  const first = segments.first(0);
  const end = segments.first(segments.count - 1) + segments.fragments(segments.count - 1);
  const counts = new Map<number, number>();
  let common = 0;
  for (let i = first; i < end; i++) {
    const n = (counts.get(f[i]!) ?? 0) + 1;
    counts.set(f[i]!, n);
    if (n > (counts.get(common) ?? 0)) common = f[i]!;
  }
  return BigInt(common) <= minTicks ? minTicks : d;
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

/**
 * How a live view track's segments are numbered and where its timeline breaks (docs/design/live.md,
 * "Restarts and gaps"). HLS media sequence numbers stay on the epoch grid across gaps: a grid slot
 * with no media keeps its number (the playlist writes an EXT-X-GAP segment there), so a number
 * names the same segment in every window and on every origin.
 */
export interface LiveNumbering {
  /** The media sequence number of each segment: its grid slot, at least one more than the one before. */
  numbers: Float64Array;
  /** 1 where a segment starts a new run: it holds a fragment that broke the timeline (a restart). */
  restart: Uint8Array;
  /**
   * The discontinuity sequence number of the first segment (RFC 8216 §4.3.3.3): the track's
   * restarts up to and including it, counted from channel.json so that purging never lowers it.
   */
  discontinuitySequence: number;
  /** The grid duration D, ticks (gridDuration). */
  grid: bigint;
}

export function liveNumbering(segments: SegmentList, track: PresentationTrack, minTicks = 0n): LiveNumbering {
  const grid = liveGrid(segments, track, minTicks);
  const numbers = new Float64Array(segments.count);
  const restart = new Uint8Array(segments.count);
  for (let i = 0; i < segments.count; i++) {
    const slot = gridSlot(segments.time(i), grid);
    // Contiguous media takes the next number: a segment longer than the grid (fragments cut on
    // hls_minimum_fragment_length's boundaries) must not leave a number behind as a false gap.
    if (i === 0) numbers[i] = slot;
    else numbers[i] = segments.contiguous(i) ? numbers[i - 1]! + 1 : Math.max(slot, numbers[i - 1]! + 1);
  }
  const restarts = track.archive?.restarts ?? [];
  const first = segments.count === 0 ? 0n : segments.sourceTime(0);
  let after = 0;
  for (const time of restarts) {
    if (time > first) after++;
    const fragment = fragmentAt(track, time);
    const i = fragment < 0 ? -1 : segments.holding(fragment);
    if (i >= 0) restart[i] = 1;
  }
  const discontinuitySequence = Math.max(0, (track.archive?.discontinuities ?? 0) - after);
  return { numbers, restart, discontinuitySequence, grid };
}

/**
 * The number of each given source fragment of a live view track on the epoch grid of its
 * fragments: ⌊(t + F/8) / F⌋ (gridSlot) with t the fragment's output time and F the most frequent
 * duration among them, at least one more than the fragment before. HLS I-frame entries are named
 * by it (manifests/hls.ts iframeEntries): a fragment's position in the table moves when an
 * origin's archive starts later or old files are purged, its time does not, so
 * `keyframes/…-<n>` names the same keyframe on every origin fed the same encoders.
 */
export function liveFragmentNumbers(segments: SegmentList, track: PresentationTrack, fragments: number[]): number[] {
  if (segments.count === 0) return [];
  const f = track.fragments;
  const grid = fragmentGrid(track, fragments);
  const shift = outputShift(segments);
  const out: number[] = [];
  for (const i of fragments) {
    const slot = gridSlot(f.times[i]! + shift, grid);
    out.push(out.length === 0 ? slot : Math.max(slot, out[out.length - 1]! + 1));
  }
  return out;
}

/** Output time − source time of a view track's segments (one per track); 0 without segments. */
export function outputShift(segments: SegmentList): bigint {
  return segments.count === 0 ? 0n : segments.time(0) - segments.sourceTime(0);
}

/** The grid F of liveFragmentNumbers, ticks: the most frequent duration of the given fragments (ties: the longer). */
export function fragmentGrid(track: PresentationTrack, fragments: number[]): bigint {
  const durations = track.fragments.durations;
  const counts = new Map<number, number>();
  let grid = 0;
  for (const i of fragments) {
    const d = durations[i]!;
    const n = (counts.get(d) ?? 0) + 1;
    counts.set(d, n);
    if (n > (counts.get(grid) ?? 0) || (n === counts.get(grid) && d > grid)) grid = d;
  }
  return BigInt(grid);
}

/** ⌊(t + D/8) / D⌋, floored for negative times; 1 without a grid; the slot rule of timeline.ts (a tolerance of
 * D/8), so that audio starting its 1024-sample AAC priming before the video grid (ffmpeg,
 * live-notes §4.1) gets the number of the video it plays with. */
function gridSlot(t: bigint, d: bigint): number {
  if (d <= 0n) return 1;
  const x = t + d / 8n;
  const q = x / d;
  return Number(x % d !== 0n && x < 0n ? q - 1n : q);
}

/** Index of the fragment of a track that starts at a source time, −1 if none (binary search). */
function fragmentAt(track: PresentationTrack, time: bigint): number {
  const times = track.fragments.times;
  let lo = 0;
  let hi = track.fragments.count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const t = times[mid]!;
    if (t === time) return mid;
    if (t < time) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
