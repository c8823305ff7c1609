// `origin serve --fragment-expired-status`, `--fragment-missing-status`, `--fragment-not-yet-status`
// (and `fragment_*_status` in --config): the statuses of live segment refusals, per format, over
// the reference's table (error-codes.ts LIVE_FRAGMENT_STATUS, origin-reference §8, whose
// Fmp4{Iss,Hds,Hls,Mpd}Fragment{NotFound,Missing,NotAvailable} directives set the same per format).
// A value is one status for every format (`503`) or a list for some (`dash=425,hls=503`); a
// refusal is an error, so a status is 400..599. The X-Origin-Error code stays the refusal's.

import { LIVE_FRAGMENT_STATUS, LiveFormat, LiveFragmentCode, LiveFragmentStatusTable } from '../error-codes';
import { UsageError } from './args';

/** The three flags and the refusal each sets. */
export const REFUSAL_FLAGS: Readonly<Record<string, LiveFragmentCode>> = {
  '--fragment-expired-status': 'fragment-expired',
  '--fragment-missing-status': 'fragment-missing',
  '--fragment-not-yet-status': 'fragment-not-yet',
};

export const REFUSAL_USAGE = `  --fragment-expired-status <s>    status of a live segment older than the DVR window, for
                                   every format (<status>) or some (dash=410,hls=404,...;
                                   formats smooth, hds, hls, dash); default: the reference's
                                   table (docs/reference/errors.md)
  --fragment-missing-status <s>    the same, for a live segment inside a gap
  --fragment-not-yet-status <s>    the same, for a live segment past the live edge
`;

const FORMATS: readonly LiveFormat[] = ['smooth', 'hds', 'hls', 'dash'];

/** A flag's value as the statuses it sets, or a UsageError naming the flag and the bad part. */
export function parseRefusalStatus(flag: string, value: string): Partial<Record<LiveFormat, number>> {
  const fail = (why: string): never => {
    throw new UsageError(`${flag} ${JSON.stringify(value.slice(0, 64))}: ${why}`);
  };
  const status = (text: string): number => {
    if (!/^\d{3}$/.test(text) || Number(text) < 400 || Number(text) > 599)
      fail(`${JSON.stringify(text.slice(0, 16))} is not an error status (400..599)`);
    return Number(text);
  };
  if (/^\d+$/.test(value)) {
    const s = status(value);
    return Object.fromEntries(FORMATS.map((f) => [f, s]));
  }
  const out: Partial<Record<LiveFormat, number>> = {};
  for (const part of value.split(',')) {
    const m = /^([a-z]+)=(\d+)$/.exec(part.trim());
    if (m === null) return fail('expected <status> or <format>=<status>[,<format>=<status>...]');
    const format = m[1] as LiveFormat;
    if (!FORMATS.includes(format)) fail(`unknown format "${m[1]}" (${FORMATS.join(', ')})`);
    if (out[format] !== undefined) fail(`${format} is given twice`);
    out[format] = status(m[2]!);
  }
  return out;
}

/** The table `origin serve` answers with: the reference's, with each given value over it. */
export function refusalStatusTable(given: Partial<Record<LiveFragmentCode, string>>): LiveFragmentStatusTable {
  const table = Object.fromEntries(FORMATS.map((f) => [f, { ...LIVE_FRAGMENT_STATUS[f] }])) as Record<
    LiveFormat,
    Record<LiveFragmentCode, number>
  >;
  for (const [flag, code] of Object.entries(REFUSAL_FLAGS)) {
    const value = given[code];
    if (value === undefined) continue;
    for (const [format, status] of Object.entries(parseRefusalStatus(flag, value)))
      table[format as LiveFormat][code] = status;
  }
  return table;
}
