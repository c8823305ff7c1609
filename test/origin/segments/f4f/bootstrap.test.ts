// The abst/asrt/afrt writer against the F4V specification's field layout, read back with the
// tests' own reader (f4f-reader.ts): every field, the run folding, and what it refuses.

import { OriginError } from '../../../../origin/errors';
import { fragmentRuns, writeBootstrap } from '../../../../origin/segments/f4f/bootstrap';
import { parseAbst } from './f4f-reader';

const ts = 10_000_000;
const frag = (time: number, duration: number) => ({ time: BigInt(time), duration: BigInt(duration) });

test('every abst field for a simple timeline', () => {
  const bytes = writeBootstrap({
    movieIdentifier: 'movie',
    timescale: ts,
    fragments: [frag(213333, 20000000), frag(20213333, 20000000), frag(40213333, 19000000)],
  });
  // Box header: size then type, the size counting the whole box.
  expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(0)).toBe(bytes.byteLength);
  expect(String.fromCharCode(...bytes.subarray(4, 8))).toBe('abst');
  const abst = parseAbst(bytes);
  expect(abst).toEqual({
    version: 0,
    flags: 0,
    bootstrapinfoVersion: 1,
    profile: 0, // named access
    live: 0,
    update: 0,
    reserved: 0,
    timeScale: ts,
    currentMediaTime: 59213333n, // the end of the last fragment
    smpteTimeCodeOffset: 0n,
    movieIdentifier: 'movie',
    serverEntries: [],
    qualityEntries: [],
    drmData: '',
    metaData: '',
    segmentRunTables: [
      {
        version: 0,
        flags: 0,
        qualitySegmentUrlModifiers: [],
        segmentRuns: [{ firstSegment: 1, fragmentsPerSegment: 3 }],
      },
    ],
    fragmentRunTables: [
      {
        version: 0,
        flags: 0,
        timeScale: ts,
        qualitySegmentUrlModifiers: [],
        entries: [
          { firstFragment: 1, firstFragmentTimestamp: 213333n, fragmentDuration: 20000000 },
          { firstFragment: 3, firstFragmentTimestamp: 40213333n, fragmentDuration: 19000000 },
        ],
      },
    ],
  });
});

test('runs fold equal durations of contiguous fragments only', () => {
  expect(
    fragmentRuns([frag(0, 10), frag(10, 10), frag(20, 10), frag(30, 11), frag(41, 10), frag(60, 10), frag(70, 10)]),
  ).toEqual([
    { firstFragment: 1, firstFragmentTimestamp: 0n, fragmentDuration: 10 },
    { firstFragment: 4, firstFragmentTimestamp: 30n, fragmentDuration: 11 },
    { firstFragment: 5, firstFragmentTimestamp: 41n, fragmentDuration: 10 },
    // A gap (51 → 60) starts a run although the duration is the same.
    { firstFragment: 6, firstFragmentTimestamp: 60n, fragmentDuration: 10 },
  ]);
});

test('expanding the runs gives back every fragment exactly (29.97 fps durations, 64-bit times)', () => {
  const big = 2n ** 40n;
  const fragments = [20020000, 20020000, 20020000, 20019999, 20020001].reduce<
    Array<{ time: bigint; duration: bigint }>
  >((list, d) => {
    const prev = list[list.length - 1];
    list.push({ time: prev === undefined ? big : prev.time + prev.duration, duration: BigInt(d) });
    return list;
  }, []);
  const afrt = parseAbst(writeBootstrap({ movieIdentifier: '', timescale: ts, fragments })).fragmentRunTables[0]!;
  const expanded: Array<{ time: bigint; duration: bigint }> = [];
  afrt.entries.forEach((e, i) => {
    const next = afrt.entries[i + 1]?.firstFragment ?? fragments.length + 1;
    for (let n = e.firstFragment; n < next; n++) {
      expanded.push({
        time: e.firstFragmentTimestamp + BigInt((n - e.firstFragment) * e.fragmentDuration),
        duration: BigInt(e.fragmentDuration),
      });
    }
  });
  expect(expanded).toEqual(fragments);
  expect(afrt.entries.map((e) => e.firstFragment)).toEqual([1, 4, 5]);
});

test('the movie identifier is a NUL-terminated UTF-8 string', () => {
  expect(
    parseAbst(writeBootstrap({ movieIdentifier: 'café', timescale: 1000, fragments: [frag(0, 1)] })).movieIdentifier,
  ).toBe('café');
  expect(() => writeBootstrap({ movieIdentifier: 'a\0b', timescale: 1000, fragments: [frag(0, 1)] })).toThrow(
    OriginError,
  );
});

test.each([
  ['no fragment', 1000, []],
  ['a zero duration (afrt reserves 0 for discontinuity entries)', 1000, [frag(0, 0)]],
  ['a duration past 32 bits', 1000, [{ time: 0n, duration: 2n ** 32n }]],
  ['a timescale of 0', 0, [frag(0, 1)]],
])('refuses %s', (_what, timescale, fragments) => {
  expect(() => writeBootstrap({ movieIdentifier: 'x', timescale, fragments })).toThrow(OriginError);
});
