// Map files: the reference's rewrite-map text format (Apache RewriteMap `txt:`), docs/guide/edge.md
// "Rewrite maps": one entry per line, a key, whitespace, a value that is a query fragment;
// blank lines and lines starting with `#` are comments, and so is `#…` after the value.

import { EdgeConfigFileError } from './file-error';

export interface MapEntry {
  key: string;
  value: string;
  /** 1-based. */
  line: number;
}

/** Bounds of the plugin (assembly/edge/rewrite.ts): refused here first, with the line. */
const MAX_KEY_CHARS = 256;
const MAX_VALUE_CHARS = 4096;
const MAX_MAP_ENTRIES = 65536;

/**
 * Why `value` cannot be a query fragment, or undefined: the checks of the plugin
 * (assembly/edge/rewrite-template.ts queryTextProblem), so that an error names the line.
 */
export function queryFragmentProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x20) return `a space at character ${i} (write %20)`;
    if (c < 0x20 || c >= 0x7f)
      return `character U+${c.toString(16).toUpperCase().padStart(4, '0')} at character ${i} (a value is percent-encoded ASCII)`;
    if (c === 0x23) return `'#' at character ${i} (write %23)`;
    if (c === 0x25 && !/^%[0-9A-Fa-f]{2}/.test(value.slice(i)))
      return `'%' at character ${i} not followed by two hex digits (write %25)`;
    if (c === 0x26 && (i === 0 || i === value.length - 1 || value[i + 1] === '&')) {
      return `an empty parameter at character ${i} (a leading, trailing or doubled '&'; inside a filter write && as %26%26)`;
    }
  }
  return undefined;
}

/** Parses a rewrite map file; throws EdgeConfigFileError naming `file:line`. */
export function parseMapFile(text: string, file: string): MapEntry[] {
  const entries: MapEntry[] = [];
  const seen = new Map<string, number>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const fail = (message: string): never => {
      throw new EdgeConfigFileError(`${file}:${line}: ${message}`);
    };
    const body = raw.replace(/^[ \t]+/, '');
    if (body === '' || body.startsWith('#')) return;
    const m = /^(\S+)(?:[ \t]+(\S+))?[ \t]*(.*)$/.exec(body)!;
    const key = m[1]!;
    const value = m[2];
    const rest = m[3]!;
    if (value === undefined)
      fail(`"${key.slice(0, 64)}" has no value (a line is: key, whitespace, a query fragment such as hls_fmp4=true)`);
    if (rest !== '' && !rest.startsWith('#'))
      fail(`more than a key and a value: "${rest.slice(0, 64)}" (a value holds no whitespace: write %20)`);
    if (key.length > MAX_KEY_CHARS) fail(`the key is longer than ${MAX_KEY_CHARS} characters`);
    if ([...key].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
      fail('the key holds a control character');
    if (value!.length > MAX_VALUE_CHARS) fail(`the value is longer than ${MAX_VALUE_CHARS} characters`);
    const problem = queryFragmentProblem(value!);
    if (problem !== undefined) fail(`the value of "${key.slice(0, 64)}" has ${problem}`);
    const before = seen.get(key);
    if (before !== undefined) fail(`"${key.slice(0, 64)}" again (first on line ${before}); each key once`);
    seen.set(key, line);
    entries.push({ key, value: value!, line });
    if (entries.length > MAX_MAP_ENTRIES) fail(`more than ${MAX_MAP_ENTRIES} entries`);
  });
  return entries;
}
