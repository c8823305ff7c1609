// Golden files (CONTRIBUTING.md design rule 11, after shaka-packager's packager_test.py): a test renders what
// the outside world reads as text and compares it with `test/golden/<name>`. `UPDATE_GOLDEN=1`
// rewrites the files instead (review the git diff before committing). A missing golden file is
// a failure without the switch, so a forgotten file cannot make a test pass vacuously.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export const GOLDEN_ROOT = path.resolve(__dirname, '..', 'golden');

/** Lines of diff output shown at most; the rest is summarised. */
const MAX_DIFF_LINES = 80;
/** Above this many lines on both sides the LCS table would be large: show the first difference only. */
const MAX_LCS_CELLS = 4_000_000;

export interface GoldenOptions {
  /** Directory the names are relative to (tests of this helper use a temporary one). */
  root?: string;
  /** Defaults to `UPDATE_GOLDEN=1` in the environment. */
  update?: boolean;
}

export function expectGolden(name: string, text: string, opts: GoldenOptions = {}): void {
  const root = opts.root ?? GOLDEN_ROOT;
  const update = opts.update ?? process.env['UPDATE_GOLDEN'] === '1';
  const file = path.join(root, name);
  const actual = text.endsWith('\n') ? text : text + '\n';
  const shown = path.relative(process.cwd(), file) || file;
  if (update) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file)) {
    throw new Error(`golden file ${shown} does not exist; create it with UPDATE_GOLDEN=1 and review it`);
  }
  const expected = readFileSync(file, 'utf8');
  if (expected === actual) return;
  throw new Error(
    `output differs from golden file ${shown} (- golden, + actual); ` +
      `if the change is intended, rerun with UPDATE_GOLDEN=1 and review the diff\n${lineDiff(expected, actual)}`,
  );
}

type Op = { kind: ' ' | '-' | '+'; line: string; a: number; b: number };

/** A unified-style line diff with 2 lines of context, truncated to MAX_DIFF_LINES. */
export function lineDiff(expected: string, actual: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  if (a.length * b.length > MAX_LCS_CELLS) return firstDifference(a, b);
  const ops = diffOps(a, b);
  const changed = ops.map((o, i) => (o.kind !== ' ' ? i : -1)).filter((i) => i >= 0);
  const keep = new Set<number>();
  for (const i of changed) for (let j = i - 2; j <= i + 2; j++) keep.add(j);
  const out: string[] = [];
  let last = -1;
  ops.forEach((o, i) => {
    if (!keep.has(i)) return;
    if (out.length === 0 || i !== last + 1) out.push(`@@ golden line ${o.a + 1}, actual line ${o.b + 1} @@`);
    out.push(`${o.kind} ${o.line}`);
    last = i;
  });
  if (out.length > MAX_DIFF_LINES) {
    return [...out.slice(0, MAX_DIFF_LINES), `... ${out.length - MAX_DIFF_LINES} more diff lines`].join('\n');
  }
  return out.join('\n');
}

/** Longest-common-subsequence edit script over lines. */
function diffOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    // Deletions before insertions, as unified diffs show a changed line.
    if (i < n && j < m && a[i] === b[j]) ops.push({ kind: ' ', line: a[i++]!, a: i - 1, b: j++ });
    else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!))
      ops.push({ kind: '-', line: a[i++]!, a: i - 1, b: j });
    else ops.push({ kind: '+', line: b[j++]!, a: i, b: j - 1 });
  }
  return ops;
}

function firstDifference(a: string[], b: string[]): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `first difference at line ${i + 1}:\n- ${a[i] ?? '(end of file)'}\n+ ${b[i] ?? '(end of file)'}`;
}
