// FragmentCipher (origin/drm/fragment-cipher.ts: a fragment's encryption planned once as flat
// arrays, applied with a cipher per large sample and one batched keystream for the small ones, or
// with 16-byte IVs one keystream for the whole fragment, buffers reused between calls) against the plain per-sample functions of sample-cipher.ts
// (cencEncrypt, cbcsEncrypt), which sample-cipher.test.ts checks against the standard's rules:
// random fragments of samples with and without subsamples, small and large, applied several
// times and to fragments of different sizes in turn (nothing of one call reaches the next).

import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { CipherSetup, FragmentCipher, PlannedSample } from '../../../origin/drm/fragment-cipher';
import { continuousIvs } from '../../../origin/drm/ivs';
import { cbcsEncrypt, cencEncrypt, Pattern } from '../../../origin/drm/sample-cipher';
import type { Subsample } from '../../../origin/drm/subsamples';

const KEY = Buffer.from('3a2a1b68dd2bd9b2eeb25e84c4776668', 'hex');
const IV16 = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');

/** A sample: its size, IV, and subsamples cut from it (or none: the whole sample). */
const sampleArb = fc.record({
  size: fc.oneof(fc.integer({ min: 1, max: 700 }), fc.integer({ min: 1900, max: 9000 })),
  iv: fc.uint8Array({ minLength: 8, maxLength: 8 }),
  split: fc.option(fc.array(fc.nat(500), { minLength: 1, maxLength: 5 }), { nil: undefined }),
});

type Drawn = { size: number; iv: Uint8Array; split: number[] | undefined };

/** Subsamples that cover `size` exactly: clear/protected runs cut at the drawn points. */
function subsamplesOf(size: number, split: number[] | undefined): Subsample[] | undefined {
  if (split === undefined) return undefined;
  const out: Subsample[] = [];
  let left = size;
  for (const cut of split) {
    const clear = Math.min(cut % 97, left);
    const prot = Math.min(cut, left - clear);
    out.push({ clear, protected: prot });
    left -= clear + prot;
  }
  if (left > 0) out.push({ clear: left, protected: 0 });
  return out;
}

function fragmentOf(drawn: readonly Drawn[]): { payload: Buffer; samples: PlannedSample[] } {
  const payload = randomBytes(drawn.reduce((n, d) => n + d.size, 0));
  let at = 0;
  const samples = drawn.map((d): PlannedSample => {
    const s = { at, size: d.size, iv: d.iv, subsamples: subsamplesOf(d.size, d.split) };
    at += d.size;
    return s;
  });
  return { payload, samples };
}

const cenc: CipherSetup = { key: KEY, scheme: 'cenc', constantIv: new Uint8Array(0), pattern: { crypt: 0, skip: 0 } };

/** The protected bytes of a planned sample, counted from its subsamples. */
const protectedOf = (s: PlannedSample): number =>
  s.subsamples === undefined ? s.size : s.subsamples.reduce((n, x) => n + x.protected, 0);

// 8-byte IVs (Smooth: a keystream per sample, drawn at random) and 16-byte continuous ones (DASH,
// HLS fMP4: one keystream per fragment from a random high half). Each sample is checked against a
// cipher of its own from its own IV, so one keystream must give every sample exactly the blocks
// its IV names: small samples gathered, large ones in place, samples ending inside a block,
// samples with nothing to protect.
test.each([8, 16])('cenc, %i-byte IVs: the bytes cencEncrypt gives on each sample, call after call', (ivSize) => {
  fc.assert(
    fc.property(
      fc.array(fc.array(sampleArb, { minLength: 1, maxLength: 14 }), { minLength: 1, maxLength: 3 }),
      fc.uint8Array({ minLength: 8, maxLength: 8 }),
      (fragments, high) => {
        for (const drawn of fragments) {
          const { payload, samples } = fragmentOf(drawn);
          if (ivSize === 16) {
            const ivs = continuousIvs(high, samples.map(protectedOf));
            samples.forEach((s, k) => (s.iv = ivs.subarray(16 * k, 16 * k + 16)));
          }
          const expected = Buffer.from(payload);
          for (const s of samples) cencEncrypt(KEY, s.iv, expected.subarray(s.at, s.at + s.size), s.subsamples);
          const cipher = new FragmentCipher(cenc, samples, payload.byteLength);
          for (let round = 0; round < 2; round++) {
            const got = Uint8Array.from(payload);
            cipher.apply(got);
            expect(Buffer.from(got).equals(expected)).toBe(true);
          }
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('cenc, 16-byte IVs that do not run on from sample to sample are refused', () => {
  const samples: PlannedSample[] = [
    { at: 0, size: 100, iv: new Uint8Array(16), subsamples: undefined },
    { at: 100, size: 100, iv: new Uint8Array(16), subsamples: undefined },
  ];
  expect(() => new FragmentCipher(cenc, samples, 200)).toThrow(/16-byte IVs that do not run on/);
  samples[1]!.iv = continuousIvs(new Uint8Array(8), [100, 100]).subarray(16);
  expect(() => new FragmentCipher(cenc, samples, 200)).not.toThrow();
  samples[1]!.iv = new Uint8Array(8);
  expect(() => new FragmentCipher(cenc, samples, 200)).toThrow(/8-byte IV in a fragment of 16-byte IVs/);
});

test('cbcs: the bytes cbcsEncrypt gives on each sample, video and audio patterns', () => {
  for (const pattern of [
    { crypt: 1, skip: 9 },
    { crypt: 0, skip: 0 },
  ] as Pattern[]) {
    fc.assert(
      fc.property(fc.array(sampleArb, { minLength: 1, maxLength: 12 }), (drawn) => {
        const { payload, samples } = fragmentOf(drawn);
        const expected = Buffer.from(payload);
        for (const s of samples) cbcsEncrypt(KEY, IV16, expected.subarray(s.at, s.at + s.size), pattern, s.subsamples);
        const cipher = new FragmentCipher(
          { key: KEY, scheme: 'cbcs', constantIv: IV16, pattern },
          samples,
          payload.byteLength,
        );
        const got = Uint8Array.from(payload);
        cipher.apply(got);
        expect(Buffer.from(got).equals(expected)).toBe(true);
      }),
      { numRuns: 40 },
    );
  }
});

test('a batch larger than the kept buffers, then a small one: both right', () => {
  // 4000 small samples: 1.4 MB of counter blocks, over the 1 MiB the batch buffers keep.
  const drawn: Drawn[] = Array.from({ length: 4000 }, (_, k) => ({
    size: 300 + (k % 50),
    iv: Uint8Array.from([k & 0xff, k >> 8, 1, 2, 3, 4, 5, 6]),
    split: undefined,
  }));
  for (const list of [drawn, drawn.slice(0, 7)]) {
    const { payload, samples } = fragmentOf(list);
    const expected = Buffer.from(payload);
    for (const s of samples) cencEncrypt(KEY, s.iv, expected.subarray(s.at, s.at + s.size), s.subsamples);
    const got = Uint8Array.from(payload);
    new FragmentCipher(cenc, samples, payload.byteLength).apply(got);
    expect(Buffer.from(got).equals(expected)).toBe(true);
  }
});

test('refusals: a payload of another length, subsamples that do not cover their sample', () => {
  const iv = new Uint8Array(8);
  const cipher = new FragmentCipher(cenc, [{ at: 0, size: 100, iv, subsamples: undefined }], 100);
  expect(() => cipher.apply(new Uint8Array(99))).toThrow(/99-byte payload for a plan of 100 bytes/);
  expect(
    () => new FragmentCipher(cenc, [{ at: 0, size: 100, iv, subsamples: [{ clear: 10, protected: 16 }] }], 100),
  ).toThrow(/subsamples cover 26 bytes of a 100-byte sample/);
});
