// Timed metadata in the MPD (VOD): the view's events as Period EventStreams (ISO/IEC 23009-1
// §5.10.2), not as InbandEventStream + emsg in the segments. A static MPD knows every event up
// front, so a player has them before it loads a segment, and the segments stay byte for byte
// what they are without timed metadata (docs/design/timed-metadata.md says why).
// Live, whose MPD cannot list events it has not seen, carries them as `emsg` in the segments
// (segments/fmp4/emsg.ts) and announces each scheme with an InbandEventStream (§5.10.3.2) in the
// AdaptationSets whose segments carry them, schemeIdUri and value exactly the emsg's (dash.js
// drops an emsg whose pair no InbandEventStream names). Also after the end of stream: a
// segment's bytes never change.
//
// - ID3 (and any scheme but SCTE-35): an EventStream with the emsg's schemeIdUri and value, the
//   message base64 in the Event's content (contentEncoding="base64", §5.10.2.2).
// - SCTE-35: SCTE 214-1 §6.7.4's `urn:scte:scte35:2014:xml+bin`, the splice_info_section byte for
//   byte, base64, in scte35:Signal/scte35:Binary.
//
// presentationTime is on the stream's timescale from the Period start (presentationTimeOffset
// says where that is on the output timeline, §5.10.2.2), id is the emsg's.

import { Instant, ticksIn } from '../model/presentation';
import { isScte35, UNKNOWN_DURATION } from '../model/timed-metadata';
import type { PlayoutView, ViewEvent, ViewTrack } from '../model/view';
import { xmlAttr } from './xml';

export const SCTE35_XML_BIN_SCHEME = 'urn:scte:scte35:2014:xml+bin';
export const SCTE35_NAMESPACE = 'http://www.scte.org/schemas/35/2016';

/** The MPD's namespace declarations the event streams need. */
export function eventNamespaces(view: PlayoutView): Array<[string, string]> {
  if (view.presentation.live !== undefined) return [];
  return view.events.some((e) => isScte35(e.event)) ? [['xmlns:scte35', SCTE35_NAMESPACE]] : [];
}

/**
 * Live: the InbandEventStream elements (indented for an AdaptationSet) of a set whose segments
 * carry events, one per (schemeIdUri, value) the channel's archive holds, so that the list does
 * not change as events slide in and out of the window.
 */
export function inbandEventStreams(view: PlayoutView, first: ViewTrack): string[] {
  if (view.presentation.live === undefined || !view.options.bool('timed_metadata')) return [];
  // The tracks whose segments carry the events (emsg.ts carriesEvents): video, else audio.
  const type = first.track.properties.type;
  const video = view.tracks.some((x) => x.track.properties.type === 'video');
  if (type !== 'video' && (type !== 'audio' || video)) return [];
  const pairs = new Map<string, [string, string]>();
  for (const t of view.presentation.tracks)
    for (const e of t.events ?? []) pairs.set(`${e.schemeIdUri}\n${e.value}`, [e.schemeIdUri, e.value]);
  return [...pairs.values()].map(
    ([scheme, value]) => `      <InbandEventStream schemeIdUri="${xmlAttr(scheme)}" value="${xmlAttr(value)}" />`,
  );
}

/** The EventStream elements of the Period (indented for it), one per scheme, value and timescale. */
export function eventStreams(view: PlayoutView, periodStart: Instant): string[] {
  if (view.presentation.live !== undefined) return [];
  const streams = new Map<string, { scheme: string; value: string; timescale: number; events: ViewEvent[] }>();
  for (const e of view.events) {
    const scheme = isScte35(e.event) ? SCTE35_XML_BIN_SCHEME : e.event.schemeIdUri;
    const key = `${scheme}\n${e.event.value}\n${e.timescale}`;
    let s = streams.get(key);
    if (s === undefined) streams.set(key, (s = { scheme, value: e.event.value, timescale: e.timescale, events: [] }));
    s.events.push(e);
  }
  const lines: string[] = [];
  for (const s of streams.values()) {
    const offset = ticksIn(periodStart, s.timescale);
    lines.push(
      `    <EventStream schemeIdUri="${xmlAttr(s.scheme)}" value="${xmlAttr(s.value)}" timescale="${s.timescale}"${offset > 0n ? ` presentationTimeOffset="${offset}"` : ''}>`,
    );
    for (const e of s.events) lines.push(...eventElement(e));
    lines.push('    </EventStream>');
  }
  return lines;
}

function eventElement(e: ViewEvent): string[] {
  const ev = e.event;
  const base64 = Buffer.from(ev.data).toString('base64');
  const scaled =
    ev.duration === UNKNOWN_DURATION ? undefined : (BigInt(ev.duration) * BigInt(e.timescale)) / BigInt(ev.timescale);
  const attrs = `presentationTime="${e.time}"${scaled === undefined ? '' : ` duration="${scaled}"`} id="${ev.id}"`;
  if (isScte35(ev)) {
    return [
      `      <Event ${attrs}>`,
      '        <scte35:Signal>',
      `          <scte35:Binary>${base64}</scte35:Binary>`,
      '        </scte35:Signal>',
      '      </Event>',
    ];
  }
  return [`      <Event ${attrs} contentEncoding="base64">${base64}</Event>`];
}
