// The two Smooth Streaming uuid boxes of a live fragment's traf, written fresh (never copied: a
// CMAF ingest carries neither, and a Smooth ingest's tfxd is the encoder's, not the output's):
//
// - TfxdBox (MS-SSTR §2.2.4.4, uuid 6D1D9B05-42D5-44E6-80E2-141DAFF757B2): the fragment's own
//   absolute time and duration;
// - TfrfBox (MS-SSTR §2.2.4.5, uuid D4807EF2-CA39-4695-8E54-26CB9E46A79F): the absolute times and
//   durations of the next fragments of the track, which is how a live client learns of them
//   without reloading the manifest (dash.js MSS never reloads a live manifest and refuses a live
//   fragment without a tfrf: MSS_NO_TFRF_CODE).
//
// Both in version 1 (64-bit fields): live times are UTC at the track timescale, past 2^32.
// FragmentCount is one byte, as MS-SSTR's ABNF has it and as every client reads it (dash.js's
// uuid processor, mp4box's TfrfBox, ffmpeg's movenc writes it so), which caps the lookahead at 255.
// Pure: times in, box tree out (box-writer.ts).

import { originError } from '../../errors';
import { box, field, Writable } from '../box-writer';

export const TFXD_UUID = Uint8Array.from(Buffer.from('6d1d9b0542d544e680e2141daff757b2', 'hex'));
export const TFRF_UUID = Uint8Array.from(Buffer.from('d4807ef2ca3946958e5426cb9e46a79f', 'hex'));

/** A fragment on the Smooth timeline: what a tfxd says of itself, and a tfrf of its successors. */
export interface SmoothFragmentTime {
  /** Absolute time, track timescale (the manifest's `<c t>`). */
  time: bigint;
  /** Track timescale ticks. */
  duration: bigint;
}

/** FragmentCount is UNSIGNED_INT8. */
export const MAX_TFRF_ENTRIES = 255;

const U64_LIMIT = 1n << 64n;

function checkTime(what: string, f: SmoothFragmentTime): void {
  if (f.time < 0n || f.time >= U64_LIMIT || f.duration < 0n || f.duration >= U64_LIMIT)
    throw originError('internal', `${what} time ${f.time} duration ${f.duration} is not two unsigned 64-bit values`, {
      subject: 'smooth-live-boxes',
    });
}

/** A uuid box (ISO/IEC 14496-12 §4.2: usertype after the type) with a FullBox header. */
function uuidFullBox(uuid: Uint8Array, ...content: Writable[]): Writable {
  return box('uuid', field.bytes(uuid), field.u8(1), field.u24(0), ...content);
}

export function tfxdBox(self: SmoothFragmentTime): Writable {
  checkTime('tfxd', self);
  return uuidFullBox(TFXD_UUID, field.u64(self.time), field.u64(self.duration));
}

export function tfrfBox(next: readonly SmoothFragmentTime[]): Writable {
  if (next.length > MAX_TFRF_ENTRIES)
    throw originError('internal', `a tfrf holds at most ${MAX_TFRF_ENTRIES} fragments, not ${next.length}`, {
      subject: 'smooth-live-boxes',
    });
  next.forEach((f, i) => checkTime(`tfrf entry ${i}`, f));
  return uuidFullBox(
    TFRF_UUID,
    field.u8(next.length),
    ...next.map((f) => field.group(field.u64(f.time), field.u64(f.duration))),
  );
}
