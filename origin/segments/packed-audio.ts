// Packed audio segments (RFC 8216 §3.4): an ID3v2.4 tag whose PRIV frame, owned by
// `com.apple.streaming.transportStreamTimestamp`, gives the 33-bit MPEG-2 PTS (90 kHz) of the
// first frame as an 8-byte big-endian number, followed by the frames: ADTS for AAC (§3.4 "ADTS
// frames"), raw syncframes for AC-3 and E-AC-3. Pure.
//
// ID3v2.4 (id3.org ID3v2.4.0-structure): a 10-byte header ("ID3", version 4.0, flags 0,
// syncsafe size of what follows), then frames with a 10-byte header (id, syncsafe size, flags);
// PRIV (ID3v2.4.0-frames §4.27) is the owner identifier, NUL-terminated, then the private data.

import { originError } from '../errors';
import { ADTS_HEADER_SIZE, AdtsConfig, writeAdtsHeader } from './mpegts/adts';
import { TIMESTAMP_WRAP } from './mpegts/ts-packets';

export const TIMESTAMP_OWNER = 'com.apple.streaming.transportStreamTimestamp';
const ID3_HEADER = 10;
const FRAME_HEADER = 10;
const PRIV_DATA = TIMESTAMP_OWNER.length + 1 + 8;
export const TIMESTAMP_TAG_SIZE = ID3_HEADER + FRAME_HEADER + PRIV_DATA;

export type PackedCodec = { kind: 'aac'; adts: AdtsConfig } | { kind: 'ac3' } | { kind: 'ec3' };

/** Syncsafe integer (ID3v2.4 §6.2): 4 × 7 bits. */
function writeSyncsafe(out: Uint8Array, at: number, value: number): void {
  if (value >= 1 << 28) throw originError('internal', `${value} does not fit a syncsafe integer`, { subject: 'id3' });
  out[at] = (value >> 21) & 0x7f;
  out[at + 1] = (value >> 14) & 0x7f;
  out[at + 2] = (value >> 7) & 0x7f;
  out[at + 3] = value & 0x7f;
}

/** The ID3 tag with the transport stream timestamp `pts` (90 kHz; taken modulo 2^33). */
export function timestampTag(pts: bigint): Uint8Array {
  const out = new Uint8Array(TIMESTAMP_TAG_SIZE);
  out.set([0x49, 0x44, 0x33, 4, 0, 0]); // "ID3", v2.4.0, no flags
  writeSyncsafe(out, 6, FRAME_HEADER + PRIV_DATA);
  out.set([0x50, 0x52, 0x49, 0x56], ID3_HEADER); // "PRIV"
  writeSyncsafe(out, ID3_HEADER + 4, PRIV_DATA);
  // frame flags: 0, 0
  let at = ID3_HEADER + FRAME_HEADER;
  for (let i = 0; i < TIMESTAMP_OWNER.length; i++) out[at++] = TIMESTAMP_OWNER.charCodeAt(i);
  out[at++] = 0;
  const wrapped = ((pts % TIMESTAMP_WRAP) + TIMESTAMP_WRAP) % TIMESTAMP_WRAP;
  new DataView(out.buffer).setBigUint64(at, wrapped);
  return out;
}

/** The segment: the timestamp tag, then every frame (with its ADTS header for AAC). */
export function packedAudioSegment(codec: PackedCodec, firstPts: bigint, frames: readonly Uint8Array[]): Uint8Array {
  const perFrame = codec.kind === 'aac' ? ADTS_HEADER_SIZE : 0;
  const size = TIMESTAMP_TAG_SIZE + frames.reduce((s, f) => s + perFrame + f.byteLength, 0);
  const out = new Uint8Array(size);
  out.set(timestampTag(firstPts), 0);
  let at = TIMESTAMP_TAG_SIZE;
  for (const f of frames) {
    if (codec.kind === 'aac') {
      writeAdtsHeader(out, at, codec.adts, f.byteLength);
      at += ADTS_HEADER_SIZE;
    }
    out.set(f, at);
    at += f.byteLength;
  }
  if (at !== size)
    throw originError('internal', `packed audio wrote ${at} of ${size} bytes`, { subject: 'packed-audio' });
  return out;
}
