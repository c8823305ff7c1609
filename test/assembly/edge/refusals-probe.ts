// The edge plugin's refusals (assembly/edge/refusals.ts) as rows for docs/reference/errors.md:
// status, Envoy details and `x-origin-error` code from the compiled mapping (test/wasm/refusals-probe.ts,
// built as crypto-probe.ts builds its module), the member names and their doc comments from the
// enum's source. The requests behind each refusal are tested through build/edge.wasm in this folder.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as loader from '@assemblyscript/loader';
import { probePath } from './crypto-probe';
import { ROOT } from './plugin-helpers';

const REFUSALS = path.join('assembly', 'edge', 'refusals.ts');
const SOURCES = [REFUSALS, path.join('test', 'wasm', 'refusals-probe.ts')];

export interface EdgeRefusal {
  /** The Refusal member. */
  name: string;
  status: number;
  /** Envoy `%RESPONSE_CODE_DETAILS%`. */
  details: string;
  /** The `x-origin-error` value. */
  code: string;
  /** The member's doc comment. */
  meaning: string;
}

interface RawProbe {
  __getString(p: number): string;
  refusalCount(): number;
  status(r: number): number;
  details(r: number): number;
  code(r: number): number;
}

/** The members of `enum Refusal` in order, each with its one-line doc comment. */
function members(): { name: string; meaning: string }[] {
  const text = readFileSync(path.join(ROOT, REFUSALS), 'utf8');
  const body = /export enum Refusal \{([\s\S]*?)\n\}/.exec(text)?.[1];
  if (body === undefined) throw new Error(`${REFUSALS}: no enum Refusal`);
  return [...body.matchAll(/\/\*\*\s*([\s\S]*?)\s*\*\/\s*(\w+)/g)].map((m) => ({
    name: m[2]!,
    meaning: m[1]!.replace(/\s*\n\s*\*\s*/g, ' '),
  }));
}

export function edgeRefusals(): EdgeRefusal[] {
  const raw = loader.instantiateSync<Record<string, unknown>>(
    readFileSync(probePath(SOURCES, 'edge-refusals-probe')),
    {},
  ).exports as unknown as RawProbe;
  const named = members();
  if (named.length !== raw.refusalCount()) {
    throw new Error(`${REFUSALS} declares ${named.length} refusals, the probe counts ${raw.refusalCount()}`);
  }
  return named.map((m, r) => ({
    ...m,
    status: raw.status(r),
    details: raw.__getString(raw.details(r)),
    code: raw.__getString(raw.code(r)),
  }));
}

/** The edge table of docs/reference/errors.md. */
export function edgeRefusalsMarkdown(rows: readonly EdgeRefusal[]): string {
  const lines = rows.map(
    (r) =>
      `| \`${r.code}\` | ${r.status} | \`${r.details}\` | \`${r.name}\` | ${r.meaning.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|')} |`,
  );
  return ['| `x-origin-error` | HTTP status | details | refusal | meaning |', '|---|---|---|---|---|', ...lines].join(
    '\n',
  );
}
