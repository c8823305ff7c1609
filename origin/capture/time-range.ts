// The `t` range `origin capture` takes (the same grammar as the origin's `t` option,
// docs/reference/options.md): `<start>[-[<end>]]`, each point either an offset on the
// presentation's timeline (seconds `12.5` or `hh:mm:ss[.fff]`) or a wall-clock time in ISO 8601
// without a zone (`2026-11-26T10:00:00[.fff]`, read as UTC, the time the origin's UTC-anchored live
// archive uses: ISO/IEC 23009-1 §5.3.9.5 availabilityStartTime, RFC 8216 §4.3.2.6
// EXT-X-PROGRAM-DATE-TIME). A range with only a start runs to the end of the presentation, or for a
// live one, to the current time. Pure: text in, numbers out.

import { originError } from '../errors';

export type TimePoint = { kind: 'offset'; seconds: number } | { kind: 'utc'; ms: number };

export interface TimeRange {
  start: TimePoint;
  /** Absent: to the end (VOD) or to now (live). */
  end?: TimePoint;
}

const ISO = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?';
const OFFSET = '\\d+(?::\\d{2}){0,2}(?:\\.\\d+)?';
const POINT = `(${ISO}|${OFFSET})`;
const RANGE = new RegExp(`^${POINT}(?:-${POINT}?)?$`);

export function parseTimeRange(text: string): TimeRange {
  const m = RANGE.exec(text);
  if (m === null)
    throw originError(
      'bad-time',
      `t=${text}: use <start>[-<end>] with seconds, hh:mm:ss[.fff] or an ISO 8601 time without zone`,
    );
  const start = parsePoint(m[1]!, text);
  const range: TimeRange = m[2] === undefined ? { start } : { start, end: parsePoint(m[2], text) };
  if (range.end !== undefined && range.end.kind !== start.kind)
    throw originError('bad-time', `t=${text}: give both points as offsets or both as ISO 8601 times`);
  if (range.end !== undefined && pointValue(range.end) <= pointValue(start))
    throw originError('bad-time', `t=${text}: the end is not after the start`);
  return range;
}

function parsePoint(p: string, whole: string): TimePoint {
  if (p.includes('T')) {
    const ms = Date.parse(`${p}Z`);
    if (!Number.isFinite(ms)) throw originError('bad-time', `t=${whole}: ${p} is not a date`);
    return { kind: 'utc', ms };
  }
  const parts = p.split(':').map(Number);
  if (parts.slice(1).some((n) => n >= 60)) throw originError('bad-time', `t=${whole}: ${p} has a field past 59`);
  return { kind: 'offset', seconds: parts.reduce((s, n) => s * 60 + n, 0) };
}

function pointValue(p: TimePoint): number {
  return p.kind === 'offset' ? p.seconds : p.ms / 1000;
}

/**
 * A point as seconds on the presentation timeline; `anchorMs` is the wall-clock time of timeline 0
 * when the manifest gives one (a live MPD's availabilityStartTime, HLS program date time).
 */
export function secondsOf(p: TimePoint, anchorMs: number | undefined): number {
  if (p.kind === 'offset') return p.seconds;
  if (anchorMs === undefined)
    throw originError(
      'bad-time',
      `an ISO 8601 time needs a wall-clock anchor the manifest does not give (no availabilityStartTime or program date time): use offsets`,
    );
  return (p.ms - anchorMs) / 1000;
}
