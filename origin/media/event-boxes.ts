// The event boxes, read without I/O: bytes in, TimedEvents out.
//
// - ISO/IEC 23009-1 §5.10.3.3 DASHEventMessageBox `emsg`: version 0 (scheme, value, timescale,
//   presentation_time_delta from the segment's earliest presentation time, duration, id) and
//   version 1 (timescale, absolute 64-bit presentation_time, duration, id, scheme, value);
// - ISO/IEC 23001-18 §6.1 EventMessageInstanceBox `emib` (reserved, signed 64-bit
//   presentation_time_delta from the sample's time, duration, id, scheme, value; the track's
//   timescale) and §6.2 EventMessageEmptyBox `emeb` (no event).
//
// Every length is checked; errors name the box and its file offset.

import type { TimedEvent } from '../model/timed-metadata';
import { childBoxes, printable } from './boxes';
import { ByteReader, corruptAt } from './byte-reader';

/** A NUL-terminated UTF-8 string (emsg's string fields). */
function cstring(r: ByteReader): string {
  const rest = r.bytes.subarray(r.offset);
  const end = rest.indexOf(0);
  if (end < 0) r.fail('string without its terminating NUL');
  const s = Buffer.from(rest.subarray(0, end)).toString('utf8');
  r.skip(end + 1);
  return s;
}

/**
 * An `emsg` box's payload (after the 8-byte header). `segmentTime` (the following segment's
 * earliest presentation time, in `segmentTimescale` ticks) places a version 0 box.
 */
export function parseEmsg(
  payload: Uint8Array,
  at: { path: string; offset: number },
  segment: { time: bigint; timescale: number } | undefined,
): TimedEvent {
  const r: ByteReader = new ByteReader(payload, at.path, at.offset);
  const version = r.u8();
  r.skip(3);
  if (version === 0) {
    const schemeIdUri = cstring(r);
    const value = cstring(r);
    const timescale = r.u32();
    const delta = r.u32();
    const duration = r.u32();
    const id = r.u32();
    if (timescale === 0) r.fail('emsg timescale is 0');
    if (segment === undefined) r.fail('emsg version 0 outside a segment: nothing to place its time against');
    // Segment time in the emsg's timescale, rounded down, plus the delta.
    const base = (segment.time * BigInt(timescale)) / BigInt(segment.timescale);
    return { schemeIdUri, value, id, timescale, time: base + BigInt(delta), duration, data: r.slice(r.remaining) };
  }
  if (version !== 1) r.fail(`emsg version ${version} (0 and 1 exist)`);
  const timescale = r.u32();
  const time = r.u64Big();
  const duration = r.u32();
  const id = r.u32();
  if (timescale === 0) r.fail('emsg timescale is 0');
  const schemeIdUri = cstring(r);
  const value = cstring(r);
  return { schemeIdUri, value, id, timescale, time, duration, data: r.slice(r.remaining) };
}

/** An `emib` payload: its time is the sample's plus the signed delta, on the track's timescale. */
export function parseEmib(
  payload: Uint8Array,
  at: { path: string; offset: number },
  sample: { time: bigint; timescale: number },
): TimedEvent {
  const r = new ByteReader(payload, at.path, at.offset);
  const version = r.u8();
  r.skip(3);
  if (version !== 0) r.fail(`emib version ${version} (only 0 exists)`);
  r.skip(4); // reserved
  const delta = r.i64Big();
  const duration = r.u32();
  const id = r.u32();
  const schemeIdUri = cstring(r);
  const value = cstring(r);
  return {
    schemeIdUri,
    value,
    id,
    timescale: sample.timescale,
    time: sample.time + delta,
    duration,
    data: r.slice(r.remaining),
  };
}

/**
 * One sample of a metadata track: a sequence of boxes. `urim` samples hold `emsg` version 1
 * boxes, `evte` samples `emib`; either may be a lone `emeb`. Other boxes are refused: a sample we
 * cannot read would be metadata lost without a word.
 */
export function parseEventSample(
  sample: Uint8Array,
  kind: 'urim' | 'evte',
  at: { path: string; offset: number; time: bigint; timescale: number },
): TimedEvent[] {
  const out: TimedEvent[] = [];
  for (const b of childBoxes(sample, at.offset, at.path)) {
    const where = { path: `${at.path}/${b.type}`, offset: b.start + b.headerSize };
    if (b.type === 'emeb') continue;
    // A version 0 emsg in a sample is placed against the sample's time.
    if (kind === 'urim' && b.type === 'emsg') out.push(parseEmsg(b.payload, where, at));
    else if (kind === 'evte' && b.type === 'emib') out.push(parseEmib(b.payload, where, at));
    else {
      const expected = kind === 'urim' ? 'emsg' : 'emib';
      throw corruptAt(where.path, b.start, `'${printable(b.type)}' in a ${kind} sample (expected ${expected} or emeb)`);
    }
  }
  return out;
}
