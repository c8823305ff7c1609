// The AssemblyScript JSON reader (assembly/json/) the plugin reads its configuration with:
// valid documents, errors with byte positions, depth and size limits, the tree API, and
// differential properties against JSON.parse (which it must never contradict, except where it
// is deliberately stricter: duplicate names, invalid UTF-8, numbers beyond f64, limits).

import fc from 'fast-check';
import { newProbe, Probe } from './probe';

let probe: Probe;

beforeAll(() => {
  probe = newProbe().probe;
});

function canonical(input: string | Uint8Array): unknown {
  const result = probe.jsonParse(input);
  if (!result.ok) throw new Error(`rejected: ${result.text} at ${result.position}`);
  return JSON.parse(result.text);
}

describe('valid documents', () => {
  test.each([
    ['{}'],
    ['[]'],
    [' \t\r\n{ "a" : [ 1 , 2 , { } , [ ] ] } \n'],
    ['"just a string"'],
    ['0'],
    ['-0'],
    ['123456789012345678'],
    ['[1.5, -1.25e-7, 1E3, 2e+2, 0.1, 5e-324, 1.7976931348623157e308]'],
    ['[true, false, null]'],
    ['"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u0000 \\ud83d\\ude00"'],
    ['"lone \\ud800 and \\udc00 surrogates"'],
    ['"raw UTF-8: é 日本 😀"'],
    ['{"aliases": {"/old": "/new"}, "token_secret": "s3cr3t", "basic_realm": "edge"}'],
  ])('%j', (input) => {
    expect(canonical(input)).toEqual(JSON.parse(input));
  });

  test('-0 keeps its sign, integers print without a fraction', () => {
    expect(probe.jsonParse('[-0, 1.0, 100, 1e2, 2.5]').text).toBe('[-0,1,100,100,2.5]');
  });

  test('output escapes like JSON.stringify', () => {
    const input = JSON.stringify({ s: 'q" b\\ \u0001 \u001f \ud800 é 😀 \n' });
    expect(probe.jsonParse(input).text).toBe(input);
  });
});

describe('errors name the byte where parsing failed', () => {
  test.each([
    ['', 0, 'unexpected end of input (expected a value)'],
    ['   ', 3, 'unexpected end of input (expected a value)'],
    ['{', 1, 'expected a member name in double quotes'],
    ['{"a":1,}', 7, "unexpected character '}' (expected a member name in double quotes)"],
    ['{"a" 1}', 5, "expected ':' after a member name"],
    ['{"a":1 "b":2}', 7, "expected ',' or '}'"],
    ['[1,2', 4, "unexpected end of input (expected ',' or ']')"],
    ['[1,]', 3, "unexpected character ']' (expected a value)"],
    ['tru', 3, "expected 'true'"],
    ['nul!', 3, "unexpected character '!' (expected 'null')"],
    ['01', 1, "unexpected character '1' after the document"],
    ['[1] x', 4, "unexpected character 'x' after the document"],
    ['1.', 2, "expected a digit after '.'"],
    ['-', 1, 'expected a digit'],
    ['-a', 1, "unexpected character 'a' (expected a digit)"],
    ['1e', 2, 'expected a digit in the exponent'],
    ['.5', 0, "unexpected character '.' (expected a value)"],
    ['+1', 0, "unexpected character '+'"],
    ['NaN', 0, "unexpected character 'N'"],
    ["'a'", 0, "unexpected character '''"],
    ['"abc', 0, 'unterminated string'],
    ['"a\u0001"', 2, 'control character byte 0x01 in a string (must be escaped)'],
    ['"tab\there"', 4, 'control character'],
    ['"\\q"', 1, 'invalid escape \\q in a string'],
    ['"\\u12G4"', 1, 'invalid \\u escape: expected 4 hex digits'],
    ['"\\', 1, 'unterminated string'],
    ['{"a":1,"a":2}', 7, 'duplicate member name "a"'],
    ['[1e400]', 1, 'number out of range'],
    ['-1e309', 0, 'number out of range'],
  ])('%j -> byte %d', (input, position, message) => {
    const result = probe.jsonParse(input);
    expect(result.ok).toBe(false);
    expect(result.position).toBe(position);
    expect(result.text).toContain(message);
  });

  test.each([
    ['byte-order mark', [0xef, 0xbb, 0xbf, 0x7b, 0x7d], 0, 'byte-order mark'],
    ['invalid byte', [0x22, 0xff, 0x22], 1, 'invalid UTF-8'],
    ['overlong "/"', [0x22, 0xc0, 0xaf, 0x22], 1, 'invalid UTF-8'],
    ['overlong 3-byte', [0x22, 0xe0, 0x80, 0xaf, 0x22], 1, 'invalid UTF-8'],
    ['encoded surrogate', [0x22, 0x61, 0xed, 0xa0, 0x80, 0x22], 2, 'invalid UTF-8'],
    ['above U+10FFFF', [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], 1, 'invalid UTF-8'],
    ['truncated sequence', [0x22, 0xe6, 0x97, 0x22], 1, 'invalid UTF-8'],
    ['NUL outside a string', [0x7b, 0x00, 0x7d], 1, 'byte 0x00'],
  ])('%s', (_name, bytes, position, message) => {
    const result = probe.jsonParse(Uint8Array.from(bytes));
    expect(result).toMatchObject({ ok: false, position });
    expect(result.text).toContain(message);
  });
});

describe('limits', () => {
  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

  test('nesting: 32 levels by default, the 33rd bracket is refused where it stands', () => {
    expect(probe.jsonParse(nested(32)).ok).toBe(true);
    expect(probe.jsonParse(nested(33))).toEqual({ ok: false, text: 'nesting deeper than 32 levels', position: 32 });
    expect(probe.jsonParse('{"a":{"b":[1]}}', 2)).toEqual({
      ok: false,
      text: 'nesting deeper than 2 levels',
      position: 10,
    });
    expect(probe.jsonParse('{"a":{"b":1}}', 2).ok).toBe(true);
  });

  test('a million open brackets are an error, not a stack overflow, whatever depth is asked for', () => {
    expect(probe.jsonParse('['.repeat(1_000_000), 32, 2 << 20)).toMatchObject({ ok: false, position: 32 });
    expect(probe.jsonParse('['.repeat(1_000_000), 1_000_000, 2 << 20)).toEqual({
      ok: false,
      text: 'nesting deeper than 256 levels',
      position: 256,
    });
    expect(probe.jsonParse(nested(256), 1_000_000).ok).toBe(true);
  });

  test('size: the document may not exceed maxBytes', () => {
    expect(probe.jsonParse('"123456"', 32, 8).ok).toBe(true);
    expect(probe.jsonParse('"1234567"', 32, 8)).toEqual({
      ok: false,
      text: 'document larger than 8 bytes',
      position: 8,
    });
  });

  test('a large configuration (5,000 members, 300 KB) parses and stays queryable', () => {
    const big = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`old-${i}`, `/new/${'x'.repeat(40)}/${i}`]));
    const text = JSON.stringify({ aliases: big });
    expect(canonical(text)).toEqual({ aliases: big });
    expect(probe.jsonQuery(text, 'aliases')).toMatchObject({ kind: 5, length: 5000 });
    expect(probe.jsonQuery(text, 'aliases/old-4999')).toMatchObject({ kind: 3, string: big['old-4999'] });
  });
});

describe('tree API', () => {
  const doc = JSON.stringify({
    port: 8080,
    ratio: 0.5,
    name: 'edge',
    on: true,
    list: [1, 'two', null],
    nested: { k: { deep: -3 } },
    big: 1e300,
    huge: 9007199254740992,
    safe: -9007199254740991,
  });

  test.each([
    [
      '',
      {
        kind: 5,
        length: 9,
        keys: ['port', 'ratio', 'name', 'on', 'list', 'nested', 'big', 'huge', 'safe'],
        string: null,
      },
    ],
    ['port', { kind: 2, number: 8080, integer: 8080, string: null, bool: false, length: 0, keys: [] }],
    ['ratio', { kind: 2, number: 0.5, integer: -1 }],
    ['name', { kind: 3, string: 'edge', number: -1, integer: -1 }],
    ['on', { kind: 1, bool: true, number: -1 }],
    ['list', { kind: 4, length: 3, keys: [] }],
    ['list/1', { kind: 3, string: 'two' }],
    ['list/2', { kind: 0, string: null, length: 0 }],
    ['nested/k/deep', { kind: 2, integer: -3 }],
    ['big', { kind: 2, number: 1e300, integer: -1 }],
    ['huge', { kind: 2, integer: -1 }],
    ['safe', { kind: 2, integer: -9007199254740991 }],
  ])('%j', (queryPath, expected) => {
    expect(probe.jsonQuery(doc, queryPath)).toMatchObject(expected);
  });

  test('missing members and positions answer null, never trap', () => {
    for (const queryPath of ['missing', 'list/3', 'list/-1', 'port/x', 'name/0', 'nested/k/deep/more']) {
      expect(probe.jsonQuery(doc, queryPath)).toBeNull();
    }
  });

  test('objects with many members (indexed lookup) find every member', () => {
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])));
    for (let i = 0; i < 50; i += 7) expect(probe.jsonQuery(many, `k${i}`)).toMatchObject({ integer: i });
    expect(probe.jsonParse(many.replace('"k49"', '"k3"')).text).toBe('duplicate member name "k3"');
  });
});

describe('properties', () => {
  const reasonsToBeStricter = /duplicate member name|number out of range|nesting deeper|invalid UTF-8|byte-order mark/;

  test('everything JSON.stringify writes is accepted and reads back equal', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.boolean(), (value, pretty) => {
        const text = pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
        expect(canonical(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  test('numbers read exactly as JSON.parse reads them (correct rounding)', () => {
    const digits = fc.string({ unit: fc.constantFrom(...'0123456789'.split('')), minLength: 1, maxLength: 40 });
    const decimalText = fc
      .tuple(fc.boolean(), digits, fc.option(digits), fc.integer({ min: -400, max: 400 }))
      .map(
        ([negative, int, frac, exp]) =>
          `${negative ? '-' : ''}${int.replace(/^0+(?=\d)/, '')}${frac === null ? '' : `.${frac}`}e${exp}`,
      );
    const number = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
      decimalText,
    );
    fc.assert(
      fc.property(number, (text) => {
        const expected: number = JSON.parse(text);
        const result = probe.jsonParse(text);
        if (!Number.isFinite(expected)) {
          expect(result).toMatchObject({ ok: false, text: 'number out of range' });
        } else {
          expect(Object.is(JSON.parse(result.text), expected)).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });

  test('halfway points between doubles round to even; one more digit decides', () => {
    // The exact decimal expansion of the midpoint between x and the next double up.
    const midpoint = (x: number): string => {
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, x);
      const bits = view.getBigUint64(0);
      const biased = Number(bits >> 52n);
      const m = biased === 0 ? bits & ((1n << 52n) - 1n) : (bits & ((1n << 52n) - 1n)) | (1n << 52n);
      const k = biased === 0 ? -1074 : biased - 1075;
      const h = 2n * m + 1n; // midpoint = h * 2^(k-1)
      return k - 1 >= 0 ? (h << BigInt(k - 1)).toString() : `${h * 5n ** BigInt(1 - k)}e-${1 - k}`;
    };
    fc.assert(
      fc.property(
        fc.double({ min: 0, noNaN: true, noDefaultInfinity: true, maxExcluded: true, max: Number.MAX_VALUE }),
        fc.constantFrom('', '1', '0'),
        (x, extra) => {
          let text = midpoint(x);
          if (extra !== '')
            text = text.includes('e')
              ? text.replace('e', `${extra}e`).replace(/e-(\d+)$/, (_m, n: string) => `e-${Number(n) + 1}`)
              : `${text}.${extra}`;
          const expected: number = JSON.parse(text);
          const result = probe.jsonParse(text, 32, 1 << 20);
          expect(result.ok).toBe(true);
          expect(Object.is(JSON.parse(result.text), expected)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('arbitrary text: never traps, never contradicts JSON.parse', () => {
    const jsonish = fc.string({
      unit: fc.constantFrom(...'{}[]:,"\\ \t\n0123456789.eE+-truefalsnul/ubé😀\u0001'.split('')),
      maxLength: 40,
    });
    fc.assert(
      fc.property(fc.oneof(jsonish, fc.string({ maxLength: 30 })), (generated) => {
        // The parser reads bytes. Splitting '😀' into code units makes lone surrogates, which
        // UTF-8 cannot carry (they are sent as U+FFFD): JSON.parse judges the text those bytes are.
        const text = Buffer.from(generated, 'utf8').toString('utf8');
        let expected: { ok: true; value: unknown } | { ok: false };
        try {
          expected = { ok: true, value: JSON.parse(text) };
        } catch {
          expected = { ok: false };
        }
        const result = probe.jsonParse(text);
        if (result.ok) {
          expect(expected).toEqual({ ok: true, value: JSON.parse(result.text) });
        } else {
          expect(result.position).toBeGreaterThanOrEqual(0);
          expect(result.position).toBeLessThanOrEqual(Buffer.byteLength(text));
          if (expected.ok) expect(result.text).toMatch(reasonsToBeStricter);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('random bytes never trap', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const result = probe.jsonParse(bytes);
        if (!result.ok) expect(result.position).toBeLessThanOrEqual(bytes.length);
      }),
      { numRuns: 1000 },
    );
  });
});
