// Path and query normalisation through build/edge.wasm and the real host, with no location
// configured (it applies to every request): the hostile shapes refused, the canonical spelling
// forwarded, and properties against the origin's own readers (origin/server/routes.ts
// decodePath, origin/options/query.ts parseQuery): whatever the edge forwards, the origin
// reads as the path the edge decided on; whatever the origin would refuse, the edge refuses.

import fc from 'fast-check';
import type { ProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';
import { parseQuery } from '../../../origin/options/query';
import { decodePath } from '../../../origin/server/routes';
import { closeAll, INFO, loadEdge, send } from './plugin-helpers';

let plugin: ProxyWasmPlugin;
beforeAll(async () => {
  plugin = (await loadEdge('{}')).plugin;
});
afterAll(closeAll);

describe('refused shapes', () => {
  test.each([
    ['/a/./b', 'dot segment (. or ..) in the path'],
    ['/a/../b', 'dot segment (. or ..) in the path'],
    ['/..', 'dot segment (. or ..) in the path'],
    ['/a/..', 'dot segment (. or ..) in the path'],
    ['//a', 'empty segment (//) in the path'],
    ['/a//b', 'empty segment (//) in the path'],
    ['a/b', 'the path must start with /'],
    ['*', 'the path must start with /'],
    ['', 'the path must start with /'],
    ['/a%2fb', 'encoded slash (%2F) in the path'],
    ['/a%2F..%2Fb', 'encoded slash (%2F) in the path'],
    ['/a%5cb', 'encoded backslash (%5C) in the path'],
    ['/a\\b', 'backslash in the path'],
    ['/a%00b', 'encoded NUL (%00) in the path'],
    ['/a%2eb', 'encoded dot (%2E) in the path'],
    ['/a/%2E%2E/b', 'encoded dot (%2E) in the path'],
    ['/a%252e%252e', 'encoded percent sign (%25) in the path: double encoding'],
    ['/a%', 'malformed percent-encoding in the path'],
    ['/a%4', 'malformed percent-encoding in the path'],
    ['/a%zz', 'malformed percent-encoding in the path'],
    ['/a%0d%0aSet-Cookie:x', 'encoded control character in the path'],
    ['/a%7f', 'encoded control character in the path'],
    ['/a b', 'space, control or non-ASCII character in the path (percent-encode it)'],
    ['/a\tb', 'space, control or non-ASCII character in the path (percent-encode it)'],
    ['/aé', 'space, control or non-ASCII character in the path (percent-encode it)'],
    ['/a#b', "'#' in the path"],
    // Raw bytes a lenient UTF-8 decoder would hide or fold (the plugin reads :path as bytes):
    ['/public\u00c3', 'space, control or non-ASCII character in the path (percent-encode it)'], // lead byte at the end
    ['/a/\u00c0\u00ae\u00c0\u00ae/b', 'space, control or non-ASCII character in the path (percent-encode it)'], // overlong ".."
    ['/\u00c1\u00b0ublic/x', 'space, control or non-ASCII character in the path (percent-encode it)'], // overlong "p"
    ['/a%ff', 'percent-encoded bytes in the path are not UTF-8'],
    ['/a%c0%ae', 'percent-encoded bytes in the path are not UTF-8'],
    ['/a%ed%a0%80', 'percent-encoded bytes in the path are not UTF-8'],
  ])('%j: 400 bad-path', async (target, message) => {
    const r = await send(plugin, target);
    expect({ status: r.status, code: r.headers['x-origin-error'], details: r.details, body: r.body }).toEqual({
      status: 400,
      code: 'bad-path',
      details: 'edge_bad_path',
      body: `${message}\n`,
    });
  });

  test("a path over 4096 characters: 414 (the origin's bound and status)", async () => {
    expect((await send(plugin, `/${'a'.repeat(4095)}`)).status).toBe(0);
    const r = await send(plugin, `/${'a'.repeat(4096)}`);
    expect({ status: r.status, code: r.headers['x-origin-error'], details: r.details }).toEqual({
      status: 414,
      code: 'url-too-long',
      details: 'edge_url_too_long',
    });
    expect((await send(plugin, `/${'a'.repeat(1 << 20)}`)).status).toBe(414);
  });

  test.each([
    [`?${'q'.repeat(16385)}`, 'query string longer than 16384 characters'],
    ['?a=%zz', 'malformed percent-encoding, or bytes that are not UTF-8, in the query'],
    ['?a=%ff', 'malformed percent-encoding, or bytes that are not UTF-8, in the query'],
    ['?%=1', 'malformed percent-encoding, or bytes that are not UTF-8, in the query'],
    ['?a b', 'space, control or non-ASCII character in the query (percent-encode it)'],
    ['?a=é', 'space, control or non-ASCII character in the query (percent-encode it)'],
    ['?a#b', "'#' in the query"],
  ])('query %#: 400 bad-query', async (query, message) => {
    const r = await send(plugin, `/a.ism/.mpd${query}`);
    expect({ status: r.status, code: r.headers['x-origin-error'], body: r.body }).toEqual({
      status: 400,
      code: 'bad-query',
      body: `${message}\n`,
    });
  });

  test('no :path at all: 400', async () => {
    const s = plugin.newStream(INFO);
    const v = await s.requestHeaders(
      [
        [':authority', 'edge.test'],
        [':method', 'GET'],
        [':scheme', 'http'],
      ],
      true,
    );
    s.end();
    expect(v.kind === 'respond' && v.response.headers[0]).toEqual([':status', '400']);
  });

  test('HEAD gets the refusal without a body (Envoy sends headers only)', async () => {
    const r = await send(plugin, '/a/../b', [], 'HEAD');
    expect(r.status).toBe(400);
    expect(r.body).toBe('');
  });
});

describe('the canonical spelling goes upstream', () => {
  test.each([
    ['/', '/'],
    ['/a/', '/a/'],
    [
      '/vod/tears.ism/QualityLevels(400000)/Fragments(video_eng=0)',
      '/vod/tears.ism/QualityLevels(400000)/Fragments(video_eng=0)',
    ],
    ['/a%41%7e%2d', '/aA~-'],
    ['/a%c3%a9', '/a%C3%A9'],
    ['/a"b|c^d`e{f}g[h]', '/a%22b%7Cc%5Ed%60e%7Bf%7Dg%5Bh%5D'],
    ["/sub-delims!$&'()*+,;=:@", "/sub-delims!$&'()*+,;=:@"],
    ['/a.ism/.mpd?', '/a.ism/.mpd'],
    ['/a.ism/.mpd?x=%zZ1'.replace('%zZ1', '%2A1&&y=+'), '/a.ism/.mpd?x=%2A1&&y=+'],
  ])('%j -> %j', async (target, forwarded) => {
    expect(await send(plugin, target)).toMatchObject({ status: 0, forwarded });
  });
});

describe('properties', () => {
  // Targets from an alphabet rich in the characters that matter.
  const piece = fc.constantFrom(
    '/',
    '/',
    'a',
    'b.ism',
    '.',
    '..',
    '%',
    '%2e',
    '%2E',
    '%2f',
    '%5c',
    '%00',
    '%25',
    '%41',
    '%c3%a9',
    '%ff',
    '%e2%82',
    '\\',
    '?',
    '&',
    '=',
    '#',
    ' ',
    'é',
    '~',
    '"',
    '(',
    ')',
    '%0a',
    '+',
    'filter',
    '%7e',
    ':',
    '@',
  );
  const target = fc.array(piece, { maxLength: 16 }).map((p) => `/${p.join('')}`);
  const decided = new Map<string, string>();

  test('whatever the edge forwards, the origin reads without complaint, and it is a fixpoint', async () => {
    await fc.assert(
      fc.asyncProperty(target, async (t) => {
        const r = await send(plugin, t);
        if (r.status !== 0) return;
        const q = r.forwarded.indexOf('?');
        const path = q < 0 ? r.forwarded : r.forwarded.slice(0, q);
        expect(() => decodePath(path)).not.toThrow();
        expect(() => parseQuery(q < 0 ? '' : r.forwarded.slice(q + 1))).not.toThrow();
        expect((await send(plugin, r.forwarded)).forwarded).toBe(r.forwarded);
        decided.set(t, r.forwarded);
      }),
      { numRuns: 3000, seed: 5 },
    );
    expect(decided.size).toBeGreaterThan(150); // the generator reaches accepted targets too
  });

  test('whatever the origin refuses, the edge refuses', async () => {
    await fc.assert(
      fc.asyncProperty(target, async (t) => {
        const q = t.indexOf('?');
        let originRefuses = false;
        try {
          decodePath(q < 0 ? t : t.slice(0, q));
          parseQuery(q < 0 ? '' : t.slice(q + 1));
        } catch {
          originRefuses = true;
        }
        if (originRefuses) expect((await send(plugin, t)).status).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: 3000, seed: 6 },
    );
  });

  test('every spelling of a path reaches the origin as one URL', async () => {
    const segment = fc
      .string({
        unit: fc.constantFrom('a', 'Z', '0', '-', '_', '~', '(', ')', '=', 'é', ' ', '"', '!', '😀'),
        minLength: 1,
        maxLength: 6,
      })
      .filter((s) => s !== '.' && s !== '..');
    const spell = (s: string, mask: number): string =>
      Array.from(Buffer.from(s, 'utf8'))
        .map((b, i) => {
          const c = String.fromCharCode(b);
          const mustEncode = b >= 0x80 || !/[A-Za-z0-9\-_~()=!]/.test(c);
          return mustEncode || (mask >> (i % 30)) & 1 ? `%${b.toString(16).padStart(2, '0')}` : c;
        })
        .join('');
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.integer(),
        fc.integer(),
        async (segments, m1, m2) => {
          const a = await send(plugin, `/${segments.map((s) => spell(s, m1)).join('/')}`);
          const b = await send(plugin, `/${segments.map((s) => spell(s, m2)).join('/')}`);
          expect(a.status).toBe(0);
          expect(b.forwarded).toBe(a.forwarded);
          expect(decodePath(a.forwarded)).toEqual(segments);
        },
      ),
      { numRuns: 500, seed: 8 },
    );
  });
});
