// The header-pair codec (host-glue/proxy-wasm/pairs.ts) against the shared annotated fixture
// fixtures/abi/header-pairs.txt (also read by the AssemblyScript side), plus the limits the
// fixture leaves to code (§3.1: 1024 pairs, 1 MiB).

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  fromHeaderList,
  parsePairs,
  serializePairs,
  toHeaderList,
  type BytePair,
} from '../../../host-glue/proxy-wasm/pairs';

interface FixtureCase {
  name: string;
  expected: Array<[string, string]> | 'malformed';
  bytes: Uint8Array;
}

/** `== <name> <JSON | malformed>` then hex byte tokens; `#` comments (see the fixture's header). */
function readFixture(file: string): FixtureCase[] {
  const cases: FixtureCase[] = [];
  let current: { name: string; expected: FixtureCase['expected']; hex: string[] } | null = null;
  const flush = (): void => {
    if (current !== null)
      cases.push({
        name: current.name,
        expected: current.expected,
        bytes: Uint8Array.from(current.hex.map((h) => parseInt(h, 16))),
      });
  };
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    if (raw.startsWith('== ')) {
      flush();
      const rest = raw.slice(3);
      const space = rest.indexOf(' ');
      const name = rest.slice(0, space);
      const expected = rest.slice(space + 1).trim();
      current = {
        name,
        expected: expected === 'malformed' ? 'malformed' : (JSON.parse(expected) as Array<[string, string]>),
        hex: [],
      };
      continue;
    }
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '' || current === null) continue;
    for (const token of line.split(/\s+/)) {
      if (!/^[0-9a-fA-F]{2}$/.test(token)) throw new Error(`bad hex token ${token} in case ${current.name}`);
      current.hex.push(token);
    }
  }
  flush();
  return cases;
}

const FIXTURE = path.resolve(__dirname, '..', '..', '..', 'fixtures', 'abi', 'header-pairs.txt');
const cases = readFixture(FIXTURE);
const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));
const asStrings = (pairs: BytePair[]): Array<[string, string]> =>
  pairs.map(([k, v]) => [Buffer.from(k).toString('utf8'), Buffer.from(v).toString('utf8')]);

test('the fixture has valid and malformed cases', () => {
  expect(cases.filter((c) => c.expected === 'malformed').length).toBeGreaterThanOrEqual(10);
  expect(cases.filter((c) => c.expected !== 'malformed').length).toBeGreaterThanOrEqual(8);
});

describe.each(cases.map((c) => [c.name, c] as const))('fixture case %s', (_name, c) => {
  if (c.expected === 'malformed') {
    test('is reported malformed, and Envoy sees an empty map', () => {
      expect(parsePairs(c.bytes)).toBeNull();
      expect(toHeaderList(c.bytes)).toEqual([]);
    });
  } else {
    const expected = c.expected;
    test('parses to exactly the expected pairs', () => {
      const parsed = parsePairs(c.bytes);
      expect(parsed).not.toBeNull();
      expect(asStrings(parsed!)).toEqual(expected);
    });
    if (!c.name.startsWith('noncanonical-')) {
      test('serialises back to exactly the fixture bytes', () => {
        expect(serializePairs(expected.map(([k, v]) => [utf8(k), utf8(v)]))).toEqual(c.bytes);
      });
    }
  }
});

describe('limits (§3.1, cpp-host limits.h)', () => {
  const many = (n: number): BytePair[] => Array.from({ length: n }, (_, i) => [utf8(`k${i}`), utf8('v')]);

  test('1024 pairs parse, 1025 are malformed', () => {
    expect(parsePairs(serializePairs(many(1024)))).toHaveLength(1024);
    expect(parsePairs(serializePairs(many(1025)))).toBeNull();
  });

  test('a buffer over 1 MiB is malformed even if well formed', () => {
    const big = serializePairs([[utf8('x-big'), new Uint8Array(1024 * 1024).fill(0x61)]]);
    expect(big.length).toBeGreaterThan(1024 * 1024);
    expect(parsePairs(big)).toBeNull();
    const fits = serializePairs([[utf8('x-big'), new Uint8Array(1024 * 1024 - 100).fill(0x61)]]);
    expect(parsePairs(fits)).toHaveLength(1);
  });
});

test('header lists keep bytes exactly (latin1 strings, as Node presents header bytes)', () => {
  const list: Array<[string, string]> = [
    [':path', '/caf\u00e9'],
    ['x-bin', '\u0000\u00ff\u0080'],
  ];
  const wire = fromHeaderList(list);
  expect([...wire.slice(4 + 16 + 6, 4 + 16 + 6 + 5)]).toEqual([0x2f, 0x63, 0x61, 0x66, 0xe9]);
  expect(toHeaderList(wire)).toEqual(list);
});
