// What the edge does with one request, in this order (docs/reference/edge-config.md):
//
//   1. normalise    :path split into path and query, path decoded once; hostile shapes refused
//                   (target.ts) whatever the configuration
//   2. location     the longest matching prefix (config.ts); none: only step 1 and 7 apply
//   3. auth_basic   before anything that could reveal what exists behind it
//   4. auth_token   verify, then remove the hash and timestamp segments (token.ts)
//   5. rewrite      the location's rules on the stripped path (rewrite.ts); the location is not
//                   chosen again for the result
//   6. filter       validate_filter on the final query (filter-query.ts)
//   7. :path        the final path in its canonical encoding, plus the query
//
// Pure: the caller hands in the raw bytes of :path and of the Authorization header (only needed
// for auth_basic) and the time; the answer is a Verdict. No host call happens here.

import { applyRewrite } from './rewrite';
import { EdgeConfig } from './config';
import { FilterCheck, checkFilters } from './filter-query';
import { Refusal, Verdict } from './refusals';
import { MAX_QUERY_BYTES, checkDecodedPath, checkQuery, encodePath, parseTargetBytes } from './target';
import { checkToken } from './token';

/** `now`: seconds since the epoch (only read by auth_token). */
export function decide(config: EdgeConfig, rawTarget: Uint8Array, authorization: Uint8Array | null, now: i64): Verdict {
  const target = parseTargetBytes(rawTarget);
  if (target.error.length > 0) {
    const refusal = target.tooLong ? Refusal.UrlTooLong : target.badQuery ? Refusal.BadQuery : Refusal.BadPath;
    return Verdict.refuse(refusal, target.error);
  }
  let path = target.path;
  let query = target.query;
  let rewrote = false;
  let checked: FilterCheck | null = null;
  const location = config.match(path);
  if (location !== null) {
    const basic = location.basic;
    if (basic !== null) {
      const refused = basic.check(authorization);
      if (refused !== null) return refused;
    }
    const token = location.token;
    if (token !== null) {
      const checked = checkToken(token, path, now);
      const refused = checked.verdict;
      if (refused !== null) return refused;
      path = checked.path;
    }
    const rules = location.rewrite;
    if (rules !== null) {
      const rewritten = applyRewrite(rules, path, query);
      if (rewritten !== null) {
        rewrote = true;
        const problem = checkDecodedPath(rewritten.path);
        if (problem.length > 0)
          return noted(Verdict.refuse(Refusal.RewriteBadPath, 'the rewritten path is refused: ' + problem), true, null);
        const queryProblem =
          rewritten.query.length > MAX_QUERY_BYTES ? 'rewritten query too long' : checkQuery(rewritten.query);
        if (queryProblem.length > 0) return noted(Verdict.refuse(Refusal.BadQuery, queryProblem), true, null);
        path = rewritten.path;
        query = rewritten.query;
      }
    }
    if (location.validateFilter) {
      const filters = checkFilters(query);
      if (filters.error.length > 0) return noted(Verdict.refuse(Refusal.BadFilter, filters.error), rewrote, filters);
      query = filters.query;
      checked = filters;
    }
  }
  const out = query.length > 0 ? joinTarget(encodePath(path), query) : encodePath(path);
  return noted(Verdict.pass(out), rewrote, checked);
}

/** What the plugin's counters read from a verdict (edge/metrics.ts): a rule matched, filter
 * checks answered from the cache or checked anew. */
function noted(verdict: Verdict, rewrote: bool, filters: FilterCheck | null): Verdict {
  verdict.rewritten = rewrote;
  if (filters !== null) {
    verdict.filterHits = filters.hits;
    verdict.filterMisses = filters.misses;
  }
  return verdict;
}

/** path + "?" + query in one allocation (the usual string concatenation makes two). */
function joinTarget(path: string, query: string): string {
  const p = path.length;
  const q = query.length;
  const out = changetype<string>(__new((<usize>(p + 1 + q)) << 1, idof<string>()));
  const o = changetype<usize>(out);
  memory.copy(o, changetype<usize>(path), (<usize>p) << 1);
  store<u16>(o + ((<usize>p) << 1), 0x3f);
  memory.copy(o + ((<usize>(p + 1)) << 1), changetype<usize>(query), (<usize>q) << 1);
  return out;
}
