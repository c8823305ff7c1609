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

import { parse } from "../filter/parser";
import { canonicalText } from "../filter/canonical";
import { encodeComponent, percentDecode } from "./target";

export class FilterCheck {
  /** The query to send on (raw, without "?"); meaningful when error is "". */
  query: string = "";
  /** "" or the origin's error text. */
  error: string = "";
}

export function checkFilters(rawQuery: string): FilterCheck {
  const result = new FilterCheck();
  if (rawQuery.indexOf("ilter") < 0 && rawQuery.indexOf("%") < 0) {
    result.query = rawQuery; // fast path: no part can be named "filter"
    return result;
  }
  const parts = rawQuery.split("&");
  let changed = false;
  for (let i = 0, n = parts.length; i < n; i++) {
    const part = parts[i];
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = percentDecode(part.substring(0, eq));
    if (name === null || name != "filter") continue;
    const value = percentDecode(part.substring(eq + 1));
    if (value === null) {
      result.error = "filter: malformed percent-encoding";
      return result;
    }
    if (value.length == 0) continue;
    const checked = checkedFilter(value);
    if (checked.startsWith("!")) {
      result.error = checked.substring(1);
      return result;
    }
    const replacement = checked;
    if (replacement != part) {
      parts[i] = replacement;
      changed = true;
    }
  }
  result.query = changed ? parts.join("&") : rawQuery;
  return result;
}

/** Filters already checked: expression -> "filter=<encoded canonical>" or "!<error text>". A
 * player repeats its filter on every playlist and segment URL (the origin carries the query
 * into the URLs it writes), so most checks are a lookup. Bounded; emptied when full. */
const checkedCache = new Map<string, string>();
export const MAX_CACHED_FILTERS: i32 = 256;

function checkedFilter(expression: string): string {
  if (checkedCache.has(expression)) return checkedCache.get(expression);
  const canonical = canonicalFilter(expression);
  const answer = canonical !== null ? "filter=" + encodeComponent(canonical) : "!" + lastFilterError;
  if (checkedCache.size >= MAX_CACHED_FILTERS) checkedCache.clear();
  checkedCache.set(expression, answer);
  return answer;
}

let lastFilterError: string = "";

/** The canonical text of `expression`, or null with lastFilterError set. */
function canonicalFilter(expression: string): string | null {
  const parsed = parse(expression);
  const node = parsed.node;
  if (node === null) {
    const e = parsed.error;
    if (e === null) {
      lastFilterError = "filter: does not parse";
      return null;
    }
    // The origin's engine adds this hint (host-glue/filter-engine.ts): queries are decoded
    // without turning "+" into a space, so a form-encoded space arrives as "+".
    if (e.message == "unexpected \"+\"" && e.hint.length == 0) {
      e.hint = "\"+\" is not decoded to a space: write a space as %20 in a URL, or leave it out";
    }
    lastFilterError = "filter: " + e.format();
    return null;
  }
  const canonical = canonicalText(node);
  // As the filter module's compile() does: the canonical text can be longer and deeper than the
  // input, and must parse back (or the origin would refuse what the edge sends).
  if (canonical != expression) {
    const again = parse(canonical);
    if (again.node === null) {
      const inner = again.error;
      lastFilterError = "filter: canonical form past the limits (" + (inner !== null ? inner.message : "") +
        ") at 0: it parenthesises && inside ||; shorten the filter or nest less";
      return null;
    }
  }
  return canonical;
}
