// ADTS headers for raw AAC frames (ISO/IEC 13818-7 §6.2.1 adts_fixed_header and
// adts_variable_header, as ISO/IEC 14496-3 §1.A.2 uses them for MPEG-4 AAC): what MPEG-TS
// (stream_type 0x0F, ISO/IEC 13818-1 Table 2-34) and packed audio (RFC 8216 §3.4) carry. Pure.
//
// The header is built from the track's AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1):
// - profile_ObjectType = audioObjectType − 1, for the object types ADTS can say (1..4: Main, LC,
//   SSR, LTP);
// - HE-AAC (object type 5, SBR) and HE-AACv2 (29, SBR+PS) signalled explicitly in the ASC are
//   written as their core AAC object type at the core sampling rate: ADTS signals SBR and PS
//   implicitly (§1.6.5.2, the decoder finds the extension in the frames), as Apple's and ffmpeg's
//   ADTS output do;
// - an explicit sampling frequency (index 15) or a program config element (channel
//   configuration 0) cannot be said in an ADTS header: such a track is refused (415).

import { OriginError, originError } from '../../errors';
import { BitReader } from '../../media/bit-reader';

export const ADTS_HEADER_SIZE = 7; // protection_absent = 1: no CRC
/** frame_length is 13 bits and counts the header. */
export const MAX_ADTS_FRAME = 8191;

export interface AdtsConfig {
  /** profile_ObjectType (2 bits). */
  profile: number;
  samplingFrequencyIndex: number;
  channelConfiguration: number;
}

/** The fixed part of every ADTS header of a track, from its AudioSpecificConfig. */
export function adtsConfigOf(asc: Uint8Array, what: string): AdtsConfig {
  const r = new BitReader(asc, `${what}: AudioSpecificConfig`);
  const objectType = (): number => {
    const t = r.u(5);
    return t === 31 ? 32 + r.u(6) : t;
  };
  let aot = objectType();
  const samplingFrequencyIndex = r.u(4);
  if (samplingFrequencyIndex === 15)
    throw unsupported(what, 'an explicit sampling frequency (index 15) has no ADTS form');
  const channelConfiguration = r.u(4);
  if (aot === 5 || aot === 29) {
    // extensionSamplingFrequencyIndex, then the core object type (§1.6.2.1).
    if (r.u(4) === 15) r.u(24);
    aot = objectType();
  }
  if (aot < 1 || aot > 4)
    throw unsupported(what, `audio object type ${aot} has no ADTS profile (1..4: Main, LC, SSR, LTP)`);
  if (channelConfiguration === 0 || channelConfiguration > 7) {
    throw unsupported(
      what,
      `channel configuration ${channelConfiguration} cannot be written in an ADTS header (a program config element is needed)`,
    );
  }
  return { profile: aot - 1, samplingFrequencyIndex, channelConfiguration };
}

function unsupported(what: string, why: string): OriginError {
  return originError('unsupported-media', `AAC cannot be written as ADTS: ${why}`, { subject: what });
}

/** Writes the 7-byte header of a frame of `payload` bytes at out[at]. */
export function writeAdtsHeader(out: Uint8Array, at: number, c: AdtsConfig, payload: number): void {
  const length = payload + ADTS_HEADER_SIZE;
  if (length > MAX_ADTS_FRAME) {
    throw originError('unsupported-media', `an AAC frame of ${payload} bytes does not fit ADTS's 13-bit frame_length`, {
      subject: 'adts',
    });
  }
  const fullness = 0x7ff; // variable bit rate
  out[at] = 0xff;
  out[at + 1] = 0xf1; // syncword, ID 0 (MPEG-4), layer 00, protection_absent 1
  out[at + 2] = (c.profile << 6) | (c.samplingFrequencyIndex << 2) | (c.channelConfiguration >> 2);
  out[at + 3] = ((c.channelConfiguration & 3) << 6) | (length >> 11);
  out[at + 4] = (length >> 3) & 0xff;
  out[at + 5] = ((length & 7) << 5) | (fullness >> 6);
  out[at + 6] = (fullness & 0x3f) << 2; // number_of_raw_data_blocks_in_frame = 0 (one block)
}

/** A header as its own 7 bytes. */
export function adtsHeader(c: AdtsConfig, payload: number): Uint8Array {
  const out = new Uint8Array(ADTS_HEADER_SIZE);
  writeAdtsHeader(out, 0, c, payload);
  return out;
}
