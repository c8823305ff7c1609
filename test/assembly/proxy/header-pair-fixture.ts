// Reader for fixtures/abi/header-pairs.txt, the annotated byte fixture of the header-pair wire
// format shared by the AssemblyScript and TypeScript tests (format described at the top of the
// file). Usable by any test: readHeaderPairFixture() returns every case with its bytes.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';

export const HEADER_PAIR_FIXTURE = path.resolve(__dirname, '..', '..', '..', 'fixtures', 'abi', 'header-pairs.txt');

export interface HeaderPairCase {
  name: string;
  /** Expected pairs in wire order, or 'malformed' (the parser must yield an empty map). */
  expected: Array<[string, string]> | 'malformed';
  bytes: Uint8Array;
  /** Whether serialise(expected) must reproduce `bytes` (JSON cases not named noncanonical-*). */
  canonical: boolean;
  /** 1-based line of the "==" header, for messages. */
  line: number;
}

export function parseHeaderPairFixture(text: string): HeaderPairCase[] {
  const cases: Array<Omit<HeaderPairCase, 'bytes'> & { bytes: number[] }> = [];
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (raw.startsWith('==')) {
      const match = /^==\s+(\S+)\s+(.+?)\s*$/.exec(raw);
      if (match === null) throw new Error(`header-pairs.txt:${line}: bad case line`);
      const name = match[1]!;
      const spec = match[2]!;
      let expected: HeaderPairCase['expected'];
      if (spec === 'malformed') {
        expected = 'malformed';
      } else {
        const parsed: unknown = JSON.parse(spec);
        if (
          !Array.isArray(parsed) ||
          !parsed.every((p) => Array.isArray(p) && p.length === 2 && p.every((s) => typeof s === 'string'))
        ) {
          throw new Error(`header-pairs.txt:${line}: expected [["k","v"],...] or malformed`);
        }
        expected = parsed as Array<[string, string]>;
      }
      cases.push({
        name,
        expected,
        bytes: [],
        canonical: expected !== 'malformed' && !name.startsWith('noncanonical-'),
        line,
      });
      return;
    }
    const content = raw.replace(/#.*$/, '').trim();
    if (content === '') return;
    const current = cases[cases.length - 1];
    if (current === undefined) throw new Error(`header-pairs.txt:${line}: bytes before the first case`);
    for (const token of content.split(/\s+/)) {
      if (!/^[0-9a-fA-F]{2}$/.test(token)) throw new Error(`header-pairs.txt:${line}: "${token}" is not a hex byte`);
      current.bytes.push(parseInt(token, 16));
    }
  });
  return cases.map((c) => ({ ...c, bytes: Uint8Array.from(c.bytes) }));
}

export function readHeaderPairFixture(): HeaderPairCase[] {
  return parseHeaderPairFixture(readFileSync(HEADER_PAIR_FIXTURE, 'utf8'));
}
