// Media segments from the fixtures' own fragments: every field of the new moof, and the mdat
// payload byte for byte against the source's sample data (located independently, from the
// source trun and the fragment index's summary).

import { childBoxes, parseMoof } from '../../../../origin/media/boxes';
import { ByteReader } from '../../../../origin/media/byte-reader';
import {
  assembleSegment,
  mediaSegmentParts,
  STYP_COMPATIBLE_BRANDS,
  STYP_MAJOR_BRAND,
} from '../../../../origin/segments/fmp4/media-segment';
import { FIXTURE_FILES } from '../../../helpers/fixtures';
import { openFixture, OpenFixture, reboxed, trackOf } from './fixture-segments';
import { readMoof } from '../../media/moof-reader';

/** Far above 2^53: a shifted time must survive exactly. */
const SHIFT = 12_345_678_901_234_567_890n;

const cases: Array<[string, number]> = [
  ...FIXTURE_FILES.map((f) => [f, 1] as [string, number]),
  ['muxed_av.ismv', 1],
  ['muxed_av.ismv', 2],
];

describe('fixture fragments, reboxed', () => {
  const opened = new Map<string, OpenFixture>();
  const open = async (name: string): Promise<OpenFixture> => {
    if (!opened.has(name)) opened.set(name, await openFixture(name));
    return opened.get(name)!;
  };
  afterAll(async () => {
    for (const f of opened.values()) await f.source.close();
  });

  test.each(cases)('%s track %i: every fragment', async (name, trackId) => {
    const f = await open(name);
    const table = trackOf(f, trackId).fragments;
    for (let k = 0; k < table.count; k++) {
      const shift = SHIFT - table.times[0]!;
      const out = await reboxed(f, trackId, k, { shift });
      const expectedTime = table.times[k]! + shift;
      const source = readMoof(out.sourceMoof).trafs.find((t) => t.tfhd.trackId === trackId)!;
      const mine = readMoof(out.moof);
      expect(mine.sequence).toBe(k + 1);
      expect(mine.trafs).toHaveLength(1);
      const traf = mine.trafs[0]!;
      expect(traf.types).toEqual(['tfhd', 'tfdt', ...source.truns.map(() => 'trun')]);
      // tfhd: default-base-is-moof, no base-data-offset, the source's defaults unchanged.
      expect(traf.tfhd.flags).toBe((source.tfhd.flags & ~0x1) | 0x020000);
      expect(traf.tfhd.trackId).toBe(trackId);
      expect(traf.tfhd.rest).toEqual(source.tfhd.rest);
      expect(traf.tfdt).toEqual({ version: 1, time: expectedTime });
      // trun: same version, flags, samples; data_offset = moof + mdat header.
      expect(traf.truns).toHaveLength(1);
      const [run, src] = [traf.truns[0]!, source.truns[0]!];
      expect({ ...run, dataOffset: 0 }).toEqual({ ...src, dataOffset: 0 });
      expect(run.dataOffset).toBe(out.moof.byteLength + 8);
      // The sample data: where the source trun says (base = moof start, no flags in these files).
      const summary = parseMoof(out.sourceMoof, out.moofOffset, () => f.headers.get(trackId)!.trexDefaults).find(
        (t) => t.trackId === trackId,
      )!;
      expect(out.data).toEqual([{ offset: out.moofOffset + src.dataOffset!, length: summary.dataSize }]);
      const summaryOfNew = parseMoof(out.moof, 0, () => f.headers.get(trackId)!.trexDefaults)[0]!;
      expect(summaryOfNew).toEqual({ ...summary, baseTime: expectedTime });
      // The mdat of the assembled segment holds exactly the source's sample bytes.
      const { parts, length } = mediaSegmentParts([out], { styp: false });
      const segment = await assembleSegment(f.source, parts);
      expect(segment.byteLength).toBe(length);
      const sourceBytes = await f.source.read(out.moofOffset + src.dataOffset!, summary.dataSize);
      const mdatAt = out.moof.byteLength;
      expect(new DataView(segment.buffer, segment.byteOffset).getUint32(mdatAt)).toBe(8 + summary.dataSize);
      expect(Buffer.from(segment.subarray(mdatAt + 4, mdatAt + 8)).toString()).toBe('mdat');
      expect(Buffer.compare(segment.subarray(mdatAt + 8), sourceBytes)).toBe(0);
    }
  });

  test('keepTfxd keeps the source tfxd byte for byte (Smooth); by default it is dropped', async () => {
    const f = await open('audio_eng_64k.isma');
    const kept = await reboxed(f, 1, 0, { keepTfxd: true });
    const dropped = await reboxed(f, 1, 0);
    const source = readMoof(kept.sourceMoof).trafs[0]!;
    expect(readMoof(kept.moof).trafs[0]!.types).toEqual(['tfhd', 'tfdt', 'trun', 'uuid']);
    expect(readMoof(kept.moof).trafs[0]!.tfxd).toEqual(source.tfxd);
    expect(readMoof(dropped.moof).trafs[0]!.types).toEqual(['tfhd', 'tfdt', 'trun']);
    // The negative priming time stays in tfxd; tfdt has the caller's shifted time.
    expect(new DataView(source.tfxd!.buffer, source.tfxd!.byteOffset).getBigInt64(8 + 16 + 4)).toBe(-213333n);
    expect(readMoof(kept.moof).trafs[0]!.tfdt!.time).toBe(0n);
    expect(kept.data).toEqual(dropped.data);
  });

  test('renumbered track: tfhd carries the output track id', async () => {
    const f = await open('muxed_av.ismv');
    const out = await reboxed(f, 2, 1, { outputTrackId: 1 });
    expect(readMoof(out.moof).trafs[0]!.tfhd.trackId).toBe(1);
  });

  test('a segment of several fragments: styp, then moof + mdat per fragment, file parts in order', async () => {
    const f = await open('video_baseline_400k.ismv');
    const frags = [await reboxed(f, 1, 0), await reboxed(f, 1, 1), await reboxed(f, 1, 2)];
    const { parts, length } = mediaSegmentParts(frags);
    expect(parts.map((p) => p.kind)).toEqual(['bytes', 'file', 'bytes', 'file', 'bytes', 'file']);
    expect(parts.filter((p) => p.kind === 'file')).toEqual(frags.map((x) => ({ kind: 'file', ...x.data[0] })));
    const segment = await assembleSegment(f.source, parts);
    expect(segment.byteLength).toBe(length);
    const top = [...childBoxes(segment, 0, 'segment')];
    expect(top.map((b) => b.type)).toEqual(['styp', 'moof', 'mdat', 'moof', 'mdat', 'moof', 'mdat']);
    const styp = new ByteReader(top[0]!.payload, 'styp');
    expect([styp.fourcc(), styp.u32(), styp.fourcc(), styp.fourcc()]).toEqual([
      STYP_MAJOR_BRAND,
      0,
      ...STYP_COMPATIBLE_BRANDS,
    ]);
    expect(top.filter((b) => b.type === 'mdat').map((b) => b.size - 8)).toEqual(frags.map((x) => x.data[0]!.length));
    expect(
      top.filter((b) => b.type === 'moof').map((b) => readMoof(segment.subarray(b.start, b.start + b.size)).sequence),
    ).toEqual([1, 2, 3]);
  });

  test('the parts reference the file, never copy it: bytes parts hold only the new boxes', async () => {
    const f = await open('video_high_1600k.ismv');
    const frag = await reboxed(f, 1, 0);
    const { parts } = mediaSegmentParts([frag]);
    const newBytes = parts
      .filter((p) => p.kind === 'bytes')
      .reduce((s, p) => s + (p.kind === 'bytes' ? p.bytes.byteLength : 0), 0);
    expect(newBytes).toBe(24 + frag.moof.byteLength + 8);
  });
});
