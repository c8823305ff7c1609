// The header-pair wire format (docs/specs.md ABI §3.1) in the
// AssemblyScript layer (assembly/proxy/pairs.ts), against the shared annotated fixture
// fixtures/abi/header-pairs.txt, plus the limits the fixture cannot hold.

import fc from 'fast-check';
import { newProbe, Probe } from './probe';
import { readHeaderPairFixture } from './header-pair-fixture';
import { decodePairs, encodePairs } from './stub-host';

const cases = readHeaderPairFixture();
let probe: Probe;

beforeAll(() => {
  probe = newProbe().probe;
});

test('the fixture has the cases the issue asks for', () => {
  const names = cases.map((c) => c.name);
  expect(new Set(names).size).toBe(names.length);
  for (const needed of [
    'empty-count-zero',
    'one-pair',
    'request-pseudo-headers',
    'empty-value',
    'utf8-value',
    'duplicate-names',
    'truncated-count',
    'count-too-large-for-buffer',
    'missing-nul-after-key',
    'missing-nul-after-value',
    'key-len-overflows',
    'trailing-garbage',
  ]) {
    expect(names).toContain(needed);
  }
  expect(cases.filter((c) => c.expected === 'malformed').length).toBeGreaterThanOrEqual(10);
});

describe.each(cases.map((c) => [c.name, c] as const))('fixture case %s', (_name, c) => {
  test('AssemblyScript parser', () => {
    const parsed = probe.pairsParse(c.bytes);
    if (c.expected === 'malformed') {
      expect(parsed).toEqual({ ok: false, text: 'malformed' });
    } else {
      expect(parsed.ok).toBe(true);
      expect(JSON.parse(parsed.text)).toEqual(c.expected);
    }
    // Envoy's reading: malformed is an empty map, never an error.
    expect(JSON.parse(probe.pairsDecode(c.bytes))).toEqual(c.expected === 'malformed' ? [] : c.expected);
  });

  if (c.canonical && c.expected !== 'malformed') {
    const expected = c.expected;
    test('AssemblyScript serialiser reproduces the bytes', () => {
      expect(Buffer.from(probe.pairsEncode(expected)!).toString('hex')).toBe(Buffer.from(c.bytes).toString('hex'));
    });
  }

  test('the stub host of these tests agrees (so host-side test data is right)', () => {
    expect(decodePairs(c.bytes)).toEqual(c.expected);
  });
});

describe('limits (cpp-host include/proxy-wasm/limits.h)', () => {
  test('1024 pairs are fine, 1025 are refused by the serialiser and read as malformed', () => {
    const max = probe.pairsEncodeGenerated(1024, 0);
    expect(max).not.toBeNull();
    expect(probe.pairsParse(max!).ok).toBe(true);
    expect(probe.pairsEncodeGenerated(1025, 0)).toBeNull();
    const over = encodePairs(Array.from({ length: 1025 }, (_, i): [string, string] => [`h${i}`, '']));
    expect(probe.pairsParse(over)).toEqual({ ok: false, text: 'malformed' });
  });

  test('1 MiB in total is fine, one byte more is refused and read as malformed', () => {
    // one pair "h0" + value: 4 + 8 + 3 + value + 1 bytes
    const valueBytes = (1 << 20) - 16;
    const exact = probe.pairsEncodeGenerated(1, valueBytes);
    expect(exact?.length).toBe(1 << 20);
    expect(probe.pairsParse(exact!).ok).toBe(true);
    expect(probe.pairsEncodeGenerated(1, valueBytes + 1)).toBeNull();
    const over = encodePairs([['h0', 'v'.repeat(valueBytes + 1)]]);
    expect(probe.pairsParse(over)).toEqual({ ok: false, text: 'malformed' });
  });
});

describe('properties', () => {
  const pair = fc.tuple(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 20 }));

  test('serialise then parse is the identity, and matches the test-side serialiser', () => {
    fc.assert(
      fc.property(fc.array(pair, { maxLength: 12 }), (pairs) => {
        const bytes = probe.pairsEncode(pairs as Array<[string, string]>);
        expect(bytes).not.toBeNull();
        expect(Buffer.from(bytes!).equals(Buffer.from(encodePairs(pairs as Array<[string, string]>)))).toBe(true);
        expect(JSON.parse(probe.pairsParse(bytes!).text)).toEqual(pairs);
      }),
      { numRuns: 200 },
    );
  });

  test('random bytes never trap and agree with the strict test-side reader', () => {
    const arbitraryBytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      // mostly well-formed buffers with one byte changed or cut short
      fc
        .tuple(fc.array(pair, { maxLength: 4 }), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean())
        .map(([pairs, at, value, cut]) => {
          const bytes = Uint8Array.from(encodePairs(pairs as Array<[string, string]>));
          const i = at % bytes.length;
          if (cut) return bytes.subarray(0, i);
          bytes[i] = value;
          return bytes;
        }),
    );
    fc.assert(
      fc.property(arbitraryBytes, (bytes) => {
        const expected = decodePairs(bytes);
        const parsed = probe.pairsParse(bytes);
        if (expected === 'malformed') {
          expect(parsed.ok).toBe(false);
        } else {
          // compare through the same UTF-8 decoding: the AS side decodes invalid UTF-8 leniently
          expect(parsed.ok).toBe(true);
          expect((JSON.parse(parsed.text) as unknown[]).length).toBe(expected.length);
        }
      }),
      { numRuns: 500 },
    );
  });
});
