// The statuses of live segment refusals as `origin serve` flags and config keys set them
// (cli/serve-refusals.ts): the reference's table by default, each value validated.

import { UsageError } from '../../../origin/cli/args';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { parseRefusalStatus, refusalStatusTable } from '../../../origin/cli/serve-refusals';
import { LIVE_FRAGMENT_STATUS } from '../../../origin/error-codes';

test('the default is the reference table; one status sets every format, a list some', () => {
  expect(refusalStatusTable({})).toEqual(LIVE_FRAGMENT_STATUS);
  const t = refusalStatusTable({ 'fragment-missing': '503', 'fragment-not-yet': 'dash=425, hls=503' });
  expect(t).toEqual({
    smooth: { 'fragment-expired': 404, 'fragment-missing': 503, 'fragment-not-yet': 412 },
    hds: { 'fragment-expired': 404, 'fragment-missing': 503, 'fragment-not-yet': 503 },
    hls: { 'fragment-expired': 404, 'fragment-missing': 503, 'fragment-not-yet': 503 },
    dash: { 'fragment-expired': 410, 'fragment-missing': 503, 'fragment-not-yet': 425 },
  });
  // The reference's own table is not changed by it.
  expect(LIVE_FRAGMENT_STATUS.dash['fragment-not-yet']).toBe(404);
});

test.each([
  ['200', '"200" is not an error status (400..599)'],
  ['600', '"600" is not an error status (400..599)'],
  ['4040', '"4040" is not an error status (400..599)'],
  ['', 'expected <status> or <format>=<status>'],
  ['dash=', 'expected <status> or <format>=<status>'],
  ['dash:404', 'expected <status> or <format>=<status>'],
  ['mss=404', 'unknown format "mss" (smooth, hds, hls, dash)'],
  ['dash=404,dash=410', 'dash is given twice'],
  ['dash=404,,hls=404', 'expected <status> or <format>=<status>'],
])('%j is refused: %s', (value, why) => {
  expect(() => parseRefusalStatus('--fragment-missing-status', value)).toThrow(UsageError);
  expect(() => parseRefusalStatus('--fragment-missing-status', value)).toThrow(why);
});

test('origin serve takes the flags, validates them as they are read, and a file value at start', () => {
  const a = parseServeArgs([
    '--root',
    '/srv',
    '--fragment-not-yet-status',
    'dash=425',
    '--fragment-expired-status',
    '404',
  ]);
  expect([a.fragmentNotYetStatus, a.fragmentExpiredStatus, a.fragmentMissingStatus]).toEqual([
    'dash=425',
    '404',
    undefined,
  ]);
  expect(() => parseServeArgs(['--root', '/srv', '--fragment-missing-status', 'hls=302'])).toThrow(
    '--fragment-missing-status "hls=302": "302" is not an error status (400..599)',
  );
  expect(() => parseServeArgs(['--root', '/srv', '--fragment-missing-status'])).toThrow(UsageError);
  // A config file's value (a string) reaches the table when the server starts, checked there.
  expect(() => refusalStatusTable({ 'fragment-expired': 'hds=abc' })).toThrow('--fragment-expired-status');
});
