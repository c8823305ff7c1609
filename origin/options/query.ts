// The query string of a request as name/value pairs, before any of them is read as a stream
// option (registry.ts applyQuery): the length cap and the one percent-decoding.

import { originError } from '../errors';

/** Longest query string we look at (the reference's derivatives cap at 2048; filters need more). */
export const MAX_QUERY_LENGTH = 16384;

/**
 * Splits a raw query string (without `?`) into decoded name/value pairs. Values are
 * percent-decoded exactly once (`%26%26` inside a filter becomes `&&`; a `%2526` stays `%26`);
 * `+` is kept literally. A bare name (`?hls_fmp4`) has value undefined.
 */
export function parseQuery(raw: string): Array<[string, string | undefined]> {
  if (raw.length > MAX_QUERY_LENGTH)
    throw originError('bad-query', `query string longer than ${MAX_QUERY_LENGTH} characters`);
  const out: Array<[string, string | undefined]> = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodeOnce(eq < 0 ? part : part.slice(0, eq), 'parameter name');
    const value = eq < 0 ? undefined : decodeOnce(part.slice(eq + 1), `value of ${name}`);
    out.push([name, value]);
  }
  return out;
}

function decodeOnce(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw originError('bad-query', `malformed percent-encoding in the ${what}: "${text.slice(0, 64)}"`);
  }
}
