// The layout's rules, checked on the source tree (docs/design/architecture.md states them):
// host-glue/ is a host of our wasm modules and takes from origin/ only the model, error and
// rational types; the proxy-wasm host stands alone; the rooms of origin/ import each other
// without a cycle; manifest writers do no I/O; files stay small enough to read.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './helpers/fixtures';

const CODE = /\.(ts|js|cjs|mjs)$/;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(ROOT, dir)).sort()) {
    const rel = path.posix.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...filesUnder(rel));
    else if (CODE.test(name)) out.push(rel);
  }
  return out;
}

/** Repository-relative targets of a file's relative imports (static, dynamic and require). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:from|import|require)\s*\(?\s*'(\.[^']*)'/g)].map((m) => m[1]!);
  return specs.map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s)));
}

/** `origin/<room>` for files in a room of origin/, the file itself for origin/*.ts. */
function roomOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file.replace(/\.ts$/, '');
}

const ORIGIN = filesUnder('origin');
const HOST_GLUE = filesUnder('host-glue');

test('host-glue/ takes from origin/ only the model, error and rational types', () => {
  const allowed = new Set(['origin/errors', 'origin/rational', 'origin/model/media']);
  const found = HOST_GLUE.flatMap((f) =>
    importsOf(f)
      .filter((t) => t.startsWith('origin/') && !allowed.has(t))
      .map((t) => `${f} -> ${t}`),
  );
  expect(found).toEqual([]);
});

test('the proxy-wasm host imports nothing outside host-glue/proxy-wasm/', () => {
  const found = HOST_GLUE.filter((f) => f.startsWith('host-glue/proxy-wasm/')).flatMap((f) =>
    importsOf(f)
      .filter((t) => !t.startsWith('host-glue/proxy-wasm/'))
      .map((t) => `${f} -> ${t}`),
  );
  expect(found).toEqual([]);
});

test('the rooms of origin/ import each other without a cycle', () => {
  const edges = new Map<string, Set<string>>();
  for (const f of ORIGIN) {
    for (const t of importsOf(f)) {
      if (!t.startsWith('origin/') || roomOf(t) === roomOf(f)) continue;
      const from = edges.get(roomOf(f)) ?? new Set<string>();
      from.add(roomOf(t));
      edges.set(roomOf(f), from);
    }
  }
  const cycles: string[] = [];
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
    [...(edges.get(from) ?? [])].some((n) => n === to || (!seen.has(n) && seen.add(n) && reaches(n, to, seen)));
  for (const [from, tos] of edges) for (const to of tos) if (reaches(to, from)) cycles.push(`${from} <-> ${to}`);
  expect(cycles.sort()).toEqual([]);
});

test('manifest writers are pure: no storage, cache, server or node: modules', () => {
  const found = ORIGIN.filter((f) => f.startsWith('origin/manifests/')).flatMap((f) => {
    const text = readFileSync(path.join(ROOT, f), 'utf8');
    const bad = importsOf(f).filter((t) => /^origin\/(io|cache|server)\//.test(t));
    if (/from 'node:/.test(text)) bad.push('node:*');
    return bad.map((t) => `${f} -> ${t}`);
  });
  expect(found).toEqual([]);
});

test('no code file over 500 lines', () => {
  const dirs = ['origin', 'host-glue', 'assembly', 'bench', 'test', 'fixtures', 'bin'];
  const long = dirs
    .flatMap(filesUnder)
    .map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8').split('\n').length - 1] as const)
    .filter(([, lines]) => lines > 500)
    .map(([f, lines]) => `${f}: ${lines}`);
  expect(long).toEqual([]);
});

test('the README stays a front page: at most 250 lines', () => {
  expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length - 1).toBeLessThanOrEqual(250);
});
