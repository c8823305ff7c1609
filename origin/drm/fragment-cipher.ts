// The encryption of one source fragment's samples, worked out once and applied to its bytes as
// often as they are read (ISO/IEC 23001-7 §9, §10): where each sample lies in the fragment's
// payload, its IV (cenc, 8 bytes: drm/ivs.ts) and its subsamples (drm/subsamples.ts). Working it
// out reads every slice header of the fragment; applying it is the cipher's work alone, so a
// layout kept between requests (segments/fmp4/encrypted-layout.ts) spares the rest. It holds no
// key bytes of its own: the key is the presentation's CencProtection's, by reference. Pure.

import { originError } from '../errors';
import type { CencScheme } from '../model/protection';
import { cbcsEncryptSamples, CbcsSample, cencEncryptSamples, CencSample, Pattern } from './sample-cipher';
import type { Subsample } from './subsamples';

/** One sample of a fragment's payload and how it is encrypted. */
export interface PlannedSample {
  /** Offset of the sample in the payload, bytes. */
  at: number;
  size: number;
  /** cenc: the sample's 8-byte IV; cbcs: empty (the constant IV). */
  iv8: Uint8Array;
  /** undefined: the whole sample is protected (audio). */
  subsamples: readonly Subsample[] | undefined;
}

/** What a FragmentCipher encrypts with: the key (the protection's own bytes), scheme, cbcs IV and pattern. */
export interface CipherSetup {
  key: Uint8Array;
  scheme: CencScheme;
  /** cbcs: the track's constant IV (§10.4.1). */
  constantIv: Uint8Array;
  /** cbcs: 1:9 for video, 0:0 for audio. */
  pattern: Pattern;
}

/** Encrypts a fragment's payload in place, the same bytes every time (the IVs are fixed). */
export class FragmentCipher {
  constructor(
    private readonly setup: CipherSetup,
    private readonly samples: readonly PlannedSample[],
    /** The payload's length, bytes: the samples cover it exactly. */
    readonly payloadLength: number,
  ) {}

  /** Encrypts `payload` (the fragment's samples back to back, clear) in place. */
  apply(payload: Uint8Array): void {
    if (payload.byteLength !== this.payloadLength) {
      throw originError('internal', `a ${payload.byteLength}-byte payload for a plan of ${this.payloadLength} bytes`, {
        subject: 'fragment-cipher',
      });
    }
    const { key, scheme, constantIv, pattern } = this.setup;
    if (scheme === 'cenc') {
      const list: CencSample[] = this.samples.map((s) => ({
        sample: payload.subarray(s.at, s.at + s.size),
        iv8: s.iv8,
        subsamples: s.subsamples,
      }));
      if (list.length > 0) cencEncryptSamples(key, list);
      return;
    }
    const list: CbcsSample[] = this.samples.map((s) => ({
      sample: payload.subarray(s.at, s.at + s.size),
      subsamples: s.subsamples,
    }));
    if (list.length > 0) cbcsEncryptSamples(key, constantIv, list, pattern);
  }

  /** Bytes this plan keeps alive (a cache's cost): its sample list and subsample entries, roughly. */
  get cost(): number {
    let n = 64;
    for (const s of this.samples) n += 72 + 32 * (s.subsamples?.length ?? 0);
    return n;
  }
}
