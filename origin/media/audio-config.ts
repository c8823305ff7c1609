// Decoder configuration readers for the audio codecs we carry:
// AAC AudioSpecificConfig (ISO/IEC 14496-3:2019 §1.6.2.1), AC-3 `dac3` and E-AC-3 `dec3`
// (ETSI TS 102 366 V1.4.1 Annex F.4 and F.6).

import { originError } from '../errors';
import { BitReader } from './bit-reader';

export interface AudioConfig {
  /** AAC audioObjectType (2 = LC, 5 = SBR/HE-AAC, 29 = PS/HE-AACv2); undefined for Dolby. */
  objectType: number | undefined;
  sampleRate: number;
  channels: number;
}

/** Table 1.16 samplingFrequencyIndex. */
const AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/** §1.6.2.1 AudioSpecificConfig: object type, rate and channel configuration (Table 1.19). */
export function parseAudioSpecificConfig(asc: Uint8Array): AudioConfig {
  const r = new BitReader(asc, 'esds/AudioSpecificConfig');
  const objectType = (): number => {
    const t = r.u(5);
    return t === 31 ? 32 + r.u(6) : t;
  };
  const rate = (): number => {
    const index = r.u(4);
    if (index === 15) return r.u(24);
    const v = AAC_RATES[index];
    if (v === undefined)
      throw originError('corrupt-media', `reserved samplingFrequencyIndex ${index}`, {
        subject: 'esds/AudioSpecificConfig',
      });
    return v;
  };
  const aot = objectType();
  let sampleRate = rate();
  const channelConfig = r.u(4);
  // Explicit hierarchical SBR/PS signalling: the output rate is the extension rate (§1.6.5.2).
  if (aot === 5 || aot === 29) sampleRate = rate();
  // channelConfiguration 1..6 map to 1..6 channels, 7 to 8 (Table 1.19).
  const channels = channelConfig === 7 ? 8 : channelConfig;
  return { objectType: aot, sampleRate, channels };
}

/** Channels of an AC-3 acmod (TS 102 366 Table 4.3), without the LFE. */
const ACMOD_CHANNELS = [2, 1, 2, 3, 3, 4, 4, 5];
/** fscod (Table 4.1). */
const AC3_RATES = [48000, 44100, 32000];

/** Annex F.4 AC3SpecificBox payload. */
export function parseDac3(payload: Uint8Array): AudioConfig {
  const r = new BitReader(payload, 'dac3');
  const fscod = r.u(2);
  r.u(5); // bsid
  r.u(3); // bsmod
  return dolbyConfig(fscod, r.u(3), r.u(1), 'dac3');
}

/** Annex F.6 EC3SpecificBox payload: channels of the first independent substream. */
export function parseDec3(payload: Uint8Array): AudioConfig {
  const r = new BitReader(payload, 'dec3');
  r.u(13); // data_rate
  r.u(3); // num_ind_sub
  const fscod = r.u(2);
  r.u(5); // bsid
  r.u(1); // reserved
  r.u(1); // asvc
  r.u(3); // bsmod
  return dolbyConfig(fscod, r.u(3), r.u(1), 'dec3');
}

function dolbyConfig(fscod: number, acmod: number, lfeon: number, what: string): AudioConfig {
  const sampleRate = AC3_RATES[fscod];
  if (sampleRate === undefined) throw originError('corrupt-media', `reserved fscod ${fscod}`, { subject: what });
  return { objectType: undefined, sampleRate, channels: ACMOD_CHANNELS[acmod]! + lfeon };
}
