// Timed metadata in the MPD (VOD): the view's events as Period EventStreams (ISO/IEC 23009-1
// §5.10.2), not as InbandEventStream + emsg in the segments. A static MPD knows every event up
// front, so a player has them before it loads a segment, and the segments stay byte for byte
// what they are without timed metadata (docs/design/timed-metadata.md says why; live, which
// cannot list events it has not seen, is to use emsg in the segments).
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
import type { PlayoutView, ViewEvent } from '../model/view';
import { xmlAttr } from './xml';

export const SCTE35_XML_BIN_SCHEME = 'urn:scte:scte35:2014:xml+bin';
export const SCTE35_NAMESPACE = 'http://www.scte.org/schemas/35/2016';

/** The MPD's namespace declarations the event streams need. */
export function eventNamespaces(view: PlayoutView): Array<[string, string]> {
  return view.events.some((e) => isScte35(e.event)) ? [['xmlns:scte35', SCTE35_NAMESPACE]] : [];
}

/** The EventStream elements of the Period (indented for it), one per scheme, value and timescale. */
export function eventStreams(view: PlayoutView, periodStart: Instant): string[] {
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
