// A track's H.264 parameter sets parsed once (drm/subsamples.ts avcParameterSets, h264-slice.ts
// ParameterSets.fork) against parsing them afresh per fragment, as the segment writer did: the
// parsed avcC is shared, an in-band PPS (here one written out below with other field values)
// counts in the fork that saw it and nowhere else, and the subsamples of real samples with and
// after that PPS are the ones a fresh ParameterSets gives. The in-band PPS is the fixture's with
// its deblocking filter control flag flipped, which moves the end of the slice headers.

import { avcParameterSets, avcSubsamples } from '../../../origin/drm/subsamples';
import { ParameterSets, parsePps, PpsFields } from '../../../origin/media/h264-slice';
import { samplesOfMoof } from '../../../origin/media/samples';
import { readFragmentMoof } from '../../../origin/segments/fmp4/media-segment';
import { openFixture } from '../segments/fmp4/fixture-segments';

/** Exp-Golomb ue(v) (H.264 §9.1) as a bit string. */
const ue = (v: number): string => {
  const code = (v + 1).toString(2);
  return '0'.repeat(code.length - 1) + code;
};
const se = (v: number): string => ue(v <= 0 ? -2 * v : 2 * v - 1);
const flag = (b: boolean): string => (b ? '1' : '0');

/**
 * A PPS (H.264 §7.3.2.2) with the given fields, the QP fields 0 (no slice header reads them),
 * the stop bit and zero padding: how an encoder would send a changed PPS in band.
 */
function ppsNal(f: PpsFields): Uint8Array {
  const bits = [
    ue(f.ppsId),
    ue(f.spsId),
    flag(f.entropyCodingMode),
    flag(f.bottomFieldPicOrderInFramePresent),
    ue(f.numSliceGroups - 1),
    ue(f.numRefIdxL0DefaultActive - 1),
    ue(f.numRefIdxL1DefaultActive - 1),
    flag(f.weightedPred),
    f.weightedBipredIdc.toString(2).padStart(2, '0'),
    se(0),
    se(0),
    se(0),
    flag(f.deblockingFilterControlPresent),
    '0',
    flag(f.redundantPicCntPresent),
    '1',
  ].join('');
  const padded = bits.padEnd(Math.ceil(bits.length / 8) * 8, '0');
  return Uint8Array.from([0x68, ...padded.match(/.{8}/g)!.map((b) => parseInt(b, 2))]);
}

/** The fixture's PPS with the deblocking filter control flag flipped: the last fields of every slice header change. */
function customPps(avcC: readonly Uint8Array[]): Uint8Array {
  const pps = parsePps(avcC.find((n) => (n[0]! & 0x1f) === 8)!);
  return ppsNal({ ...pps, deblockingFilterControlPresent: !pps.deblockingFilterControlPresent });
}

/** The avcC parameter sets and the first samples (with their length size) of a fixture. */
async function fixture(): Promise<{ avcC: Uint8Array[]; lengthSize: number; samples: Uint8Array[] }> {
  const f = await openFixture('video_main_900k.ismv');
  try {
    const h = [...f.headers.values()][0]!;
    if (h.codec?.kind !== 'avc') throw new Error('not H.264');
    const table = f.file.tracks[0]!.fragments;
    const moof = await readFragmentMoof(f.source, table.offsets[0]!);
    const list = samplesOfMoof(moof, table.offsets[0]!, {
      trackId: h.trackID,
      trex: h.trexDefaults,
      baseTime: table.times[0]!,
      fragment: 0,
      shift: 0n,
      fileSize: f.source.size,
    });
    const samples = [];
    for (const s of list.slice(0, 12)) samples.push(Uint8Array.from(await f.source.read(s.offset, s.size)));
    return { avcC: h.codec.parameterSets, lengthSize: h.codec.lengthSize, samples };
  } finally {
    await f.source.close();
  }
}

/** `nal` with a `lengthSize`-byte length field in front. */
function prefixed(nal: Uint8Array, lengthSize: number): Uint8Array {
  const out = new Uint8Array(lengthSize + nal.byteLength);
  for (let i = 0; i < lengthSize; i++) out[i] = (nal.byteLength >>> (8 * (lengthSize - 1 - i))) & 0xff;
  out.set(nal, lengthSize);
  return out;
}

test('the PPS written out here parses to the values it was written with', async () => {
  const { avcC } = await fixture();
  const pps = parsePps(avcC.find((n) => (n[0]! & 0x1f) === 8)!);
  expect(parsePps(ppsNal(pps))).toEqual(pps);
  expect(parsePps(customPps(avcC))).toEqual({
    ...pps,
    deblockingFilterControlPresent: !pps.deblockingFilterControlPresent,
  });
});

test('fork: the parsed sets are shared; an added PPS is the fork’s own', async () => {
  const { avcC } = await fixture();
  const base = new ParameterSets(avcC);
  const original = base.lookup(0);
  const a = base.fork();
  const b = base.fork();
  expect(a.lookup(0).sps).toBe(original.sps);
  a.add(customPps(avcC));
  expect(a.lookup(0).pps.deblockingFilterControlPresent).toBe(!original.pps.deblockingFilterControlPresent);
  expect(a.lookup(0).sps).toBe(original.sps);
  expect(base.lookup(0)).toEqual(original);
  expect(b.lookup(0).pps).toBe(original.pps);
  expect(base.fork().lookup(0).pps).toBe(original.pps);
});

test('avcParameterSets: parsed once per avcC, a fresh fork per call', async () => {
  const { avcC } = await fixture();
  const first = avcParameterSets(avcC);
  const second = avcParameterSets(avcC);
  expect(first).not.toBe(second);
  expect(first.lookup(0).sps).toBe(second.lookup(0).sps);
  first.add(customPps(avcC));
  expect(first.lookup(0).pps).not.toEqual(second.lookup(0).pps);
  expect(second.lookup(0).pps).toEqual(new ParameterSets(avcC).lookup(0).pps);
  expect(avcParameterSets(avcC).lookup(0).pps).toBe(second.lookup(0).pps);
});

test('subsamples of samples with and after an in-band PPS are those of fresh parameter sets', async () => {
  const { avcC, lengthSize, samples } = await fixture();
  const withPps = samples
    .slice(1)
    .map((s, i) => (i === 0 ? Buffer.concat([prefixed(customPps(avcC), lengthSize), s]) : s));
  for (const scheme of ['cenc', 'cbcs'] as const) {
    const plain = new ParameterSets(avcC);
    const expected = withPps.map((s) => avcSubsamples(s, lengthSize, plain, scheme));
    const cached = avcParameterSets(avcC);
    expect(withPps.map((s) => avcSubsamples(s, lengthSize, cached, scheme))).toEqual(expected);
    // The next fragment starts from the avcC again: the in-band PPS is not carried over.
    const next = avcParameterSets(avcC);
    expect(avcSubsamples(samples[2]!, lengthSize, next, scheme)).toEqual(
      avcSubsamples(samples[2]!, lengthSize, new ParameterSets(avcC), scheme),
    );
  }
  // The PPS changes what is read: for some of these samples the in-band one gives other subsamples.
  const differ = samples.slice(1).filter((x) => {
    const seen = new ParameterSets(avcC);
    seen.add(customPps(avcC));
    return (
      JSON.stringify(avcSubsamples(x, lengthSize, seen, 'cbcs')) !==
      JSON.stringify(avcSubsamples(x, lengthSize, new ParameterSets(avcC), 'cbcs'))
    );
  });
  expect(differ.length).toBeGreaterThan(0);
});
