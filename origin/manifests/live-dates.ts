// Wall-clock dates of live output, from the channel anchor (model/live.ts): DASH
// @availabilityStartTime and @publishTime (xs:dateTime), HLS EXT-X-PROGRAM-DATE-TIME (RFC 8216
// §4.3.2.6, ISO 8601 with milliseconds).

/** xs:dateTime in UTC, with milliseconds unless they are 0 (`1970-01-01T00:00:00Z`). */
export function isoDate(ms: number): string {
  const text = new Date(Math.floor(ms)).toISOString();
  return text.endsWith('.000Z') ? `${text.slice(0, -5)}Z` : text;
}

/** anchor + ticks/timescale as an ISO 8601 date with milliseconds (floor to the millisecond). */
export function programDateTime(anchorSeconds: number, ticks: bigint, timescale: number): string {
  const num = (BigInt(anchorSeconds) * BigInt(timescale) + ticks) * 1000n;
  const den = BigInt(timescale);
  const q = num / den;
  return new Date(Number(num % den !== 0n && num < 0n ? q - 1n : q)).toISOString();
}
