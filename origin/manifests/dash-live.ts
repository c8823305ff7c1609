// What a dynamic MPD adds to the static one (ISO/IEC 23009-1 §5.3.1.2 Table 3, §5.4; the DASH-IF
// timing model, live-notes §3.1): the MPD attributes of a live channel and its UTCTiming. The
// Period starts at 0 = @availabilityStartTime = the channel anchor, with no presentationTimeOffset,
// so a segment's `$Time$` is its time since the anchor and every origin writes the same one.
// After the end of stream the MPD is static (dash.ts writes the window as a VOD clip).

import { LiveDescription } from '../model/live';
import { isoDate } from './live-dates';

type Attr = [string, string | number | undefined];

/**
 * The origin's own time URL (server/ops-endpoints.ts): an xs:dateTime with milliseconds.
 * Host-relative, so it names the origin that served the MPD (shaka resolves it against the MPD's
 * URL, dash.js against the page's: both the origin when the page is served by it or its edge).
 */
export const TIME_PATH = '/.time';
export const UTC_TIMING_SCHEME = 'urn:mpeg:dash:utc:http-xsdate:2014';

/** The MPD@ attributes of a dynamic MPD after the namespaces, in schema order of their meaning. */
export function dynamicAttributes(
  live: LiveDescription,
  maxSegmentMs: bigint,
  isoDuration: (ms: bigint) => string,
  /** Low-latency (dash-low-latency.ts): the chunk duration, ms; the client refreshes as often. */
  chunkMs?: bigint,
): Attr[] {
  return [
    ['type', 'dynamic'],
    // Fixed for the life of the channel (§5.4.1: SHALL NOT change between updates).
    ['availabilityStartTime', isoDate(live.anchorSeconds * 1000)],
    ['publishTime', isoDate(live.publishedMs)],
    // A new segment per segment duration: the client refreshes as often (§5.4.1).
    ['minimumUpdatePeriod', isoDuration(chunkMs ?? maxSegmentMs)],
    ['timeShiftBufferDepth', isoDuration(BigInt(Math.round(live.dvrWindowSeconds * 1000)))],
    // Three segments behind the edge, as hls.js (liveSyncDurationCount 3) and dash.js default.
    ['suggestedPresentationDelay', isoDuration(3n * maxSegmentMs)],
  ];
}

/** §5.8.4.11: a dynamic MPD SHALL carry a UTCTiming (after the Periods in MPDtype's sequence). */
export function utcTimingLine(): string {
  return `  <UTCTiming schemeIdUri="${UTC_TIMING_SCHEME}" value="${TIME_PATH}" />`;
}
