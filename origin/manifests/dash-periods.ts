// The Periods of a live channel's MPD (docs/design/live.md, "Restarts and gaps"). An encoder
// restarted with a new anchor breaks the timeline; DASH then starts a new Period (ISO/IEC 23009-1
// §5.3.2; the DASH-IF timing model: a Period must not lose segments, and Period@id, @start and
// presentationTimeOffset never change between updates). A gap inside a run (an encoder stall) is
// not a new Period: the SegmentTimeline shows the hole, an `S` with `@t` after it (§5.3.9.6).
//
// Where a Period starts: at each restart of the lead track (the first video track of the view,
// else its first track), from the restart times kept in channel.json (model/live.ts), so that a
// restarted origin and a second origin fed by the same encoders write the same Periods. The run
// the channel began with is Period "1" at PT0S, as a channel without restarts always had; a run
// begun by a restart is Period `r<ms>`, its start in milliseconds since the anchor. Every track's
// segments go to the Period that holds their start (half a segment early still counts: ffmpeg's
// audio runs 21 ms ahead of its video), and each track's presentationTimeOffset is the Period
// start in its own timescale, so `$Time$` stays the ingest time whatever the Period.
// Pure: a view in, the Periods out.

import { Instant, ticksIn } from '../model/presentation';
import { PlayoutView, ViewEvent, ViewTrack } from '../model/view';

export interface DashPeriod {
  id: string;
  /** The Period's start on the output timeline (the anchor is 0). */
  start: Instant;
  /** Each view track's segments in this Period (tracks with none left out), numbered on from the view's. */
  tracks: ViewTrack[];
  events: readonly ViewEvent[];
}

/**
 * The Periods of a view: one for VOD and for a channel without restarts in its window (`first`:
 * the instant the single Period starts at), one per run of the lead track otherwise.
 */
export function dashPeriods(view: PlayoutView, first: Instant): DashPeriod[] {
  const lead = view.tracks.find((t) => t.track.properties.type === 'video') ?? view.tracks[0];
  const single = [{ id: '1', start: first, tracks: view.tracks, events: view.events }];
  if (lead?.live === undefined) return single;
  const ts = lead.track.properties.TimeScale;
  const starts: Array<{ id: string; start: Instant }> = [];
  // The run of the first segment: the latest restart at or before it, else the channel's first.
  const before = [...(lead.track.archive?.restarts ?? [])].filter((r) => r <= lead.segments.sourceTime(0));
  const opening = before[before.length - 1];
  // A static MPD (after the end of stream) starts at its window (`first`), maybe inside the run.
  const open = opening === undefined ? undefined : runStart(opening, ts);
  starts.push(open === undefined ? { id: '1', start: first } : { id: open.id, start: later(open.start, first) });
  for (let i = 1; i < lead.segments.count; i++)
    if (lead.live.restart[i] === 1) starts.push(runStart(lead.segments.sourceTime(i), ts));
  if (starts.length === 1 && opening === undefined) return single;
  return starts.map((p, k) => {
    const next = starts[k + 1]?.start;
    return {
      ...p,
      tracks: view.tracks.flatMap((t) => {
        const part = slice(t, p.start, next);
        return part === undefined ? [] : [part];
      }),
      events: view.events.filter((e) => inPeriod({ ticks: e.time, timescale: e.timescale }, p.start, next)),
    };
  });
}

/** A run begun at a source time (output time: the anchor is 0) of the lead track. */
function runStart(ticks: bigint, timescale: number): { id: string; start: Instant } {
  const ms = ticksIn({ ticks, timescale }, 1000);
  return { id: `r${ms}`, start: { ticks, timescale } };
}

/** The segments of a track whose start (plus half a grid duration) lies in [start, next). */
function slice(t: ViewTrack, start: Instant, next: Instant | undefined): ViewTrack | undefined {
  const s = t.segments;
  const ts = t.track.properties.TimeScale;
  const half = (t.live?.grid ?? 0n) / 2n;
  const from = ticksIn(start, ts);
  const to = next === undefined ? undefined : ticksIn(next, ts);
  let a = 0;
  while (a < s.count && s.time(a) + half < from) a++;
  let b = a;
  while (b < s.count && (to === undefined || s.time(b) + half < to)) b++;
  if (b === a) return undefined;
  if (a === 0 && b === s.count) return t;
  // A live track keeps its grid numbers (`$Number$`: the Period's startNumber, its gaps' slots).
  const live =
    t.live === undefined
      ? undefined
      : { ...t.live, numbers: t.live.numbers.subarray(a, b), restart: t.live.restart.subarray(a, b) };
  return {
    ...t,
    segments: s.slice(a, b),
    firstNumber: live === undefined ? t.firstNumber + a : live.numbers[0]!,
    live,
  };
}

function later(a: Instant, b: Instant): Instant {
  return a.ticks * BigInt(b.timescale) >= b.ticks * BigInt(a.timescale) ? a : b;
}

function inPeriod(at: Instant, start: Instant, next: Instant | undefined): boolean {
  const ts = at.timescale;
  return at.ticks >= ticksIn(start, ts) && (next === undefined || at.ticks < ticksIn(next, ts));
}
