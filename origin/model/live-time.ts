// The time controls of a request on a live channel (docs/guide/live.md#time-controls): `t`,
// `vbegin` and `vend` read as instants on the channel's timeline. A channel's timeline is UTC
// wall-clock time: output time 0 is the channel anchor, seconds since 1970 (model/live.ts), so
//   - an ISO 8601 date (`2026-11-27T10:00:00`, `…:00.500`, with or without `Z`; without a zone it
//     is UTC, as the reference's capture form `t=2013-03-31T12:00:00.000-…` is) names that
//     instant;
//   - a number of seconds (`1764237600`, `1764237600.5`, or the `h:mm:ss.ff` form VOD takes) is
//     an offset on the presentation timeline, as it is for VOD: on a channel that timeline starts
//     at the anchor, so seconds are seconds since 1970-01-01T00:00:00Z.
// `t=<start>` has no end: the range runs to the live edge and stays live. Pure: text in, seconds
// from the anchor out; which fragments a range keeps is live-window.ts's.

import { originError } from '../errors';
import { parseOffset } from './timeline';

/** A requested range, seconds from the channel anchor; an absent side is open. */
export interface LiveRange {
  start: number | undefined;
  end: number | undefined;
  /** The parameter that set it, as errors about the range name it: `t`, `vbegin` or `vend`. */
  parameter: 't' | 'vbegin' | 'vend';
}

const ISO = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?Z?';
/** Seconds since the anchor (up to 12 digits: a UTC time in seconds has 10), or h:mm:ss.ff. */
const OFFSET = '\\d{1,12}(?:\\.\\d{1,9})?|\\d{1,3}(?::\\d{1,2}){1,2}(?:\\.\\d{1,9})?';
const POINT = `(${ISO}|${OFFSET})`;
const RANGE = new RegExp(`^${POINT}(?:-${POINT}?)?$`);
const ISO_FIELDS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z?$/;
/** 9999-12-31T23:59:59Z: the last instant an ISO 8601 date of four-digit years names. */
const LATEST_SECONDS = 253402300799;

/** `t`, `vbegin` and `vend` of a live request into a range; undefined when none is given. */
export function parseLiveRange(
  t: string | undefined,
  vbegin: string | undefined,
  vend: string | undefined,
  anchorSeconds: number,
): LiveRange | undefined {
  if (t !== undefined && (vbegin !== undefined || vend !== undefined))
    throw originError('bad-time', 'give either t or vbegin/vend, not both', { subject: 't' });
  let range: LiveRange | undefined;
  let shown = '';
  if (t !== undefined) {
    const m = RANGE.exec(t);
    if (m === null)
      throw originError(
        'bad-time',
        `"${t.slice(0, 80)}" is not a range: <start>[-<end>], each an ISO 8601 date (2026-11-27T10:00:00, UTC) or seconds since 1970`,
        { subject: 't' },
      );
    range = { start: instant(m[1]!, 't', anchorSeconds), end: optional(m[2], 't', anchorSeconds), parameter: 't' };
    shown = `t=${t}`;
  } else if (vbegin !== undefined || vend !== undefined) {
    range = {
      start: optional(vbegin, 'vbegin', anchorSeconds),
      end: optional(vend, 'vend', anchorSeconds),
      parameter: vbegin !== undefined ? 'vbegin' : 'vend',
    };
    shown = [vbegin === undefined ? '' : `vbegin=${vbegin}`, vend === undefined ? '' : `vend=${vend}`].join(' ');
  }
  if (range?.start !== undefined && range.end !== undefined && range.end <= range.start)
    throw originError('bad-time', `${shown.trim().slice(0, 160)}: the end is not after the start`, {
      subject: range.parameter === 't' ? 't' : 'vend',
    });
  return range;
}

function optional(text: string | undefined, parameter: string, anchorSeconds: number): number | undefined {
  return text === undefined ? undefined : instant(text, parameter, anchorSeconds);
}

/** One point, seconds from the anchor. */
function instant(text: string, parameter: string, anchorSeconds: number): number {
  if (text.includes('T')) return isoSeconds(text, parameter) - anchorSeconds;
  if (!/^\d{1,12}(?:\.\d{1,9})?$/.test(text)) return parseOffset(text, parameter);
  const seconds = Number(text);
  if (seconds > LATEST_SECONDS) throw originError('bad-time', `${text} is after the year 9999`, { subject: parameter });
  return seconds;
}

/** An ISO 8601 date-time read as UTC, seconds since 1970; a field out of range is a 400. */
function isoSeconds(text: string, parameter: string): number {
  const m = ISO_FIELDS.exec(text);
  if (m === null)
    throw originError('bad-time', `"${text.slice(0, 80)}" is not an ISO 8601 date like 2026-11-27T10:00:00`, {
      subject: parameter,
    });
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  // Date.UTC rolls over (February 30th is March 2nd): a date that does not round-trip is no date.
  const back = new Date(ms);
  if (
    y < 1970 ||
    back.getUTCFullYear() !== y ||
    back.getUTCMonth() !== mo - 1 ||
    back.getUTCDate() !== d ||
    back.getUTCHours() !== h ||
    back.getUTCMinutes() !== mi ||
    back.getUTCSeconds() !== s
  )
    throw originError('bad-time', `"${text.slice(0, 80)}" is not a date (a field is out of range, or before 1970)`, {
      subject: parameter,
    });
  const fraction = m[7] === undefined ? 0 : Number(`0.${m[7]}`);
  return ms / 1000 + fraction;
}
