// HLS playlists of sub-clips (t, vbegin): segments keep the number they have in the unclipped
// presentation, and EXT-X-MEDIA-SEQUENCE is the first listed number, for MPEG-TS (multiplexed and
// video only), packed audio, fMP4, WebVTT and I-frame playlists. Without suppress_query_parameters
// the clip is exact (the kept fragments, the clip on every URL); with it the playlist lists the
// unclipped segments holding the clip, whole, on URLs without the clip, which are then the whole
// presentation's URLs (what lets sibling playlists of an edge alias share segments on a CDN).
// Expected numbers and durations come from the fixture facts: 5 fragments of about 2 s per track,
// joined by the default 4 s segmentation into segments 1 = [0, 1], 2 = [2, 3], 3 = [4].

import { writeIFramePlaylist, writeMasterPlaylist, writeMediaPlaylist } from '../../../origin/manifests/hls';
import { PlayoutView } from '../../../origin/model/view';
import { FIXTURE_FILES } from '../../helpers/fixtures';
import { expectGolden } from '../../helpers/golden';
import { facts, keyOf, presentationOf } from './format-support';
import { hlsViewOf, readPlaylist, tagLines, urisOf } from './hls-support';

/** The source fragments of each unclipped segment, numbered from 1. */
const WHOLE: Record<number, number[]> = { 1: [0, 1], 2: [2, 3], 3: [4] };

interface ClipCase {
  clip: string;
  /** Without suppression: each listed segment's number and the fragments the clip keeps of it. */
  exact: Array<[number, number[]]>;
  /** With suppression: the numbers of the unclipped segments listed whole. */
  widened: number[];
}

// Fragment midpoints are about 1, 3, 5, 7 and 9 s; a clip keeps those in [start, end).
const CASES: ClipCase[] = [
  {
    clip: 't=0-0:00:06',
    exact: [
      [1, [0, 1]],
      [2, [2]],
    ],
    widened: [1, 2],
  },
  {
    clip: 'vbegin=0:00:04',
    exact: [
      [2, [2, 3]],
      [3, [4]],
    ],
    widened: [2, 3],
  },
  {
    clip: 't=2-8',
    exact: [
      [1, [1]],
      [2, [2, 3]],
    ],
    widened: [1, 2],
  },
  { clip: 't=4-6', exact: [[2, [2]]], widened: [2] },
  { clip: 't=8', exact: [[3, [4]]], widened: [3] },
];

/** Each rendition kind: the files it plays (the last one numbers it), the options, the extension. */
const KINDS = [
  {
    what: 'multiplexed TS',
    files: ['audio_eng_128k.isma', 'video_main_900k.ismv'],
    options: 'hls_client_manifest_version=3',
    ext: 'ts',
  },
  {
    what: 'video-only TS',
    files: ['video_baseline_400k.ismv'],
    options: 'hls_client_manifest_version=3&hls_no_multiplex',
    ext: 'ts',
  },
  { what: 'packed audio', files: ['audio_eng_64k.isma'], options: 'hls_client_manifest_version=3', ext: 'aac' },
  { what: 'fMP4 video', files: ['video_high_1600k.ismv'], options: 'hls_fmp4', ext: 'm4s' },
  { what: 'fMP4 audio', files: ['audio_nld_128k.isma'], options: 'hls_fmp4', ext: 'm4s' },
  { what: 'WebVTT', files: ['text_eng.ismt'], options: 'hls_client_manifest_version=3', ext: 'webvtt' },
];

async function viewFor(query: string): Promise<PlayoutView> {
  return hlsViewOf(await presentationOf(FIXTURE_FILES), query);
}

/** Seconds of fragments of a fixture file, summed exactly. */
function secondsOf(file: string, fragments: number[]): number {
  const f = facts(file);
  return Number(fragments.reduce((a, i) => a + f.durations[i]!, 0n)) / f.timescale;
}

function read(text: string): ReturnType<typeof readPlaylist>['manifest'] {
  const parsed = readPlaylist(text);
  expect(parsed.warnings).toEqual([]);
  return parsed.manifest;
}

/** A media playlist's segment URI of segment n. */
function segmentUri(view: PlayoutView, key: string, n: number, ext: string): string {
  return `${ext === 'm4s' ? 'hls/' : ''}presentation-${key}-${n}.${ext}`;
}

describe.each(KINDS)('$what media playlists of sub-clips', ({ files, options, ext }) => {
  const numbering = files[files.length - 1]!;

  test.each(CASES)(
    '$clip: the unclipped numbers, the exact clip, the clip on every segment URL',
    async ({ clip, exact }) => {
      const query = `${options}&${clip}`;
      const view = await viewFor(query);
      const key = files.map((f) => keyOf(view, f)).join('-');
      const text = writeMediaPlaylist(view, key);
      const m = read(text);
      expect(m.mediaSequence).toBe(exact[0]![0]);
      expect(m.segments.map((s) => [s.uri, s.duration])).toEqual(
        exact.map(([n, fragments]) => [`${segmentUri(view, key, n, ext)}?${query}`, secondsOf(numbering, fragments)]),
      );
    },
  );

  test.each(CASES)(
    "$clip, suppress_query_parameters: whole unclipped segments, the whole presentation's URLs",
    async ({ clip, widened }) => {
      const view = await viewFor(`${options}&${clip}&suppress_query_parameters`);
      const key = files.map((f) => keyOf(view, f)).join('-');
      const m = read(writeMediaPlaylist(view, key));
      expect(m.mediaSequence).toBe(widened[0]);
      expect(m.segments.map((s) => [s.uri, s.duration])).toEqual(
        widened.map((n) => [segmentUri(view, key, n, ext), secondsOf(numbering, WHOLE[n]!)]),
      );
      // The sibling property itself: every (EXTINF, URI) pair is one of the whole presentation's.
      const whole = writeMediaPlaylist(await viewFor(`${options}&suppress_query_parameters`), key);
      const pairs = (t: string): string[] =>
        t.split('\n').flatMap((l, i, all) => (l.startsWith('#EXTINF:') ? [`${l} ${all[i + 1]}`] : []));
      const wholePairs = pairs(whole);
      expect(pairs(writeMediaPlaylist(view, key)).filter((p) => !wholePairs.includes(p))).toEqual([]);
      expect(read(whole).mediaSequence).toBe(1);
    },
  );
});

describe('I-frame playlists of sub-clips', () => {
  const FILE = 'video_baseline_400k.ismv';
  const kept = (c: ClipCase): number[] => c.exact.flatMap(([, f]) => f);

  test.each(CASES)(
    '$clip: entries numbered by their unclipped fragment, exact, with and without suppression',
    async (c) => {
      for (const [fmp4, ext] of [
        ['', 'ts'],
        ['&hls_fmp4', 'm4s'],
      ] as const) {
        const query = `hls_client_manifest_version=4${fmp4}&${c.clip}`;
        const view = await viewFor(query);
        const key = keyOf(view, FILE);
        const m = read(writeIFramePlaylist(view, key));
        expect([query, m.mediaSequence]).toEqual([query, kept(c)[0]! + 1]);
        expect(m.segments.map((s) => [s.uri, s.duration])).toEqual(
          kept(c).map((i) => [`presentation-${key}-${i + 1}.${ext}?${query}`, secondsOf(FILE, [i])]),
        );

        const suppressed = await viewFor(`${query}&suppress_query_parameters`);
        const fragments = c.widened.flatMap((n) => WHOLE[n]!);
        const s = read(writeIFramePlaylist(suppressed, key));
        expect([query, s.mediaSequence]).toEqual([query, fragments[0]! + 1]);
        expect(s.segments.map((x) => [x.uri, x.duration])).toEqual(
          fragments.map((i) => [`presentation-${key}-${i + 1}.${ext}`, secondsOf(FILE, [i])]),
        );
      }
    },
  );
});

describe('sub-clips, other cases', () => {
  test('hls_minimum_fragment_length=0: each fragment its own segment, numbered as in the whole presentation', async () => {
    const view = await viewFor('hls_minimum_fragment_length=0&hls_client_manifest_version=3&t=4-10');
    const key = keyOf(view, 'video_main_900k.ismv');
    const m = read(writeMediaPlaylist(view, key));
    expect([m.mediaSequence, m.segments.map((s) => s.uri.split('?')[0])]).toEqual([
      3,
      [3, 4, 5].map((n) => `presentation-${key}-${n}.ts`),
    ]);
  });

  test('a suppressed master keeps the clip on its playlist URLs only (the playlists it names are clips)', async () => {
    const view = await viewFor(
      'hls_client_manifest_version=4&t=0-0:00:06&presentation_name=intro&suppress_query_parameters',
    );
    const uris = urisOf(writeMasterPlaylist(view));
    expect(uris.length).toBeGreaterThan(3);
    expect(uris.every((u) => u.endsWith('.m3u8?t=0-0:00:06&presentation_name=intro'))).toBe(true);
  });

  test('the whole presentation is numbered from 1 as before, with and without suppression', async () => {
    for (const query of ['hls_client_manifest_version=4', 'hls_client_manifest_version=4&suppress_query_parameters']) {
      const view = await viewFor(query);
      const key = keyOf(view, 'video_main_900k.ismv');
      expect(tagLines(writeMediaPlaylist(view, key), '#EXT-X-MEDIA-SEQUENCE')).toEqual(['#EXT-X-MEDIA-SEQUENCE:1']);
      expect(tagLines(writeIFramePlaylist(view, key), '#EXT-X-MEDIA-SEQUENCE')).toEqual(['#EXT-X-MEDIA-SEQUENCE:1']);
    }
  });
});

describe('goldens', () => {
  test('multiplexed TS media playlist of t=0-0:00:06 (exact, version 3)', async () => {
    const view = await viewFor('hls_client_manifest_version=3&t=0-0:00:06');
    expectGolden(
      'formats/clip-intro-muxed.m3u8',
      writeMediaPlaylist(view, `${keyOf(view, 'audio_eng_64k.isma')}-${keyOf(view, 'video_baseline_400k.ismv')}`),
    );
  });
  test('fMP4 media playlist of vbegin=0:00:04 under suppress_query_parameters (whole segments 2 and 3)', async () => {
    const view = await viewFor('hls_fmp4&vbegin=0:00:04&suppress_query_parameters');
    expectGolden(
      'formats/clip-late-fmp4-suppressed.m3u8',
      writeMediaPlaylist(view, keyOf(view, 'video_baseline_400k.ismv')),
    );
  });
  test('I-frame playlist of vbegin=0:00:04 (version 4)', async () => {
    const view = await viewFor('hls_client_manifest_version=4&vbegin=0:00:04');
    expectGolden('formats/clip-late-iframes.m3u8', writeIFramePlaylist(view, keyOf(view, 'video_baseline_400k.ismv')));
  });
});
