// HLS playlists of the fixture presentations: master (groups, the variant algorithm, variant_set,
// start_index, DEFAULT, hls_no_audio_only, the three packagings), media and I-frame playlists,
// versions 1 to 7, URLs. Every playlist is read back with m3u8-parser (no warnings allowed);
// durations and sizes come from the fixture facts and a box walk of the files, not from the
// origin's own index. The algorithm on synthetic lists: hls-variants.test.ts; the TS and packed
// audio size estimates against the segment writers: hls-bandwidth.test.ts.

import * as path from 'node:path';
import { OriginError } from '../../../origin/errors';
import {
  peakSegmentBitrate,
  seconds,
  targetDuration,
  writeIFramePlaylist,
  writeMasterPlaylist,
  writeMediaPlaylist,
} from '../../../origin/manifests/hls';
import { ratesOf, renditionSeries, targetSeconds } from '../../../origin/manifests/hls-rates';
import { rendition } from '../../../origin/model/rendition';
import { Segment } from '../../../origin/model/timeline';
import { PlayoutView, viewForQuery, ViewTrack } from '../../../origin/model/view';
import { wasmTrackSelector } from '../../../origin/server/select';
import { FIXTURE_FILES } from '../../helpers/fixtures';
import { expectGolden } from '../../helpers/golden';
import { loadPresentation, packageFixtures } from '../../helpers/presentations';
import { AVC_AAC, facts, filesByKey, keyOf, presentationOf, rfcPeak, thrown } from './format-support';
import { hlsViewOf, readPlaylist, tagLines, urisOf } from './hls-support';
import { segmentListOf, segmentsOf } from '../../helpers/segments';

const FULL = FIXTURE_FILES;
/** The fixture videos in ascending systemBitrate (410594, 514358, 618174, 808789, 925835, 1651699; checked below). */
const VIDEOS_UP = [
  'video_baseline_400k.ismv',
  'video_sar_500k.ismv',
  'video_2997_600k.ismv',
  'video_interlaced_800k.ismv',
  'video_main_900k.ismv',
  'video_high_1600k.ismv',
];

async function hlsView(files: readonly string[], query = ''): Promise<PlayoutView> {
  return hlsViewOf(await presentationOf(files), query);
}

/** Reads a playlist and fails on any m3u8-parser warning. */
function read(text: string): ReturnType<typeof readPlaylist> {
  const parsed = readPlaylist(text);
  expect(parsed.warnings).toEqual([]);
  return parsed;
}

/** A file's fragments joined the way the default 4 s HLS segmentation joins them: 2 + 2 + 1. */
function joined(
  file: string,
  groups: number[][] = [[0, 1], [2, 3], [4]],
): { durations: bigint[]; bytes: number[]; timescale: number } {
  const f = facts(file);
  return {
    timescale: f.timescale,
    durations: groups.map((g) => g.reduce((a, i) => a + f.durations[i]!, 0n)),
    bytes: groups.map((g) => g.reduce((a, i) => a + f.bytes[i]!, 0)),
  };
}

/** RFC 8216 §4.3.4.2 peak and average of a file's source segments (the fMP4 figures), target 4. */
function sourceRates(file: string): { peak: number; average: number } {
  const j = joined(file);
  const bits = j.bytes.reduce((a, b) => a + b, 0) * 8;
  const secs = Number(j.durations.reduce((a, b) => a + b, 0n)) / j.timescale;
  return { peak: rfcPeak(j.bytes, j.durations, j.timescale, 4), average: Math.ceil(bits / secs) };
}

function trackOf(view: PlayoutView, file: string): ViewTrack {
  const key = keyOf(view, file);
  return view.tracks.find((t) => `${t.track.properties.trackName}=${t.track.properties.systemBitrate}` === key)!;
}

/** The estimate's peak of a rendition of fixture files (checked against the segment writers in hls-bandwidth.test.ts). */
function estimatedPeak(view: PlayoutView, files: string[], kind: 'ts' | 'aac' | 'ac3' | 'ec3'): number {
  const r = rendition(files.map((f) => trackOf(view, f)));
  const main = r.tracks.find((t) => t.track.properties.type === 'video') ?? r.tracks[0]!;
  return ratesOf(
    renditionSeries(r, kind),
    targetSeconds(
      segmentsOf(main).map((s) => s.duration),
      main.track.properties.TimeScale,
    ),
  ).peak;
}

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

describe('media playlists', () => {
  test('multiplexed TS: the video segments (EXTINF exact from v3), numbered from 1, no EXT-X-MAP', async () => {
    const view = await hlsView(FULL, 'hls_client_manifest_version=3');
    const key = `${keyOf(view, 'audio_eng_128k.isma')}-${keyOf(view, 'video_main_900k.ismv')}`;
    const { manifest } = read(writeMediaPlaylist(view, key));
    const j = joined('video_main_900k.ismv');
    expect(manifest.segments.map((s) => s.duration)).toEqual(j.durations.map((d) => Number(d) / j.timescale));
    expect(manifest.segments.map((s) => s.uri)).toEqual(
      [1, 2, 3].map((n) => `presentation-${key}-${n}.ts?hls_client_manifest_version=3`),
    );
    expect(manifest.segments.every((s) => s.map === undefined)).toBe(true);
    expect([
      manifest.targetDuration,
      manifest.mediaSequence,
      manifest.playlistType,
      manifest.endList,
      manifest.independentSegments,
    ]).toEqual([4, 1, 'VOD', true, true]);
  });

  test('every single-track rendition: its kind of segment, its own durations (exact), summing to the track', async () => {
    const view = await hlsView(FULL, 'hls_client_manifest_version=3');
    const extension: Record<string, string> = { video: 'ts', textstream: 'webvtt' };
    for (const [key, file] of filesByKey(view)) {
      const text = writeMediaPlaylist(view, key);
      const { manifest } = read(text);
      const f = facts(file);
      const j = joined(file);
      const type = trackOf(view, file).track.properties.type;
      const ext = extension[type] ?? (file.includes('eac3') ? 'ec3' : file.includes('ac3') ? 'ac3' : 'aac');
      expect([key, manifest.segments.map((s) => s.uri)]).toEqual([
        key,
        [1, 2, 3].map((n) => `presentation-${key}-${n}.${ext}?hls_client_manifest_version=3`),
      ]);
      expect([key, manifest.segments.map((s) => s.duration)]).toEqual([
        key,
        j.durations.map((d) => Number(d) / j.timescale),
      ]);
      const sum = manifest.segments.reduce((a, s) => a + s.duration, 0);
      expect(Math.abs(sum - Number(f.durations.reduce((a, b) => a + b, 0n)) / f.timescale)).toBeLessThan(1e-9);
      expect(text).not.toContain('EXT-X-MAP');
    }
  });

  test('hls_fmp4: EXT-X-MAP and hls/ segments; a multiplexed key does not exist', async () => {
    const view = await hlsView(FULL, 'hls_fmp4=1');
    const key = keyOf(view, 'video_high_1600k.ismv');
    const { manifest } = read(writeMediaPlaylist(view, key));
    expect(manifest.segments.map((s) => [s.uri, s.map?.uri])).toEqual(
      [1, 2, 3].map((n) => [`hls/presentation-${key}-${n}.m4s?hls_fmp4=1`, `hls/presentation-${key}.m4s?hls_fmp4=1`]),
    );
    const e = thrown(() => writeMediaPlaylist(view, `${keyOf(view, 'audio_eng_64k.isma')}-${key}`)) as OriginError;
    expect(e.kind).toBe('not-found');
    // Subtitles stay WebVTT with fMP4.
    const subs = read(writeMediaPlaylist(view, keyOf(view, 'text_nld.ismt'))).manifest;
    expect(subs.segments[0]!.uri).toBe(`presentation-${keyOf(view, 'text_nld.ismt')}-1.webvtt?hls_fmp4=1`);
  });

  test('EXTINF text is exact, not rounded to the ms', async () => {
    const view = await hlsView(FULL, 'hls_client_manifest_version=4');
    const text = writeMediaPlaylist(view, keyOf(view, 'audio_eng_64k.isma'));
    // 20053333 + 20053333 and 20053334 + 20053333 ticks of 100 ns.
    expect(tagLines(text, '#EXTINF')).toEqual(['#EXTINF:4.0106666,', '#EXTINF:4.0106667,', '#EXTINF:2.000,']);
  });

  test('sub-clip t=0-0:00:06: 6 s of video in a 4 s and a 2 s segment', async () => {
    const view = await hlsView(FULL, 't=0-0:00:06&hls_client_manifest_version=3');
    const { manifest } = read(writeMediaPlaylist(view, keyOf(view, 'video_high_1600k.ismv')));
    expect(manifest.segments.map((s) => s.duration)).toEqual([4, 2]);
  });

  test('unknown keys: not-found naming the key', async () => {
    const view = await hlsView(AVC_AAC);
    for (const key of [
      'video_eng=1',
      'textstream_eng=1549',
      '',
      'video_eng',
      `${keyOf(view, 'video_main_900k.ismv')}-${keyOf(view, 'audio_eng_64k.isma')}`,
    ]) {
      const e = thrown(() => writeMediaPlaylist(view, key)) as OriginError;
      expect(e).toBeInstanceOf(OriginError);
      expect([key, e.kind, e.message.includes(`no track ${key}`)]).toEqual([key, 'not-found', true]);
    }
  });
});

describe('I-frame playlists', () => {
  test('one entry per source fragment, lasting the fragment, URIs relative to keyframes/', async () => {
    const view = await hlsView(FULL, 'hls_client_manifest_version=4');
    for (const file of VIDEOS_UP) {
      const key = keyOf(view, file);
      const text = writeIFramePlaylist(view, key);
      const { manifest } = read(text);
      const f = facts(file);
      expect(manifest.iFramesOnly).toBe(true);
      expect(manifest.segments.map((s) => s.duration)).toEqual(f.durations.map((d) => Number(d) / f.timescale));
      expect(manifest.segments.map((s) => s.uri)).toEqual(
        [1, 2, 3, 4, 5].map((n) => `presentation-${key}-${n}.ts?hls_client_manifest_version=4`),
      );
      expect(manifest.targetDuration).toBe(2);
      expect(text).not.toContain('EXT-X-MAP');
    }
  });

  test('in the master: one per video rendition, CODECS and RESOLUTION of the video, BANDWIDTH bounding the fragments', async () => {
    const view = await hlsView(FULL, 'hls_client_manifest_version=5');
    const { manifest } = read(writeMasterPlaylist(view));
    expect(manifest.iFramePlaylists!.map((p) => [p.uri, p.attributes.CODECS])).toEqual(
      VIDEOS_UP.map((f) => [
        `keyframes/presentation-${keyOf(view, f)}.m3u8?hls_client_manifest_version=5`,
        trackOf(view, f).track.properties.codecs,
      ]),
    );
    VIDEOS_UP.forEach((file, i) => {
      const a = manifest.iFramePlaylists![i]!.attributes;
      const f = facts(file);
      // An I-frame is at most its fragment: the whole-fragment peak is a bound the TS estimate exceeds.
      expect(a.BANDWIDTH).toBeGreaterThanOrEqual(rfcPeak(f.bytes, f.durations, f.timescale, 2));
      expect(a.RESOLUTION).toEqual(
        manifest.playlists!.find((v) => v.uri.includes(keyOf(view, file)))!.attributes.RESOLUTION,
      );
      expect(a['FRAME-RATE']).toBeUndefined();
      expect(a.AUDIO).toBeUndefined();
    });
  });

  test('hls_fmp4: .m4s entries and the init segment as ../hls/', async () => {
    const view = await hlsView(FULL, 'hls_fmp4');
    const key = keyOf(view, 'video_main_900k.ismv');
    const { manifest } = read(writeIFramePlaylist(view, key));
    expect(manifest.segments.map((s) => [s.uri, s.map?.uri])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [`presentation-${key}-${n}.m4s?hls_fmp4`, `../hls/presentation-${key}.m4s?hls_fmp4`]),
    );
  });

  test('a sub-clip numbers its fragments as the whole presentation does', async () => {
    const view = await hlsView(FULL, 't=4-10&hls_client_manifest_version=4');
    const key = keyOf(view, 'video_baseline_400k.ismv');
    const { manifest } = read(writeIFramePlaylist(view, key));
    // Fragments 2, 3, 4 (midpoints 5, 7, 9 s) are entries 3, 4, 5, the media sequence the first.
    const f = facts('video_baseline_400k.ismv');
    expect(manifest.segments.map((s) => [s.uri.split('?')[0], s.duration])).toEqual(
      [2, 3, 4].map((i) => [`presentation-${key}-${i + 1}.ts`, Number(f.durations[i]!) / f.timescale]),
    );
    expect(manifest.mediaSequence).toBe(3);
  });

  test('only for video tracks', async () => {
    const view = await hlsView(FULL, 'hls_client_manifest_version=4');
    const audio = keyOf(view, 'audio_eng_64k.isma');
    for (const key of [audio, `${audio}-${keyOf(view, 'video_main_900k.ismv')}`, keyOf(view, 'text_eng.ismt')]) {
      const e = thrown(() => writeIFramePlaylist(view, key)) as OriginError;
      expect([key, e.kind]).toEqual([key, 'not-found']);
    }
  });
});

describe('variant_set, start_index, DEFAULT, hls_no_audio_only', () => {
  // AVC_AAC: videos 410594, 925835, 1651699; audio groups 64 (eng) and 128 (eng, nld).
  const uris = (text: string): string[] => read(text).manifest.playlists!.map((v) => v.uri.split('?')[0]!);
  const name = (view: PlayoutView, ...files: string[]): string =>
    `presentation-${files.map((f) => keyOf(view, f)).join('-')}.m3u8`;

  test("the reference's recipe, two exhaustive sets: the ~1 Mbit/s variant first", async () => {
    const first = encodeURIComponent('(type=="video"&&systemBitrate==925835)||(type=="audio"&&systemBitrate>100000)');
    const rest = encodeURIComponent('systemBitrate!=925835||type!="video"');
    const view = await hlsView(AVC_AAC, `variant_set=${first}&variant_set=${rest}`);
    expect(uris(writeMasterPlaylist(view))).toEqual([
      name(view, 'audio_eng_128k.isma', 'video_main_900k.ismv'),
      // The second set: the other two videos with the two groups, then the audio-only variants.
      name(view, 'audio_eng_64k.isma', 'video_baseline_400k.ismv'),
      name(view, 'audio_eng_128k.isma', 'video_high_1600k.ismv'),
      name(view, 'audio_eng_64k.isma'),
      name(view, 'audio_eng_128k.isma'),
    ]);
  });

  test('the vendor page\'s literal form (type!="video" in both): the first set pairs the 1 Mbit/s video with every group', async () => {
    const view = await hlsView(
      AVC_AAC,
      `variant_set=${encodeURIComponent('systemBitrate==925835 || type!="video"')}&variant_set=${encodeURIComponent('systemBitrate!=925835 || type!="video"')}`,
    );
    expect(uris(writeMasterPlaylist(view)).slice(0, 4)).toEqual([
      name(view, 'audio_eng_64k.isma', 'video_main_900k.ismv'),
      name(view, 'audio_eng_128k.isma', 'video_main_900k.ismv'),
      name(view, 'audio_eng_64k.isma', 'video_baseline_400k.ismv'),
      name(view, 'audio_eng_128k.isma', 'video_high_1600k.ismv'),
    ]);
  });

  test('a track of a group brings its whole group; tracks of no set are in no variant', async () => {
    const view = await hlsView(
      AVC_AAC,
      `variant_set=${encodeURIComponent('systemBitrate==410594||systemLanguage=="nld"')}&hls_no_audio_only`,
    );
    const { manifest, media } = read(writeMasterPlaylist(view));
    expect(manifest.playlists!.map((v) => v.uri.split('?')[0])).toEqual([
      name(view, 'audio_eng_128k.isma', 'video_baseline_400k.ismv'),
    ]);
    expect(media.map((m) => m['NAME'])).toEqual(['audio_eng', 'audio_nld']);
    expect(media.map((m) => m['GROUP-ID'])).toEqual(['audio-aacl-128', 'audio-aacl-128']);
  });

  test('stored in the .ism (in order); a variant_set in the query replaces the stored list', async () => {
    const ism = await packageFixtures(AVC_AAC, 'presentation', [
      '--variant_set=systemBitrate==1651699||type=="audio"',
      '--variant_set=true',
    ]);
    const p = await loadPresentation(ism);
    expect(p.options.list('variant_set')).toEqual(['systemBitrate==1651699||type=="audio"', 'true']);
    const stored = hlsViewOf(p, 'hls_no_audio_only');
    expect(uris(writeMasterPlaylist(stored))).toEqual([
      name(stored, 'audio_eng_64k.isma', 'video_high_1600k.ismv'),
      name(stored, 'audio_eng_128k.isma', 'video_high_1600k.ismv'),
      // The second set ("true") repeats 128k + 1.6 Mbit/s: listed once.
      name(stored, 'audio_eng_64k.isma', 'video_baseline_400k.ismv'),
      name(stored, 'audio_eng_128k.isma', 'video_main_900k.ismv'),
    ]);
    const replaced = hlsViewOf(p, `hls_no_audio_only&variant_set=${encodeURIComponent('systemBitrate<1000000')}`);
    expect(uris(writeMasterPlaylist(replaced))).toEqual([
      name(replaced, 'audio_eng_64k.isma', 'video_baseline_400k.ismv'),
      name(replaced, 'audio_eng_128k.isma', 'video_main_900k.ismv'),
    ]);
  });

  test('a bad variant_set is a 400 naming the parameter and which set', async () => {
    const p = await presentationOf(AVC_AAC);
    const cases: Array<[string, RegExp]> = [
      [
        `variant_set=${encodeURIComponent('type=="video"&&')}`,
        /^variant_set: the set, "type==\\"video\\"&&": .* at \d+/,
      ],
      [
        `variant_set=true&variant_set=${encodeURIComponent('systemBitrate=1')}`,
        /^variant_set: set 2 of 2, "systemBitrate=1": .* at \d+/,
      ],
      // Valid, but the request's filter left none of its tracks: the two contradict each other.
      [
        `filter=${encodeURIComponent('type=="video"')}&variant_set=${encodeURIComponent('type=="audio"')}`,
        /^variant_set: the set, "type==\\"audio\\"": .*keeps none of the 3 tracks/,
      ],
    ];
    for (const [query, message] of cases) {
      const e = thrown(() => hlsViewOf(p, query)) as OriginError;
      expect(e).toBeInstanceOf(OriginError);
      expect([query, e.kind, e.code, e.subject]).toEqual([query, 'bad-request', 'bad-variant-set', 'variant_set']);
      expect(e.message).toMatch(message);
    }
    // Not an HLS request: the option does not apply and is not evaluated.
    expect(() =>
      viewForQuery(p, 'dash', `variant_set=${encodeURIComponent('type=="video"&&')}`, wasmTrackSelector),
    ).not.toThrow();
  });

  test('start_index moves that variant to the top, after the filter; past the end is a 400', async () => {
    const view = await hlsView(AVC_AAC);
    const all = uris(writeMasterPlaylist(view));
    expect(all.length).toBe(5);
    for (let i = 0; i < all.length; i++) {
      const moved = uris(writeMasterPlaylist(await hlsView(AVC_AAC, `start_index=${i}`)));
      expect(moved).toEqual([all[i], ...all.filter((_, j) => j !== i)]);
    }
    const past = thrown(() => writeMasterPlaylist(hlsViewOf(view.presentation, 'start_index=5'))) as OriginError;
    expect([past.kind, past.subject, past.message]).toEqual([
      'bad-request',
      'start_index',
      'start_index: 5 is past the last variant: this master playlist has 5 (start_index 0 to 4)',
    ]);
    // The filter first: without the 1.6 Mbit/s video there are 4 variants, index 3 is the last.
    const filter = `filter=${encodeURIComponent('systemBitrate!=1651699')}`;
    const filtered = uris(writeMasterPlaylist(await hlsView(AVC_AAC, filter)));
    expect(uris(writeMasterPlaylist(await hlsView(AVC_AAC, `${filter}&start_index=3`)))).toEqual([
      filtered[3],
      ...filtered.slice(0, 3),
    ]);
    const e = thrown(() => writeMasterPlaylist(hlsViewOf(view.presentation, `${filter}&start_index=4`))) as OriginError;
    expect([e.kind, e.subject]).toEqual(['bad-request', 'start_index']);
  });

  test('hls_no_audio_only: no audio-only variant', async () => {
    const view = await hlsView(AVC_AAC, 'hls_no_audio_only=true');
    expect(uris(writeMasterPlaylist(view))).toEqual([
      name(view, 'audio_eng_64k.isma', 'video_baseline_400k.ismv'),
      name(view, 'audio_eng_128k.isma', 'video_main_900k.ismv'),
      name(view, 'audio_eng_128k.isma', 'video_high_1600k.ismv'),
    ]);
  });

  test('DEFAULT=YES follows the input order: Dutch first, Dutch is the default of every group that has it', async () => {
    const files = [
      'video_baseline_400k.ismv',
      'video_main_900k.ismv',
      'audio_nld_128k.isma',
      'audio_eng_64k.isma',
      'audio_eng_128k.isma',
      'text_nld.ismt',
      'text_eng.ismt',
    ];
    const view = await hlsView(files);
    const { manifest, media } = read(writeMasterPlaylist(view));
    expect(media.map((m) => [m['GROUP-ID'], m['LANGUAGE'], m['DEFAULT'], m['URI'] === undefined])).toEqual([
      ['audio-aacl-64', 'en', 'YES', false],
      ['audio-aacl-128', 'nl', 'YES', false],
      ['audio-aacl-128', 'en', 'NO', false],
      ['textstream', 'nl', 'YES', false],
      ['textstream', 'en', 'NO', false],
    ]);
    // The multiplexed variant of the 128k group carries the Dutch audio.
    expect(manifest.playlists![1]!.uri).toBe(name(view, 'audio_nld_128k.isma', 'video_main_900k.ismv'));
  });
});

describe('URLs', () => {
  test('presentation_name and the carried query reach every URI of every playlist', async () => {
    const query = 'presentation_name=foo&token=a%26b&hls_client_manifest_version=4';
    const view = await hlsView(AVC_AAC, query);
    const video = keyOf(view, 'video_main_900k.ismv');
    const texts = [
      writeMasterPlaylist(view),
      writeMediaPlaylist(view, `${keyOf(view, 'audio_eng_128k.isma')}-${video}`),
      writeMediaPlaylist(view, keyOf(view, 'audio_nld_128k.isma')),
      writeIFramePlaylist(view, video),
    ];
    const all = texts.flatMap(urisOf);
    // Master: 3 EXT-X-MEDIA (the 128k group has two languages, so the DEFAULTs have URIs too), 5 variants, 3 I-frame variants; 3 + 3 segments; 5 I-frames.
    expect(all.length).toBe(3 + 5 + 3 + 3 + 3 + 5);
    for (const u of all)
      expect(u).toMatch(
        new RegExp(`^(keyframes/)?foo-[a-z_=0-9-]+\\.(m3u8|ts|aac)\\?${query.replace(/[?.]/g, '\\$&')}$`),
      );
  });

  test('suppress_query_parameters: no query anywhere, except the parameters kept on purpose', async () => {
    const texts = async (query: string): Promise<string[]> => {
      const view = await hlsView(AVC_AAC, query);
      const video = keyOf(view, 'video_main_900k.ismv');
      return [
        writeMasterPlaylist(view),
        writeMediaPlaylist(view, `${keyOf(view, 'audio_eng_128k.isma')}-${video}`),
        writeMediaPlaylist(view, keyOf(view, 'audio_nld_128k.isma')),
        writeIFramePlaylist(view, video),
      ];
    };
    for (const t of await texts('suppress_query_parameters=1&token=x&hls_client_manifest_version=4&filter=true'))
      expect(t).not.toContain('?');
    // What decides a segment's media is kept: the segmentation on every URL; the clip on the URLs
    // of playlists only, as segment URLs name whole segments of the unclipped presentation
    // (hls-clips.test.ts).
    const kept = (
      await texts(
        'suppress_query_parameters=1&token=x&hls_client_manifest_version=4&t=2-8&hls_minimum_fragment_length=2',
      )
    ).flatMap(urisOf);
    expect(
      kept.filter((u) => u.includes('.m3u8')).every((u) => u.endsWith('?t=2-8&hls_minimum_fragment_length=2')),
    ).toBe(true);
    expect(kept.filter((u) => !u.includes('.m3u8')).every((u) => u.endsWith('?hls_minimum_fragment_length=2'))).toBe(
      true,
    );
    // presentation_name is kept on the URLs of playlists (they write URLs with the name), not on segments.
    const named = (
      await texts('suppress_query_parameters=1&presentation_name=foo&token=x&hls_client_manifest_version=4')
    ).flatMap(urisOf);
    expect(named.filter((u) => u.includes('?')).every((u) => /\.m3u8\?presentation_name=foo$/.test(u))).toBe(true);
    expect(named.filter((u) => u.endsWith('.m3u8?presentation_name=foo')).length).toBe(3 + 5 + 3);
    expect(named.filter((u) => !u.includes('.m3u8')).every((u) => !u.includes('?') && u.startsWith('foo-'))).toBe(true);
  });

  test('quotes and line breaks from the .ism cannot break a quoted-string or a URI line', async () => {
    const view = await hlsView(AVC_AAC, 'hls_no_multiplex');
    const evil: PlayoutView = {
      ...view,
      tracks: view.tracks.map((t) =>
        path.basename(t.track.src) === 'audio_nld_128k.isma'
          ? { ...t, track: { ...t.track, properties: { ...t.track.properties, trackName: 'audio "x"\nfoo' } } }
          : t,
      ),
    };
    const text = writeMasterPlaylist(evil);
    const { media } = read(text);
    const nld = media.find((m) => m['LANGUAGE'] === 'nl')!;
    expect(nld['NAME']).toBe('audio %22x%22%0Afoo');
    expect(nld['URI']).toBe('presentation-audio %22x%22%0Afoo=127958.m3u8?hls_no_multiplex');
    expect(tagLines(text, '#EXT-X-MEDIA').length).toBe(3);
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
