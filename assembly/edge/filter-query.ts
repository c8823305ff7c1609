// validate_filter: every `filter=` of the query is parsed with the origin's own parser
// (assembly/filter/, the code build/filter.wasm runs) before the request leaves the edge.
//
//   * A syntax or type error is answered here, 400 with `x-origin-error: bad-filter` and the
//     origin's text: `filter: <message> at <offset>: <hint>` (offset in UTF-16 code units of the
//     decoded expression, as the origin reports it). The origin never sees the request.
//   * A valid filter is replaced by its canonical text (assembly/filter/canonical.ts), encoded
//     as encodeURIComponent does: `filter=type=="audio"` and `filter=(type%3D%3D%22audio%22)`
//     reach the origin, and a cache in front of it, as the same URL.
// The query is read as the origin reads it (origin/options/registry.ts parseQuery): parts split
// on "&", name and value percent-decoded once, "+" literal, a bare `filter` or an empty value
// means no filter (left alone). Other parts are passed on byte for byte, in their order.
// The origin applies the first `filter`; the edge checks every one (a later bad one is refused
// rather than silently ignored).

import { parse } from '../filter/parser';
import { canonicalText } from '../filter/canonical';
import { codeUnit } from './bytes';
import { encodeComponent, percentDecode } from './target';

export class FilterCheck {
  /** The query to send on (raw, without "?"); meaningful when error is "". */
  query: string = '';
  /** "" or the origin's error text. */
  error: string = '';
  /** `filter=` values answered by the cache of checked filters, and checked anew (the plugin's
   * filter-check counters). */
  hits: i32 = 0;
  misses: i32 = 0;
}

export function checkFilters(rawQuery: string): FilterCheck {
  const result = new FilterCheck();
  if (rawQuery.indexOf('ilter') < 0 && rawQuery.indexOf('%') < 0) {
    result.query = rawQuery; // fast path: no part can be named "filter"
    return result;
  }
  // The parts rawQuery[partStart, i) between "&"s, read in place; the output is built only if a
  // part changes (pieces of rawQuery copied up to the part, then the replacement).
  const n = rawQuery.length;
  let out: string[] | null = null;
  let copied = 0;
  let partStart = 0;
  for (let i = 0; i <= n; i++) {
    if (i < n && codeUnit(rawQuery, i) != 0x26) continue;
    const partEnd = i;
    const at = partStart;
    partStart = i + 1;
    const eq = indexOfChar(rawQuery, 0x3d, at, partEnd);
    if (eq < 0 || !isFilterName(rawQuery, at, eq)) continue;
    if (eq + 1 == partEnd) continue; // an empty value means no filter
    const answer = checkedRawFilter(rawQuery, eq + 1, partEnd, result);
    if (answer.startsWith('!')) {
      result.error = answer.substring(1);
      return result;
    }
    if (sameText(answer, rawQuery, at, partEnd)) continue;
    if (out === null) out = new Array<string>(0);
    out.push(rawQuery.substring(copied, at));
    out.push(answer);
    copied = partEnd;
  }
  if (out === null) {
    result.query = rawQuery;
    return result;
  }
  out.push(rawQuery.substring(copied));
  result.query = out.join('');
  return result;
}

/** The part's name rawQuery[start, end) percent-decodes to "filter". */
function isFilterName(text: string, start: i32, end: i32): bool {
  if (indexOfChar(text, 0x25, start, end) < 0) {
    return (
      end - start == 6 &&
      memory.compare(changetype<usize>(text) + ((<usize>start) << 1), changetype<usize>('filter'), 12) == 0
    );
  }
  const name = percentDecode(text.substring(start, end));
  return name !== null && name == 'filter';
}

function indexOfChar(text: string, c: i32, start: i32, end: i32): i32 {
  for (let i = start; i < end; i++) if (codeUnit(text, i) == c) return i;
  return -1;
}

/** a equals text[start, end). */
function sameText(a: string, text: string, start: i32, end: i32): bool {
  const len = end - start;
  return (
    a.length == len &&
    memory.compare(changetype<usize>(a), changetype<usize>(text) + ((<usize>start) << 1), (<usize>len) << 1) == 0
  );
}

/** FNV-1a over UTF-16 units text[start, end). */
function hashRange(text: string, start: i32, end: i32): u32 {
  const p = changetype<usize>(text);
  let h: u32 = 2166136261;
  for (let i = start; i < end; i++) {
    h ^= <u32>load<u16>(p + ((<usize>i) << 1));
    h *= 16777619;
  }
  return h;
}

/**
 * Filters already checked, keyed by the raw (still percent-encoded) value of `filter=`, each
 * with its answer: "filter=<encoded canonical>" or "!<error text>". A player repeats its filter
 * on every playlist and segment URL (the origin carries the query into the URLs it writes), so
 * most checks are one lookup by a span of the query: no substring, no decoding, no parse. The
 * answer depends only on the decoded value, which depends only on the raw value, so a hit is
 * exactly what a fresh check would say. Bounded; emptied when full.
 */
export const MAX_CACHED_FILTERS: i32 = 256;
const SLOT_COUNT: i32 = 512; // a power of two, twice the bound: probes stay short

class FilterCache {
  keys: string[] = new Array<string>(0);
  answers: string[] = new Array<string>(0);
  /** Entry index + 1 per slot, 0 for empty (open addressing, linear probing). */
  slots: StaticArray<i32> = new StaticArray<i32>(SLOT_COUNT);

  get size(): i32 {
    return this.keys.length;
  }

  /** The answer cached for text[start, end), or null. */
  find(text: string, start: i32, end: i32): string | null {
    const mask = SLOT_COUNT - 1;
    let slot = (<i32>hashRange(text, start, end)) & mask;
    while (true) {
      const entry = unchecked(this.slots[slot]);
      if (entry == 0) return null;
      if (sameText(unchecked(this.keys[entry - 1]), text, start, end)) return unchecked(this.answers[entry - 1]);
      slot = (slot + 1) & mask;
    }
  }

  add(key: string, answer: string): void {
    if (this.keys.length >= MAX_CACHED_FILTERS) this.clear();
    const mask = SLOT_COUNT - 1;
    let slot = (<i32>hashRange(key, 0, key.length)) & mask;
    while (unchecked(this.slots[slot]) != 0) slot = (slot + 1) & mask;
    this.keys.push(key);
    this.answers.push(answer);
    unchecked((this.slots[slot] = this.keys.length));
  }

  clear(): void {
    this.keys = new Array<string>(0);
    this.answers = new Array<string>(0);
    for (let i = 0; i < SLOT_COUNT; i++) unchecked((this.slots[i] = 0));
  }
}

const checked = new FilterCache();

/** Entries in the cache now (tests: the bound holds). */
export function cachedFilterCount(): i32 {
  return checked.size;
}

/** Empties the cache (tests: a fresh check to compare a cached answer with). */
export function clearFilterCache(): void {
  checked.clear();
}

/** The answer for the raw value text[start, end) (non-empty), from the cache or checked now
 * (counted in `counts`). */
function checkedRawFilter(text: string, start: i32, end: i32, counts: FilterCheck): string {
  const hit = checked.find(text, start, end);
  if (hit !== null) {
    counts.hits++;
    return hit;
  }
  counts.misses++;
  const raw = text.substring(start, end);
  const value = percentDecode(raw);
  const answer = value === null ? '!filter: malformed percent-encoding' : checkedFilter(value);
  checked.add(raw, answer);
  return answer;
}

/** "filter=<encoded canonical>" or "!<error text>" for a decoded, non-empty expression. */
function checkedFilter(expression: string): string {
  const canonical = canonicalFilter(expression);
  return canonical !== null ? 'filter=' + encodeComponent(canonical) : '!' + lastFilterError;
}

let lastFilterError: string = '';

/** The canonical text of `expression`, or null with lastFilterError set. */
function canonicalFilter(expression: string): string | null {
  const parsed = parse(expression);
  const node = parsed.node;
  if (node === null) {
    const e = parsed.error;
    if (e === null) {
      lastFilterError = 'filter: does not parse';
      return null;
    }
    // The origin's engine adds this hint (host-glue/filter/filter-engine.ts): queries are decoded
    // without turning "+" into a space, so a form-encoded space arrives as "+".
    if (e.message == 'unexpected "+"' && e.hint.length == 0) {
      e.hint = '"+" is not decoded to a space: write a space as %20 in a URL, or leave it out';
    }
    lastFilterError = 'filter: ' + e.format();
    return null;
  }
  const canonical = canonicalText(node);
  // As the filter module's compile() does: the canonical text can be longer and deeper than the
  // input, and must parse back (or the origin would refuse what the edge sends).
  if (canonical != expression) {
    const again = parse(canonical);
    if (again.node === null) {
      const inner = again.error;
      lastFilterError =
        'filter: canonical form past the limits (' +
        (inner !== null ? inner.message : '') +
        ') at 0: it parenthesises && inside ||; shorten the filter or nest less';
      return null;
    }
  }
  return canonical;
}
