// What a low-latency dynamic MPD adds (`mpd_low_latency`; ISO/IEC 23009-1 §5.3.9.5.3 and
// §5.12, DASH-IF IOP low-latency modes, live-notes §3.6). Pure: a view in, attributes and lines out.
//
// - Chunks are the ingest fragments, segments the `mpd_minimum_fragment_length` grid segments
//   (model/live-parts.ts, the same layout LL-HLS uses). Every SegmentTemplate says
//   @availabilityTimeOffset = segment − chunk duration with @availabilityTimeComplete="false": a
//   segment may be requested once its first chunk exists, and the response then grows (dash.js
//   enters its low-latency mode only on availabilityTimeComplete="false").
// - The segment being ingested is addressed by a predicted `<S>`: once it holds one chunk, the
//   timeline ends with it, `@t` its first fragment's time, `@d` the grid duration (what it will be
//   when whole). Its `$Time$` (or `$Number$`) URL is answered chunk by chunk
//   (live/chunked-segment.ts). Before its first chunk it is not listed: the MPD never names a
//   segment the channel may never have.
// - MPD@minimumUpdatePeriod is one chunk: the client learns of the next segment within a chunk.
// - ServiceDescription (§5.12.2, dash.js ServiceDescriptionController): Latency target 2 500 ms,
//   min ¾ and max 2 × the target (as DASH-IF livesim2 writes them), PlaybackRate 0.9–1.1: with
//   livesim2's 0.96–1.04 dash.js catches up a joining second in 25 s and played 3.5–3.7 s behind
//   over a 20 s run (test/e2e/players/ll-dash-player.test.ts); with ±10 % 2.6 s.
// - ProducerReferenceTime (§5.12.3), per AdaptationSet from its first track: when the track's
//   ingest carries `prft` boxes (ISO/IEC 14496-12 §8.16.5) whose flags give a wall-clock time,
//   the newest one (model/live.ts ProducerClock, kept with the index records): its media time
//   and NTP time, @type "encoder" or "captured" from its flags (media/prft.ts producerClock). It
//   is used only when no restart of the track lies between it and the listed segments (a Period
//   of an earlier run keeps the anchor's). Else derived from the UTC anchor: ingest times are
//   UTC (the ingest refuses others), so media time t was produced at anchor + t. dash.js moves
//   its latency target by the difference (ETSI TS 103 285 §10.20.4): 0 for the anchor, the
//   encoder's delay (ffmpeg's wallclock prft: the moof's writing, a chunk after its first frame)
//   for a prft, so the target is counted from when the encoder says it made the media.

import { ticksIn } from '../model/presentation';
import { partLayout } from '../model/live-parts';
import { gridDuration } from '../model/live-window';
import { ProducerClock } from '../model/live';
import { PlayoutView, ViewTrack } from '../model/view';
import { isoDate } from './live-dates';
import { TIME_PATH, UTC_TIMING_SCHEME } from './dash-live';

type Attr = [string, string | number | undefined];

/** ServiceDescription/Latency@target, ms (issue 23; the DASH-IF/DVB reference targets 3 500). */
export const LATENCY_TARGET_MS = 2500;
const PRFT_ID = 0;

/** Whether the view's MPD is low-latency: the option, a live channel still growing, clear media. */
export function isDashLowLatency(view: PlayoutView): boolean {
  return (
    view.options.bool('mpd_low_latency') &&
    view.live !== undefined &&
    !view.live.ended &&
    view.presentation.protection?.dash === undefined &&
    !view.options.bool('timed_metadata')
  );
}

/** The segment being ingested, once it holds a chunk: output time and predicted duration, ticks. */
export interface PredictedSegment {
  time: bigint;
  duration: bigint;
  /** Chunks (ingest fragments) it holds so far. */
  chunks: number;
}

/** The growing segment of a view track (after its last whole one), undefined before its first chunk. */
export function predictedSegment(view: PlayoutView, t: ViewTrack): PredictedSegment | undefined {
  if (t.segments.count === 0) return undefined;
  const growing = partLayout(t).growing;
  if (growing.length === 0) return undefined;
  const ts = t.track.properties.TimeScale;
  const time = t.track.fragments.times[growing[0]!.fragment]! - ticksIn(view.presentation.origin, ts);
  return { time, duration: gridDuration(t.segments), chunks: growing.length };
}

/** Longest chunk of the view track, ticks (the longest fragment of its window). */
function chunkTicks(t: ViewTrack): bigint {
  return t.segments.count === 0 ? 0n : partLayout(t).longestPart;
}

/** §5.3.9.5.3: @availabilityTimeOffset (seconds) and @availabilityTimeComplete of a SegmentTemplate. */
export function lowLatencyTemplateAttributes(t: ViewTrack): Attr[] {
  const ts = BigInt(t.track.properties.TimeScale);
  const ahead = t.segments.count === 0 ? 0n : gridDuration(t.segments) - chunkTicks(t);
  // Whole milliseconds, rounded down: a segment is never announced before its first chunk.
  const ms = ahead > 0n ? (ahead * 1000n) / ts : 0n;
  return [
    ['availabilityTimeOffset', (Number(ms) / 1000).toString()],
    ['availabilityTimeComplete', 'false'],
  ];
}

/** The shortest chunk duration over the view's tracks, ms rounded up (MPD@minimumUpdatePeriod). */
export function chunkMs(view: PlayoutView): bigint {
  let best: bigint | undefined;
  for (const t of view.tracks) {
    const ts = BigInt(t.track.properties.TimeScale);
    const ms = (chunkTicks(t) * 1000n + ts - 1n) / ts;
    if (ms > 0n && (best === undefined || ms < best)) best = ms;
  }
  return best ?? 1000n;
}

/**
 * The timeline's `<S>` lines with the predicted segment after them: folded into the last run
 * when it continues it with the same duration (§5.3.9.6.2), else its own `<S>` (with @t after a gap).
 */
export function withPredicted(lines: readonly string[], end: bigint, p: PredictedSegment): string[] {
  const out = [...lines];
  const last = out.at(-1);
  const m = last === undefined ? null : /^<S( t="\d+")? d="(\d+)"(?: r="(\d+)")? \/>$/.exec(last);
  if (m !== null && p.time === end && BigInt(m[2]!) === p.duration) {
    out[out.length - 1] = `<S${m[1] ?? ''} d="${m[2]}" r="${Number(m[3] ?? 0) + 1}" />`;
    return out;
  }
  out.push(`<S${p.time === end ? '' : ` t="${p.time}"`} d="${p.duration}" />`);
  return out;
}

/** §5.12.2 ServiceDescription, before the Periods (MPDtype's sequence). */
export function serviceDescriptionLines(): string[] {
  const t = LATENCY_TARGET_MS;
  return [
    '  <ServiceDescription id="0">',
    `    <Latency referenceId="${PRFT_ID}" target="${t}" max="${2 * t}" min="${(3 * t) / 4}" />`,
    '    <PlaybackRate max="1.1" min="0.9" />',
    '  </ServiceDescription>',
  ];
}

/**
 * §5.12.3 ProducerReferenceTime of an AdaptationSet (after its InbandEventStreams): the ingest's
 * newest prft mapping when usable for this track's segments, else the first listed segment's
 * time and the wall-clock time it was produced at (anchor + time).
 */
export function producerReferenceTimeLines(view: PlayoutView, t: ViewTrack, indent: string): string[] {
  if (t.segments.count === 0) return [];
  const ts = t.track.properties.TimeScale;
  const origin = ticksIn(view.presentation.origin, ts);
  const p = sameRun(t, t.track.archive?.producer);
  const time = p === undefined ? t.segments.time(0) : p.mediaTime - origin;
  const wallMs =
    p === undefined ? view.live!.anchorSeconds * 1000 + Number((time * 1000n) / BigInt(ts)) : p.wallClockMs;
  const type = p?.type ?? 'encoder';
  return [
    `${indent}<ProducerReferenceTime id="${PRFT_ID}" type="${type}" wallClockTime="${isoDate(wallMs)}" presentationTime="${time}">`,
    `${indent}  <UTCTiming schemeIdUri="${UTC_TIMING_SCHEME}" value="${TIME_PATH}" />`,
    `${indent}</ProducerReferenceTime>`,
  ];
}

/**
 * The producer clock when it belongs to the run of the track's listed segments: no restart (a
 * new encoder anchor, live/channel.ts) after the earlier of the two and at or before the later.
 */
function sameRun(t: ViewTrack, p: ProducerClock | undefined): ProducerClock | undefined {
  if (p === undefined) return undefined;
  const first = t.segments.sourceTime(0);
  const [lo, hi] = p.fragment < first ? [p.fragment, first] : [first, p.fragment];
  return t.track.archive!.restarts.some((r) => r > lo && r <= hi) ? undefined : p;
}
