// FLV tags, as the `mdat` of an HDS fragment carries them (Adobe Flash Video File Format
// Specification 10.1, Annex E: E.4.1 FLVTAG, E.4.2.1 AUDIODATA, E.4.2.2 AACAUDIODATA, E.4.3.1
// VIDEODATA, E.4.3.2 AVCVIDEOPACKET; E.3: every tag is followed by a PreviousTagSize). An HDS
// client appends these bytes to an FLV stream whose header it writes itself, so a fragment's
// mdat is exactly "tag, PreviousTagSize" repeated. Pure: values in, Writable nodes out.
//
// Only H.264 (CodecID 7) and AAC (SoundFormat 10) exist here: they are what FLV carries of the
// codecs the origin packages.

import { OriginError, originError } from '../../errors';
import { field, Writable } from '../box-writer';

/** TagType (E.4.1): the low 5 bits of the first byte; Filter (encryption) and Reserved stay 0. */
export const TAG_TYPE = { audio: 8, video: 9, script: 18 } as const;
/** TagType, DataSize (UI24), Timestamp (UI24), TimestampExtended (UI8), StreamID (UI24). */
export const TAG_HEADER_SIZE = 11;
/** PreviousTagSize (UI32) after every tag (E.3). */
export const PREVIOUS_TAG_SIZE = 4;
/** VIDEODATA FrameType + CodecID, then AVCPacketType and CompositionTime (SI24): E.4.3.1. */
export const AVC_TAG_HEADER = 5;
/** AUDIODATA SoundFormat/Rate/Size/Type, then AACPacketType: E.4.2.1. */
export const AAC_TAG_HEADER = 2;

/** FrameType (E.4.3.1): 1 key frame (for AVC, a seekable frame), 2 inter frame. */
const FRAME_KEY = 1;
const FRAME_INTER = 2;
const CODEC_AVC = 7;
/** AVCPacketType (E.4.3.1): 0 sequence header (AVCDecoderConfigurationRecord), 1 NAL units. */
export const AVC_PACKET = { sequenceHeader: 0, nalu: 1 } as const;
/** AACPacketType (E.4.2.1): 0 sequence header (AudioSpecificConfig), 1 raw frame. */
export const AAC_PACKET = { sequenceHeader: 0, raw: 1 } as const;
/**
 * SoundFormat 10 (AAC), SoundRate 3, SoundSize 1 (16-bit), SoundType 1 (stereo): E.4.2.1 says an
 * AAC tag always carries rate 3 and type 1 whatever the audio is; the decoder takes the real
 * values from the AudioSpecificConfig.
 */
export const AAC_SOUND_BYTE = (10 << 4) | (3 << 2) | (1 << 1) | 1;

/** Largest timestamp a tag can carry: UI24 + UI8 extension = 32 bits of milliseconds. */
export const MAX_TIMESTAMP_MS = 0xffffffff;
const SI24_MIN = -(1 << 23);
const SI24_MAX = (1 << 23) - 1;
/** DataSize is UI24. */
const MAX_DATA_SIZE = 0xffffff;

function unsupported(why: string): OriginError {
  return originError('unsupported-media', `cannot be written as FLV: ${why}`, { subject: 'hds' });
}

/** One tag (the codec header fields, then the payload) followed by its PreviousTagSize. */
function tag(type: number, timestampMs: number, header: Writable[], data: Uint8Array): Writable {
  const dataSize = header.reduce((s, h) => s + h.size, 0) + data.byteLength;
  if (dataSize > MAX_DATA_SIZE) throw unsupported(`a tag of ${dataSize} bytes exceeds DataSize's 24 bits`);
  if (!Number.isInteger(timestampMs) || timestampMs < 0 || timestampMs > MAX_TIMESTAMP_MS) {
    throw unsupported(`timestamp ${timestampMs} ms is outside 0..2^32-1`);
  }
  return field.group(
    field.u8(type),
    field.u24(dataSize),
    field.u24(timestampMs % 0x1000000), // Timestamp: the low 24 bits
    field.u8(Math.floor(timestampMs / 0x1000000)), // TimestampExtended: the upper 8 bits
    field.u24(0), // StreamID: always 0
    ...header,
    field.bytes(data),
    field.u32(TAG_HEADER_SIZE + dataSize), // PreviousTagSize of this tag
  );
}

/** Bytes a tag with `payload` bytes after its codec header takes, PreviousTagSize included. */
export function videoTagSize(payload: number): number {
  return TAG_HEADER_SIZE + AVC_TAG_HEADER + payload + PREVIOUS_TAG_SIZE;
}

export function audioTagSize(payload: number): number {
  return TAG_HEADER_SIZE + AAC_TAG_HEADER + payload + PREVIOUS_TAG_SIZE;
}

export interface VideoTagInput {
  /** Decode time, ms. */
  timestampMs: number;
  keyframe: boolean;
  packetType: (typeof AVC_PACKET)[keyof typeof AVC_PACKET];
  /** Presentation minus decode time, ms (0 for a sequence header). */
  compositionMs: number;
  /** AVCDecoderConfigurationRecord, or NAL units with length prefixes (AVCC, ISO/IEC 14496-15 §5.3.4.2). */
  data: Uint8Array;
}

/** A video tag (E.4.3.1 VIDEODATA with an AVCVIDEOPACKET). */
export function videoTag(v: VideoTagInput): Writable {
  if (!Number.isInteger(v.compositionMs) || v.compositionMs < SI24_MIN || v.compositionMs > SI24_MAX) {
    throw unsupported(`composition time ${v.compositionMs} ms does not fit SI24`);
  }
  const frameType = v.keyframe ? FRAME_KEY : FRAME_INTER;
  const cts = v.compositionMs < 0 ? v.compositionMs + (1 << 24) : v.compositionMs; // SI24, two's complement
  return tag(
    TAG_TYPE.video,
    v.timestampMs,
    [field.u8((frameType << 4) | CODEC_AVC), field.u8(v.packetType), field.u24(cts)],
    v.data,
  );
}

export interface AudioTagInput {
  /** ms. */
  timestampMs: number;
  packetType: (typeof AAC_PACKET)[keyof typeof AAC_PACKET];
  /** AudioSpecificConfig, or one raw AAC frame (no ADTS header). */
  data: Uint8Array;
}

/** An audio tag (E.4.2.1 AUDIODATA with an AACAUDIODATA). */
export function audioTag(a: AudioTagInput): Writable {
  return tag(TAG_TYPE.audio, a.timestampMs, [field.u8(AAC_SOUND_BYTE), field.u8(a.packetType)], a.data);
}
