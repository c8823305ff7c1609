// host-glue/filter/filter-engine.ts: errors as the origin reports them, the bounded expression cache
// (handles released on eviction), recovery from a failing module, recycling of the module's
// intern table, track loading, and applyTrackFilters() (track_filter AND filter, timed-metadata
// passthrough, "keeps none" errors naming the expression).

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  createFilterEngine,
  filterEngine,
  FilterSyntaxError,
  WasmFilterEngine,
} from '../../../host-glue/filter/filter-engine';
import {
  filterWasmPath,
  MAX_FILTER_TRACKS,
  projectRoot,
  RawFilterExports,
} from '../../../host-glue/filter/filter-module';
import { applyTrackFilters } from '../../../host-glue/filter/track-filters';
import { thrownOriginError } from '../../helpers/errors';
import { TrackProperties } from '../../../origin/model/media';
import { buildFilterWasm, ROOT } from '../../assembly/filter/filter-wasm';

let wasm: string;
beforeAll(() => {
  wasm = buildFilterWasm();
});

function track(p: Partial<TrackProperties>): TrackProperties {
  return {
    type: 'audio',
    FourCC: 'AACL',
    trackID: 1,
    trackName: 'audio_eng',
    systemBitrate: 128000,
    systemLanguage: 'eng',
    TimeScale: 48000,
    CodecPrivateData: '',
    codecs: '',
    sampleEntry: '',
    ...p,
  };
}

const TRACKS: TrackProperties[] = [
  track({
    type: 'video',
    FourCC: 'AVC1',
    trackName: 'video_eng',
    systemBitrate: 400000,
    MaxWidth: 512,
    FrameRate: { num: 24, den: 1 },
    avc_profile: 66,
  }),
  track({
    type: 'video',
    FourCC: 'AVC1',
    trackName: 'video_eng',
    systemBitrate: 900000,
    MaxWidth: 640,
    FrameRate: { num: 30000, den: 1001 },
    avc_profile: 77,
  }),
  track({ Channels: 2, SamplingRate: 48000 }),
  track({ FourCC: 'ac-3', trackName: 'audio_eng_ac3', systemBitrate: 384000, Channels: 6 }),
  track({ type: 'textstream', FourCC: 'TTML', trackName: 'textstream_eng', systemBitrate: 1000, Roles: 'subtitle' }),
  track({ type: 'data', FourCC: 'mett', trackName: 'data_eng', systemBitrate: 100 }),
];

describe('FilterEngine', () => {
  test('canonical() and select(); count() sees every given track', () => {
    const e = filterEngine();
    expect(e.canonical(' type == "video" ')).toBe('type=="video"');
    expect(e.select('type=="video"', TRACKS)).toEqual([true, true, false, false, false, false]);
    expect(e.select('FrameRate==30000/1001', TRACKS)).toEqual([false, true, false, false, false, false]);
    expect(e.select('count(type=="data")==1&&type=="textstream"', TRACKS)).toEqual([
      false,
      false,
      false,
      false,
      true,
      false,
    ]);
    expect(e.select('true', [])).toEqual([]);
    expect(e.select('count(true)==2', TRACKS.slice(0, 2))).toEqual([true, true]);
  });

  test('tracks are reloaded whenever a value changed (the same objects, mutated, or new ones)', () => {
    const e = createFilterEngine(wasm);
    const tracks = TRACKS.map((t) => ({ ...t }));
    expect(e.select('systemBitrate>500000', tracks)).toEqual([false, true, false, false, false, false]);
    tracks[0]!.systemBitrate = 600000;
    expect(e.select('systemBitrate>500000', tracks)).toEqual([true, true, false, false, false, false]);
    tracks[1]!.FrameRate = { num: 25, den: 1 };
    expect(e.select('FrameRate==25', tracks)).toEqual([false, true, false, false, false, false]);
    tracks[1]!.FrameRate = { num: 50, den: 2 };
    expect(e.select('FrameRate==25&&FrameRate!=50/2', tracks)).toEqual([false, false, false, false, false, false]);
    delete tracks[2]!.Channels;
    expect(e.select('Channels==2||Channels==6', tracks)).toEqual([false, false, false, true, false, false]);
    tracks[4]!.Roles = 'caption';
    expect(e.select('Roles=="caption"', tracks)).toEqual([false, false, false, false, true, false]);
    expect(e.select('count(true)==2', tracks.slice(0, 2))).toEqual([true, true]);
    expect(e.select('count(true)==6', tracks).every(Boolean)).toBe(true);
  });

  test('a syntax error is OriginError bad-request, subject filter, with message, position and hint', () => {
    const e = thrownOriginError(() => filterEngine().canonical('systemBitrate>1 && type="video"'));
    expect(e).toBeInstanceOf(FilterSyntaxError);
    expect(e.kind).toBe('bad-request');
    expect(e.subject).toBe('filter');
    expect(e.message).toBe('filter: unexpected "=" at 23: did you mean "=="?');
    const s = e as FilterSyntaxError;
    expect([s.reason, s.offset, s.hint, s.detail, s.expression]).toEqual([
      'unexpected "="',
      23,
      'did you mean "=="?',
      'unexpected "=" at 23: did you mean "=="?',
      'systemBitrate>1 && type="video"',
    ]);
    expect(thrownOriginError(() => filterEngine().select('type==1', TRACKS)).message).toBe(
      'filter: cannot compare a string with a number at 4: type is a string: quote the value, e.g. "1"',
    );
    expect(thrownOriginError(() => filterEngine().select('type=="video"&&', TRACKS)).message).toMatch(
      /^filter: unexpected end of filter at 15: /,
    );
  });

  test('texts past the 4 KiB limit fail where the limit falls, however long, without being cached', () => {
    const e = createFilterEngine(wasm);
    const started = Date.now();
    for (let i = 0; i < 50; i++) {
      expect(thrownOriginError(() => e.canonical('true||'.repeat(200_000) + String(i))).message).toBe(
        'filter: filter longer than 4096 bytes at 4096: shorten the expression',
      );
    }
    expect(Date.now() - started).toBeLessThan(2000);
    // 2-byte characters: the limit falls at 2048 whether the text is cut or not
    expect(thrownOriginError(() => e.canonical('"' + 'é'.repeat(5000) + '"==type')).message).toMatch(/ at 2048: /);
    expect(thrownOriginError(() => e.canonical('"' + 'é'.repeat(2100) + '"==type')).message).toMatch(/ at 2048: /);
    // a surrogate pair across the cut
    expect(thrownOriginError(() => e.canonical('"' + 'x'.repeat(4095) + '😀' + '"==type')).message).toMatch(
      / at 4096: /,
    );
    const error = thrownOriginError(() => e.canonical('"' + 'x'.repeat(5000)));
    expect((error as FilterSyntaxError).expression.length).toBe(5001);
  });

  test('a "+" (a form-encoded space the query decoding keeps) gets a hint', () => {
    expect(thrownOriginError(() => filterEngine().canonical('type=="video"+&&+systemBitrate<1')).message).toBe(
      'filter: unexpected "+" at 13: "+" is not decoded to a space: write a space as %20 in a URL, or leave it out',
    );
  });

  test('a repeated bad expression gives the same error (cached), a good one the same canonical text', () => {
    const e = createFilterEngine(wasm);
    const first = thrownOriginError(() => e.canonical('type=')).message;
    expect(thrownOriginError(() => e.canonical('type=')).message).toBe(first);
    expect(e.canonical('TRUE')).toBe('true');
    expect(e.canonical('TRUE')).toBe('true');
  });

  test('the cache is bounded and releases the handles it evicts (the module holds at most 4096)', () => {
    const e = createFilterEngine(wasm, 8);
    for (let i = 0; i < 5000; i++) expect(e.select(`systemBitrate==${i}||type=="textstream"`, TRACKS)[4]).toBe(true);
    // Evicted expressions compile again, with the same result.
    expect(e.canonical('systemBitrate==0||type=="textstream"')).toBe('systemBitrate==0||type=="textstream"');
    expect(e.generation).toBe(1);
  });

  test('handles stay valid for the expressions of one selectAll() even with the smallest cache', () => {
    const e = createFilterEngine(wasm, 1);
    expect(e.selectAll(['type=="video"', 'type=="audio"', 'type=="data"'], TRACKS)).toEqual([
      [true, true, false, false, false, false],
      [false, false, true, true, false, false],
      [false, false, false, false, false, true],
    ]);
  });

  test('the module failing mid-call: OriginError internal, a fresh instance, the next call works', () => {
    const e = createFilterEngine(wasm);
    expect(e.select('type=="video"', TRACKS)).toEqual([true, true, false, false, false, false]);
    const inner = e as unknown as { raw: RawFilterExports };
    inner.raw.evaluate = () => {
      throw new WebAssembly.RuntimeError('unreachable');
    };
    const error = thrownOriginError(() => e.select('type=="video"', TRACKS));
    expect([error.kind, error.message]).toEqual([
      'internal',
      'filter: the filter module failed (unreachable); it was reloaded',
    ]);
    expect(e.generation).toBe(2);
    expect(e.select('type=="video"', TRACKS)).toEqual([true, true, false, false, false, false]);
    inner.raw.compile = () => {
      throw new RangeError('Maximum call stack size exceeded');
    };
    expect(thrownOriginError(() => e.canonical('type=="audio"')).kind).toBe('internal');
    expect(e.canonical('type=="audio"')).toBe('type=="audio"');
  });

  test('the module intern table is recycled past its budget, transparently', () => {
    const e = new WasmFilterEngine(new WebAssembly.Module(readFileSync(wasm)), 16, 2000);
    for (let i = 0; i < 300; i++) {
      const tracks = [track({ trackName: `name_${i}_${'x'.repeat(20)}` }), track({ trackName: 'other' })];
      expect(e.select(`trackName=="name_${i}_${'x'.repeat(20)}"`, tracks)).toEqual([true, false]);
    }
    expect(e.generation).toBeGreaterThan(3);
  });

  test('track values: missing, non-integer and bad rationals stay unset (compare false)', () => {
    const odd = [
      track({ systemBitrate: 1.5, Channels: undefined }),
      track({ FrameRate: { num: 1, den: 0 }, MaxWidth: Number.NaN }),
      track({ FrameRate: { num: 50, den: 2 }, MaxWidth: 2 ** 53 - 1 }),
    ];
    const e = filterEngine();
    expect(e.select('systemBitrate>=0||systemBitrate<0', odd)).toEqual([false, true, true]);
    expect(e.select('Channels==2||Channels!=2', odd)).toEqual([false, false, false]);
    expect(e.select('FrameRate==25', odd)).toEqual([false, false, true]);
    expect(e.select('MaxWidth==9007199254740991', odd)).toEqual([false, false, true]);
  });

  test(`more than ${MAX_FILTER_TRACKS} tracks is refused clearly, the limit itself works`, () => {
    const many = Array.from({ length: MAX_FILTER_TRACKS }, (_, i) => track({ trackID: i }));
    expect(
      filterEngine()
        .select('trackID>=1020', many)
        .filter((k) => k).length,
    ).toBe(4);
    const error = thrownOriginError(() => filterEngine().select('true', [...many, track({})]));
    expect([error.kind, error.message]).toEqual([
      'unsupported-media',
      `filter: a filter evaluates at most ${MAX_FILTER_TRACKS} tracks; this presentation has ${MAX_FILTER_TRACKS + 1}`,
    ]);
  });

  test('a missing or broken build/filter.wasm: OriginError internal saying how to fix it', () => {
    const missing = thrownOriginError(() => createFilterEngine(path.join(ROOT, 'build', 'no-such-filter.wasm')));
    expect([missing.kind, missing.message]).toEqual([
      'internal',
      'build/no-such-filter.wasm missing: run npm run build',
    ]);
    const elsewhere = thrownOriginError(() => createFilterEngine('/nonexistent/filter.wasm'));
    expect(elsewhere.message).toBe('/nonexistent/filter.wasm missing: run npm run build');
    const broken = thrownOriginError(() => createFilterEngine(path.join(ROOT, 'package.json')));
    expect(broken.message).toMatch(/^package\.json is not a valid WebAssembly module \(.*\): run npm run build$/);
  });
});

describe('applyTrackFilters', () => {
  const INDICES = TRACKS.map((_, i) => i);

  test('undefined or empty expressions keep every track', () => {
    expect(applyTrackFilters(TRACKS, undefined, undefined)).toEqual(INDICES);
    expect(applyTrackFilters(TRACKS, '', '')).toEqual(INDICES);
    expect(applyTrackFilters([], 'type=="video"', undefined)).toEqual([]);
  });

  test('track_filter AND filter; count() in either counts every track', () => {
    expect(applyTrackFilters(TRACKS, 'type!="textstream"', 'systemBitrate<500000')).toEqual([0, 2, 3, 5]);
    expect(applyTrackFilters(TRACKS, 'type=="audio"', undefined)).toEqual([2, 3]);
    expect(applyTrackFilters(TRACKS, undefined, 'type=="audio"')).toEqual([2, 3]);
    // track_filter leaves 2 audio tracks; the filter's count still sees both video tracks
    expect(applyTrackFilters(TRACKS, 'type=="audio"', 'count(type=="video")==2&&Channels==6')).toEqual([3]);
  });

  test('timed-metadata tracks are kept whatever the filters say when passthrough is on', () => {
    expect(applyTrackFilters(TRACKS, undefined, 'type=="video"', { keepTimedMetadata: true })).toEqual([0, 1, 5]);
    expect(applyTrackFilters(TRACKS, 'type=="audio"', 'Channels==6', { keepTimedMetadata: true })).toEqual([3, 5]);
    expect(applyTrackFilters(TRACKS, undefined, 'type=="video"', { keepTimedMetadata: false })).toEqual([0, 1]);
    expect(applyTrackFilters(TRACKS, undefined, 'type=="video"')).toEqual([0, 1]);
    // ...but they do not count as "something kept"
    expect(
      thrownOriginError(() => applyTrackFilters(TRACKS, undefined, 'type=="x"', { keepTimedMetadata: true })).message,
    ).toBe('filter: type=="x" keeps none of the 5 tracks');
  });

  test('syntax errors say which parameter', () => {
    const tf = thrownOriginError(() => applyTrackFilters(TRACKS, 'type="video"', 'true'));
    expect([tf.kind, tf.subject, tf.message]).toEqual([
      'bad-request',
      'track_filter',
      'track_filter: unexpected "=" at 4: did you mean "=="?',
    ]);
    expect(tf).toBeInstanceOf(FilterSyntaxError);
    const f = thrownOriginError(() => applyTrackFilters(TRACKS, 'true', 'Channels=="2"'));
    expect(f.message).toBe(
      'filter: cannot compare a string with a number at 8: Channels is a number: write the value without quotes',
    );
    // both bad: track_filter is reported (it applies first)
    expect(thrownOriginError(() => applyTrackFilters(TRACKS, '(', ')')).subject).toBe('track_filter');
  });

  test('keeping no track is a bad request naming the expression(s)', () => {
    const none = thrownOriginError(() => applyTrackFilters(TRACKS, undefined, 'systemBitrate>10000000'));
    expect([none.kind, none.message]).toEqual([
      'bad-request',
      'filter: systemBitrate>10000000 keeps none of the 6 tracks',
    ]);
    expect(thrownOriginError(() => applyTrackFilters(TRACKS, 'type=="x"', 'true')).message).toBe(
      'track_filter: type=="x" keeps none of the 6 tracks',
    );
    expect(thrownOriginError(() => applyTrackFilters(TRACKS, 'type=="audio"', 'type=="video"')).message).toBe(
      'filter: type=="video" keeps none of the 2 tracks that track_filter type=="audio" keeps',
    );
  });
});

test('the project root is found from source (host-glue/) and compiled (dist/host-glue/) locations', () => {
  expect(projectRoot(path.join(ROOT, 'host-glue'))).toBe(ROOT);
  expect(projectRoot(path.join(ROOT, 'dist', 'host-glue'))).toBe(ROOT);
  expect(filterWasmPath()).toBe(path.join(ROOT, 'build', 'filter.wasm'));
  // without our package.json anywhere up, the layout decides
  expect(projectRoot('/nowhere/app/dist/host-glue')).toBe('/nowhere/app');
  expect(projectRoot('/nowhere/app/host-glue')).toBe('/nowhere/app');
});
