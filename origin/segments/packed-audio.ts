// Packed audio segments (RFC 8216 §3.4): an ID3v2.4 tag whose PRIV frame, owned by
// `com.apple.streaming.transportStreamTimestamp`, gives the 33-bit MPEG-2 PTS (90 kHz) of the
// first frame as an 8-byte big-endian number, followed by the frames: ADTS for AAC (§3.4 "ADTS
// frames"), raw syncframes for AC-3 and E-AC-3. Pure.
//
// ID3v2.4 (id3.org ID3v2.4.0-structure): a 10-byte header ("ID3", version 4.0, flags 0,
// syncsafe size of what follows), then frames with a 10-byte header (id, syncsafe size, flags);
// PRIV (ID3v2.4.0-frames §4.27) is the owner identifier, NUL-terminated, then the private data.
//
// SAMPLE-AES packed audio (Apple, "MPEG-2 Stream Encryption Format for HTTP Live Streaming"
// §2.3.4): the same tag carries a second PRIV frame, owned by `com.apple.streaming.audioDescription`,
// whose data is the audio setup information (origin/drm/sample-aes-ts.ts), and the frames come
// encrypted. ffmpeg's HLS demuxer reads the codec of encrypted AC-3 and E-AC-3 from it.

import { originError } from '../errors';
import { ADTS_HEADER_SIZE, AdtsConfig, writeAdtsHeader } from './mpegts/adts';
import { TIMESTAMP_WRAP } from './mpegts/ts-packets';

export const TIMESTAMP_OWNER = 'com.apple.streaming.transportStreamTimestamp';
export const AUDIO_DESCRIPTION_OWNER = 'com.apple.streaming.audioDescription';
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

/**
 * The ID3 tag with the transport stream timestamp `pts` (90 kHz; taken modulo 2^33) and, for
 * SAMPLE-AES, the audio setup information.
 */
export function timestampTag(pts: bigint, audioDescription?: Uint8Array): Uint8Array {
  const extra = audioDescription === undefined ? 0 : FRAME_HEADER + AUDIO_DESCRIPTION_OWNER.length + 1;
  const out = new Uint8Array(TIMESTAMP_TAG_SIZE + extra + (audioDescription?.byteLength ?? 0));
  out.set([0x49, 0x44, 0x33, 4, 0, 0]); // "ID3", v2.4.0, no flags
  writeSyncsafe(out, 6, out.byteLength - ID3_HEADER);
  const wrapped = ((pts % TIMESTAMP_WRAP) + TIMESTAMP_WRAP) % TIMESTAMP_WRAP;
  const stamp = new Uint8Array(8);
  new DataView(stamp.buffer).setBigUint64(0, wrapped);
  let at = writePriv(out, ID3_HEADER, TIMESTAMP_OWNER, stamp);
  if (audioDescription !== undefined) at = writePriv(out, at, AUDIO_DESCRIPTION_OWNER, audioDescription);
  if (at !== out.byteLength)
    throw originError('internal', `ID3 tag wrote ${at} of ${out.byteLength} bytes`, { subject: 'id3' });
  return out;
}

/** A PRIV frame (frame flags 0) at out[at]; returns the offset after it. */
function writePriv(out: Uint8Array, at: number, owner: string, data: Uint8Array): number {
  out.set([0x50, 0x52, 0x49, 0x56], at); // "PRIV"
  writeSyncsafe(out, at + 4, owner.length + 1 + data.byteLength);
  at += FRAME_HEADER;
  for (let i = 0; i < owner.length; i++) out[at++] = owner.charCodeAt(i);
  out[at++] = 0;
  out.set(data, at);
  return at + data.byteLength;
}

/**
 * The segment: the timestamp tag (with the audio setup information when given: SAMPLE-AES), then
 * every frame (with its ADTS header for AAC), in a buffer from `allocate` (exactly `size` bytes,
 * their content does not matter); by default a new one.
 */
export function packedAudioSegment(
  codec: PackedCodec,
  firstPts: bigint,
  frames: readonly Uint8Array[],
  audioDescription?: Uint8Array,
  allocate: (size: number) => Uint8Array = (size) => new Uint8Array(size),
): Uint8Array {
  const tag = timestampTag(firstPts, audioDescription);
  const perFrame = codec.kind === 'aac' ? ADTS_HEADER_SIZE : 0;
  const size = tag.byteLength + frames.reduce((s, f) => s + perFrame + f.byteLength, 0);
  // Every byte is written below (the tag, each header and frame; the end check proves the count),
  // so `allocate` need not zero-fill: the server lends pooled buffers (io/buffers.ts BufferLoan).
  const out = allocate(size);
  if (out.byteLength !== size)
    throw originError('internal', `an output of ${out.byteLength} bytes for a ${size}-byte segment`, {
      subject: 'packed-audio',
    });
  out.set(tag, 0);
  let at = tag.byteLength;
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
