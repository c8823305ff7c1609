// HLS media and I-frame playlists of the fixture presentations, read back with m3u8-parser (no
// warnings allowed); durations and sizes from the fixture facts and a box walk of the files.

import { OriginError } from '../../../origin/errors';
import { writeIFramePlaylist, writeMasterPlaylist, writeMediaPlaylist } from '../../../origin/manifests/hls';
import { AVC_AAC, facts, filesByKey, keyOf, rfcPeak } from './format-support';
import { thrown } from '../../helpers/errors';
import { FULL, hlsView, joined, read, tagLines, trackOf, VIDEOS_UP } from './hls-support';

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
