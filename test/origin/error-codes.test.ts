// The closed set of error codes (origin/error-codes.ts): each code keeps its kind's status, each is
// thrown somewhere, every throw site in origin/ goes through originError, and
// docs/reference/errors.md prints the table (and the edge plugin's refusals) as they are.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES, ErrorCode, errorCodesMarkdown } from '../../origin/error-codes';
import { httpStatusOf, OriginError, originError } from '../../origin/errors';
import { edgeRefusals, edgeRefusalsMarkdown } from '../assembly/edge/refusals-probe';
import { ROOT } from '../helpers/fixtures';

const CODES = Object.keys(ERROR_CODES) as ErrorCode[];
const DOC = path.join('docs', 'reference', 'errors.md');

function sourcesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f));
}

const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

test.each(CODES)('%s keeps the status and kind of its table row', (code) => {
  const e = originError(code, 'why', { subject: 'what' });
  expect(httpStatusOf(e)).toBe(ERROR_CODES[code].status);
  expect(e.kind).toBe(ERROR_CODES[code].kind);
  expect(e.code).toBe(code);
  expect(e.subject).toBe('what');
  expect(e.message).toBe('what: why');
});

test('the positional constructor (host-glue/) gives the kind as the code', () => {
  const e = new OriginError('bad-request', 'why');
  expect([e.code, e.subject, e.message, httpStatusOf(e)]).toEqual(['bad-request', undefined, 'why', 400]);
});

test('within keeps the kind and the code', () => {
  const e = originError('unknown-time', 'no segment 9', { subject: 'video' }).within('a.ism');
  expect([e.kind, e.code, e.subject, e.message]).toEqual([
    'not-found',
    'unknown-time',
    'a.ism',
    'a.ism: video: no segment 9',
  ]);
});

test('origin/ throws through originError only', () => {
  const direct = sourcesUnder('origin')
    .filter((f) => f !== path.join('origin', 'errors.ts'))
    .filter((f) => /new OriginError\(/.test(read(f)));
  expect(direct).toEqual([]);
});

test('every code in the table is thrown somewhere', () => {
  const thrown = new Set<string>();
  for (const f of sourcesUnder('origin')) {
    // liveFragmentError (errors.ts) throws the live fragment codes with their format's status.
    for (const m of read(f).matchAll(/\b(?:originError|liveFragmentError)\(\s*'([a-z-]+)'/g)) thrown.add(m[1]!);
  }
  // host-glue/ still uses the positional constructor, whose code is the kind.
  for (const f of sourcesUnder('host-glue')) {
    for (const m of read(f).matchAll(/\bnew OriginError\(\s*'([a-z-]+)'/g)) thrown.add(m[1]!);
  }
  expect(CODES.filter((c) => !thrown.has(c))).toEqual([]);
  expect([...thrown].filter((c) => !(c in ERROR_CODES))).toEqual([]);
});

test('codes shared with the edge plugin have the same status there', () => {
  const shared = edgeRefusals().filter((r) => r.code in ERROR_CODES);
  expect(shared.map((r) => r.code)).toEqual(
    expect.arrayContaining(['bad-path', 'url-too-long', 'bad-query', 'bad-filter']),
  );
  for (const r of shared) expect([r.code, r.status]).toEqual([r.code, ERROR_CODES[r.code as ErrorCode].status]);
});

test(`${DOC} prints the error tables (UPDATE_GOLDEN=1 rewrites them)`, () => {
  const tables: [string, string][] = [
    ['error-codes', errorCodesMarkdown()],
    ['edge-refusals', edgeRefusalsMarkdown(edgeRefusals())],
  ];
  let doc = read(DOC);
  for (const [marker, table] of tables) {
    const between = new RegExp(`(<!-- ${marker} -->\\n)([\\s\\S]*?)(<!-- /${marker} -->)`);
    expect(doc).toMatch(between);
    if (process.env['UPDATE_GOLDEN'] === '1')
      doc = doc.replace(between, (_, open, _old, close) => `${open}${table}\n${close}`);
    else expect(between.exec(doc)![2]).toBe(`${table}\n`);
  }
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(path.join(ROOT, DOC), doc);
});
