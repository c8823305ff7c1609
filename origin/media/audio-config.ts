// The AAC AudioSpecificConfig (ISO/IEC 14496-3:2019 §1.6.2.1): object type, sampling rate and
// channels, for the track properties and the server manifest's CodecPrivateData. (AC-3 `dac3` and
// E-AC-3 `dec3` are read in media/codec-config.ts.)

import { originError } from '../errors';
import { BitReader } from './bit-reader';

export interface AudioConfig {
  /** AAC audioObjectType (2 = LC, 5 = SBR/HE-AAC, 29 = PS/HE-AACv2). */
  objectType: number;
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
