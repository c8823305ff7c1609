// The sample reader on hand-built movie fragments (ISO/IEC 14496-12 §8.8): every default a
// sample's duration, size and flags can come from, signed composition offsets, several trafs,
// where the bytes are, and corrupt input named by file and offset.

import { OriginError } from '../../../origin/errors';
import type { TrexDefaults } from '../../../origin/model/media';
import { BufferSource } from '../../../origin/io/source';
import { MoofContext, readSampleData, samplesOfMoof } from '../../../origin/media/samples';
import { box, concat, fullBox, u32 } from '../../helpers/mp4-builder';
import { moofBox, patternByte, sized, syntheticFile, tfhdBox } from '../segments/fmp4/synthetic';

const NON_SYNC = 0x01010000;
const SYNC = 0x02000000;
const TREX: TrexDefaults = {
  defaultSampleDescriptionIndex: 1,
  defaultSampleDuration: 77,
  defaultSampleSize: 5,
  defaultSampleFlags: NON_SYNC,
};

interface Entry {
  duration?: number;
  size?: number;
  flags?: number;
  cto?: number;
}

/** A trun with the fields every entry has (all entries alike), version 1 when a cto is negative. */
function trun(entries: Entry[], opts: { dataOffset?: number; firstSampleFlags?: number } = {}): Uint8Array {
  const e0 = entries[0] ?? {};
  let flags = 0;
  const head: Uint8Array[] = [u32(entries.length)];
  if (opts.dataOffset !== undefined) {
    flags |= 0x1;
    head.push(u32(opts.dataOffset));
  }
  if (opts.firstSampleFlags !== undefined) {
    flags |= 0x4;
    head.push(u32(opts.firstSampleFlags));
  }
  if (e0.duration !== undefined) flags |= 0x100;
  if (e0.size !== undefined) flags |= 0x200;
  if (e0.flags !== undefined) flags |= 0x400;
  if (e0.cto !== undefined) flags |= 0x800;
  const body = entries.map((e) =>
    concat(
      ...(e.duration !== undefined ? [u32(e.duration)] : []),
      ...(e.size !== undefined ? [u32(e.size)] : []),
      ...(e.flags !== undefined ? [u32(e.flags)] : []),
      ...(e.cto !== undefined ? [u32(e.cto)] : []),
    ),
  );
  const version = entries.some((e) => (e.cto ?? 0) < 0) ? 1 : 0;
  return fullBox('trun', version, flags, ...head, ...body);
}

const context = (fileSize: number, extra: Partial<MoofContext> = {}): MoofContext => ({
  trackId: 1,
  trex: TREX,
  baseTime: 1000n,
  fragment: 3,
  shift: 100n,
  fileSize,
  ...extra,
});

test('per-sample values, signed offsets, times from the base, data offsets', () => {
  const entries = [
    { duration: 10, size: 4, flags: SYNC, cto: 20 },
    { duration: 10, size: 6, flags: NON_SYNC, cto: -10 },
    { duration: 12, size: 3, flags: NON_SYNC, cto: 0 },
  ];
  const moof = sized((size) =>
    moofBox(1, box('traf', tfhdBox({ trackId: 1, moofBase: true }), trun(entries, { dataOffset: size + 8 }))),
  );
  const f = syntheticFile(moof, 40, 13);
  const samples = samplesOfMoof(moof, f.moofOffset, context(f.bytes.byteLength));
  expect(
    samples.map((s) => [s.sourceTime, s.time, s.compositionOffset, s.duration, s.size, s.sync, s.fragment, s.offset]),
  ).toEqual([
    [1000n, 900n, 20, 10, 4, true, 3, f.payloadOffset],
    [1010n, 910n, -10, 10, 6, false, 3, f.payloadOffset + 4],
    [1020n, 920n, 0, 12, 3, false, 3, f.payloadOffset + 10],
  ]);
});

test('version 0 offsets are unsigned', () => {
  const moof = sized((size) =>
    moofBox(
      1,
      box(
        'traf',
        tfhdBox({ trackId: 1, moofBase: true }),
        fullBox('trun', 0, 0xb01, u32(1), u32(size + 8), u32(5), u32(2), u32(0x80000000)),
      ),
    ),
  );
  const f = syntheticFile(moof, 0, 2);
  expect(samplesOfMoof(moof, 0, context(f.bytes.byteLength))[0]!.compositionOffset).toBe(0x80000000);
});

test('defaults: tfhd over trex; first_sample_flags for the first sample only', () => {
  // Sizes and flags from tfhd, durations from trex.
  const a = sized((size) =>
    moofBox(
      1,
      box(
        'traf',
        tfhdBox({ trackId: 1, moofBase: true, size: 7, flags: SYNC }),
        trun([{}, {}], { dataOffset: size + 8 }),
      ),
    ),
  );
  const fa = syntheticFile(a, 0, 14);
  expect(samplesOfMoof(a, 0, context(fa.bytes.byteLength)).map((s) => [s.duration, s.size, s.sync])).toEqual([
    [77, 7, true],
    [77, 7, true],
  ]);
  // Everything from trex (non-sync), the first sample made sync by first_sample_flags.
  const b = sized((size) =>
    moofBox(
      1,
      box(
        'traf',
        tfhdBox({ trackId: 1, moofBase: true }),
        trun([{}, {}, {}], { dataOffset: size + 8, firstSampleFlags: SYNC }),
      ),
    ),
  );
  const fb = syntheticFile(b, 0, 15);
  expect(samplesOfMoof(b, 0, context(fb.bytes.byteLength)).map((s) => [s.duration, s.size, s.sync, s.time])).toEqual([
    [77, 5, true, 900n],
    [77, 5, false, 977n],
    [77, 5, false, 1054n],
  ]);
});

test('only the requested track, across several trafs; times continue from traf to traf', () => {
  const moof = sized((size) =>
    moofBox(
      1,
      box('traf', tfhdBox({ trackId: 1, moofBase: true }), trun([{ duration: 5, size: 2 }], { dataOffset: size + 8 })),
      box('traf', tfhdBox({ trackId: 2, moofBase: true }), trun([{ duration: 9, size: 3 }], { dataOffset: size + 10 })),
      box('traf', tfhdBox({ trackId: 1, moofBase: true }), trun([{ duration: 6, size: 4 }], { dataOffset: size + 13 })),
    ),
  );
  const f = syntheticFile(moof, 0, 9);
  const samples = samplesOfMoof(moof, 0, context(f.bytes.byteLength));
  expect(samples.map((s) => [s.sourceTime, s.size, s.offset])).toEqual([
    [1000n, 2, f.payloadOffset],
    [1005n, 4, f.payloadOffset + 5],
  ]);
  expect(samplesOfMoof(moof, 0, context(f.bytes.byteLength, { trackId: 2 })).map((s) => s.size)).toEqual([3]);
});

test.each([
  [
    'sample data past the end of the file',
    (size: number) =>
      moofBox(1, box('traf', tfhdBox({ trackId: 1, moofBase: true }), trun([{ size: 50 }], { dataOffset: size + 8 }))),
    /past the end of the file/,
  ],
  [
    'no traf for the track',
    () => moofBox(1, box('traf', tfhdBox({ trackId: 9, moofBase: true }), trun([{ size: 1 }], { dataOffset: 0 }))),
    /no traf for track 1/,
  ],
  [
    'a truncated trun',
    () => moofBox(1, box('traf', tfhdBox({ trackId: 1 }), fullBox('trun', 0, 0x200, u32(4), u32(1)))),
    /trun\[0\]: needs 16 bytes/,
  ],
])('%s is corrupt media with the moof path and offset', (_, build, message) => {
  const moof = sized(build);
  const f = syntheticFile(moof, 64, 10);
  let error: unknown;
  try {
    samplesOfMoof(moof, f.moofOffset, context(f.bytes.byteLength));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(OriginError);
  expect((error as OriginError).kind).toBe('corrupt-media');
  expect((error as OriginError).message).toMatch(message);
  expect((error as OriginError).message).toMatch(/moof@64/);
  expect((error as OriginError).message).toMatch(/at file offset \d+/);
});

describe('readSampleData', () => {
  const bytes = Uint8Array.from({ length: 200 }, (_, o) => patternByte(o));
  let reads: Array<[number, number]> = [];
  class Counting extends BufferSource {
    override read(offset: number, length: number): Promise<Uint8Array> {
      reads.push([offset, length]);
      return super.read(offset, length);
    }
  }
  const sample = (offset: number, size: number) => ({
    sourceTime: 0n,
    time: 0n,
    compositionOffset: 0,
    duration: 1,
    size,
    sync: true,
    fragment: 0,
    offset,
  });

  test('contiguous samples are read together; every sample gets its own bytes', async () => {
    reads = [];
    const out = await readSampleData(
      new Counting('x', bytes),
      [sample(10, 5), sample(15, 3), sample(50, 4), sample(54, 0), sample(54, 2)],
      1000,
    );
    expect(reads).toEqual([
      [10, 8],
      [50, 6],
    ]);
    out.forEach((s) =>
      expect([...s.data]).toEqual(Array.from({ length: s.size }, (_, i) => patternByte(s.offset + i))),
    );
  });

  test('more bytes than a generated segment may hold: 415 segment-too-large, nothing read', async () => {
    reads = [];
    await expect(
      readSampleData(new Counting('x', bytes), [sample(0, 100), sample(100, 100)], 150),
    ).rejects.toMatchObject({ kind: 'unsupported-media', code: 'segment-too-large' });
    expect(reads).toEqual([]);
  });

  test('data past the end of the source is corrupt media', async () => {
    await expect(readSampleData(new BufferSource('x', bytes), [sample(190, 20)], 1000)).rejects.toMatchObject({
      kind: 'corrupt-media',
    });
  });
});
