// ADTS in MPEG-TS (ISO/IEC 13818-1 stream_type 0x0F; ISO/IEC 14496-3 §1.A.2 adts_frame) to ISO
// BMFF AAC samples (ISO/IEC 14496-14 §3.1.2, one raw_data_block per sample): each ADTS header
// (7 bytes, 9 with its CRC) is taken off, and the first header of a stream gives the
// AudioSpecificConfig (§1.6.2.1: audioObjectType = profile + 1, samplingFrequencyIndex,
// channelConfiguration). A PES may hold several frames; a frame may run on into the next PES of
// the stream (the rest is carried). Each frame is 1024 samples (§1.A.2.2: frame_length counts
// bytes, and number_of_raw_data_blocks_in_frame 0 means one block of 1024). Refused by name:
// several raw data blocks in one frame, channelConfiguration 0 (a program_config_element in
// band). Pure.

import { originError } from '../../errors';

export const AAC_FRAME_SAMPLES = 1024;
/** Table 1.16 samplingFrequencyIndex. */
const RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

export interface AdtsHeader {
  objectType: number;
  rateIndex: number;
  sampleRate: number;
  channelConfig: number;
  /** Header bytes (7, or 9 with the CRC). */
  headerSize: number;
  /** The whole frame, header included. */
  frameSize: number;
}

export interface AdtsFrames {
  frames: Array<{ header: AdtsHeader; data: Uint8Array }>;
  /** Bytes after the last whole frame: the start of a frame that goes on in the next PES. */
  rest: Uint8Array;
}

/** §1.A.2.2.1 adts_fixed_header + adts_variable_header at `at`, or undefined when fewer than 7 bytes remain. */
export function adtsHeader(b: Uint8Array, at: number, name: string): AdtsHeader | undefined {
  if (b.byteLength - at < 7) return undefined;
  if (b[at] !== 0xff || (b[at + 1]! & 0xf6) !== 0xf0)
    throw originError('corrupt-media', `no ADTS syncword at byte ${at} of a PES`, { subject: name });
  const protectionAbsent = b[at + 1]! & 1;
  const objectType = (b[at + 2]! >> 6) + 1;
  const rateIndex = (b[at + 2]! >> 2) & 0x0f;
  const channelConfig = ((b[at + 2]! & 1) << 2) | (b[at + 3]! >> 6);
  const frameSize = ((b[at + 3]! & 3) << 11) | (b[at + 4]! << 3) | (b[at + 5]! >> 5);
  const blocks = (b[at + 6]! & 3) + 1;
  const headerSize = protectionAbsent ? 7 : 9;
  const sampleRate = RATES[rateIndex];
  const bad = (m: string): never => {
    throw originError('corrupt-media', `ADTS frame at byte ${at}: ${m}`, { subject: name });
  };
  if (sampleRate === undefined) bad(`reserved samplingFrequencyIndex ${rateIndex}`);
  if (frameSize <= headerSize) bad(`frame_length ${frameSize}`);
  if (blocks > 1)
    throw originError('unsupported-media', `ADTS frames of ${blocks} raw data blocks are not supported`, {
      subject: name,
    });
  if (channelConfig === 0)
    throw originError('unsupported-media', `ADTS channelConfiguration 0 (an in-band PCE) is not supported`, {
      subject: name,
    });
  return { objectType, rateIndex, sampleRate: sampleRate!, channelConfig, headerSize, frameSize };
}

/** The whole frames of `b` (a carried rest prepended by the caller). */
export function adtsFrames(b: Uint8Array, name: string): AdtsFrames {
  const frames: AdtsFrames['frames'] = [];
  let at = 0;
  for (;;) {
    const header = adtsHeader(b, at, name);
    if (header === undefined || at + header.frameSize > b.byteLength) break;
    frames.push({ header, data: b.subarray(at + header.headerSize, at + header.frameSize) });
    at += header.frameSize;
  }
  return { frames, rest: b.subarray(at) };
}

/** §1.6.2.1 AudioSpecificConfig (2 bytes) of an ADTS header. */
export function audioSpecificConfig(h: AdtsHeader): Uint8Array {
  return Uint8Array.from([(h.objectType << 3) | (h.rateIndex >> 1), ((h.rateIndex & 1) << 7) | (h.channelConfig << 3)]);
}
