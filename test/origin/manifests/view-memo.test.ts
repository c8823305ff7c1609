// The writers memoize what they derive from a view track (model/view.ts ViewMemo: SegmentTimeline
// text, the Smooth `<c>` list, media playlist segment lines, bit rates), keyed by the view objects,
// which are immutable and reused by the server for every request with the same query. These tests
// check that a memoized render is the render of a fresh view, for the options, clips and filters
// that change the output, and that a ViewTrack shared by views with other options (a view spread
// with another query's options) never gets the text rendered for the first view's options.

import { writeMpd } from '../../../origin/manifests/dash';
import { writeIFramePlaylist, writeMasterPlaylist, writeMediaPlaylist } from '../../../origin/manifests/hls';
import { writeSmoothManifest } from '../../../origin/manifests/smooth';
import { findRendition, rendition } from '../../../origin/model/rendition';
import { Format } from '../../../origin/options/registry';
import { Presentation } from '../../../origin/model/presentation';
import { bitrates, PlayoutView, trackKey, viewForQuery } from '../../../origin/model/view';
import { wasmTrackSelector } from '../../../origin/server/select';
import { presentationOf } from './format-support';

const FILES = [
  'video_baseline_400k.ismv',
  'video_main_900k.ismv',
  'audio_eng_64k.isma',
  'audio_eng_128k.isma',
  'audio_nld_128k.isma',
  'text_eng.ismt',
];

const fresh = (p: Presentation, format: Format, query: string): PlayoutView =>
  viewForQuery(p, format, query, wasmTrackSelector);

/** Every document of a view: the format's manifest and, for HLS, each media and I-frame playlist. */
function renderAll(view: PlayoutView): string[] {
  switch (view.format) {
    case 'smooth':
      return [writeSmoothManifest(view)];
    case 'dash':
      return [writeMpd(view)];
    case 'hls': {
      const out = [writeMasterPlaylist(view)];
      const audio = view.tracks.filter((t) => t.track.properties.type === 'audio');
      const video = view.tracks.filter((t) => t.track.properties.type === 'video');
      const keys = view.tracks.map((t) => trackKey(t.track));
      if (!view.options.bool('hls_fmp4'))
        for (const a of audio) for (const v of video) keys.push(rendition([a, v]).key);
      for (const key of keys) out.push(`${key}\n${writeMediaPlaylist(view, findRendition(view, key)!)}`);
      for (const v of video) {
        try {
          out.push(writeIFramePlaylist(view, trackKey(v.track)));
        } catch {
          out.push('no I-frame playlist at this version');
        }
      }
      return out;
    }
    default:
      throw new Error(`no writer for ${view.format}`);
  }
}

const filter = (expression: string): string => `filter=${encodeURIComponent(expression)}`;

/** Queries that change the segments, the URLs, the version or the variants. */
const QUERIES: Record<'smooth' | 'dash' | 'hls', string[]> = {
  smooth: [
    '',
    't=2-8',
    'vbegin=0:00:04',
    'presentation_name=x',
    filter('type!="audio"||systemBitrate<100000'),
    'iss_minimum_fragment_length=4',
    'suppress_query_parameters&t=4-6&a=1',
    'a=%22%26',
  ],
  dash: [
    '',
    't=2-8',
    'vbegin=0:00:04',
    'mpd_segment_template=number',
    'mpd_minimum_fragment_length=2',
    'presentation_name=x',
    filter('type=="video"'),
    'suppress_query_parameters&t=0-6&a=1',
    'a=%22%26',
  ],
  hls: [
    '',
    't=2-8',
    'vbegin=0:00:04',
    'hls_fmp4',
    'hls_client_manifest_version=2',
    'hls_client_manifest_version=4',
    'hls_client_manifest_version=4&hls_fmp4',
    'hls_no_multiplex',
    'hls_no_audio_only',
    'start_index=1',
    'presentation_name=x',
    'hls_minimum_fragment_length=2',
    'suppress_query_parameters&t=2-8&presentation_name=y',
    'suppress_query_parameters&t=4-6&hls_fmp4',
    filter('systemBitrate<700000'),
    `variant_set=${encodeURIComponent('type=="audio"||systemBitrate<500000')}`,
  ],
};

describe('memoized renders of a view', () => {
  let p: Presentation;
  beforeAll(async () => {
    p = await presentationOf(FILES);
  });

  for (const format of ['smooth', 'dash', 'hls'] as const) {
    test(`${format}: a second render of a view is its first, and every query renders as a fresh view does`, () => {
      const views = QUERIES[format].map((q) => fresh(p, format, q));
      const first = views.map(renderAll);
      // The memos are now warm for every view: render them all again, in another order.
      for (let i = views.length - 1; i >= 0; i--) expect(renderAll(views[i]!)).toEqual(first[i]);
      // And each equals a render of a new view of the same query (no shared objects).
      QUERIES[format].forEach((q, i) => expect(renderAll(fresh(p, format, q))).toEqual(first[i]));
      // Different queries give different documents (the memo did not serve one for all).
      expect(new Set(first.map((d) => d.join('\n'))).size).toBe(QUERIES[format].length);
    });

    test(`${format}: a view track shared by views with other options renders for each view's options`, () => {
      // Queries that keep the same segments: a view of one query over the tracks of the plain view.
      const base = fresh(p, format, '');
      const warm = renderAll(base);
      const sameSegments = QUERIES[format].filter(
        (q) => !/t=|vbegin|minimum_fragment_length|filter|variant_set/.test(q),
      );
      for (const q of sameSegments) {
        const own = fresh(p, format, q);
        const shared: PlayoutView = { ...own, tracks: base.tracks };
        const expected = renderAll(own);
        expect(renderAll(shared)).toEqual(expected);
        expect(renderAll(shared)).toEqual(expected);
      }
      expect(renderAll(base)).toEqual(warm);
    });
  }

  test('bitrates are the same object values on every call, and a caller cannot change the memo', () => {
    const view = fresh(p, 'dash', '');
    const t = view.tracks[0]!;
    const a = bitrates(t);
    a.peak = -1;
    expect(bitrates(t)).not.toEqual(a);
    expect(bitrates(t)).toEqual(bitrates(fresh(p, 'dash', '').tracks[0]!));
  });
});
