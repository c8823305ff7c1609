// Init segments of every fixture track, parsed back by mp4box (an independent reader) field by
// field, and by our own readTrackHeaders (writer → reader round trip, CONTRIBUTING.md design rule 5).

import { createFile, MP4BoxBuffer } from 'mp4box';
import { childBoxes } from '../../../../origin/media/boxes';
import {
  INIT_COMPATIBLE_BRANDS,
  INIT_MAJOR_BRAND,
  writeInitSegment,
} from '../../../../origin/segments/fmp4/init-segment';
import { readTrackHeaders } from '../../../../origin/media/moov';
import type { HandlerType, TrackHeader } from '../../../../origin/model/media';
import { FIXTURE_FILES } from '../../../helpers/fixtures';
import { openFixture } from './fixture-segments';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Parsed = { ftyp: any; moov: any };

function parse(init: Uint8Array): Parsed {
  const file = createFile();
  const quiet = console.error;
  console.error = () => undefined; // shaka-packager's stpp entry is one byte short; mp4box says so
  try {
    file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(new Uint8Array(init).buffer, 0));
    file.flush();
  } finally {
    console.error = quiet;
  }
  return file as unknown as Parsed;
}

function topLevel(init: Uint8Array): Array<[string, number]> {
  return [...childBoxes(init, 0, 'init')].map((b) => [b.type, b.size]);
}

const MEDIA_HEADER: Record<HandlerType, string> = {
  vide: 'vmhd',
  soun: 'smhd',
  subt: 'sthd',
  text: 'nmhd',
  meta: 'nmhd',
};

function checkInit(init: Uint8Array, h: TrackHeader, trackId: number): void {
  expect(topLevel(init).map(([t]) => t)).toEqual(['ftyp', 'moov']);
  const { ftyp, moov } = parse(init);
  expect([ftyp.major_brand, ftyp.minor_version, ftyp.compatible_brands]).toEqual([
    INIT_MAJOR_BRAND,
    0,
    INIT_COMPATIBLE_BRANDS,
  ]);
  expect(moov.boxes.map((b: { type: string }) => b.type)).toEqual(['mvhd', 'trak', 'mvex']);
  const mvhd = moov.mvhd;
  expect([mvhd.version, mvhd.timescale, mvhd.duration, mvhd.rate, mvhd.next_track_id]).toEqual([
    1,
    h.timescale,
    0,
    0x10000,
    trackId + 1,
  ]);
  expect(moov.traks).toHaveLength(1);
  const trak = moov.traks[0];
  const tkhd = trak.tkhd;
  const audio = h.handler === 'soun';
  expect([tkhd.flags, tkhd.track_id, tkhd.duration, tkhd.volume]).toEqual([3, trackId, 0, audio ? 1 : 0]);
  expect([tkhd.width / 0x10000, tkhd.height / 0x10000]).toEqual(audio ? [0, 0] : [h.width, h.height]);
  expect(Object.values(tkhd.matrix)).toEqual([0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000]);
  const mdia = trak.mdia;
  expect([mdia.mdhd.timescale, mdia.mdhd.duration, mdia.mdhd.languageString]).toEqual([h.timescale, 0, h.language]);
  expect(mdia.hdlr.handler).toBe(h.handler);
  expect(mdia.hdlr.name.length).toBeGreaterThan(0);
  const minf = mdia.minf;
  expect(minf.boxes.map((b: { type: string }) => b.type)).toEqual([MEDIA_HEADER[h.handler], 'dinf', 'stbl']);
  const dref = minf.dinf.dref;
  expect(dref.entries.map((e: { type: string; flags: number }) => [e.type, e.flags])).toEqual([['url ', 1]]);
  const stbl = minf.stbl;
  expect(stbl.boxes.map((b: { type: string }) => b.type)).toEqual(['stsd', 'stts', 'stsc', 'stsz', 'stco']);
  expect(init.subarray(stbl.stsd.start, stbl.stsd.start + stbl.stsd.size)).toEqual(h.stsd);
  expect([
    stbl.stts.sample_counts.length,
    stbl.stsc.first_chunk.length,
    stbl.stsz.sample_count,
    stbl.stco.chunk_offsets.length,
  ]).toEqual([0, 0, 0, 0]);
  const trex = moov.mvex.trexs;
  expect(trex).toHaveLength(1);
  const d = h.trexDefaults;
  expect([
    trex[0].track_id,
    trex[0].default_sample_description_index,
    trex[0].default_sample_duration,
    trex[0].default_sample_size,
    trex[0].default_sample_flags,
  ]).toEqual([
    trackId,
    d.defaultSampleDescriptionIndex,
    d.defaultSampleDuration,
    d.defaultSampleSize,
    d.defaultSampleFlags,
  ]);
}

describe('init segments of every fixture track', () => {
  test.each([...FIXTURE_FILES, 'muxed_av.ismv'])('%s', async (name) => {
    const f = await openFixture(name);
    await f.source.close();
    for (const h of f.headers.values()) {
      const init = writeInitSegment(h);
      checkInit(init, h, h.trackID);
      // Round trip: our reader gives back the header we wrote from.
      const moov = init.subarray(topLevel(init)[0]![1]);
      expect(readTrackHeaders(moov, 'init', 28)).toEqual(new Map([[h.trackID, h]]));
    }
  });

  test('the codec configuration survives: mp4box derives the same codecs string as from the source', async () => {
    for (const name of ['video_high_1600k.ismv', 'audio_eng_64k.isma', 'audio_eac3_256k.isma']) {
      const f = await openFixture(name);
      await f.source.close();
      const info = (bytes: Uint8Array) => {
        const file = createFile();
        file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(new Uint8Array(bytes).buffer, 0));
        file.flush();
        return file.getInfo().tracks[0]!.codec;
      };
      const init = writeInitSegment(f.headers.get(1)!);
      const sourceMoov = Buffer.concat([init.subarray(0, 28), f.moov]); // our ftyp, the source moov
      expect(info(init)).toBe(info(sourceMoov));
      expect(info(init)).toMatch(/^(avc1\.64001f|mp4a\.40\.2|ec-3)$/);
    }
  });

  test('a track renumbered for its own init segment (muxed audio 2 → 1)', async () => {
    const f = await openFixture('muxed_av.ismv');
    await f.source.close();
    const h = f.headers.get(2)!;
    const init = writeInitSegment(h, { trackId: 1 });
    checkInit(init, h, 1);
    expect(readTrackHeaders(init.subarray(28), 'init').get(1)).toEqual({ ...h, trackID: 1 });
  });

  test.each(['text', 'meta', 'subt'] as const)('handler %s gets its media header box', async (handler) => {
    const f = await openFixture('text_eng.ismt');
    await f.source.close();
    const h: TrackHeader = { ...f.headers.get(1)!, handler, width: 320, height: 240, language: 'xx' };
    const init = writeInitSegment(h);
    checkInit(init, { ...h, language: 'und', ...(handler === 'meta' ? { width: 0, height: 0 } : {}) }, 1);
  });

  test('big track ids and timescales are written exactly', async () => {
    const f = await openFixture('audio_eng_128k.isma');
    await f.source.close();
    const h: TrackHeader = { ...f.headers.get(1)!, timescale: 0xfffffff0 };
    checkInit(writeInitSegment(h, { trackId: 0xfffffffe }), h, 0xfffffffe);
    // §8.2.2.3: next_track_ID is all ones when the largest id is taken.
    expect(parse(writeInitSegment(h, { trackId: 0xffffffff })).moov.mvhd.next_track_id).toBe(0xffffffff);
    expect(() => writeInitSegment(h, { trackId: 0 })).toThrow(/track id 0 is not in 1..2\^32-1/);
  });
});
