// The rewrite engine (assembly/edge/rewrite*.ts) compiled to WebAssembly with the edge target's
// flags: every default rule with the demo's maps, what passes untouched, lookups, classes,
// encodings, the configuration errors with their member paths, and random paths, queries and
// rule sets that must never trap.

import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { RewriteEngine } from './rewrite-probe';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The demo's maps (envoy-config/maps/*.map), written out here so that a change shows. */
const MAPS = {
  filter: {
    avc: 'filter=FourCC=="AVC1"||FourCC=="AACL"',
    sd: 'filter=(type=="video"%26%26systemBitrate<1000000)||FourCC=="AACL"||type=="textstream"',
  },
  timeline: { intro: 't=0-0:00:06', late: 'vbegin=0:00:04' },
  alter: { fmp4: 'hls_fmp4=true&hls_client_manifest_version=7', ts: 'hls_fmp4=false&hls_client_manifest_version=4' },
};
/** What the origin receives for the filter values: the characters a URL cannot hold raw encoded. */
const AVC = 'filter=FourCC==%22AVC1%22%7C%7CFourCC==%22AACL%22';
const SD =
  'filter=(type==%22video%22%26%26systemBitrate%3C1000000)%7C%7CFourCC==%22AACL%22%7C%7Ctype==%22textstream%22';
const FMP4 = 'hls_fmp4=true&hls_client_manifest_version=7';
const TS = 'hls_fmp4=false&hls_client_manifest_version=4';

let engine: RewriteEngine;

beforeAll(() => {
  engine = new RewriteEngine();
});

function configured(rewrite: unknown): RewriteEngine {
  expect(engine.configure(rewrite)).toBe('');
  return engine;
}

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

describe('rules as data', () => {
  test('lookups: strict refuses the rule (the next one is tried), "?" adds nothing, "|text" adds text', () => {
    configured({
      rules: [
        { match: '<ism>/<a:name>/<b:name>.m3u8', to: '<ism>/strict.m3u8', query: ['m[a]', 'm[b]'] },
        {
          match: '<ism>/<a:name>/<b:name>.m3u8',
          to: '<ism>/optional.m3u8',
          query: ['m[a]?', 'm[b]|fallback=1', 'end'],
        },
      ],
      maps: { m: { x: 'x=1', y: 'y=2' } },
    });
    expect(engine.rewrite('/p.ism/x/y.m3u8')).toEqual({ path: '/p.ism/strict.m3u8', query: 'x=1&y=2' });
    expect(engine.rewrite('/p.ism/x/z.m3u8')).toEqual({ path: '/p.ism/optional.m3u8', query: 'x=1&fallback=1&end' });
    expect(engine.rewrite('/p.ism/q/z.m3u8')).toEqual({ path: '/p.ism/optional.m3u8', query: 'fallback=1&end' });
  });

  test('an empty fallback is "?"; an empty request query adds no "&"', () => {
    configured({
      rules: [{ match: '<ism>/<a:name>/x', to: '<ism>/y', query: ['m[a]|', '$query', 'k=v', '$query'] }],
      maps: { m: { a: 'a=1' } },
    });
    expect(engine.rewrite('/p.ism/b/x')).toEqual({ path: '/p.ism/y', query: 'k=v' });
    expect(engine.rewrite('/p.ism/a/x', 'q=1')).toEqual({ path: '/p.ism/y', query: 'a=1&q=1&k=v&q=1' });
  });

  test('no query items: the query is dropped; "default" inside the list inserts the default set there', () => {
    configured({ rules: [{ match: '/old/<rest:path>', to: '/new/<rest>' }, 'default'], maps: MAPS });
    expect(engine.ruleCount).toBe(10);
    expect(engine.rewrite('/old/a/b.ism/Manifest', 'x=1')).toEqual({ path: '/new/a/b.ism/Manifest', query: '' });
    expect(engine.rewrite('/p.ism/fmp4/avc.m3u8')?.path).toBe('/p.ism/.m3u8');
  });

  test('first match wins, in order', () => {
    configured({
      rules: [
        { match: '/<a>', to: '/first' },
        { match: '/<a>', to: '/second' },
      ],
    });
    expect(engine.rewrite('/x')?.path).toBe('/first');
  });

  test('classes: seg stops at "/", name also at "-" and "@", path takes "/", alternatives in order, ism the first .ism segment', () => {
    configured({
      rules: [
        { match: '/s/<x>/end', to: '/seg/<x>' },
        { match: '/n/<x:name>-<y>', to: '/name/<x>/<y>' },
        { match: '/p/<x:path>/end', to: '/path/<x>' },
        { match: '/c/<x:ab|a|b>b', to: '/choice/<x>' },
        { match: '<ism>/<rest:path>', to: '/ism<ism>/<rest>' },
      ],
    });
    expect(engine.rewrite('/s/a-b@c/end')?.path).toBe('/seg/a-b@c');
    expect(engine.rewrite('/s/a/b/end')).toBeNull();
    expect(engine.rewrite('/n/ab-cd-ef')?.path).toBe('/name/ab/cd-ef');
    expect(engine.rewrite('/n/a@b-c')).toBeNull();
    expect(engine.rewrite('/p/a/b/c/end')?.path).toBe('/path/a/b/c');
    expect(engine.rewrite('/c/abb')?.path).toBe('/choice/ab');
    expect(engine.rewrite('/c/ab')?.path).toBe('/choice/a');
    expect(engine.rewrite('/c/bb')?.path).toBe('/choice/b');
    expect(engine.rewrite('/x/a.ism/b.isml/c')?.path).toBe('/ism/x/a.ism/b.isml/c');
    expect(engine.rewrite('/x/a.ism')).toBeNull(); // <rest> needs a character
    expect(engine.rewrite('/x/a.ismx/c')).toBeNull();
  });

  test('parts go into a query percent-encoded (UTF-8), into a path as they are (the caller encodes the path)', () => {
    configured({ rules: [{ match: '/<a>/<b>', to: '/<b>/<a>', query: ['a=<a>', 'b=<b>&c=<a><b>'] }] });
    expect(engine.rewrite('/é x&y=z/😀~-._')).toEqual({
      path: '/😀~-._/é x&y=z',
      query: 'a=%C3%A9%20x%26y%3Dz&b=%F0%9F%98%80~-._&c=%C3%A9%20x%26y%3Dz%F0%9F%98%80~-._',
    });
  });

  test('map values and literals keep %XX, "&" and "=" and get the characters a URL cannot hold raw encoded', () => {
    configured({
      rules: [{ match: '/<k>', to: '/x', query: ['m[k]', 'lit="x"|{}^`\\[]'] }],
      maps: { m: { k: 'filter=a%26%26b||c!="d"%26%26e<5&x=[1]' } },
    });
    expect(engine.rewrite('/k')?.query).toBe(
      'filter=a%26%26b%7C%7Cc!=%22d%22%26%26e%3C5&x=%5B1%5D&lit=%22x%22%7C%7B%7D%5E%60%5C%5B%5D',
    );
  });

  test('a result path with ".", ".." or empty segments is refused (null), whatever the parts held', () => {
    configured({
      rules: [
        { match: '<ism>/<a:name>.<b>', to: '<ism>/<b>/x' },
        { match: '<ism>/<a>', to: '<ism>/<a>//x' },
      ],
    });
    expect(engine.rewrite('/p.ism/y...')).toBeNull(); // a=y, b=".." → /p.ism/../x
    expect(engine.rewrite('/p.ism/y..')).toBeNull(); // b="." → /p.ism/./x
    expect(engine.rewrite('/p.ism/y.z')?.path).toBe('/p.ism/z/x');
    expect(engine.rewrite('/p.ism/yz')).toBeNull(); // the second rule makes "//"
    configured({
      rules: [
        { match: '<ism>/<a:name>.<b>', to: '<ism>/<b>/x' },
        { match: '<ism>/<a>', to: '<ism>/ok/' },
      ],
    });
    expect(engine.rewrite('/p.ism/y...')?.path).toBe('/p.ism/ok/'); // a trailing "/" is fine
  });

  test('bounds: a path over 8192 or a query over 16384 characters is left alone', () => {
    configured({ rules: [{ match: '/<a:path>', to: '/x', query: ['$query'] }] });
    expect(engine.rewrite(`/${'a'.repeat(8191)}`)?.path).toBe('/x');
    expect(engine.rewrite(`/${'a'.repeat(8192)}`)).toBeNull();
    expect(engine.rewrite('/a', 'q'.repeat(16384))?.query.length).toBe(16384);
    expect(engine.rewrite('/a', 'q'.repeat(16385))).toBeNull();
  });

  test('a pattern that would backtrack for long stops at its step budget instead (null, quickly)', () => {
    configured({ rules: [{ match: '/<a:path><b:path><c:path><d:path><e:path>x', to: '/y' }] });
    const started = process.hrtime.bigint();
    expect(engine.rewrite(`/${'a'.repeat(4000)}`)).toBeNull();
    expect(engine.rewrite('/aaaaax')?.path).toBe('/y');
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(200);
  });
});

describe('configuration errors name the member', () => {
  test.each([
    [[], 'rewrite: must be an object with "rules" and "maps"'],
    [{ rule: 'default' }, 'rewrite.rule: unknown member (rewrite has "rules" and "maps")'],
    [{ rules: 'standard' }, 'rewrite.rules: must be "default" or an array of rules (objects or "default")'],
    [{ rules: [] }, 'rewrite.rules: empty (give rules, or "default")'],
    [{ rules: [3] }, 'rewrite.rules[0]: must be an object {"match", "to", "query"} or "default"'],
    [
      { rules: [{ to: '/x' }] },
      'rewrite.rules[0].match: required, a path pattern such as "<ism>/<format:name>/<bundle:name>.m3u8"',
    ],
    [{ rules: [{ match: '/x' }] }, 'rewrite.rules[0].to: required, a path template such as "<ism>/.m3u8"'],
    [
      { rules: [{ match: '/x', to: '/y', from: 1 }] },
      'rewrite.rules[0].from: unknown member (a rule has "match", "to" and "query")',
    ],
    [{ rules: [{ match: '', to: '/y' }] }, 'rewrite.rules[0].match: empty pattern'],
    [
      { rules: [{ match: 'x/<a>', to: '/y' }] },
      "rewrite.rules[0].match: must start with '/' or with a part of class ism or path (paths start with '/')",
    ],
    [
      { rules: [{ match: '<a>/x', to: '/y' }] },
      "rewrite.rules[0].match: must start with '/' or with a part of class ism or path (paths start with '/')",
    ],
    [{ rules: [{ match: '/<a', to: '/y' }] }, "rewrite.rules[0].match: '<' at character 1 has no closing '>'"],
    [
      { rules: [{ match: '/a>', to: '/y' }] },
      "rewrite.rules[0].match: '>' at character 2 outside a part (write parts as <name> or <name:class>)",
    ],
    [
      { rules: [{ match: '/<1a>', to: '/y' }] },
      "rewrite.rules[0].match: bad part name '1a' (letters, digits and _, not starting with a digit, at most 32)",
    ],
    [{ rules: [{ match: '/<a>/<a>', to: '/y' }] }, 'rewrite.rules[0].match: part <a> appears twice'],
    [
      { rules: [{ match: '/<a:word>', to: '/y' }] },
      "rewrite.rules[0].match: part <a> has an unknown class 'word' (seg, name, path, ism, or alternatives a|b)",
    ],
    [{ rules: [{ match: '/<a:x||y>', to: '/y' }] }, 'rewrite.rules[0].match: part <a> has an empty alternative'],
    [
      {
        rules: [
          {
            match: `/${'<a0>-<a1>-<a2>-<a3>-<a4>-<a5>-<a6>-<a7>-<a8>-<a9>-<b0>-<b1>-<b2>-<b3>-<b4>-<b5>-<b6>'}`,
            to: '/y',
          },
        ],
      },
      'rewrite.rules[0].match: more than 16 parts',
    ],
    [{ rules: [{ match: `/${'a'.repeat(1024)}`, to: '/y' }] }, 'rewrite.rules[0].match: longer than 1024 characters'],
    [{ rules: [{ match: '/<a>', to: '/<b>' }] }, 'rewrite.rules[0].to: <b> is not a part of the pattern /<a>'],
    [
      { rules: [{ match: '/my%20film/<a>', to: '/x' }] },
      "rewrite.rules[0].match: '%' at character 3 (paths are matched and written decoded: write the character itself)",
    ],
    [
      { rules: [{ match: '/<a>', to: '/x?y=1' }] },
      'rewrite.rules[0].to: \'?\' at character 2 (the query is not part of the path: use "query")',
    ],
    [{ rules: [{ match: '/<a>', to: '/x\\y' }] }, 'rewrite.rules[0].to: a backslash at character 2'],
    [{ rules: [{ match: '/<a>', to: '/x\ty' }] }, 'rewrite.rules[0].to: a control character at character 2'],
    [
      { rules: [{ match: '/<a>', to: 'y' }] },
      "rewrite.rules[0].to: must start with '/' or with the part the pattern starts with",
    ],
    [
      { rules: [{ match: '/x/<a>', to: '<a>' }] },
      "rewrite.rules[0].to: must start with '/' or with the part the pattern starts with",
    ],
    [{ rules: [{ match: '/<a>', to: '/y', query: 'a=1' }] }, 'rewrite.rules[0].query: must be an array of query items'],
    [{ rules: [{ match: '/<a>', to: '/y', query: [1] }] }, 'rewrite.rules[0].query[0]: must be a string'],
    [{ rules: [{ match: '/<a>', to: '/y', query: [''] }] }, 'rewrite.rules[0].query[0]: empty'],
    [
      { rules: [{ match: '/<a>', to: '/y', query: ['nomap[a]'] }] },
      'rewrite.rules[0].query[0]: no map "nomap" in rewrite.maps',
    ],
    [
      { rules: [{ match: '/<a>', to: '/y', query: ['filter[b]'] }] },
      'rewrite.rules[0].query[0]: <b> is not a part of the pattern /<a>',
    ],
    [
      { rules: [{ match: '/<a>', to: '/y', query: ['filter[a]!'] }] },
      'rewrite.rules[0].query[0]: after "filter[a]" comes nothing, "?" (unknown key adds nothing) or "|<fallback>"',
    ],
    [
      { rules: [{ match: '/<a>', to: '/y', query: ['filter[a]|a b'] }] },
      'rewrite.rules[0].query[0]: the fallback has a space at character 1 (write %20)',
    ],
    [
      { rules: [{ match: '/<a>', to: '/y', query: ['a=<b>'] }] },
      'rewrite.rules[0].query[0]: <b> is not a part of the pattern /<a>',
    ],
    [
      { rules: [{ match: '/<a>', to: '/y', query: ['a=1&'] }] },
      "rewrite.rules[0].query[0]: an empty parameter at character 3 (a leading, trailing or doubled '&'; inside a filter write && as %26%26)",
    ],
    [
      { rules: [{ match: '/<a>', to: '/y', query: ['a=#'] }] },
      "rewrite.rules[0].query[0]: '#' at character 2 (write %23)",
    ],
    [{ rules: Array(65).fill({ match: '/<a>', to: '/y' }) }, 'rewrite.rules: more than 64 rules'],
    [{ maps: [] }, 'rewrite.maps: must be an object of maps'],
    [{ maps: { 'a-b': {} } }, 'rewrite.maps.a-b: a map name is letters, digits and _ (not starting with a digit)'],
    [{ maps: { filter: ['a'] } }, 'rewrite.maps.filter: must be an object of "key": "query fragment"'],
    [
      { maps: { filter: { hd: 1 } } },
      'rewrite.maps.filter.hd: must be a string (a query fragment such as "hls_fmp4=true")',
    ],
    [{ maps: { filter: { '': 'a=1' } } }, 'rewrite.maps.filter.: a key is 1 to 256 characters'],
    [
      { maps: { filter: { 'h d': 'a=1' } } },
      'rewrite.maps.filter.h d: a key holds no whitespace or control characters',
    ],
    [{ maps: { filter: { hd: 'filter=a b' } } }, 'rewrite.maps.filter.hd: a space at character 8 (write %20)'],
    [
      { maps: { filter: { hd: 'filter=a&&b' } } },
      "rewrite.maps.filter.hd: an empty parameter at character 8 (a leading, trailing or doubled '&'; inside a filter write && as %26%26)",
    ],
    [
      { maps: { filter: { hd: 'filter=100%' } } },
      "rewrite.maps.filter.hd: '%' at character 10 not followed by two hex digits (write %25)",
    ],
    [
      { maps: { filter: { hd: 'filter=é' } } },
      'rewrite.maps.filter.hd: character U+E9 at character 7 (query text is percent-encoded ASCII)',
    ],
    [{ maps: { filter: { hd: 'x'.repeat(4097) } } }, 'rewrite.maps.filter.hd: longer than 4096 characters'],
    [{ maps: { filters: { hd: 'filter=true' } } }, 'rewrite.maps.filters: no rule looks this map up'],
    [
      { maps: { filter: { 'hd-only': 'filter=true' } } },
      "rewrite.maps.filter.hd-only: no rule can look this key up: the parts that read map filter (<bundle> (name: no '-', '@' or '/'), <dir> (name: no '-', '@' or '/')) cannot hold it",
    ],
    [
      { maps: { timeline: { 'a@b': 't=1' } } },
      "rewrite.maps.timeline.a@b: no rule can look this key up: the parts that read map timeline (<prefix> (name: no '-', '@' or '/')) cannot hold it",
    ],
    [
      { rules: [{ match: '/<k:a|b>', to: '/y', query: ['m[k]'] }], maps: { m: { c: 'c=1' } } },
      'rewrite.maps.m.c: no rule can look this key up: the parts that read map m (<k> (a|b)) cannot hold it',
    ],
    [
      { maps: { alter: { keyframes: 'hls_fmp4=true' } } },
      'rewrite.maps.alter.keyframes: the origin writes this directory itself; the default rules would take its own URLs for aliases (name the format otherwise)',
    ],
    [
      { rules: ['default'], maps: { alter: { hls: 'hls_fmp4=true' } } },
      'rewrite.maps.alter.hls: the origin writes this directory itself; the default rules would take its own URLs for aliases (name the format otherwise)',
    ],
  ])('%j → %s', (rewrite, message) => {
    expect(engine.configure(rewrite)).toBe(message);
  });

  test('a map over 65536 entries', () => {
    const big = Object.fromEntries(Array.from({ length: 65537 }, (_, i) => [`k${i}`, 'a=1']));
    expect(engine.configure({ maps: { filter: big } })).toBe('rewrite.maps.filter: more than 65536 entries');
  });

  test('a large map compiles, and lookups stay fast (Map index)', () => {
    const big = Object.fromEntries(Array.from({ length: 20000 }, (_, i) => [`k${i}`, `filter=systemBitrate<${i}`]));
    expect(engine.configure({ maps: { filter: big, alter: { f: 'hls_fmp4=true' } } })).toBe('');
    expect(engine.rewrite('/p.ism/f/k19999.m3u8')?.query).toBe(
      'hls_fmp4=true&filter=systemBitrate%3C19999&suppress_query_parameters',
    );
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
