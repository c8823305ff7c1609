// validate_filter through build/edge.wasm and the real host, checked against the origin's own
// filter engine (host-glue/filter/filter-engine.ts over build/filter.wasm): for any expression, either
// the edge answers 400 with exactly the origin's error text, or it forwards the origin's
// canonical form, encoded as encodeURIComponent does. Plus the query handling around it.

import fc from 'fast-check';
import { FilterSyntaxError, filterEngine } from '../../../host-glue/filter/filter-engine';
import type { ProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';
import { closeAll, loadEdge, send } from './plugin-helpers';

let plugin: ProxyWasmPlugin;
beforeAll(async () => {
  plugin = (await loadEdge({ locations: [{ prefix: '/', validate_filter: true }, { prefix: '/raw/' }] })).plugin;
});
afterAll(closeAll);

const P = '/vod/tears.ism/.mpd';

/** What the origin makes of a filter: its error text, or the query part the edge should forward. */
function origin(expression: string): { error: string } | { part: string } {
  try {
    return { part: `filter=${encodeURIComponent(filterEngine().canonical(expression))}` };
  } catch (e) {
    if (e instanceof FilterSyntaxError) return { error: e.message };
    throw e;
  }
}

describe('an invalid filter is answered at the edge', () => {
  test.each([
    ['type="audio"', 'filter: unexpected "=" at 4: did you mean "=="?'],
    ['type==audio', 'filter: unknown variable "audio" at 6: did you mean "AudioTag"?'],
    [
      'systemBitrate<"100"',
      'filter: cannot compare a string with a number at 13: systemBitrate is a number: write the value without quotes',
    ],
    ['(type=="video"', 'filter: unexpected end of filter at 14: expected ")" to close "(" at 0'],
    [
      'type=="a"+',
      'filter: unexpected "+" at 9: "+" is not decoded to a space: write a space as %20 in a URL, or leave it out',
    ],
  ])('%s: 400 with the message and its position', async (expression, message) => {
    const r = await send(plugin, `${P}?filter=${encodeURIComponent(expression)}`);
    expect({ status: r.status, details: r.details, code: r.headers['x-origin-error'], body: r.body }).toEqual({
      status: 400,
      details: 'edge_bad_filter',
      code: 'bad-filter',
      body: `${message}\n`,
    });
    expect(origin(expression)).toEqual({ error: message });
  });

  test('raw or encoded, the same answer; a second bad filter is refused too', async () => {
    expect((await send(plugin, `${P}?filter=type="audio"`)).body).toBe(
      'filter: unexpected "=" at 4: did you mean "=="?\n',
    );
    expect((await send(plugin, `${P}?filter=type%3D%3D%22audio%22&filter=type=`)).status).toBe(400);
  });

  test('a parameter name spelled with escapes is still "filter"', async () => {
    expect((await send(plugin, `${P}?%66ilter=type=`)).status).toBe(400);
  });

  test('not in a location without validate_filter', async () => {
    expect(await send(plugin, '/raw/tears.ism/.mpd?filter=type=')).toMatchObject({
      status: 0,
      forwarded: '/raw/tears.ism/.mpd?filter=type=',
    });
  });
});

describe('a valid filter is forwarded in canonical form', () => {
  test.each([
    ['(type=="audio")', 'type%3D%3D%22audio%22'],
    [
      'type == "audio" || (systemBitrate < 800000 && type == "video")',
      'type%3D%3D%22audio%22%7C%7C(systemBitrate%3C800000%26%26type%3D%3D%22video%22)',
    ],
    ['SAMPLERATE>=44100', 'SamplingRate%3E%3D44100'],
    ['!(FourCC!="AACL")', '!(FourCC!%3D%22AACL%22)'],
  ])('%s', async (expression, canonical) => {
    const raw = await send(plugin, `${P}?filter=${encodeURIComponent(expression)}`);
    expect(raw.forwarded).toBe(`${P}?filter=${canonical}`);
    expect(origin(expression)).toEqual({ part: `filter=${canonical}` });
  });

  test('equivalent spellings become one URL; the other parameters keep their order and bytes', async () => {
    const a = await send(plugin, `${P}?t=0-10&filter=(type%3D%3D"video")&hls_fmp4`);
    const b = await send(plugin, `${P}?t=0-10&filter=type%20==%20%22video%22&hls_fmp4`);
    expect(a.forwarded).toBe(`${P}?t=0-10&filter=type%3D%3D%22video%22&hls_fmp4`);
    expect(b.forwarded).toBe(a.forwarded);
  });

  test('an empty filter and a bare "filter" mean no filter, as at the origin', async () => {
    expect((await send(plugin, `${P}?filter=`)).forwarded).toBe(`${P}?filter=`);
    expect((await send(plugin, `${P}?filter&t=1`)).forwarded).toBe(`${P}?filter&t=1`);
  });
});

describe('the edge and the origin agree on every expression (fast-check)', () => {
  const token = fc.constantFrom(
    'type',
    'FourCC',
    'systemBitrate',
    'trackName',
    'SampleRate',
    'count',
    'foo',
    'true',
    'AVC_PROFILE_HIGH',
    '==',
    '!=',
    '<',
    '<=',
    '>',
    '>=',
    '&&',
    '||',
    '!',
    '(',
    ')',
    '=',
    '&',
    '|',
    '/',
    '+',
    ' ',
    '"audio"',
    '"a\\"b"',
    '"é😀"',
    '"unterminated',
    '0',
    '100000',
    '30000/1001',
    '9223372036854775808',
    "'x'",
    '\\',
    '%',
  );
  const expression = fc
    .oneof(
      fc.array(token, { minLength: 1, maxLength: 14 }).map((parts) => parts.join('')),
      fc.string({ unit: 'grapheme', maxLength: 30 }),
    )
    .filter((s) => s !== '');

  test('2 000 expressions', async () => {
    await fc.assert(
      fc.asyncProperty(expression, async (e) => {
        const r = await send(plugin, `${P}?filter=${encodeURIComponent(e)}`);
        const o = origin(e);
        if ('error' in o) {
          expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: `${o.error}\n` });
        } else {
          expect(r.forwarded).toBe(`${P}?${o.part}`);
        }
      }),
      { numRuns: 2000, seed: 11 },
    );
  });

  test('deep and long expressions: the limits and the canonical form past them', async () => {
    for (const e of [
      '('.repeat(64) + 'type=="audio"' + ')'.repeat(64),
      '('.repeat(65) + 'true' + ')'.repeat(65),
      '!'.repeat(70) + 'true',
      `type=="${'x'.repeat(4090)}"`,
      Array.from({ length: 40 }, (_, i) => `(trackID==${i}&&type=="audio")`).join('||'),
    ]) {
      const r = await send(plugin, `${P}?filter=${encodeURIComponent(e)}`);
      const o = origin(e);
      if ('error' in o) expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: `${o.error}\n` });
      else expect(r.forwarded).toBe(`${P}?${o.part}`);
    }
  });
});
