// writeAccessUnit (the TS writer's in-place Annex B conversion) against accessUnitParts (the same
// access unit as parts): the same bytes at any offset of a larger buffer, nothing written outside
// them, and the same corrupt-media errors.

import fc from 'fast-check';
import { OriginError } from '../../../../origin/errors';
import { accessUnitSize, writeAccessUnit } from '../../../../origin/segments/mpegts/avc-annexb';
import { accessUnitParts } from './annexb-parts';
import type { AvcConfig } from '../../../../origin/model/media';

const SPS = Uint8Array.of(0x67, 0x42, 0xc0, 0x1e, 0xda, 0x02, 0x00);
const PPS = Uint8Array.of(0x68, 0xce, 0x3c, 0x80);
const PARAMETER_SETS = Uint8Array.of(0, 0, 0, 1, ...SPS, 0, 0, 0, 1, ...PPS);

/** A sample of NAL units behind `n`-byte big-endian lengths. */
function sample(nals: readonly Uint8Array[], n: number): Uint8Array {
  const out = new Uint8Array(nals.reduce((s, x) => s + n + x.byteLength, 0));
  let at = 0;
  for (const nal of nals) {
    for (let i = 0; i < n; i++) out[at + i] = (nal.byteLength >>> (8 * (n - 1 - i))) & 0xff;
    out.set(nal, at + n);
    at += n + nal.byteLength;
  }
  return out;
}

test('the same bytes as accessUnitParts, at any offset, and nothing around them', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 6 }),
      fc.constantFrom(3, 4),
      fc.boolean(),
      fc.nat(40),
      (nals, n, keyframe, offset) => {
        const c: AvcConfig = {
          kind: 'avc',
          lengthSize: n,
          parameterSets: [SPS, PPS],
          spsCount: 1,
          record: new Uint8Array(0),
        };
        const s = sample(nals, n);
        const expected = Buffer.concat(accessUnitParts(s, keyframe, c, PARAMETER_SETS, { file: 'f', offset: 0 }));
        const size = accessUnitSize(s.byteLength, keyframe, PARAMETER_SETS);
        expect(expected.byteLength).toBe(size);
        const out = new Uint8Array(offset + size + 16).fill(0xa5);
        const end = writeAccessUnit(
          out,
          offset,
          s,
          { keyframe, file: 'f', offset: 0 },
          { config: c, parameterSets: PARAMETER_SETS },
        );
        expect(end).toBe(offset + size);
        expect(Buffer.from(out.subarray(offset, end)).equals(expected)).toBe(true);
        expect([...out.subarray(0, offset), ...out.subarray(end)].every((b) => b === 0xa5)).toBe(true);
      },
    ),
    { numRuns: 300 },
  );
});

test.each([
  ['a NAL past the sample end', Uint8Array.of(0, 0, 0, 9, 0x65)],
  ['a truncated length field', Uint8Array.of(0, 0, 0, 1, 0x65, 0, 0)],
  ['a NAL of length 0', Uint8Array.of(0, 0, 0, 0)],
])('%s: the same corrupt-media error as accessUnitParts', (_, s) => {
  const c: AvcConfig = {
    kind: 'avc',
    lengthSize: 4,
    parameterSets: [SPS, PPS],
    spsCount: 1,
    record: new Uint8Array(0),
  };
  const errorOf = (f: () => unknown): OriginError => {
    try {
      f();
    } catch (e) {
      return e as OriginError;
    }
    throw new Error('no error');
  };
  const where = { file: 'v.ismv', offset: 1000 };
  const a = errorOf(() => accessUnitParts(s, false, c, new Uint8Array(), where));
  const b = errorOf(() =>
    writeAccessUnit(
      new Uint8Array(64),
      0,
      s,
      { ...where, keyframe: false },
      { config: c, parameterSets: new Uint8Array() },
    ),
  );
  expect(b).toBeInstanceOf(OriginError);
  expect([b.kind, b.message, b.subject]).toEqual([a.kind, a.message, a.subject]);
});
