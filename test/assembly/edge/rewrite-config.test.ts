// The rewrite engine (assembly/edge/rewrite*.ts) compiled to WebAssembly with the edge target's
// flags, configured by rules given as data, and the configuration errors with their member paths.

import { MAPS, engine, configured } from './rewrite-engine-support';

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
