// The validate_filter cache (assembly/edge/filter-query.ts): answers keyed by the raw value of
// `filter=`, bounded, emptied when full. Through a test-only module of the same code: the bound
// holds whatever is sent, and a cached answer is exactly what a fresh check (cache emptied first)
// answers, for valid and invalid filters, in any spelling, across evictions. What the answers
// are (the origin's canonical form and error texts) is filter.test.ts's job.

import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import * as loader from '@assemblyscript/loader';
import { probePath } from './crypto-probe';
import { ROOT } from './plugin-helpers';

interface RawProbe {
  __newString(s: string): number;
  __getString(p: number): string;
  check(p: number): number;
  cachedCount(): number;
  clearCache(): void;
  maxCached(): number;
}

let probe: RawProbe;
beforeAll(() => {
  // Every source the module can import (hashed for the compile cache); the module itself last.
  const dir = (d: string): string[] =>
    readdirSync(path.join(ROOT, d))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(d, f));
  const ordered = [
    ...dir('assembly/edge'),
    ...dir('assembly/filter'),
    path.join('test', 'wasm', 'filter-cache-probe.ts'),
  ];
  probe = loader.instantiateSync<Record<string, unknown>>(
    readFileSync(probePath(ordered, 'edge-filter-cache-probe')),
    {},
  ).exports as unknown as RawProbe;
});

const check = (query: string): string => probe.__getString(probe.check(probe.__newString(query)));

/** Expressions valid and invalid, to be spelled in several ways. */
const EXPRESSIONS = [
  'type=="video"',
  '(type == "video") && (systemBitrate <= 1000000)',
  'type=="audio"||systemBitrate<800000',
  'type="audio"',
  'type==audio',
  '(type=="video"',
  'type=="a"+',
  'MaxHeight>=720',
  'systemBitrate<"100"',
  'é=="x"',
];

/** One raw spelling of an expression: encodeURIComponent, raw where the URL allows it, or with upper/lower-case escapes. */
function spell(expression: string, how: number): string {
  const encoded = encodeURIComponent(expression);
  switch (how % 4) {
    case 0:
      return encoded;
    case 1:
      return encoded.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase());
    case 2:
      return expression.replace(/ /g, '%20').replace(/&/g, '%26').replace(/é/g, '%C3%A9');
    default:
      return encoded.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
  }
}

const filterPart = fc
  .tuple(fc.constantFrom(...EXPRESSIONS), fc.nat(), fc.boolean())
  .map(([e, how, encodedName]) => `${encodedName ? '%66ilter' : 'filter'}=${spell(e, how)}`);
const otherPart = fc.constantFrom('t=10', 'a=1', 'filter=', 'filter', 'x=%41', 'suppress_query_parameters');
const query = fc.array(fc.oneof(filterPart, otherPart), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('&'));

test('a cached answer is the answer of a fresh check (fast-check, with evictions in between)', () => {
  fc.assert(
    fc.property(fc.array(query, { minLength: 1, maxLength: 20 }), (queries) => {
      for (const q of queries) {
        const first = check(q); // fresh or cached, whatever came before
        probe.clearCache();
        const fresh = check(q);
        const cached = check(q);
        if (first !== fresh || cached !== fresh) return false;
      }
      return true;
    }),
    { numRuns: 200 },
  );
});

test('answers stay right while the cache fills, empties and refills', () => {
  probe.clearCache();
  const queries = Array.from({ length: 3 * probe.maxCached() + 7 }, (_, i) => `filter=systemBitrate%3C${1000 + i}&t=1`);
  const expected = queries.map((q) => {
    probe.clearCache();
    return check(q);
  });
  probe.clearCache();
  for (let round = 0; round < 2; round++) {
    queries.forEach((q, i) => expect(check(q)).toBe(expected[i]));
  }
  expect(expected[0]).toBe('filter=systemBitrate%3C1000&t=1');
});

test('the bound holds: never more than MAX_CACHED_FILTERS entries', () => {
  probe.clearCache();
  const max = probe.maxCached();
  expect(max).toBe(256);
  for (let i = 0; i < 4 * max; i++) {
    check(`filter=MaxHeight%3E%3D${i}`);
    expect(probe.cachedCount()).toBeLessThanOrEqual(max);
  }
  expect(probe.cachedCount()).toBeGreaterThan(0);
  // A repeated filter is one entry, not one per request.
  probe.clearCache();
  for (let i = 0; i < 50; i++) check('filter=type%3D%3D%22video%22');
  expect(probe.cachedCount()).toBe(1);
});
