// Where a traf's sample data is (ISO/IEC 14496-12 §8.8.7.1, §8.8.8.3), on hand-built moofs
// with layouts the fixtures do not have, and what the reboxed moof says about it.

import { OriginError } from '../../../../origin/errors';
import {
  assembleSegment,
  mediaSegmentParts,
  reboxFragment,
  ReboxOptions,
} from '../../../../origin/segments/fmp4/media-segment';
import type { TrexDefaults } from '../../../../origin/model/media';
import { box, concat, fullBox, tfxd, u32 } from '../../../helpers/mp4-builder';
import { readMoof } from '../../media/moof-reader';
import { moofBox, sized, SyntheticFile, syntheticFile, trafBox } from './synthetic';

const LEAD = 100; // the moof starts at file offset 100
const base: ReboxOptions = { sequenceNumber: 7, baseMediaDecodeTime: 1000n };

/** Reboxes `trackId` and returns the ranges, the new moof's fields and the assembled mdat payload. */
async function rebox(file: SyntheticFile, moof: Uint8Array, trackId: number, opts: Partial<ReboxOptions> = {}) {
  const out = reboxFragment(moof, file.moofOffset, trackId, { ...base, fileSize: file.bytes.byteLength, ...opts });
  const segment = await assembleSegment(file.source, mediaSegmentParts([out], { styp: false }).parts);
  return { ...out, fields: readMoof(out.moof), mdat: segment.subarray(out.moof.byteLength + 8) };
}

/** The file bytes of the given ranges, concatenated: what the new mdat must hold. */
const bytesOf = (file: SyntheticFile, ...ranges: Array<[number, number]>): Uint8Array =>
  concat(...ranges.map(([o, l]) => file.bytes.slice(o, o + l)));

describe('§8.8.7.1 base data offset', () => {
  test("no flags, first traf: the base is the moof; later traf: where the previous traf's data ended", async () => {
    const moof = sized((size) =>
      moofBox(
        1,
        trafBox({ trackId: 1 }, [{ dataOffset: size + 8, sizes: [10, 20] }]),
        trafBox({ trackId: 2 }, [{ sizes: [5, 6] }]),
      ),
    );
    const file = syntheticFile(moof, LEAD, 41);
    const one = await rebox(file, moof, 1);
    expect(one.data).toEqual([{ offset: file.payloadOffset, length: 30 }]);
    const two = await rebox(file, moof, 2);
    expect(two.data).toEqual([{ offset: file.payloadOffset + 30, length: 11 }]);
    expect(two.mdat).toEqual(bytesOf(file, [file.payloadOffset + 30, 11]));
  });

  test("a later traf with a data_offset adds it to the end of the previous traf's data", async () => {
    const moof = sized((size) =>
      moofBox(
        1,
        trafBox({ trackId: 1 }, [{ dataOffset: size + 8, sizes: [10] }]),
        trafBox({ trackId: 2 }, [{ dataOffset: 4, sizes: [6] }]),
      ),
    );
    const file = syntheticFile(moof, LEAD, 20);
    expect((await rebox(file, moof, 2)).data).toEqual([{ offset: file.payloadOffset + 10 + 4, length: 6 }]);
  });

  test('default-base-is-moof: a later traf counts from the moof, not from the previous data', async () => {
    const moof = sized((size) =>
      moofBox(
        1,
        trafBox({ trackId: 1 }, [{ dataOffset: size + 8 + 12, sizes: [10] }]),
        trafBox({ trackId: 2, moofBase: true }, [{ dataOffset: size + 8, sizes: [12] }]),
      ),
    );
    const file = syntheticFile(moof, LEAD, 22);
    const two = await rebox(file, moof, 2);
    expect(two.data).toEqual([{ offset: file.payloadOffset, length: 12 }]);
    expect(two.mdat).toEqual(bytesOf(file, [file.payloadOffset, 12]));
  });

  test('base-data-offset: an absolute file offset, here data stored before the moof', async () => {
    const moof = moofBox(1, trafBox({ trackId: 3, base: 10 }, [{ dataOffset: 5, sizes: [7, 8] }]));
    const file = syntheticFile(moof, LEAD, 0);
    const out = await rebox(file, moof, 3);
    expect(out.data).toEqual([{ offset: 15, length: 15 }]);
    expect(out.mdat).toEqual(bytesOf(file, [15, 15]));
    // The new tfhd has no base-data-offset, and default-base-is-moof instead.
    expect(out.fields.trafs[0]!.tfhd.flags).toBe(0x020000);
  });
});

describe('§8.8.8.3 runs', () => {
  test('a run without data_offset continues the previous run; a gap makes a second range', async () => {
    const moof = sized((size) =>
      moofBox(
        1,
        trafBox({ trackId: 1 }, [
          { dataOffset: size + 8, sizes: [10] },
          { sizes: [6] },
          { dataOffset: size + 8 + 20, sizes: [4] },
        ]),
      ),
    );
    const file = syntheticFile(moof, LEAD, 24);
    const p = file.payloadOffset;
    const out = await rebox(file, moof, 1);
    expect(out.data).toEqual([
      { offset: p, length: 16 },
      { offset: p + 20, length: 4 },
    ]);
    expect(out.mdat).toEqual(bytesOf(file, [p, 16], [p + 20, 4]));
    // Every new run has a data_offset, consecutive in the new mdat.
    const start = out.moof.byteLength + 8;
    expect(out.fields.trafs[0]!.truns.map((r) => [r.flags & 0x1, r.dataOffset])).toEqual([
      [1, start],
      [1, start + 10],
      [1, start + 16],
    ]);
  });

  test('a run with no data_offset as the first run starts at the base', async () => {
    const moof = moofBox(1, trafBox({ trackId: 1, base: 4 }, [{ sizes: [3] }]));
    const file = syntheticFile(moof, LEAD, 0);
    expect((await rebox(file, moof, 1)).data).toEqual([{ offset: 4, length: 3 }]);
  });

  test('runs out of file order are copied in run order', async () => {
    const moof = sized((size) =>
      moofBox(
        1,
        trafBox({ trackId: 1 }, [
          { dataOffset: size + 8 + 5, sizes: [5] },
          { dataOffset: size + 8, sizes: [5] },
        ]),
      ),
    );
    const file = syntheticFile(moof, LEAD, 10);
    const p = file.payloadOffset;
    const out = await rebox(file, moof, 1);
    expect(out.data).toEqual([
      { offset: p + 5, length: 5 },
      { offset: p, length: 5 },
    ]);
    expect(out.mdat).toEqual(bytesOf(file, [p + 5, 5], [p, 5]));
  });
});

describe('sample sizes and durations from the defaults', () => {
  const trex = (size: number, duration = 0): ReadonlyMap<number, { trexDefaults: TrexDefaults }> =>
    new Map([
      [
        1,
        {
          trexDefaults: {
            defaultSampleDescriptionIndex: 1,
            defaultSampleDuration: duration,
            defaultSampleSize: size,
            defaultSampleFlags: 0,
          },
        },
      ],
    ]);

  test('tfhd default_sample_size, carried over into the new tfhd', async () => {
    const moof = sized((size) =>
      moofBox(1, trafBox({ trackId: 1, size: 9, duration: 100 }, [{ dataOffset: size + 8, count: 3 }])),
    );
    const file = syntheticFile(moof, LEAD, 27);
    const out = await rebox(file, moof, 1);
    expect(out.data).toEqual([{ offset: file.payloadOffset, length: 27 }]);
    expect(out.fields.trafs[0]!.tfhd.flags).toBe(0x020018);
    expect(out.fields.trafs[0]!.tfhd.rest).toEqual(concat(u32(100), u32(9)));
  });

  test('trex default_sample_size, from the headers the caller passes', async () => {
    const moof = sized((size) => moofBox(1, trafBox({ trackId: 1 }, [{ dataOffset: size + 8, count: 4 }])));
    const file = syntheticFile(moof, LEAD, 20);
    expect((await rebox(file, moof, 1, { headers: trex(5) })).data).toEqual([
      { offset: file.payloadOffset, length: 20 },
    ]);
    await expect(rebox(file, moof, 1)).rejects.toThrow(
      /trun\[0\]: sample sizes are in neither trun nor tfhd, and no trex default was given/,
    );
  });

  test("an unknown size in another track's traf only fails a traf that needs its end", async () => {
    const moof = sized((size) =>
      moofBox(
        1,
        trafBox({ trackId: 5 }, [{ dataOffset: size + 8, count: 2 }]), // sizes unknown: no trex for track 5
        trafBox({ trackId: 2 }, [{ sizes: [1] }]), // implicit base: needs traf[0]'s end
        trafBox({ trackId: 1, moofBase: true }, [{ dataOffset: size + 8 + 4, sizes: [3] }]),
        trafBox({ trackId: 3 }, [{ sizes: [2] }]), // implicit base: traf[2]'s end, which is known
      ),
    );
    const file = syntheticFile(moof, LEAD, 10);
    expect((await rebox(file, moof, 1)).data).toEqual([{ offset: file.payloadOffset + 4, length: 3 }]);
    expect((await rebox(file, moof, 3)).data).toEqual([{ offset: file.payloadOffset + 7, length: 2 }]);
    await expect(rebox(file, moof, 2)).rejects.toThrow(/traf\[0\]\/trun\[0\]: sample sizes are in neither/);
  });

  test("two trafs of the same track: both kept, the second tfdt after the first traf's duration", async () => {
    const moof = sized((size) =>
      moofBox(
        1,
        trafBox({ trackId: 1 }, [{ dataOffset: size + 8, sizes: [2, 2], durations: [10, 11] }]),
        trafBox({ trackId: 1, duration: 50 }, [{ sizes: [3] }]),
      ),
    );
    const file = syntheticFile(moof, LEAD, 7);
    const out = await rebox(file, moof, 1);
    expect(out.fields.trafs.map((t) => t.tfdt!.time)).toEqual([1000n, 1021n]);
    expect(out.data).toEqual([{ offset: file.payloadOffset, length: 7 }]);
    expect(out.fields.trafs.map((t) => t.truns[0]!.dataOffset)).toEqual([
      out.moof.byteLength + 8,
      out.moof.byteLength + 8 + 4,
    ]);
  });
});

describe('what the new moof keeps and drops', () => {
  test('sequence number, output track id, tfxd only when asked; sdtp and other uuids dropped', async () => {
    const other = box('uuid', new Uint8Array(16).fill(0xab), u32(1));
    const sdtp = fullBox('sdtp', 0, 0, Uint8Array.of(0x20));
    const moof = sized((size) =>
      moofBox(3, trafBox({ trackId: 4 }, [{ dataOffset: size + 8, sizes: [1] }], [sdtp, tfxd(-5n, 1n), other])),
    );
    const file = syntheticFile(moof, LEAD, 1);
    const plain = await rebox(file, moof, 4, { outputTrackId: 1 });
    expect(plain.fields.sequence).toBe(7);
    expect(plain.fields.trafs[0]!.types).toEqual(['tfhd', 'tfdt', 'trun']);
    expect(plain.fields.trafs[0]!.tfhd.trackId).toBe(1);
    const smooth = await rebox(file, moof, 4, { keepTfxd: true });
    expect(smooth.fields.trafs[0]!.types).toEqual(['tfhd', 'tfdt', 'trun', 'uuid']);
    expect(smooth.fields.trafs[0]!.tfxd).toEqual(tfxd(-5n, 1n));
  });

  test('an empty run makes an empty mdat', async () => {
    const moof = moofBox(1, trafBox({ trackId: 1 }, [{ dataOffset: 0, sizes: [] }]));
    const file = syntheticFile(moof, LEAD, 0);
    const out = await rebox(file, moof, 1);
    expect(out.data).toEqual([]);
    expect(mediaSegmentParts([out], { styp: false }).length).toBe(out.moof.byteLength + 8);
  });

  test('caller errors: sequence number and time out of range, a non-moof fragment', () => {
    const moof = moofBox(1, trafBox({ trackId: 1 }, [{ sizes: [] }]));
    const call = (o: Partial<ReboxOptions>) => () => reboxFragment(moof, 0, 1, { ...base, ...o });
    expect(call({ sequenceNumber: -1 })).toThrow(/sequenceNumber -1/);
    expect(call({ sequenceNumber: 2 ** 32 })).toThrow(OriginError);
    expect(call({ baseMediaDecodeTime: -213333n })).toThrow(/shift negative source times first/);
    expect(call({ baseMediaDecodeTime: 1n << 64n })).toThrow(/not an unsigned 64-bit time/);
    expect(call({ baseMediaDecodeTime: (1n << 64n) - 1n })).not.toThrow();
    expect(call({ outputTrackId: 0 })).toThrow(/outputTrackId 0 is not in 1..2\^32-1/);
    expect(() => mediaSegmentParts([{ moof: box('free'), data: [] }])).toThrow(/fragment 0 is not a moof box/);
  });
});
