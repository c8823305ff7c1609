// The per-fragment IV list (drm/ivs.ts fragmentIvs, what the segment writer takes) against the
// per-sample IV (sampleIv, base + fragment × 2^12 + k mod 2^64): the same eight bytes for every
// sample, across the 2^32 and 2^64 carries, with a derived and with an operator's base; and the
// same refusal past 4096 samples.

import { MAX_SAMPLES_PER_FRAGMENT, trackIvs } from '../../../origin/drm/ivs';
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
