// The per-fragment IV list (drm/ivs.ts fragmentIvs, what the segment writer takes) against the
// per-sample IV (sampleIv, base + fragment × 2^12 + k mod 2^64): the same eight bytes for every
// sample, across the 2^32 and 2^64 carries, with a derived and with an operator's base; and the
// same refusal past 4096 samples.
// continuousIvs, the 16-byte IVs of one keystream per fragment (DASH, HLS fMP4).

import { continuousIvs, MAX_SAMPLES_PER_FRAGMENT, trackIvs } from '../../../origin/drm/ivs';
import { Presentation } from '../../../origin/model/presentation';
import { thrownOriginError } from '../../helpers/errors';
import { loadPresentation, packageFixtures } from '../../helpers/presentations';

const KEYS = '00112233445566778899aabbccddeeff:3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_main_900k.ismv', 'audio_eng_64k.isma'];

async function presentation(extra: string[]): Promise<Presentation> {
  return loadPresentation(await packageFixtures(FILES, 'p', [`--iss.key=${KEYS}`, ...extra]));
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test.each([
  ['derived base', []],
  // Track 0 starts at 2^64 - 1: sample 1 of fragment 0 wraps to 0.
  ['operator base at 2^64 - 1', ['--iss.key_iv=ffffffffffffffff']],
  // The low half carries into the high one within a fragment.
  ['operator base below a 2^32 carry', ['--iss.key_iv=00000001fffffff0']],
])(
  '%s: fragmentIvs(f, n) is sampleIv(f, 0) … sampleIv(f, n - 1)',
  async (_name, extra) => {
    const p = await presentation(extra);
    for (const track of p.tracks) {
      const ivs = trackIvs(track, p.protection!.smooth!);
      for (const fragment of [0, 1, 2, 1000]) {
        const n = fragment === 1000 ? MAX_SAMPLES_PER_FRAGMENT : 40;
        const list = ivs.fragmentIvs(fragment, n);
        expect(list.byteLength).toBe(8 * n);
        for (let k = 0; k < n; k++) {
          if (hex(list.subarray(8 * k, 8 * k + 8)) !== hex(ivs.sampleIv(fragment, k))) {
            expect([fragment, k, hex(list.subarray(8 * k, 8 * k + 8))]).toEqual([
              fragment,
              k,
              hex(ivs.sampleIv(fragment, k)),
            ]);
          }
        }
      }
    }
    if (extra[0] === '--iss.key_iv=ffffffffffffffff') {
      const ivs = trackIvs(p.tracks[0]!, p.protection!.smooth!);
      expect(hex(ivs.fragmentIvs(0, 2))).toBe('ffffffffffffffff0000000000000000');
    }
  },
  60_000,
);

test('more samples than a fragment may hold: the same refusal as sampleIv', async () => {
  const p = await presentation([]);
  const ivs = trackIvs(p.tracks[0]!, p.protection!.smooth!);
  const e = thrownOriginError(() => ivs.fragmentIvs(3, MAX_SAMPLES_PER_FRAGMENT + 1));
  expect(e.code).toBe('unsupported-media');
  expect(e.message).toBe(thrownOriginError(() => ivs.sampleIv(3, MAX_SAMPLES_PER_FRAGMENT)).message);
  expect(ivs.fragmentIvs(3, 0).byteLength).toBe(0);
}, 60_000);

test('continuousIvs: the high half as given, the low half the blocks before, rounded up per sample', () => {
  const high = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const list = continuousIvs(high, [0, 1, 16, 17, 5000]);
  const lows = [0, 0, 1, 2, 4];
  lows.forEach((low, k) => {
    expect(hex(list.subarray(16 * k, 16 * k + 8))).toBe('0102030405060708');
    expect(Buffer.from(list.subarray(16 * k + 8, 16 * k + 16)).readBigUInt64BE(0)).toBe(BigInt(low));
  });
  // Past 2^32 blocks the low half carries into its upper 32 bits.
  const far = continuousIvs(high, [2 ** 36, 16]);
  expect(hex(far.subarray(24, 32))).toBe('0000000100000000');
  expect(continuousIvs(high, []).byteLength).toBe(0);
});
