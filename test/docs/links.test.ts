// Every relative link in the docs points at a file of the repository, and every #anchor at a
// heading of its target (GitHub's slugs). Links to web pages are not followed.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

function markdownUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.posix.join(dir, name);
    return statSync(path.join(ROOT, rel)).isDirectory() ? markdownUnder(rel) : name.endsWith('.md') ? [rel] : [];
  });
}

const FILES = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  'bench/README.md',
  'host-glue/README.md',
  'envoy-config/README.md',
  ...markdownUnder('docs'),
];

/** Text outside fenced code blocks and inline code spans. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.*)$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const links = FILES.flatMap((file) =>
  [...prose(readFileSync(path.join(ROOT, file), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target))
    .map((target) => [file, target] as const),
);

test('the docs have relative links to check', () => {
  expect(links.length).toBeGreaterThan(50);
});

test.each(links)('%s: %s resolves', (file, target) => {
  const [p, anchor] = target.split('#') as [string, string | undefined];
  const resolved = p === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), p));
  expect(resolved.startsWith('..')).toBe(false);
  expect(existsSync(path.join(ROOT, resolved))).toBe(true);
  if (anchor !== undefined && resolved.endsWith('.md')) expect([...anchors(resolved)]).toContain(anchor);
});
