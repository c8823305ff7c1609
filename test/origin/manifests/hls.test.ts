// HLS master playlists of the fixture presentations: groups, the variant algorithm, the three
// packagings, versions 1 to 7 (media and I-frame playlists: hls-media-playlists.test.ts; variant_set,
// start_index, DEFAULT, hls_no_audio_only and URLs: hls-master-options.test.ts). Every playlist is read back with m3u8-parser (no warnings allowed);
// durations and sizes come from the fixture facts and a box walk of the files, not from the
// origin's own index. The algorithm on synthetic lists: hls-variants.test.ts; the TS and packed
// audio size estimates against the segment writers: hls-bandwidth.test.ts.

import { OriginError } from '../../../origin/errors';
import {
  peakSegmentBitrate,
  seconds,
  targetDuration,
  writeIFramePlaylist,
  writeMasterPlaylist,
  writeMediaPlaylist,
} from '../../../origin/manifests/hls';
import { Segment } from '../../../origin/model/timeline';
import { ViewTrack } from '../../../origin/model/view';
import { expectGolden } from '../../helpers/golden';
import { AVC_AAC, filesByKey, keyOf } from './format-support';
import { thrown } from '../../helpers/errors';
import { estimatedPeak, FULL, hlsView, read, sourceRates, tagLines, trackOf, VIDEOS_UP } from './hls-support';
import { segmentListOf } from '../../helpers/segments';

// ---------------------------------------------------------------------------------------------

describe('master playlist, MPEG-TS multiplexed (the default)', () => {
  test('the fixture videos ascend as VIDEOS_UP says (the expectations below rest on it)', async () => {
    const view = await hlsView(FULL);
    const rates = VIDEOS_UP.map((f) => trackOf(view, f).track.properties.systemBitrate);
    expect(rates).toEqual([...rates].sort((a, b) => a - b));
    expect(new Set(rates).size).toBe(6);
  });

  test('version 1 (the default), no I-frame variants below 4, read without warnings', async () => {
    const text = writeMasterPlaylist(await hlsView(FULL));
    const { manifest } = read(text);
    expect(text.split('\n').slice(0, 3)).toEqual(['#EXTM3U', '#EXT-X-VERSION:1', '## Created with Streaming Origin']);
    expect(manifest.iFramePlaylists).toEqual([]);
    expect(text).not.toContain('I-FRAME');
  });

  test('audio groups by encoding; one group has two languages, so every member of every group points to its packed audio, the DEFAULTs too', async () => {
    const view = await hlsView(FULL);
    const { media } = read(writeMasterPlaylist(view));
    const audio = media.filter((m) => m['TYPE'] === 'AUDIO');
    const pl = (file: string): string => `presentation-${keyOf(view, file)}.m3u8`;
    // Ascending kbps: 64, 128 (English and Dutch), E-AC-3 256, AC-3 384.
    expect(
      audio.map((m) => [
        m['GROUP-ID'],
        m['NAME'],
        m['LANGUAGE'],
        m['DEFAULT'],
        m['AUTOSELECT'],
        m['CHANNELS'],
        m['URI'],
      ]),
    ).toEqual([
      ['audio-aacl-64', 'audio_eng', 'en', 'YES', 'YES', '2', pl('audio_eng_64k.isma')],
      ['audio-aacl-128', 'audio_eng', 'en', 'YES', 'YES', '2', pl('audio_eng_128k.isma')],
      ['audio-aacl-128', 'audio_nld', 'nl', 'NO', 'YES', '2', pl('audio_nld_128k.isma')],
      ['audio-ec-3-256', 'audio_eng_ec3', 'en', 'YES', 'YES', '6', pl('audio_eac3_256k.isma')],
      ['audio-ac-3-384', 'audio_eng_ac3', 'en', 'YES', 'YES', '6', pl('audio_ac3_384k.isma')],
    ]);
    const subs = media.filter((m) => m['TYPE'] === 'SUBTITLES');
    expect(subs.map((m) => [m['GROUP-ID'], m['NAME'], m['LANGUAGE'], m['DEFAULT'], m['URI']])).toEqual([
      ['textstream', 'textstream_eng', 'en', 'YES', pl('text_eng.ismt')],
      ['textstream', 'textstream_nld', 'nl', 'NO', pl('text_nld.ismt')],
    ]);
  });

  test("variants: the reference's pairing, multiplexed URIs (audio = the group's DEFAULT), then audio-only variants", async () => {
    const view = await hlsView(FULL);
    const { manifest } = read(writeMasterPlaylist(view));
    const k = (file: string): string => keyOf(view, file);
    const [base, sar, ntsc, interlaced, main, high] = VIDEOS_UP.map(k);
    const [a64, a128, ec3, ac3] = [
      'audio_eng_64k.isma',
      'audio_eng_128k.isma',
      'audio_eac3_256k.isma',
      'audio_ac3_384k.isma',
    ].map(k);
    expect(
      manifest.playlists!.map((v) => [v.uri, v.attributes.AUDIO, v.attributes.SUBTITLES, v.attributes.CODECS]),
    ).toEqual([
      // Lowest audio group with the lowest video, and so on; then the highest group (AC-3) with the rest.
      [`presentation-${a64}-${base}.m3u8`, 'audio-aacl-64', 'textstream', 'avc1.42C01E,mp4a.40.2'],
      [`presentation-${a128}-${sar}.m3u8`, 'audio-aacl-128', 'textstream', 'avc1.4D401E,mp4a.40.2'],
      [`presentation-${ec3}-${ntsc}.m3u8`, 'audio-ec-3-256', 'textstream', 'avc1.4D401E,ec-3'],
      [`presentation-${ac3}-${interlaced}.m3u8`, 'audio-ac-3-384', 'textstream', 'avc1.64001E,ac-3'],
      [`presentation-${ac3}-${main}.m3u8`, 'audio-ac-3-384', 'textstream', 'avc1.4D401E,ac-3'],
      [`presentation-${ac3}-${high}.m3u8`, 'audio-ac-3-384', 'textstream', 'avc1.64001F,ac-3'],
      // Audio-only: packed audio of each group's DEFAULT member, ascending.
      [`presentation-${a64}.m3u8`, 'audio-aacl-64', 'textstream', 'mp4a.40.2'],
      [`presentation-${a128}.m3u8`, 'audio-aacl-128', 'textstream', 'mp4a.40.2'],
      [`presentation-${ec3}.m3u8`, 'audio-ec-3-256', 'textstream', 'ec-3'],
      [`presentation-${ac3}.m3u8`, 'audio-ac-3-384', 'textstream', 'ac-3'],
    ]);
    const display = manifest.playlists!.slice(0, 6).map((v) => [v.attributes.RESOLUTION, v.attributes['FRAME-RATE']]);
    expect(display).toEqual([
      [{ width: 512, height: 288 }, 24],
      [{ width: 640, height: 360 }, 24], // the display size, not the coded 480x360
      [{ width: 640, height: 360 }, 29.97],
      [{ width: 720, height: 576 }, 25],
      [{ width: 640, height: 360 }, 24],
      [{ width: 1280, height: 720 }, 24],
    ]);
    expect(
      manifest
        .playlists!.slice(6)
        .every((v) => v.attributes.RESOLUTION === undefined && v.attributes['FRAME-RATE'] === undefined),
    ).toBe(true);
    expect(manifest.playlists!.every((v) => v.attributes['CLOSED-CAPTIONS'] === 'NONE')).toBe(true);
  });

  test('CODECS lists what the client gets: no stpp (the source) and no wvtt (plain WebVTT) for the subtitles', async () => {
    const text = writeMasterPlaylist(await hlsView(FULL));
    expect(text).not.toContain('stpp');
    expect(text).not.toContain('wvtt');
  });

  test('BANDWIDTH: the multiplexed TS, plus the largest rendition of the audio group with a URI, plus the largest subtitles', async () => {
    const view = await hlsView(FULL);
    const variants = read(writeMasterPlaylist(view)).manifest.playlists!;
    const text = Math.max(sourceRates('text_eng.ismt').peak, sourceRates('text_nld.ismt').peak);
    // Every audio member has a URI (the 128k group has two languages): a client playing any of
    // them (Dutch, or a DEFAULT's own packed audio) still downloads the multiplexed TS.
    const aac128 = Math.max(
      estimatedPeak(view, ['audio_eng_128k.isma'], 'aac'),
      estimatedPeak(view, ['audio_nld_128k.isma'], 'aac'),
    );
    expect(variants[1]!.attributes.BANDWIDTH).toBe(
      estimatedPeak(view, ['audio_eng_128k.isma', 'video_sar_500k.ismv'], 'ts') + aac128 + text,
    );
    // One-member groups too: their DEFAULT has a URI here.
    expect(variants[0]!.attributes.BANDWIDTH).toBe(
      estimatedPeak(view, ['audio_eng_64k.isma', 'video_baseline_400k.ismv'], 'ts') +
        estimatedPeak(view, ['audio_eng_64k.isma'], 'aac') +
        text,
    );
    expect(variants[5]!.attributes.BANDWIDTH).toBe(
      estimatedPeak(view, ['audio_ac3_384k.isma', 'video_high_1600k.ismv'], 'ts') +
        estimatedPeak(view, ['audio_ac3_384k.isma'], 'ac3') +
        text,
    );
    expect(variants[9]!.attributes.BANDWIDTH).toBe(estimatedPeak(view, ['audio_ac3_384k.isma'], 'ac3') + text);
    expect(variants[7]!.attributes.BANDWIDTH).toBe(
      estimatedPeak(view, ['audio_eng_128k.isma'], 'aac') + estimatedPeak(view, ['audio_nld_128k.isma'], 'aac') + text,
    );
    // TS (and the packed audio) cost more than the source's own bytes, but not wildly more.
    const source = sourceRates('video_high_1600k.ismv').peak + 2 * sourceRates('audio_ac3_384k.isma').peak + text;
    expect(variants[5]!.attributes.BANDWIDTH).toBeGreaterThan(source);
    expect(variants[5]!.attributes.BANDWIDTH).toBeLessThan(source * 1.1);
    for (const v of variants)
      expect(Number(v.attributes['AVERAGE-BANDWIDTH'])).toBeLessThanOrEqual(v.attributes.BANDWIDTH);
  });

  test('the DEFAULTs have no URI only when no group offers a second language; the variants stay multiplexed either way', async () => {
    // With a second language anywhere, every DEFAULT needs its own URI, one-member groups' too, or
    // Chromium's native HLS cannot switch to it (hls.ts hasUri); otherwise each DEFAULT is in its
    // variants only (§4.3.4.2.1).
    const cases: Array<[string[], boolean]> = [
      // One group, one member; two one-member groups (64k, 128k English): nothing to switch to.
      [['video_baseline_400k.ismv', 'audio_eng_128k.isma'], false],
      [['video_baseline_400k.ismv', 'video_main_900k.ismv', 'audio_eng_64k.isma', 'audio_eng_128k.isma'], false],
      // One group of two, either language first; a one-member 64k group beside a group of two.
      [['video_baseline_400k.ismv', 'audio_eng_128k.isma', 'audio_nld_128k.isma'], true],
      [['video_baseline_400k.ismv', 'audio_nld_128k.isma', 'audio_eng_128k.isma'], true],
      [
        [
          'video_baseline_400k.ismv',
          'video_main_900k.ismv',
          'audio_eng_64k.isma',
          'audio_eng_128k.isma',
          'audio_nld_128k.isma',
        ],
        true,
      ],
    ];
    for (const [files, withUris] of cases) {
      const view = await hlsView(files);
      const { manifest, media } = read(writeMasterPlaylist(view));
      const audio = files.filter((f) => f.startsWith('audio_'));
      const defaults = media.filter((m) => m['DEFAULT'] === 'YES');
      // Each DEFAULT's URI, when it has one, is the packed-audio playlist of one of the audio tracks.
      expect(defaults.map((m) => m['URI'] === undefined)).toEqual(defaults.map(() => !withUris));
      expect(
        defaults.map(
          (m) => m['URI'] !== undefined && audio.some((f) => m['URI'] === `presentation-${keyOf(view, f)}.m3u8`),
        ),
      ).toEqual(defaults.map(() => withUris));
      expect(media.filter((m) => m['DEFAULT'] === 'NO').every((m) => m['URI'] !== undefined)).toBe(true);
      // The lowest variant still plays the multiplexed TS of its group's DEFAULT and the video.
      const lowest = audio.find((f) => f === 'audio_eng_64k.isma') ?? audio[0]!;
      expect(manifest.playlists![0]!.uri).toBe(
        `presentation-${keyOf(view, lowest)}-${keyOf(view, 'video_baseline_400k.ismv')}.m3u8`,
      );
    }
  });
});

describe('master playlist, other packagings', () => {
  test('hls_no_multiplex: variants play the video-only TS playlist; every audio member has its packed-audio URI', async () => {
    const view = await hlsView(FULL, 'hls_no_multiplex=1');
    const { manifest, media } = read(writeMasterPlaylist(view));
    expect(manifest.playlists!.slice(0, 6).map((v) => v.uri)).toEqual(
      VIDEOS_UP.map((f) => `presentation-${keyOf(view, f)}.m3u8?hls_no_multiplex=1`),
    );
    expect(media.filter((m) => m['TYPE'] === 'AUDIO').every((m) => m['URI'] !== undefined)).toBe(true);
    const text = Math.max(sourceRates('text_eng.ismt').peak, sourceRates('text_nld.ismt').peak);
    const aac128 = Math.max(
      estimatedPeak(view, ['audio_eng_128k.isma'], 'aac'),
      estimatedPeak(view, ['audio_nld_128k.isma'], 'aac'),
    );
    expect(manifest.playlists![1]!.attributes.BANDWIDTH).toBe(
      estimatedPeak(view, ['video_sar_500k.ismv'], 'ts') + aac128 + text,
    );
  });

  test('hls_fmp4: version 6, one fMP4 playlist per track, BANDWIDTH from the source bytes exactly', async () => {
    const view = await hlsView(FULL, 'hls_fmp4');
    const { manifest, media } = read(writeMasterPlaylist(view));
    expect(manifest.version).toBe(6);
    const playlists = new Set([...filesByKey(view).keys()].map((k) => `presentation-${k}.m3u8?hls_fmp4`));
    expect(media.length).toBe(7);
    expect(media.every((m) => playlists.has(m['URI']!))).toBe(true);
    const uris = manifest.playlists!.map((v) => v.uri);
    expect(uris).toEqual(
      [...VIDEOS_UP, 'audio_eng_64k.isma', 'audio_eng_128k.isma', 'audio_eac3_256k.isma', 'audio_ac3_384k.isma'].map(
        (f) => `presentation-${keyOf(view, f)}.m3u8?hls_fmp4`,
      ),
    );
    const text = Math.max(sourceRates('text_eng.ismt').peak, sourceRates('text_nld.ismt').peak);
    const textAvg = Math.max(sourceRates('text_eng.ismt').average, sourceRates('text_nld.ismt').average);
    const groupOf = [
      'audio_eng_64k.isma',
      ['audio_eng_128k.isma', 'audio_nld_128k.isma'],
      'audio_eac3_256k.isma',
      'audio_ac3_384k.isma',
      'audio_ac3_384k.isma',
      'audio_ac3_384k.isma',
    ];
    VIDEOS_UP.forEach((file, i) => {
      const members = [groupOf[i]!].flat();
      const a = manifest.playlists![i]!.attributes;
      // §4.3.4.2: video + the largest rendition of the group + the largest subtitles.
      expect(a.BANDWIDTH).toBe(sourceRates(file).peak + Math.max(...members.map((m) => sourceRates(m).peak)) + text);
      expect(Number(a['AVERAGE-BANDWIDTH'])).toBe(
        sourceRates(file).average + Math.max(...members.map((m) => sourceRates(m).average)) + textAvg,
      );
    });
    // Audio-only, 128k: its DEFAULT (English) playlist plus the Dutch one, the other rendition of the group.
    expect(manifest.playlists![7]!.attributes.BANDWIDTH).toBe(
      sourceRates('audio_eng_128k.isma').peak + sourceRates('audio_nld_128k.isma').peak + text,
    );
  });

  test('H.264 + AAC only: no SUBTITLES anywhere', async () => {
    const { manifest } = read(writeMasterPlaylist(await hlsView(AVC_AAC)));
    expect(Object.keys(manifest.mediaGroups.AUDIO)).toEqual(['audio-aacl-64', 'audio-aacl-128']);
    expect(Object.keys(manifest.mediaGroups.SUBTITLES)).toEqual([]);
    expect(manifest.playlists!.every((v) => v.attributes.SUBTITLES === undefined)).toBe(true);
  });

  test('audio only: one variant per group (packed audio), hls_no_audio_only cannot remove them', async () => {
    const files = ['audio_eng_64k.isma', 'audio_eng_128k.isma', 'audio_nld_128k.isma'];
    for (const query of ['', 'hls_no_audio_only=1']) {
      const view = await hlsView(files, query);
      const { manifest } = read(writeMasterPlaylist(view));
      const q = query === '' ? '' : `?${query}`;
      expect(manifest.playlists!.map((v) => [v.uri, v.attributes.AUDIO])).toEqual([
        [`presentation-${keyOf(view, 'audio_eng_64k.isma')}.m3u8${q}`, 'audio-aacl-64'],
        [`presentation-${keyOf(view, 'audio_eng_128k.isma')}.m3u8${q}`, 'audio-aacl-128'],
      ]);
    }
  });

  test('video only: one variant per video, no AUDIO', async () => {
    const view = await hlsView(['video_main_900k.ismv', 'video_baseline_400k.ismv']);
    const { manifest } = read(writeMasterPlaylist(view));
    expect(manifest.playlists!.map((v) => [v.uri, v.attributes.AUDIO, v.attributes.CODECS])).toEqual([
      [`presentation-${keyOf(view, 'video_baseline_400k.ismv')}.m3u8`, undefined, 'avc1.42C01E'],
      [`presentation-${keyOf(view, 'video_main_900k.ismv')}.m3u8`, undefined, 'avc1.4D401E'],
    ]);
  });

  test('text only: no variant can be made (unsupported-media, 415)', async () => {
    const view = await hlsView(['text_eng.ismt']);
    const err = thrown(() => writeMasterPlaylist(view)) as OriginError;
    expect(err).toBeInstanceOf(OriginError);
    expect(err.kind).toBe('unsupported-media');
  });
});

describe('hls_client_manifest_version 1 to 7 (RFC 8216 §7)', () => {
  test.each([1, 2, 3, 4, 5, 6, 7])('version %i, MPEG-TS and fMP4', async (v) => {
    for (const fmp4 of [false, true]) {
      const query = `hls_client_manifest_version=${v}${fmp4 ? '&hls_fmp4' : ''}`;
      const view = await hlsView(FULL, query);
      const written = fmp4 ? Math.max(6, v) : v;
      const master = writeMasterPlaylist(view);
      const { manifest } = read(master);
      expect([query, manifest.version]).toEqual([query, written]);
      // I-frame playlists (EXT-X-I-FRAMES-ONLY) need 4: one per video rendition from there on.
      expect([query, manifest.iFramePlaylists!.length]).toEqual([query, written >= 4 ? 6 : 0]);
      const key = keyOf(view, 'video_baseline_400k.ismv');
      const media = writeMediaPlaylist(view, fmp4 ? key : `${keyOf(view, 'audio_eng_64k.isma')}-${key}`);
      expect(read(media).manifest.version).toBe(written);
      // EXTINF: integers below 3 (§4.3.2.1), exact decimals from 3.
      expect([query, tagLines(media, '#EXTINF')]).toEqual([
        query,
        written < 3
          ? ['#EXTINF:4,', '#EXTINF:4,', '#EXTINF:2,']
          : ['#EXTINF:4.000,', '#EXTINF:4.000,', '#EXTINF:2.000,'],
      ]);
      // EXT-X-MAP (fMP4 only) needs 6 outside I-frame playlists.
      expect([query, tagLines(media, '#EXT-X-MAP').length]).toEqual([query, fmp4 ? 1 : 0]);
      if (written >= 4) expect(read(writeIFramePlaylist(view, key)).manifest.version).toBe(written);
      else {
        const e = thrown(() => writeIFramePlaylist(view, key)) as OriginError;
        expect([e.kind, e.message]).toEqual([
          'not-found',
          `I-frame playlists need hls_client_manifest_version 4 or more (RFC 8216 §7); this request has ${v}`,
        ]);
      }
      for (const t of [master, media]) expect(t).not.toMatch(/PROGRAM-ID|EXT-X-ALLOW-CACHE|EXT-X-BYTERANGE/);
    }
  });

  test('integer EXTINF rounds to nearest; the target duration bounds them', async () => {
    // The AAC segments are 4.0107, 4.0107 and 2 s: integers 4, 4, 2 and target 4 (§4.3.3.1), not 5.
    const text = writeMediaPlaylist(await hlsView(FULL), keyOf(await hlsView(FULL), 'audio_eng_128k.isma'));
    expect(tagLines(text, '#EXTINF')).toEqual(['#EXTINF:4,', '#EXTINF:4,', '#EXTINF:2,']);
    expect(tagLines(text, '#EXT-X-TARGETDURATION')).toEqual(['#EXT-X-TARGETDURATION:4']);
    // Source fragments (2.0053 s): 2 each.
    const view = await hlsView(FULL, 'hls_minimum_fragment_length=0');
    expect(tagLines(writeMediaPlaylist(view, keyOf(view, 'audio_eng_128k.isma')), '#EXTINF')).toEqual(
      Array(5).fill('#EXTINF:2,'),
    );
  });
});

describe('helpers', () => {
  const track = (durations: number[], bytes: number[], timescale = 1000): ViewTrack => {
    let time = 0n;
    const segments: Segment[] = durations.map((d, i) => {
      const s = { sourceTime: time, smoothTime: time, time, duration: BigInt(d), first: i, count: 1, bytes: bytes[i]! };
      time += BigInt(d);
      return s;
    });
    return {
      segments: segmentListOf(segments),
      track: { properties: { TimeScale: timescale } },
    } as unknown as ViewTrack;
  };

  test('seconds: exact to 100 ns, at least 3 decimals', () => {
    expect(seconds(20053333n, 10_000_000)).toBe('2.0053333');
    expect(seconds(40_000_000n, 10_000_000)).toBe('4.000');
    expect(seconds(2000n, 1000)).toBe('2.000');
    expect(seconds(2500n, 1000)).toBe('2.500');
    expect(seconds(96256n, 48000)).toBe('2.0053333');
    expect(seconds(1001n, 30000)).toBe('0.0333667');
    expect(seconds(0n, 90000)).toBe('0.000');
  });

  test('targetDuration: the longest segment rounded to nearest (halves up), at least 1', () => {
    expect(targetDuration(track([4010, 4010, 2000], [1, 1, 1]))).toBe(4);
    expect(targetDuration(track([4499, 1000], [1, 1]))).toBe(4);
    expect(targetDuration(track([4500, 1000], [1, 1]))).toBe(5);
    expect(targetDuration(track([300], [1]))).toBe(1);
  });

  test('peakSegmentBitrate: contiguous sets between 0.5 and 1.5 target durations only', () => {
    // Target 4: the 1 s segment alone (8000 bit/s) is too short to count; with its neighbour (5 s) it counts.
    expect(peakSegmentBitrate(track([4000, 1000, 4000], [1000, 1000, 1000]), 4)).toBe(Math.ceil((2000 * 8) / 5));
    expect(peakSegmentBitrate(track([4000, 4000], [1000, 3000]), 4)).toBe(6000);
  });
});

describe('goldens', () => {
  test('master playlist, full presentation (TS, version 1)', async () => {
    expectGolden('formats/full-master.m3u8', writeMasterPlaylist(await hlsView(FULL)));
  });
  test('master playlist, H.264 + AAC, version 4 (I-frame variants)', async () => {
    expectGolden(
      'formats/avc-aac-master.m3u8',
      writeMasterPlaylist(await hlsView(AVC_AAC, 'hls_client_manifest_version=4')),
    );
  });
  test('master playlist, H.264 + AAC, fMP4', async () => {
    expectGolden('formats/avc-aac-fmp4-master.m3u8', writeMasterPlaylist(await hlsView(AVC_AAC, 'hls_fmp4')));
  });
  test('multiplexed media playlist (AAC 64k + baseline 400k, version 1)', async () => {
    const view = await hlsView(FULL);
    expectGolden(
      'formats/muxed-64k-baseline.m3u8',
      writeMediaPlaylist(view, `${keyOf(view, 'audio_eng_64k.isma')}-${keyOf(view, 'video_baseline_400k.ismv')}`),
    );
  });
  test('video media playlist (baseline 400k, fMP4)', async () => {
    const view = await hlsView(FULL, 'hls_fmp4');
    expectGolden('formats/video-baseline.m3u8', writeMediaPlaylist(view, keyOf(view, 'video_baseline_400k.ismv')));
  });
  test('packed audio media playlist (AAC eng 64k, version 3)', async () => {
    const view = await hlsView(FULL, 'hls_client_manifest_version=3');
    expectGolden('formats/audio-eng-64k.m3u8', writeMediaPlaylist(view, keyOf(view, 'audio_eng_64k.isma')));
  });
  test('I-frame playlist (baseline 400k, version 4)', async () => {
    const view = await hlsView(FULL, 'hls_client_manifest_version=4');
    expectGolden('formats/iframes-baseline.m3u8', writeIFramePlaylist(view, keyOf(view, 'video_baseline_400k.ismv')));
  });
});
