// The one moov reader (origin/media/moov.ts) on every fixture, checked against mp4box (an
// independent parser) and against fixtures/media/facts.json (ffprobe); then corrupt moovs, whose
// errors must name the box path and the absolute file offset.

import { readFileSync } from 'node:fs';
import { createFile, MP4BoxBuffer } from 'mp4box';
import { OriginError } from '../../../origin/errors';
import { packLanguage } from '../../../origin/segments/fmp4/init-segment';
import { readMoov, readTrackHeaders } from '../../../origin/media/moov';
import { codecConfigOf } from '../../../origin/media/codec-config';
import { unpackLanguage } from '../../../origin/media/boxes';
import { FIXTURE_FILES, media } from '../../helpers/fixtures';
import { thrownOriginError } from '../../helpers/errors';
import { openFixture } from '../segments/fmp4/fixture-segments';

interface Facts {
  file: string;
  kind: string;
  box: {
    track_id: number;
    timescale: number;
    mdhd_language: string;
    handler: string;
    sample_entry: string;
    sample_entry_size?: string;
  };
}
const FACTS = JSON.parse(readFileSync(media('facts.json'), 'utf8')) as Facts[];

/** mp4box's view of a moov: its box objects carry parsed fields and offsets into the buffer. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function mp4boxMoov(moov: Uint8Array): any {
  const file = createFile();
  const quiet = console.error;
  console.error = () => undefined; // shaka-packager's stpp entry is one byte short; mp4box says so
  try {
    file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(new Uint8Array(moov).buffer, 0));
    file.flush();
  } finally {
    console.error = quiet;
  }
  return (file as unknown as { moov: unknown }).moov;
}

describe('every fixture track', () => {
  test.each([...FIXTURE_FILES, 'muxed_av.ismv'])('%s', async (name) => {
    const f = await openFixture(name);
    await f.source.close();
    const oracle = mp4boxMoov(f.moov);
    expect([...f.headers.keys()]).toEqual(oracle.traks.map((t: { tkhd: { track_id: number } }) => t.tkhd.track_id));
    for (const [i, trak] of oracle.traks.entries()) {
      const h = f.headers.get(trak.tkhd.track_id)!;
      const stsd = trak.mdia.minf.stbl.stsd;
      const trex = oracle.mvex.trexs.find((t: { track_id: number }) => t.track_id === h.trackID);
      expect(h).toEqual({
        trackID: trak.tkhd.track_id,
        handler: trak.mdia.hdlr.handler,
        timescale: trak.mdia.mdhd.timescale,
        language: trak.mdia.mdhd.languageString,
        width: trak.tkhd.width >>> 16,
        height: trak.tkhd.height >>> 16,
        // The exact bytes of the source stsd, wherever mp4box found it.
        stsd: Uint8Array.from(f.moov.subarray(stsd.start, stsd.start + stsd.size)),
        trexDefaults: {
          defaultSampleDescriptionIndex: trex.default_sample_description_index,
          defaultSampleDuration: trex.default_sample_duration,
          defaultSampleSize: trex.default_sample_size,
          defaultSampleFlags: trex.default_sample_flags,
        },
        sampleEntry: stsd.entries[0].type,
        codec: h.codec,
      });
      // The decoder configuration is the one the stsd-level reader finds.
      if (h.codec !== undefined) expect(h.codec).toEqual(codecConfigOf(h.stsd, name));
      expect(i).toBeLessThan(2);
    }
  });

  test.each(FACTS.map((x) => [x.file, x] as const))('%s agrees with ffprobe facts', async (name, facts) => {
    const f = await openFixture(name);
    await f.source.close();
    const h = f.headers.get(facts.box.track_id)!;
    expect([h.handler, h.timescale, h.language, h.sampleEntry]).toEqual([
      facts.box.handler,
      facts.box.timescale,
      facts.box.mdhd_language,
      facts.box.sample_entry,
    ]);
    if (facts.kind === 'video') expect(h.width).toBeGreaterThan(0);
    else expect([h.width, h.height]).toEqual([0, 0]);
  });

  test('the stsd is a copy, not a view into the moov', async () => {
    const f = await openFixture('audio_eng_64k.isma');
    await f.source.close();
    const h = f.headers.get(1)!;
    expect(h.stsd.buffer).not.toBe(f.moov.buffer);
    expect(String.fromCharCode(...h.stsd.subarray(4, 8))).toBe('stsd');
  });

  test('anamorphic video: tkhd has the display size, the sample entry the coded one', async () => {
    const f = await openFixture('video_sar_500k.ismv');
    await f.source.close();
    expect([f.headers.get(1)!.width, f.headers.get(1)!.height]).toEqual([640, 360]);
  });

  test('muxed file: two tracks, video 1 and audio 2', async () => {
    const f = await openFixture('muxed_av.ismv');
    await f.source.close();
    expect([...f.headers.values()].map((h) => [h.trackID, h.handler, h.sampleEntry])).toEqual([
      [1, 'vide', 'avc1'],
      [2, 'soun', 'mp4a'],
    ]);
  });
});

describe('language (ISO/IEC 14496-12 §8.4.2.3)', () => {
  test.each(['eng', 'nld', 'und', 'fra'])('%s packs and unpacks', (lang) => {
    expect(unpackLanguage(packLanguage(lang))).toBe(lang);
  });
  test('eng is 0x15c7; zero and invalid codes are und', () => {
    expect(packLanguage('eng')).toBe(0x15c7);
    expect(unpackLanguage(0)).toBe('und');
    expect(packLanguage('EN')).toBe(packLanguage('und'));
  });
});

describe('corrupt moovs name the box path and the file offset', () => {
  const MOOV_AT = 24; // video_baseline_400k.ismv: ftyp is 24 bytes
  const original = (): Uint8Array => {
    const file = readFileSync(media('video_baseline_400k.ismv'));
    const size = file.readUInt32BE(MOOV_AT);
    return Uint8Array.from(file.subarray(MOOV_AT, MOOV_AT + size));
  };
  /** Relative position of the first box of `type` in the moov (its size field). */
  const at = (moov: Uint8Array, type: string): number => Buffer.from(moov).indexOf(type, 0, 'latin1') - 4;
  const rename = (moov: Uint8Array, from: string, to: string): Uint8Array => {
    moov.set(Buffer.from(to, 'latin1'), at(moov, from) + 4);
    return moov;
  };
  const failure = (moov: Uint8Array): OriginError => {
    try {
      readTrackHeaders(moov, 'v.ismv', MOOV_AT);
    } catch (e) {
      expect(e).toBeInstanceOf(OriginError);
      return e as OriginError;
    }
    throw new Error('expected readTrackHeaders to fail');
  };

  test('the original reads', () => {
    expect(readTrackHeaders(original(), 'v.ismv', MOOV_AT).size).toBe(1);
  });

  test('missing tkhd', () => {
    const e = failure(rename(original(), 'tkhd', 'xxxx'));
    expect([e.kind, e.subject]).toEqual(['corrupt-media', 'v.ismv: moov/trak[0]']);
    expect(e.message).toBe(
      `v.ismv: moov/trak[0]: missing tkhd box (at file offset ${MOOV_AT + at(original(), 'trak') + 8})`,
    );
  });

  test('stsd with no sample entry', () => {
    const moov = original();
    const stsd = at(moov, 'stsd');
    new DataView(moov.buffer).setUint32(stsd + 12, 0);
    const e = failure(moov);
    expect(e.subject).toBe('v.ismv: moov/trak[0]/mdia/minf/stbl/stsd');
    expect(e.message).toContain(`entry_count is 0: no sample entry (at file offset ${MOOV_AT + stsd + 16})`);
  });

  test('stsd entry_count larger than its entries', () => {
    const moov = original();
    new DataView(moov.buffer).setUint32(at(moov, 'stsd') + 12, 2);
    expect(failure(moov).message).toMatch(/stsd: entry_count 2 but 1 sample entries follow/);
  });

  test('a sample entry whose size runs past the stsd', () => {
    const moov = original();
    const avc1 = at(moov, 'avc1');
    new DataView(moov.buffer).setUint32(avc1, 0x7fffffff);
    const e = failure(moov);
    expect(e.subject).toBe('v.ismv: moov/trak[0]/mdia/minf/stbl/stsd');
    expect(e.message).toContain(`box 'avc1' of 2147483647 bytes runs past the end of its container`);
    expect(e.message).toContain(`(at file offset ${MOOV_AT + avc1})`);
  });

  test('a truncated moov', () => {
    const e = failure(original().subarray(0, 300));
    expect(e.kind).toBe('corrupt-media');
    expect(e.message).toBe(
      `v.ismv: moov: box 'moov' of 740 bytes runs past the end of its container (300 bytes left) (at file offset 24)`,
    );
  });

  test('a huge child box size', () => {
    const moov = original();
    new DataView(moov.buffer).setUint32(at(moov, 'mdia'), 0xfffffff0);
    expect(failure(moov).message).toMatch(/moov\/trak\[0\]: box 'mdia' of 4294967280 bytes runs past the end/);
  });

  test('track_ID 0', () => {
    const moov = original();
    const tkhd = at(moov, 'tkhd');
    expect(moov[tkhd + 8]).toBe(1); // version 1: two 64-bit times before track_ID
    new DataView(moov.buffer).setUint32(tkhd + 8 + 4 + 16, 0);
    expect(failure(moov).message).toMatch(/moov\/trak\[0\]\/tkhd: track_ID is 0/);
  });

  test('timescale 0', () => {
    const moov = original();
    new DataView(moov.buffer).setUint32(at(moov, 'mdhd') + 8 + 4 + 16, 0); // version 1
    expect(failure(moov).subject).toBe('v.ismv: moov/trak[0]/mdia/mdhd');
  });

  test('no trex for the track', () => {
    const e = failure(rename(original(), 'trex', 'free'));
    expect([e.kind, e.message]).toEqual(['corrupt-media', expect.stringContaining('no trex for track 1')]);
  });

  test('not fragmented: no mvex', () => {
    expect(failure(rename(original(), 'mvex', 'free')).kind).toBe('unsupported-media');
  });

  test('a sample entry of another kind than its handler (avc1 in a sound track)', () => {
    // Found by the hardening corpus (test/hardening/): accepted, the track reached the MPEG-TS
    // writer as audio samples of H.264 and failed there as an internal error.
    const e = failure(rename(original(), 'vide', 'soun'));
    expect([e.kind, e.subject]).toEqual(['corrupt-media', 'v.ismv: moov/trak[0]/mdia/minf/stbl/stsd/avc1']);
    expect(e.message).toMatch(/sample entry avc1 in a track of type audio/);
  });

  test('a handler an fMP4 output cannot describe', () => {
    const e = failure(rename(original(), 'vide', 'hint'));
    expect([e.kind, e.subject]).toEqual(['unsupported-media', 'v.ismv: moov/trak[0]/mdia/hdlr']);
    expect(e.message).toMatch(/handler 'hint' is not one of vide, soun, subt, text, meta/);
  });

  test('not a moov at all', () => {
    expect(failure(rename(original(), 'moov', 'moof')).message).toMatch(/expected a moov box/);
  });
});

describe('one read gives the properties and the header of each track', () => {
  const moovOf = (name: string): { bytes: Uint8Array; offset: number } => {
    const file = readFileSync(media(name));
    let at = 0;
    while (file.toString('latin1', at + 4, at + 8) !== 'moov') at += file.readUInt32BE(at);
    return { bytes: Uint8Array.from(file.subarray(at, at + file.readUInt32BE(at))), offset: at };
  };

  test.each([...FIXTURE_FILES, 'muxed_av.ismv'])('%s: the two views agree', (name) => {
    const { bytes, offset } = moovOf(name);
    const { tracks, fragmented } = readMoov(bytes, name, offset);
    expect(fragmented).toBe(true);
    for (const { properties: p, header: h } of tracks) {
      expect([p.trackID, p.TimeScale, p.sampleEntry]).toEqual([h.trackID, h.timescale, h.sampleEntry]);
      // Smooth's CodecPrivateData is the hex of the decoder configuration the writers use.
      if (h.codec?.kind === 'aac' || h.codec?.kind === 'ac3' || h.codec?.kind === 'ec3') {
        const config = h.codec.kind === 'aac' ? h.codec.asc : h.codec.record;
        expect(p.CodecPrivateData).toBe(Buffer.from(config).toString('hex').toUpperCase());
      }
      if (h.codec?.kind === 'avc') {
        const annexB = h.codec.parameterSets.map((n) => '00000001' + Buffer.from(n).toString('hex').toUpperCase());
        expect(p.CodecPrivateData).toBe(annexB.join(''));
      }
      expect(h.codec === undefined).toBe(p.type === 'textstream');
    }
  });

  test('a second trex for one track is corrupt (§8.8.3: one per track)', () => {
    const { bytes, offset } = moovOf('muxed_av.ismv');
    const trex = Buffer.from(bytes).lastIndexOf('trex', undefined, 'latin1') - 4;
    expect(new DataView(bytes.buffer).getUint32(trex + 12)).toBe(2);
    new DataView(bytes.buffer).setUint32(trex + 12, 1); // the second trex now names track 1 too
    const e = thrownOriginError(() => readMoov(bytes, 'm.ismv', offset));
    expect([e.kind, e.subject]).toEqual(['corrupt-media', 'm.ismv: moov/mvex/trex[1]']);
    expect(e.message).toContain(`a second trex for track 1 (§8.8.3: one per track) (at file offset ${offset + trex})`);
  });

  test("QuickTime's sbtl subtitle handler is written as the ISO subt", () => {
    const { bytes, offset } = moovOf('text_eng.ismt');
    const mdia = Buffer.from(bytes).indexOf('mdia', 0, 'latin1');
    const hdlr = Buffer.from(bytes).indexOf('hdlr', mdia, 'latin1') - 4;
    const handler = Buffer.from(bytes).toString('latin1', hdlr + 16, hdlr + 20);
    expect(['subt', 'text']).toContain(handler);
    bytes.set(Buffer.from('sbtl', 'latin1'), hdlr + 16);
    const [t] = readMoov(bytes, 't.ismt', offset).tracks;
    expect([t!.properties.type, t!.header.handler]).toEqual(['textstream', 'subt']);
  });

  test('a moov without mvex reads, and says it is not fragmented', () => {
    const { bytes, offset } = moovOf('video_baseline_400k.ismv');
    const mvex = Buffer.from(bytes).indexOf('mvex', 0, 'latin1');
    bytes.set(Buffer.from('free', 'latin1'), mvex);
    const { tracks, fragmented } = readMoov(bytes, 'v.ismv', offset);
    expect([fragmented, tracks.length]).toEqual([false, 1]);
  });
});
