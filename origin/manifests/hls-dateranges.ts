// SCTE-35 cues in HLS media playlists (RFC 8216bis §4.4.5.1 EXT-X-DATERANGE, §4.4.5.1.1 Mapping
// SCTE-35 into EXT-X-DATERANGE), with the EXT-X-PROGRAM-DATE-TIME (§4.4.4.6) that dates them.
//
// - splice_insert with out_of_network_indicator 1: SCTE35-OUT, PLANNED-DURATION from the break
//   duration; with 0: SCTE35-IN. Both carry ID="splice-<splice_event_id, 8 hex digits>" (the RFC's
//   own example), so the return closes the break it belongs to: the IN tag repeats the OUT tag's
//   START-DATE (§4.4.5.1: tags with one ID agree on every attribute both carry) and adds DURATION.
// - any other command (time_signal, ...): SCTE35-CMD, ID="scte35-<emsg id>".
// The values are the splice_info_section byte for byte, CRC_32 included, as 0x-hex.
//
// Dates: a VOD presentation has no wall clock, so `hls_program_date_time` (an option, default
// 1970-01-01T00:00:00Z) is the date of output time 0; the PROGRAM-DATE-TIME before the first
// segment is that plus the segment's output time, START-DATE that plus the cue's. A playlist gets
// both only when the view has a SCTE-35 cue. Live dates are the ingest's UTC (the channel
// anchor plus the output time), and every live playlist has its PROGRAM-DATE-TIME already
// (hls.ts): only the DATERANGEs are written here.
//
// Pairing across reloads: an IN whose OUT has left the view (the live window slid past it, or a
// clip starts between them) still takes the OUT's START-DATE, found among the presentation's
// events, so that one ID keeps one START-DATE in every playlist that lists it.

import { originError } from '../errors';
import { isScte35, orderEvents, SPLICE_INSERT } from '../model/timed-metadata';
import type { PlayoutView, ViewEvent, ViewTrack } from '../model/view';

/** The PROGRAM-DATE-TIME and DATERANGE lines of a media playlist whose first segments are `main`'s; [] without cues. */
export function dateRangeLines(view: PlayoutView, main: ViewTrack): string[] {
  const cues = view.events.filter((e) => isScte35(e.event) && e.event.splice !== undefined);
  if (cues.length === 0) return [];
  const live = view.presentation.live;
  const text = view.options.str('hls_program_date_time') ?? '1970-01-01T00:00:00Z';
  const anchor = live !== undefined ? live.anchorSeconds * 1000 : Date.parse(text);
  // The option's pattern takes 2026-13-45T00:00:00Z, which is no date.
  if (!Number.isFinite(anchor))
    throw originError('bad-option', `${JSON.stringify(text)} is not a date`, { subject: 'hls_program_date_time' });
  const ts = main.track.properties.TimeScale;
  const lines =
    live !== undefined ? [] : [`#EXT-X-PROGRAM-DATE-TIME:${date(anchor, Number(main.segments.time(0)) / ts)}`];
  const outs = earlierOuts(view, cues[0]!, anchor);
  for (const e of cues) lines.push(dateRange(e, anchor, outs));
  return lines;
}

/** The OUTs of the presentation before the view's first cue, by splice_event_id (see the header). */
function earlierOuts(
  view: PlayoutView,
  first: ViewEvent,
  anchor: number,
): Map<number, { start: string; seconds: number }> {
  const outs = new Map<number, { start: string; seconds: number }>();
  const p = view.presentation;
  const origin = Number(p.origin.ticks) / p.origin.timescale;
  const f = first.event;
  for (const e of orderEvents(p.tracks.flatMap((t) => t.events ?? []))) {
    // Source times, each in its own timescale: stop at the first cue, exactly.
    if (e.time * BigInt(f.timescale) >= f.time * BigInt(e.timescale)) break;
    const s = e.splice;
    if (s?.commandType !== SPLICE_INSERT || s.spliceEventId === undefined || s.cancelled === true) continue;
    if (s.outOfNetwork === true) {
      const seconds = Number(e.time) / e.timescale - origin;
      outs.set(s.spliceEventId, { start: date(anchor, seconds), seconds });
    } else outs.delete(s.spliceEventId);
  }
  return outs;
}

function dateRange(e: ViewEvent, anchor: number, outs: Map<number, { start: string; seconds: number }>): string {
  const s = e.event.splice!;
  const seconds = Number(e.time) / e.timescale;
  const hex = `0x${Buffer.from(e.event.data).toString('hex').toUpperCase()}`;
  if (s.commandType === SPLICE_INSERT && s.spliceEventId !== undefined && s.cancelled !== true) {
    const id = `splice-${s.spliceEventId.toString(16).toUpperCase().padStart(8, '0')}`;
    if (s.outOfNetwork === true) {
      const start = date(anchor, seconds);
      outs.set(s.spliceEventId, { start, seconds });
      const planned = s.breakDuration === undefined ? '' : `,PLANNED-DURATION=${decimal(s.breakDuration / 90000)}`;
      return `#EXT-X-DATERANGE:ID="${id}",START-DATE="${start}"${planned},SCTE35-OUT=${hex}`;
    }
    const out = outs.get(s.spliceEventId);
    if (out !== undefined) {
      outs.delete(s.spliceEventId);
      return `#EXT-X-DATERANGE:ID="${id}",START-DATE="${out.start}",DURATION=${decimal(seconds - out.seconds)},SCTE35-IN=${hex}`;
    }
    return `#EXT-X-DATERANGE:ID="${id}",START-DATE="${date(anchor, seconds)}",SCTE35-IN=${hex}`;
  }
  return `#EXT-X-DATERANGE:ID="scte35-${e.event.id}",START-DATE="${date(anchor, seconds)}",SCTE35-CMD=${hex}`;
}

/** ISO 8601 with milliseconds (§4.4.4.6), UTC. */
function date(anchorMs: number, seconds: number): string {
  return new Date(anchorMs + Math.round(seconds * 1000)).toISOString();
}

/** Seconds as a decimal-floating-point (§4.2), to the millisecond. */
function decimal(seconds: number): string {
  return String(Math.round(seconds * 1000) / 1000);
}
