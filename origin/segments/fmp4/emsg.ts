// `emsg` boxes in fMP4 media segments (HLS fMP4): the writer of ISO/IEC 23009-1 §5.10.3.3
// version 1 (media/event-boxes.ts is its reader; test/origin/media/event-boxes.test.ts makes the
// round trip), which events a segment carries, and where they go: after the `styp`, before the
// first `moof` (§5.10.3.3.1: an emsg precedes the moof of the segment it applies to).
//
// Which tracks carry them: every video track, or every audio track when the view has no video,
// so that the events come once whichever rendition a player plays (hls.js reads ID3 from the emsg
// boxes of the segments it plays), and not once per track of a multiplexed playback.

import { originError } from '../../errors';
import type { ViewEvent, ViewTrack, PlayoutView } from '../../model/view';
import { UNKNOWN_DURATION } from '../../model/timed-metadata';
import { field, fullBox, serialize } from '../box-writer';
import type { SegmentPart } from './media-segment';

/**
 * Version 1: the absolute presentation time on the output timeline, in the view event's
 * timescale (the duration converted to it; unknown when it no longer fits 32 bits).
 */
export function writeEmsg(e: ViewEvent): Uint8Array {
  const ev = e.event;
  if (e.time < 0n) throw originError('internal', `event ${ev.id} before the presentation`, { subject: 'emsg' });
  const scaled = ev.duration === UNKNOWN_DURATION ? UNKNOWN_DURATION : (ev.duration * e.timescale) / ev.timescale;
  const duration = Number.isInteger(scaled) && scaled < UNKNOWN_DURATION ? scaled : UNKNOWN_DURATION;
  return serialize(
    fullBox(
      'emsg',
      1,
      0,
      field.u32(e.timescale),
      field.u64(e.time),
      field.u32(duration),
      field.u32(ev.id),
      field.cstring(ev.schemeIdUri),
      field.cstring(ev.value),
      field.bytes(ev.data),
    ),
  );
}

/** Whether this view track's segments carry the view's events (see the header). */
export function carriesEvents(view: PlayoutView, t: ViewTrack): boolean {
  if (view.events.length === 0) return false;
  const type = t.track.properties.type;
  if (type === 'video') return true;
  return type === 'audio' && !view.tracks.some((x) => x.track.properties.type === 'video');
}

/**
 * The events whose output time falls in [start, end) of segment `index` of `t`; the first
 * segment also takes those before it, the last those after it. Live: its own span only, so that
 * a segment's bytes do not depend on the window that lists it (docs/design/live.md).
 */
export function segmentEvents(view: PlayoutView, t: ViewTrack, index: number): ViewEvent[] {
  const ts = BigInt(t.track.properties.TimeScale);
  const s = t.segments;
  const live = view.presentation.live !== undefined;
  const start = index === 0 && !live ? undefined : s.time(index);
  const end = index + 1 < s.count ? s.time(index + 1) : live ? s.time(index) + s.duration(index) : undefined;
  // e.time / e.timescale against ticks / ts, exactly.
  return view.events.filter((e) => {
    const at = e.time * ts;
    const scale = BigInt(e.timescale);
    return (start === undefined || at >= start * scale) && (end === undefined || at < end * scale);
  });
}

/**
 * The parts with `emsg` boxes after the leading `styp` (or at the start without one). The first
 * part holds the styp (media-segment.ts mediaSegmentParts writes styp and moof as one part).
 */
export function withEmsg(
  parts: SegmentPart[],
  length: number,
  events: readonly ViewEvent[],
): { parts: SegmentPart[]; length: number } {
  if (events.length === 0) return { parts, length };
  const boxes = events.map(writeEmsg);
  const first = parts[0];
  if (first === undefined || first.kind !== 'bytes')
    throw originError('internal', 'a segment that does not open with its boxes', { subject: 'emsg' });
  const b = first.bytes;
  const isStyp = b.byteLength >= 8 && String.fromCharCode(b[4]!, b[5]!, b[6]!, b[7]!) === 'styp';
  const at = isStyp ? new DataView(b.buffer, b.byteOffset, 4).getUint32(0) : 0;
  const bytes = Buffer.concat([b.subarray(0, at), ...boxes, b.subarray(at)]);
  const added = bytes.byteLength - b.byteLength;
  return { parts: [{ kind: 'bytes', bytes }, ...parts.slice(1)], length: length + added };
}

/**
 * The events an HLS fMP4 segment of `t` carries, and what its ETag adds for them (its bytes
 * differ from the same segment without them).
 */
export function hlsSegmentEvents(
  view: PlayoutView,
  t: ViewTrack,
  index: number,
): { events: ViewEvent[]; etag: string } {
  const events = carriesEvents(view, t) ? segmentEvents(view, t, index) : [];
  return { events, etag: events.length === 0 ? '' : `-emsg:${events.map((e) => e.event.id).join(',')}` };
}

/**
 * The events a segment of `t` carries as emsg boxes in `format` (fMP4 segments; undefined for
 * others): HLS always, DASH when live (VOD DASH lists them in the MPD: manifests/dash-events.ts).
 */
export function segmentEmsg(
  view: PlayoutView,
  t: ViewTrack,
  index: number,
  format: string | undefined,
): { events: ViewEvent[]; etag: string } {
  const inband = format === 'hls' || (format === 'dash' && view.presentation.live !== undefined);
  return inband ? hlsSegmentEvents(view, t, index) : { events: [], etag: '' };
}
