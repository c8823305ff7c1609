// Small HTTP helpers with no state: Range (RFC 9110 §14.2) and If-None-Match (§13.1.2).

export type RangeResult = { kind: 'full' } | { kind: 'range'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One `bytes=` range (first-last, first-, or -suffix). Multiple ranges and malformed headers are
 * ignored, which RFC 9110 §14.2 allows ("a server MAY ignore the Range header field"): the
 * client then gets the whole body with 200.
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return { kind: 'full' };
  const m = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (m === null || (m[1] === '' && m[2] === '')) return { kind: 'full' };
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return { kind: 'full' };
  }
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end };
}

/** RFC 9110 §13.1.2: weak comparison, `*` matches any current representation. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const strip = (t: string): string => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => t.trim() === '*' || strip(t) === strip(etag));
}

/**
 * RFC 9110 §13.1.3: evaluated only without If-None-Match (§13.2.2); true when the resource has
 * not changed since the given date (HTTP dates have whole seconds).
 */
export function notModifiedSince(
  ifNoneMatch: string | undefined,
  ifModifiedSince: string | undefined,
  lastModified: Date,
): boolean {
  if (ifNoneMatch !== undefined || ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  if (Number.isNaN(since)) return false;
  return Math.floor(lastModified.getTime() / 1000) * 1000 <= since;
}
