// Test-only module (never shipped): the validate_filter query check with its cache, as plain
// exports for test/assembly/edge/filter-cache.test.ts (compiled with asc, called through
// @assemblyscript/loader): the bound holds, and an answer from the cache is the answer a fresh
// check gives.

import {
  MAX_CACHED_FILTERS,
  cachedFilterCount,
  checkFilters,
  clearFilterCache,
} from '../../assembly/edge/filter-query';

/** The query to forward, or "!" + the error text. */
export function check(query: string): string {
  const result = checkFilters(query);
  return result.error.length > 0 ? '!' + result.error : result.query;
}

export function cachedCount(): i32 {
  return cachedFilterCount();
}

export function clearCache(): void {
  clearFilterCache();
}

export function maxCached(): i32 {
  return MAX_CACHED_FILTERS;
}
