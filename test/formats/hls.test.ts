// HLS (fMP4) playlist writers: master and media playlists read back with m3u8-parser and
// compared with figures computed from the fixture facts (times, durations) and a box walk of the
// files (sizes), not from the origin's own index.

import * as path from 'node:path';
import { OriginError } from '../../origin/errors';
import { peakSegmentBitrate, seconds, targetDuration, writeMasterPlaylist, writeMediaPlaylist } from '../../origin/formats/hls';
import { Segment } from '../../origin/playout/timeline';
import { PlayoutView, ViewTrack } from '../../origin/playout/view';
import { FIXTURE_FILES } from '../helpers/fixtures';
import { expectGolden } from '../helpers/golden';
import { viewOf } from '../helpers/presentations';
import { AVC_AAC, facts, filesByKey, keyOf, parseM3u8, presentationOf, rfcPeak, thrown } from './format-support';

const FULL = FIXTURE_FILES;
const VIDEOS = FULL.filter((f) => f.startsWith('video_'));

async function hlsView(files: readonly string[], query = ''): Promise<PlayoutView> {
  return viewOf(await presentationOf(files), 'hls', query);
}


/** A file's fragments joined the way the default 4 s HLS segmentation joins them: 2 + 2 + 1. */
function joined(file: string, groups: number[][] = [[0, 1], [2, 3], [4]]): { durations: bigint[]; bytes: number[]; timescale: number } {
  const f = facts(file);
  return {
    timescale: f.timescale,
    durations: groups.map((g) => g.reduce((a, i) => a + f.durations[i]!, 0n)),
    bytes: groups.map((g) => g.reduce((a, i) => a + f.bytes[i]!, 0)),
  };
}

/** RFC 8216 §4.3.4.2 peak and average of one rendition under the default segmentation (target 4). */
function rendition(file: string): { peak: number; average: number } {
  const j = joined(file);
  const bits = j.bytes.reduce((a, b) => a + b, 0) * 8;
  const secs = Number(j.durations.reduce((a, b) => a + b, 0n)) / j.timescale;
  return { peak: rfcPeak(j.bytes, j.durations, j.timescale, 4), average: Math.ceil(bits / secs) };
}

// ---------------------------------------------------------------------------------------------

describe('master playlist, full presentation', () => {
  test('header: version 6 (EXT-X-MAP needs it), independent segments', async () => {
    const text = writeMasterPlaylist(await hlsView(FULL));
    const { manifest } = parseM3u8(text);
    expect(manifest.version).toBe(6);
    expect(manifest.independentSegments).toBe(true);
    expect(text.split('\n').slice(0, 3)).toEqual(['#EXTM3U', '#EXT-X-VERSION:6', '## Created with Streaming Origin']);
  });

  test('audio groups per encoding (audio-<fourcc>-<kbps>), languages of one encoding together, DEFAULT on the first', async () => {
    const view = await hlsView(FULL);
    const { manifest, media } = parseM3u8(writeMasterPlaylist(view));
    const audio = media.filter((m) => m['TYPE'] === 'AUDIO');
    expect(audio.map((m) => [m['GROUP-ID'], m['NAME'], m['LANGUAGE'], m['DEFAULT'], m['AUTOSELECT'], m['CHANNELS'], m['URI']])).toEqual([
      ['audio-aacl-64', 'audio_eng', 'en', 'YES', 'YES', '2', `presentation-${keyOf(view, 'audio_eng_64k.isma')}.m3u8`],
      ['audio-aacl-128', 'audio_eng', 'en', 'YES', 'YES', '2', `presentation-${keyOf(view, 'audio_eng_128k.isma')}.m3u8`],
      ['audio-aacl-128', 'audio_nld', 'nl', 'NO', 'YES', '2', `presentation-${keyOf(view, 'audio_nld_128k.isma')}.m3u8`],
      ['audio-ac-3-384', 'audio_eng_ac3', 'en', 'YES', 'YES', '6', `presentation-${keyOf(view, 'audio_ac3_384k.isma')}.m3u8`],
      ['audio-ec-3-256', 'audio_eng_ec3', 'en', 'YES', 'YES', '6', `presentation-${keyOf(view, 'audio_eac3_256k.isma')}.m3u8`],
    ]);
    expect(Object.keys(manifest.mediaGroups.AUDIO)).toEqual(['audio-aacl-64', 'audio-aacl-128', 'audio-ac-3-384', 'audio-ec-3-256']);
  });

  test('one SUBTITLES group "textstream" with both languages', async () => {
    const view = await hlsView(FULL);
    const { manifest, media } = parseM3u8(writeMasterPlaylist(view));
    const subs = media.filter((m) => m['TYPE'] === 'SUBTITLES');
    expect(subs.map((m) => [m['GROUP-ID'], m['NAME'], m['LANGUAGE'], m['DEFAULT'], m['AUTOSELECT'], m['URI']])).toEqual([
      ['textstream', 'textstream_eng', 'en', 'YES', 'YES', `presentation-${keyOf(view, 'text_eng.ismt')}.m3u8`],
      ['textstream', 'textstream_nld', 'nl', 'NO', 'YES', `presentation-${keyOf(view, 'text_nld.ismt')}.m3u8`],
    ]);
    expect(Object.keys(manifest.mediaGroups.SUBTITLES)).toEqual(['textstream']);
  });

  test('one variant per video track, in .ism order, paired with the highest-bitrate audio group (AC-3 384k here)', async () => {
    const view = await hlsView(FULL);
    const text = writeMasterPlaylist(view);
    const variants = parseM3u8(text).manifest.playlists!;
    expect(variants.map((v) => v.uri)).toEqual(VIDEOS.map((f) => `presentation-${keyOf(view, f)}.m3u8`));
    const display: Record<string, [number, number, number, string]> = {
      'video_baseline_400k.ismv': [512, 288, 24, 'avc1.42C01E'],
      'video_main_900k.ismv': [640, 360, 24, 'avc1.4D401E'],
      'video_high_1600k.ismv': [1280, 720, 24, 'avc1.64001F'],
      'video_sar_500k.ismv': [640, 360, 24, 'avc1.4D401E'], // display size, not the coded 480x360
      'video_2997_600k.ismv': [640, 360, 29.97, 'avc1.4D401E'],
      'video_interlaced_800k.ismv': [720, 576, 25, 'avc1.64001E'],
    };
    const audio = rendition('audio_ac3_384k.isma').peak;
    const audioAvg = rendition('audio_ac3_384k.isma').average;
    const textPeak = Math.max(rendition('text_eng.ismt').peak, rendition('text_nld.ismt').peak);
    const textAvg = Math.max(rendition('text_eng.ismt').average, rendition('text_nld.ismt').average);
    VIDEOS.forEach((file, i) => {
      const a = variants[i]!.attributes;
      const [w, h, rate, codec] = display[file]!;
      expect(a.RESOLUTION).toEqual({ width: w, height: h });
      expect(a['FRAME-RATE']).toBe(rate);
      expect(a.CODECS).toBe(`${codec},ac-3,stpp.ttml.im1t`);
      expect(a.AUDIO).toBe('audio-ac-3-384');
      expect(a.SUBTITLES).toBe('textstream');
      expect(a['CLOSED-CAPTIONS']).toBe('NONE');
      // §4.3.4.2: the largest sum of peak (average) segment bit rates of any playable combination.
      expect(a.BANDWIDTH).toBe(rendition(file).peak + audio + textPeak);
      expect(Number(a['AVERAGE-BANDWIDTH'])).toBe(rendition(file).average + audioAvg + textAvg);
    });
    expect(text).toContain('FRAME-RATE=29.970,');
    expect(text).toContain('FRAME-RATE=24.000,');
  });

  test('hls_client_manifest_version above 6 is honoured, below 6 is raised to 6', async () => {
    for (const [query, version] of [['hls_client_manifest_version=7', 7], ['hls_client_manifest_version=4', 6], ['hls_client_manifest_version=1', 6]] as const) {
      const view = await hlsView(FULL, query);
      expect(parseM3u8(writeMasterPlaylist(view)).manifest.version).toBe(version);
      expect(parseM3u8(writeMediaPlaylist(view, keyOf(view, 'video_main_900k.ismv'))).manifest.version).toBe(version);
    }
  });
});

describe('master playlist, other presentations', () => {
  test('H.264 + AAC: every variant with the AAC 128k group, no SUBTITLES', async () => {
    const view = await hlsView(AVC_AAC);
    const { manifest } = parseM3u8(writeMasterPlaylist(view));
    expect(Object.keys(manifest.mediaGroups.AUDIO)).toEqual(['audio-aacl-64', 'audio-aacl-128']);
    expect(Object.keys(manifest.mediaGroups.AUDIO['audio-aacl-128']!)).toEqual(['audio_eng', 'audio_nld']);
    const variants = manifest.playlists!;
    expect(variants.length).toBe(3);
    const audioPeak = Math.max(rendition('audio_eng_128k.isma').peak, rendition('audio_nld_128k.isma').peak);
    for (const [i, file] of ['video_baseline_400k.ismv', 'video_main_900k.ismv', 'video_high_1600k.ismv'].entries()) {
      const a = variants[i]!.attributes;
      expect(a.AUDIO).toBe('audio-aacl-128');
      expect(a.SUBTITLES).toBeUndefined();
      expect(a.CODECS).toMatch(/^avc1\.[0-9A-F]{6},mp4a\.40\.2$/);
      expect(a.BANDWIDTH).toBe(rendition(file).peak + audioPeak);
    }
  });

  test('audio only: one variant per audio group, playing its DEFAULT rendition', async () => {
    const files = ['audio_eng_64k.isma', 'audio_eng_128k.isma', 'audio_nld_128k.isma'];
    const view = await hlsView(files);
    const variants = parseM3u8(writeMasterPlaylist(view)).manifest.playlists!;
    expect(variants.map((v) => [v.uri, v.attributes.AUDIO, v.attributes.CODECS, v.attributes.RESOLUTION])).toEqual([
      [`presentation-${keyOf(view, 'audio_eng_64k.isma')}.m3u8`, 'audio-aacl-64', 'mp4a.40.2', undefined],
      [`presentation-${keyOf(view, 'audio_eng_128k.isma')}.m3u8`, 'audio-aacl-128', 'mp4a.40.2', undefined],
    ]);
    expect(variants[1]!.attributes.BANDWIDTH).toBe(Math.max(rendition('audio_eng_128k.isma').peak, rendition('audio_nld_128k.isma').peak));
  });

  test('text only: no variant can be made (unsupported-media)', async () => {
    const view = await hlsView(['text_eng.ismt']);
    const e = thrown(() => writeMasterPlaylist(view));
    expect(e).toBeInstanceOf(OriginError);
    expect((e as OriginError).kind).toBe('unsupported-media');
  });
});

describe('media playlists', () => {
  test('default 4 s: 2 source fragments per segment, the last one shorter; EXTINF exact; sums are the track durations', async () => {
    const view = await hlsView(FULL);
    const files = filesByKey(view);
    expect(files.size).toBe(13);
    for (const [key, file] of files) {
      const { manifest } = parseM3u8(writeMediaPlaylist(view, key));
      const j = joined(file);
      expect([key, manifest.segments.map((s) => s.duration)]).toEqual([key, j.durations.map((d) => Number(d) / j.timescale)]);
      const f = facts(file);
      const total = f.durations.reduce((a, b) => a + b, 0n);
      const sum = manifest.segments.reduce((a, s) => a + s.duration, 0);
      expect(Math.round(sum * 1000)).toBe(Math.round((Number(total) * 1000) / f.timescale));
      expect(Math.abs(sum - Number(total) / f.timescale)).toBeLessThan(1e-9);
      expect(manifest.targetDuration).toBe(4); // 4.0107 s of AAC rounds to 4 (§4.3.3.1), not 5
      expect(manifest.mediaSequence).toBe(1);
      expect(manifest.playlistType).toBe('VOD');
      expect(manifest.endList).toBe(true);
      expect(manifest.independentSegments).toBe(true);
      expect(manifest.version).toBe(6);
      expect(manifest.segments.map((s) => s.uri)).toEqual([1, 2, 3].map((n) => `hls/presentation-${key}-${n}.m4s`));
      expect(manifest.segments.every((s) => s.map?.uri === `hls/presentation-${key}.m4s`)).toBe(true);
    }
  });

  test('EXTINF text is exact, not rounded to the ms', async () => {
    const view = await hlsView(FULL);
    const text = writeMediaPlaylist(view, keyOf(view, 'audio_eng_64k.isma'));
    // 20053333 + 20053333 and 20053334 + 20053333 ticks of 100 ns.
    expect(text.split('\n').filter((l) => l.startsWith('#EXTINF'))).toEqual(['#EXTINF:4.0106666,', '#EXTINF:4.0106667,', '#EXTINF:2.000,']);
  });

  test('hls_minimum_fragment_length=0: the source fragments, target duration 2', async () => {
    const view = await hlsView(FULL, 'hls_minimum_fragment_length=0');
    for (const [key, file] of filesByKey(view)) {
      const { manifest } = parseM3u8(writeMediaPlaylist(view, key));
      const f = facts(file);
      expect([key, manifest.segments.map((s) => s.duration)]).toEqual([key, f.durations.map((d) => Number(d) / f.timescale)]);
      expect(manifest.targetDuration).toBe(2);
      expect(manifest.segments.map((s) => s.uri)).toEqual([1, 2, 3, 4, 5].map((n) => `hls/presentation-${key}-${n}.m4s?hls_minimum_fragment_length=0`));
    }
  });

  test('sub-clip t=0-0:00:06: 6 s of video in a 4 s and a 2 s segment', async () => {
    const view = await hlsView(FULL, 't=0-0:00:06');
    const { manifest } = parseM3u8(writeMediaPlaylist(view, keyOf(view, 'video_high_1600k.ismv')));
    expect(manifest.segments.map((s) => s.duration)).toEqual([4, 2]);
    const aac = parseM3u8(writeMediaPlaylist(view, keyOf(view, 'audio_eng_128k.isma'))).manifest;
    const f = facts('audio_eng_128k.isma');
    expect(aac.segments.map((s) => s.duration)).toEqual([Number(f.durations[0]! + f.durations[1]!) / 1e7, Number(f.durations[2]!) / 1e7]);
  });

  test('unknown track key: not-found naming the key', async () => {
    const view = await hlsView(AVC_AAC);
    for (const key of ['video_eng=1', 'textstream_eng=1549', '', 'video_eng']) {
      const e = thrown(() => writeMediaPlaylist(view, key));
      expect(e).toBeInstanceOf(OriginError);
      expect((e as OriginError).kind).toBe('not-found');
      expect((e as OriginError).message).toContain(`no track ${key}`);
    }
  });
});

describe('URLs', () => {
  test('presentation_name and the carried query reach every URI of both playlists', async () => {
    const query = 'presentation_name=foo&token=a%26b';
    const view = await hlsView(AVC_AAC, query);
    const { manifest, media } = parseM3u8(writeMasterPlaylist(view));
    const uris = [...manifest.playlists!.map((v) => v.uri), ...media.map((m) => m['URI']!)];
    expect(uris.length).toBe(6);
    for (const u of uris) expect(u).toMatch(new RegExp(`^foo-[a-z_]+=\\d+\\.m3u8\\?${query.replace(/[?.]/g, '\\$&')}$`));
    const key = keyOf(view, 'video_main_900k.ismv');
    const m = parseM3u8(writeMediaPlaylist(view, key)).manifest;
    expect(m.segments[0]!.map!.uri).toBe(`hls/foo-${key}.m4s?${query}`);
    expect(m.segments.map((s) => s.uri)).toEqual([1, 2, 3].map((n) => `hls/foo-${key}-${n}.m4s?${query}`));
  });

  test('suppress_query_parameters: no query anywhere', async () => {
    const view = await hlsView(FULL, 'suppress_query_parameters=1&token=x');
    const texts = [writeMasterPlaylist(view), ...[...filesByKey(view).keys()].map((k) => writeMediaPlaylist(view, k))];
    for (const t of texts) expect(t).not.toContain('?');
  });

  test('quotes and line breaks from the .ism cannot break a quoted-string or a URI line', async () => {
    const view = await hlsView(AVC_AAC);
    const evil: PlayoutView = {
      ...view,
      tracks: view.tracks.map((t) =>
        path.basename(t.track.src) === 'audio_nld_128k.isma' ? { ...t, track: { ...t.track, properties: { ...t.track.properties, trackName: 'audio "x"\nfoo' } } } : t,
      ),
    };
    const text = writeMasterPlaylist(evil);
    const { media } = parseM3u8(text);
    const nld = media.find((m) => m['LANGUAGE'] === 'nl')!;
    expect(nld['NAME']).toBe('audio %22x%22%0Afoo');
    expect(nld['URI']).toBe('presentation-audio %22x%22%0Afoo=127958.m3u8');
    expect(text.split('\n').filter((l) => l.startsWith('#EXT-X-MEDIA')).length).toBe(3);
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
    return { segments, track: { properties: { TimeScale: timescale } } } as unknown as ViewTrack;
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
  test('master playlist, full presentation', async () => {
    expectGolden('formats/full-master.m3u8', writeMasterPlaylist(await hlsView(FULL)));
  });
  test('master playlist, H.264 + AAC', async () => {
    expectGolden('formats/avc-aac-master.m3u8', writeMasterPlaylist(await hlsView(AVC_AAC)));
  });
  test('video media playlist (baseline 400k)', async () => {
    const view = await hlsView(FULL);
    expectGolden('formats/video-baseline.m3u8', writeMediaPlaylist(view, keyOf(view, 'video_baseline_400k.ismv')));
  });
  test('audio media playlist (AAC eng 64k)', async () => {
    const view = await hlsView(FULL);
    expectGolden('formats/audio-eng-64k.m3u8', writeMediaPlaylist(view, keyOf(view, 'audio_eng_64k.isma')));
  });
});
