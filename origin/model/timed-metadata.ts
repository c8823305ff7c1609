// Timed metadata in the media model: events (ISO/IEC 23009-1 §5.10.3.3's emsg fields) with their
// time on a source's timeline. One shape for every way they arrive, so the writers never ask how:
//
// - a `urim` track (URI urn:mpeg:dash:event:2012) whose samples are `emsg` version 1 boxes;
// - an `evte` track (ISO/IEC 23001-18) whose samples are `emib` boxes;
// - top-level `emsg` boxes before the `moof`s of a media track ("inband").
//
// VOD sources are read into TimedEvent lists when their file is indexed (media/event-index.ts);
// a live channel's from its archive (live/channel-events.ts), in the same shape; the writers serve
// both alike (docs/design/timed-metadata.md).

/** ID3 in emsg (AOM "Carriage of ID3 Timed Metadata in CMAF"), and Apple's earlier URI for it. */
export const ID3_SCHEMES: readonly string[] = [
  'https://aomedia.org/emsg/ID3',
  'https://developer.apple.com/streaming/emsg-id3',
];
/** SCTE 214-3 §7.3.2 / SCTE 35: message_data is one splice_info_section. */
export const SCTE35_BIN_SCHEME = 'urn:scte:scte35:2013:bin';

/** emsg event_duration 0xFFFFFFFF: unknown (ISO/IEC 23009-1 §5.10.3.3.4). */
export const UNKNOWN_DURATION = 0xffffffff;

/** SCTE 35 §9.7 splice_command_type values the outputs tell apart. */
export const SPLICE_INSERT = 0x05;
export const TIME_SIGNAL = 0x06;

/** What the outputs read of a SCTE-35 splice_info_section (media/scte35.ts parses it). */
export interface SpliceInfo {
  /** splice_command_type (§9.7): 0x05 splice_insert, 0x06 time_signal, ... */
  commandType: number;
  /** 33-bit pts_adjustment, 90 kHz. */
  ptsAdjustment: number;
  /** splice_insert: the event's id (§9.7.3.1). */
  spliceEventId?: number;
  /** splice_insert: the event is cancelled. */
  cancelled?: boolean;
  /** splice_insert: 1 starts a break (out of the network), 0 returns to it. */
  outOfNetwork?: boolean;
  /** splice_time() pts_time (90 kHz, before pts_adjustment), when given. */
  ptsTime?: number;
  /** break_duration() duration (90 kHz), when given. */
  breakDuration?: number;
}

export interface TimedEvent {
  schemeIdUri: string;
  value: string;
  /** Unique per (schemeIdUri, value): the same id twice is the same event (§5.10.3.3.4). */
  id: number;
  /** Ticks per second of `time` and `duration`. */
  timescale: number;
  /** Presentation time on the source's timeline (before the presentation origin is taken off), `timescale` ticks. */
  time: bigint;
  /** `timescale` ticks; UNKNOWN_DURATION when unknown. */
  duration: number;
  /** message_data, as carried. */
  data: Uint8Array;
  /** SCTE-35 events: the section's fields, read (and its CRC checked) when the source was indexed. */
  splice?: SpliceInfo;
}

export type EventCarriage = 'urim' | 'evte' | 'emsg';

export const isId3 = (e: TimedEvent): boolean => ID3_SCHEMES.includes(e.schemeIdUri);
export const isScte35 = (e: TimedEvent): boolean => e.schemeIdUri === SCTE35_BIN_SCHEME;

/**
 * Events in presentation order with repeats removed: a metadata track repeats an event in every
 * sample it overlaps (ISO/IEC 23001-18 §6.1), and the same (scheme, value, id) is one event.
 */
export function orderEvents(events: Iterable<TimedEvent>): TimedEvent[] {
  const seen = new Set<string>();
  const out: TimedEvent[] = [];
  for (const e of events) {
    const key = `${e.schemeIdUri}\n${e.value}\n${e.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  // Exact comparison of times with different timescales: a·ts_b against b·ts_a.
  return out.sort((a, b) => {
    const l = a.time * BigInt(b.timescale);
    const r = b.time * BigInt(a.timescale);
    return l < r ? -1 : l > r ? 1 : a.id - b.id;
  });
}
