// Every track property of every fixture track, against values written here (what the fixture
// script encoded, see fixtures/README.md), and against ffprobe's independent reading
// (fixtures/media/facts.json, written by fixtures/make-media.sh).

import { readFileSync } from 'node:fs';
import { readMediaFile } from '../../../origin/media/media-file';
import { FileSource } from '../../../origin/io/source';
import { MediaFile } from '../../../origin/model/media';
import { EXPECTED, comparable } from '../../helpers/expected';
import { FIXTURE_FILES, media } from '../../helpers/fixtures';

async function read(file: string, mode: 'fast' | 'exact'): Promise<MediaFile> {
  const source = await FileSource.open(media(file));
  try {
    return await readMediaFile(source, mode);
  } finally {
    await source.close();
  }
}

test('the expectation table covers every fixture file', () => {
  expect(EXPECTED.map((e) => e.file).sort()).toEqual([...FIXTURE_FILES].sort());
});

describe.each(EXPECTED)('$file', ({ file, target, props }) => {
  test('track properties equal the encoded values', async () => {
    const m = await read(file, 'exact');
    expect(m.tracks).toHaveLength(1);
    const p = m.tracks[0]!.properties;
    expect(comparable(p)).toMatchObject(props);
    // Properties a track type does not have are absent, so filters comparing them are false.
    if (p.type !== 'video') expect(p.MaxWidth ?? p.avc_profile ?? p.FrameRate ?? p.ScanType).toBeUndefined();
    if (p.type !== 'audio') expect(p.Channels ?? p.SamplingRate ?? p.AudioTag).toBeUndefined();
    expect(p.CodecPrivateData).toMatch(p.type === 'textstream' ? /^$/ : /^([0-9A-F]{2})+$/);
    if (target > 0) expect(Math.abs(p.systemBitrate - target) / target).toBeLessThan(0.1);
  });

  test('the mfra fast path and the moof walk build the same fragment table', async () => {
    const fast = await read(file, 'fast');
    const exact = await read(file, 'exact');
    // shaka-packager's text files carry a sidx but no mfra: the fast path walks them too.
    expect(fast.indexedBy).toBe(file.endsWith('.ismt') ? 'moof-walk' : 'mfra');
    const a = fast.tracks[0]!.fragments;
    const b = exact.tracks[0]!.fragments;
    expect(a.count).toBe(5);
    expect([...a.times]).toEqual([...b.times]);
    expect([...a.durations]).toEqual([...b.durations]);
    expect([...a.offsets]).toEqual([...b.offsets]);
    expect([...a.sizes]).toEqual([...b.sizes]);
    expect([...a.keyframes]).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('fragment timelines', () => {
  test('AAC starts at the exact negative priming time of tfxd (-1024 samples at 48 kHz)', async () => {
    const f = (await read('audio_eng_64k.isma', 'fast')).tracks[0]!.fragments;
    expect([...f.times]).toEqual([-213333n, 19840000n, 39893333n, 59946667n, 80000000n]);
    expect([...f.durations]).toEqual([20053333, 20053333, 20053334, 20053333, 20000000]);
  });

  test('AC-3 starts at -256 samples', async () => {
    const f = (await read('audio_ac3_384k.isma', 'fast')).tracks[0]!.fragments;
    expect(f.times[0]).toBe(-53333n);
  });

  test('29.97 fps fragments last 60 frames = 2.002 s', async () => {
    const f = (await read('video_2997_600k.ismv', 'fast')).tracks[0]!.fragments;
    expect([...f.durations]).toEqual([20020000, 20020000, 20020000, 20020000, 20020000]);
  });

  test('byte ranges cover moof+mdat back to back up to the mfra', async () => {
    const m = await read('video_main_900k.ismv', 'fast');
    const f = m.tracks[0]!.fragments;
    for (let i = 0; i + 1 < f.count; i++) expect(f.offsets[i]! + f.sizes[i]!).toBe(f.offsets[i + 1]);
    const bytes = readFileSync(media('video_main_900k.ismv'));
    const last = f.offsets[f.count - 1]! + f.sizes[f.count - 1]!;
    expect(bytes.toString('latin1', last + 4, last + 8)).toBe('mfra');
    expect(bytes.toString('latin1', f.offsets[0]! + 4, f.offsets[0]! + 8)).toBe('moof');
  });

  test('a file with two tracks: each track gets its own interleaved fragments', async () => {
    for (const mode of ['fast', 'exact'] as const) {
      const m = await read('muxed_av.ismv', mode);
      expect(m.tracks.map((t) => t.properties.type)).toEqual(['video', 'audio']);
      const [v, a] = m.tracks.map((t) => t.fragments);
      expect(v!.count).toBe(2);
      expect(a!.count).toBe(2);
      // video moof+mdat, then audio moof+mdat, alternating: ranges end where the other track begins.
      expect(v!.offsets[0]! + v!.sizes[0]!).toBe(a!.offsets[0]);
      expect(a!.offsets[0]! + a!.sizes[0]!).toBe(v!.offsets[1]);
    }
  });
});

describe('against ffprobe (fixtures/media/facts.json)', () => {
  const facts = JSON.parse(readFileSync(media('facts.json'), 'utf8')) as Array<Record<string, unknown>>;
  // ffprobe's payload byte count must equal the media bytes our walk summed from the trun sizes.
  test.each(EXPECTED.filter((e) => !e.file.endsWith('.ismt')).map((e) => e.file))('%s', async (file) => {
    const f = facts.find((x) => x['file'] === file)!;
    const track = (await read(file, 'exact')).tracks[0]!;
    const p = track.properties;
    expect(track.dataBytes).toBe(f['payload_bytes']);
    expect(p.systemLanguage).toBe(f['language']);
    if (p.type === 'video') {
      expect([p.MaxWidth, p.MaxHeight]).toEqual([f['width'], f['height']]);
      expect([p.DisplayWidth, p.DisplayHeight]).toEqual([f['display_width'], f['display_height']]);
      expect(p.avc_level).toBe(f['level_idc']);
      expect(comparable(p)['FrameRate']).toBe(String(f['r_frame_rate']).replace(/\/1$/, ''));
      expect(p.ScanType).toBe(f['field_order'] === 'progressive' ? 'progressive' : 'interlaced');
    } else {
      expect(p.Channels).toBe(f['channels']);
      expect(p.SamplingRate).toBe(Number(f['sample_rate']));
    }
  });
});
