// HLS master playlist options of the fixture presentations (variant_set, start_index, DEFAULT,
// hls_no_audio_only) and the URLs the playlists write, read back with m3u8-parser.

import * as path from 'node:path';
import { OriginError } from '../../../origin/errors';
import { writeIFramePlaylist, writeMasterPlaylist, writeMediaPlaylist } from '../../../origin/manifests/hls';
import { PlayoutView, viewForQuery } from '../../../origin/model/view';
import { wasmTrackSelector } from '../../../origin/server/select';
import { loadPresentation, packageFixtures } from '../../helpers/presentations';
import { AVC_AAC, keyOf, presentationOf } from './format-support';
import { thrown } from '../../helpers/errors';
import { hlsView, hlsViewOf, read, tagLines, urisOf } from './hls-support';

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
