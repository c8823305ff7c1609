// The rewrite engine (assembly/edge/rewrite*.ts) compiled to WebAssembly with the edge target's
// flags: every default rule with the demo's maps, what passes untouched, lookups, classes,
// encodings, and random paths, queries and rule sets that must never trap (rules as data and the
// configuration errors: rewrite-config.test.ts).

import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ROOT, MAPS, AVC, SD, FMP4, TS, engine, configured } from './rewrite-engine-support';

describe('the default rules (the reference recipe) with the demo maps', () => {
  beforeEach(() => configured({ rules: 'default', maps: MAPS }));

  test('compiles nine rules; "rules" absent means the default set', () => {
    expect(engine.ruleCount).toBe(9);
    configured({ maps: MAPS });
    expect(engine.ruleCount).toBe(9);
  });

  test.each([
    // master playlists
    [
      '<ism>/<format>/<bundle>.m3u8',
      '/vod/tos.ism/fmp4/avc.m3u8',
      '',
      '/vod/tos.ism/.m3u8',
      `${FMP4}&${AVC}&suppress_query_parameters`,
    ],
    [
      '… with the TS alteration and another bundle',
      '/tos.ism/ts/sd.m3u8',
      '',
      '/tos.ism/.m3u8',
      `${TS}&${SD}&suppress_query_parameters`,
    ],
    [
      '<ism>/<format>/<bundle>@<timeline>.m3u8',
      '/vod/tos.ism/fmp4/avc@intro.m3u8',
      '',
      '/vod/tos.ism/.m3u8',
      `${FMP4}&${AVC}&presentation_name=intro&suppress_query_parameters`,
    ],
    [
      '… a request query is not carried into a playlist',
      '/vod/tos.ism/fmp4/avc.m3u8',
      'x=1',
      '/vod/tos.ism/.m3u8',
      `${FMP4}&${AVC}&suppress_query_parameters`,
    ],
    // media playlists: the three siblings
    [
      '<ism>/<format>/<prefix>-<rest>.m3u8 (subclip)',
      '/vod/tos.ism/fmp4/intro-video_eng=410594.m3u8',
      'presentation_name=intro',
      '/vod/tos.ism/video_eng=410594.m3u8',
      `${FMP4}&t=0-0:00:06&suppress_query_parameters`,
    ],
    [
      '… the other subclip',
      '/vod/tos.ism/fmp4/late-video_eng=410594.m3u8',
      'presentation_name=late',
      '/vod/tos.ism/video_eng=410594.m3u8',
      `${FMP4}&vbegin=0:00:04&suppress_query_parameters`,
    ],
    [
      '… the default name (not a timeline key): the whole timeline',
      '/vod/tos.ism/fmp4/tos-video_eng=410594.m3u8',
      '',
      '/vod/tos.ism/video_eng=410594.m3u8',
      `${FMP4}&suppress_query_parameters`,
    ],
    [
      '… a basename with "-": the first word is the prefix',
      '/vod/tears-of-steel.ism/ts/tears-of-steel-audio_eng=64113-video_eng=410594.m3u8',
      '',
      '/vod/tears-of-steel.ism/of-steel-audio_eng=64113-video_eng=410594.m3u8',
      `${TS}&suppress_query_parameters`,
    ],
    [
      '… I-frame playlist',
      '/vod/tos.ism/ts/keyframes/intro-video_eng=410594.m3u8',
      'presentation_name=intro',
      '/vod/tos.ism/keyframes/video_eng=410594.m3u8',
      `${TS}&t=0-0:00:06&suppress_query_parameters`,
    ],
    // segments: the format directory goes, the alteration comes, the request's query stays
    [
      '.ts',
      '/vod/tos.ism/ts/tos-audio_eng=64113-video_eng=410594-2.ts',
      '',
      '/vod/tos.ism/tos-audio_eng=64113-video_eng=410594-2.ts',
      TS,
    ],
    [
      '.ts with the subclip query the playlist wrote',
      '/vod/tos.ism/ts/tos-video_eng=410594-1.ts',
      't=0-0:00:06',
      '/vod/tos.ism/tos-video_eng=410594-1.ts',
      `${TS}&t=0-0:00:06`,
    ],
    ['.aac', '/vod/tos.ism/ts/tos-audio_nld=127958-3.aac', '', '/vod/tos.ism/tos-audio_nld=127958-3.aac', TS],
    ['.ac3', '/vod/tos.ism/ts/tos-audio_ac3=384000-1.ac3', '', '/vod/tos.ism/tos-audio_ac3=384000-1.ac3', TS],
    ['.ec3', '/vod/tos.ism/ts/tos-audio_eac3=256000-1.ec3', '', '/vod/tos.ism/tos-audio_eac3=256000-1.ec3', TS],
    [
      '.webvtt',
      '/vod/tos.ism/fmp4/tos-text_eng=1000-1.webvtt',
      'vbegin=0:00:04',
      '/vod/tos.ism/tos-text_eng=1000-1.webvtt',
      `${FMP4}&vbegin=0:00:04`,
    ],
    [
      'hls/….m4s (media)',
      '/vod/tos.ism/fmp4/hls/tos-video_eng=410594-1.m4s',
      '',
      '/vod/tos.ism/hls/tos-video_eng=410594-1.m4s',
      FMP4,
    ],
    [
      'hls/….m4s (init)',
      '/vod/tos.ism/fmp4/hls/tos-video_eng=410594.m4s',
      '',
      '/vod/tos.ism/hls/tos-video_eng=410594.m4s',
      FMP4,
    ],
    [
      'keyframes/….ts',
      '/vod/tos.ism/ts/keyframes/tos-video_eng=410594-4.ts',
      '',
      '/vod/tos.ism/keyframes/tos-video_eng=410594-4.ts',
      TS,
    ],
    [
      'keyframes/….m4s',
      '/vod/tos.ism/fmp4/keyframes/tos-video_eng=410594-4.m4s',
      '',
      '/vod/tos.ism/keyframes/tos-video_eng=410594-4.m4s',
      FMP4,
    ],
    // Smooth Streaming behind a filter directory
    [
      '<ism>/<dir>/Manifest',
      '/vod/tos.ism/avc/Manifest',
      '',
      '/vod/tos.ism/Manifest',
      `${AVC}&suppress_query_parameters`,
    ],
    [
      '<ism>/<dir>/manifest, with a query',
      '/vod/tos.ism/sd/manifest',
      't=0-0:00:06',
      '/vod/tos.ism/manifest',
      `${SD}&t=0-0:00:06&suppress_query_parameters`,
    ],
    [
      '<ism>/<dir>/QualityLevels(…)/Fragments(…)',
      '/vod/tos.ism/avc/QualityLevels(410594)/Fragments(video_eng=20000000)',
      '',
      '/vod/tos.ism/QualityLevels(410594)/Fragments(video_eng=20000000)',
      AVC,
    ],
    [
      '… the filter first, then the query (the origin reads the first filter)',
      '/vod/tos.ism/avc/QualityLevels(64113)/Fragments(audio_eng=0)',
      'filter=true',
      '/vod/tos.ism/QualityLevels(64113)/Fragments(audio_eng=0)',
      `${AVC}&filter=true`,
    ],
    // the presentation is the first .ism segment, any case, and .isml
    [
      'deep paths, .ISM',
      '/a/b/c/TOS.ISM/fmp4/avc.m3u8',
      '',
      '/a/b/c/TOS.ISM/.m3u8',
      `${FMP4}&${AVC}&suppress_query_parameters`,
    ],
    ['.isml', '/live/ch1.isml/fmp4/avc.m3u8', '', '/live/ch1.isml/.m3u8', `${FMP4}&${AVC}&suppress_query_parameters`],
  ])('%s: %s?%s', (_rule, p, q, toPath, toQuery) => {
    expect(engine.rewrite(p, q)).toEqual({ path: toPath, query: toQuery });
  });

  test('unknown bundle and prefix add nothing (Apache RewriteMap gives ""): all tracks, whole timeline', () => {
    expect(engine.rewrite('/p.ism/fmp4/nosuch.m3u8')).toEqual({
      path: '/p.ism/.m3u8',
      query: `${FMP4}&suppress_query_parameters`,
    });
    expect(engine.rewrite('/p.ism/fmp4/nosuch@intro.m3u8')).toEqual({
      path: '/p.ism/.m3u8',
      query: `${FMP4}&presentation_name=intro&suppress_query_parameters`,
    });
  });

  test.each([
    ["the origin's own URLs", '/p.ism/.m3u8'],
    ['', '/p.ism/p.m3u8'],
    ['', '/p.ism/p-video_eng=410594.m3u8'],
    ['', '/p.ism/p-video_eng=410594-1.ts'],
    ['', '/p.ism/hls/p-video_eng=410594-1.m4s'],
    ['', '/p.ism/keyframes/p-video_eng=410594.m3u8'],
    ['', '/p.ism/keyframes/p-video_eng=410594-1.ts'],
    ['', '/p.ism/Manifest'],
    ['', '/p.ism/QualityLevels(410594)/Fragments(video_eng=0)'],
    ['', '/p.ism/.mpd'],
    ['', '/p.ism/dash/p-video_eng=410594-0.dash'],
    ['a directory that is no alter key (virtual path)', '/p.ism/other/avc.m3u8'],
    ['', '/p.ism/other/p-video_eng=410594-1.ts'],
    ['a Smooth directory that is no filter key', '/p.ism/other/Manifest'],
    ['a DASH alias (no default rule)', '/p.ism/fmp4/x.mpd'],
    ['no presentation', '/fmp4/avc.m3u8'],
    ['', '/static/fmp4/avc.m3u8'],
    ['', '/'],
    ['a format directory before the .ism', '/fmp4/p.ism/avc.m3u8'],
    ['two directories', '/p.ism/fmp4/x/avc.m3u8'],
    ['names hold no "@" or "-"', '/p.ism/fmp4/a@b@c.m3u8'],
    ['a part is never empty', '/p.ism/fmp4/.m3u8'],
    ['', '/p.ism/fmp4/-video.m3u8'],
    ['', '/p.ism//avc.m3u8'],
  ])('passes untouched (null): %s %s', (_why, p) => {
    expect(engine.rewrite(p)).toBeNull();
  });

  test('the three sibling media playlists of a rendition rewrite to the same path, each with its timeline', () => {
    const siblings = ['intro', 'late', 'tos'].map((prefix) =>
      engine.rewrite(`/vod/tos.ism/fmp4/${prefix}-audio_eng=64113.m3u8`),
    );
    expect(siblings.map((s) => s?.path)).toEqual(Array(3).fill('/vod/tos.ism/audio_eng=64113.m3u8'));
    expect(siblings.map((s) => s?.query)).toEqual([
      `${FMP4}&t=0-0:00:06&suppress_query_parameters`,
      `${FMP4}&vbegin=0:00:04&suppress_query_parameters`,
      `${FMP4}&suppress_query_parameters`,
    ]);
  });
});

describe('never traps', () => {
  const alphabet = fc.constantFrom(
    '/',
    'a',
    'b',
    '-',
    '@',
    '.',
    'ism',
    '.ism',
    '.m3u8',
    'fmp4',
    'avc',
    'intro',
    'hls',
    'keyframes',
    'Manifest',
    'QualityLevels(1)',
    'Fragments(a=1)',
    '(',
    ')',
    '<',
    '>',
    ':',
    '|',
    '%',
    '&',
    '=',
    '?',
    'é',
    '😀',
    '\u0000',
    '\ud800',
  );
  const text = (max: number) => fc.array(alphabet, { maxLength: max }).map((parts) => parts.join(''));

  test('random paths and queries against the default rules', () => {
    configured({ rules: 'default', maps: MAPS });
    fc.assert(
      fc.property(text(40), text(8), (p, q) => {
        const r = engine.rewrite(`/${p}`, q);
        if (r !== null) {
          expect(r.path.startsWith('/')).toBe(true);
          expect(
            r.path
              .split('/')
              .slice(1, -1)
              .every((s) => s !== '' && s !== '.' && s !== '..'),
          ).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });

  test('random rule sets: compile or refuse with a member path, then rewrite random paths', () => {
    const member = /^rewrite(\.|:|\()/;
    fc.assert(
      fc.property(
        text(12),
        text(12),
        fc.array(text(6), { maxLength: 3 }),
        fc.array(text(30), { maxLength: 5 }),
        (match, to, query, paths) => {
          const error = engine.configure({ rules: [{ match, to, query }, 'default'], maps: { m: { a: 'a=1' } } });
          if (error !== '') {
            expect(error).toMatch(member);
            return;
          }
          for (const p of paths) engine.rewrite(`/${p}`, 'q=1');
        },
      ),
      { numRuns: 2000 },
    );
    expect(engine.aborts).toEqual([]);
  });

  test('random JSON values as the rewrite member', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const error = engine.configure({ rules: v });
        expect(error === '' || /^rewrite/.test(error)).toBe(true);
        const maps = engine.configure({ maps: v });
        expect(maps === '' || /^rewrite/.test(maps)).toBe(true);
      }),
      { numRuns: 1000 },
    );
    expect(engine.aborts).toEqual([]);
  });
});

test('docs/reference/edge-config.md shows the default rule set as compiled (assembly/edge/rewrite-defaults.ts)', () => {
  const source = readFileSync(path.join(ROOT, 'assembly/edge/rewrite-defaults.ts'), 'utf8');
  const rules = JSON.parse(/DEFAULT_RULES_JSON: string = `([\s\S]*?)`;/.exec(source)![1]!) as unknown[];
  const readme = readFileSync(path.join(ROOT, 'docs/reference/edge-config.md'), 'utf8');
  const section = /<!-- rewrite-default-rules -->\n```json\n([\s\S]*?)```\n<!-- \/rewrite-default-rules -->/.exec(
    readme,
  );
  expect(section).not.toBeNull();
  expect(JSON.parse(section![1]!)).toEqual(rules);
});

test('engine cost: the master playlist alias, segments and a miss (µs per rewrite inside the module)', () => {
  configured({ rules: 'default', maps: MAPS });
  const cases: Array<[string, string]> = [
    ['/vod/tos.ism/fmp4/avc@intro.m3u8', ''],
    ['/vod/tos.ism/fmp4/intro-audio_eng=64113-video_eng=410594.m3u8', 'presentation_name=intro'],
    ['/vod/tos.ism/fmp4/hls/tos-video_eng=410594-12.m4s', 't=0-0:00:06'],
    ['/vod/tos.ism/QualityLevels(410594)/Fragments(video_eng=20000000)', ''],
  ];
  const n = 20000;
  for (const [p, q] of cases) {
    engine.rewriteMany(p, q, 1000); // warm
    const started = process.hrtime.bigint();
    const hits = engine.rewriteMany(p, q, n);
    const us = Number(process.hrtime.bigint() - started) / 1e3 / n;
    expect(hits).toBe(p.includes('/fmp4/') ? n : 0);
    // Generous: a shared 2-core machine; the bench (bench/edge-bench.ts) reports the real figure.
    expect(us).toBeLessThan(25);
  }
});
