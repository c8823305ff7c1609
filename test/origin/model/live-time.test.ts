// The time controls of a live request, pure: how `t`, `vbegin` and `vend` are read on a channel
// (model/live-time.ts) and which window the view then lists (model/live-window.ts liveWindow).

import { OriginError } from '../../../origin/errors';
import { LiveDescription } from '../../../origin/model/live';
import { parseLiveRange } from '../../../origin/model/live-time';
import { liveWindow } from '../../../origin/model/live-window';

const T0 = Date.UTC(2026, 10, 27, 10, 0, 0) / 1000;

describe('parseLiveRange', () => {
  test.each([
    ['2026-11-27T10:00:00', T0],
    ['2026-11-27T10:00:00Z', T0],
    ['2026-11-27T10:00:00.250', T0 + 0.25],
    ['2024-02-29T00:00:00', Date.UTC(2024, 1, 29) / 1000],
    [String(T0), T0],
    [`${T0}.5`, T0 + 0.5],
    // The VOD offset forms are seconds on the channel's timeline too: since 1970.
    ['0:01:00', 60],
  ])('t=%s starts at %d s and runs to the edge', (text, seconds) => {
    expect(parseLiveRange(text, undefined, undefined, 0)).toEqual({ start: seconds, end: undefined, parameter: 't' });
  });

  test('ranges: ISO, seconds, vbegin/vend, vend alone; ISO less the anchor', () => {
    expect(parseLiveRange('2026-11-27T10:00:00-2026-11-27T10:00:30', undefined, undefined, 0)).toEqual({
      start: T0,
      end: T0 + 30,
      parameter: 't',
    });
    expect(parseLiveRange(`${T0}-${T0 + 30}`, undefined, undefined, 0)).toEqual({
      start: T0,
      end: T0 + 30,
      parameter: 't',
    });
    expect(parseLiveRange(`${T0}-`, undefined, undefined, 0)).toEqual({ start: T0, end: undefined, parameter: 't' });
    expect(parseLiveRange(undefined, '2026-11-27T10:00:00', String(T0 + 30), 0)).toEqual({
      start: T0,
      end: T0 + 30,
      parameter: 'vbegin',
    });
    expect(parseLiveRange(undefined, undefined, '2026-11-27T10:00:00', 0)).toEqual({
      start: undefined,
      end: T0,
      parameter: 'vend',
    });
    expect(parseLiveRange('2026-11-27T10:00:00', undefined, undefined, T0 - 100)).toEqual({
      start: 100,
      end: undefined,
      parameter: 't',
    });
    expect(parseLiveRange(undefined, undefined, undefined, 0)).toBeUndefined();
  });

  test.each([
    ['t', 'tomorrow', /is not a range/],
    ['t', '-5', /is not a range/],
    ['t', '2026-11-27', /is not a range/],
    ['t', '2026-11-27T10:00:00+01:00', /is not a range/],
    ['t', '2026-11-27T10:00:00-2026-11-27T09:00:00', /the end is not after the start/],
    ['t', '2026-02-29T00:00:00', /not a date/],
    ['t', '2026-11-27T24:00:00', /not a date/],
    ['t', '1969-12-31T23:59:59', /before 1970/],
    ['t', '999999999999', /after the year 9999/],
    ['t', '0:61:00', /60 or more/],
    ['vbegin', '-1', /not a time offset/],
    ['vend', 'later', /not a time offset/],
  ])('%s=%s is a 400', (name, text, message) => {
    const args: [string | undefined, string | undefined, string | undefined] = [undefined, undefined, undefined];
    args[['t', 'vbegin', 'vend'].indexOf(name)] = text;
    let error: unknown;
    try {
      parseLiveRange(...args, 0);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OriginError);
    expect([(error as OriginError).code, (error as OriginError).kind]).toEqual(['bad-time', 'bad-request']);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message.startsWith(`${name}: `)).toBe(true);
  });

  test('t with vbegin or vend is a 400', () => {
    expect(() => parseLiveRange('1-2', undefined, '3', 0)).toThrow(/either t or vbegin\/vend/);
    expect(() => parseLiveRange(undefined, '20', '10', 0)).toThrow(/the end is not after the start/);
  });
});

describe('liveWindow', () => {
  const live: LiveDescription = {
    ended: false,
    publishedMs: 0,
    dvrWindowSeconds: 30,
    anchorSeconds: 0,
    edgeSeconds: 1000,
    archiveStartSeconds: 100,
  };
  const none = { range: undefined, timeShiftSeconds: 0, queryWindowSeconds: undefined };

  test('the DVR window at the edge; a query shrinks it, never grows it; a shift moves it back', () => {
    expect(liveWindow(live, none)).toEqual({ clip: { start: 970, end: undefined }, live });
    expect(liveWindow(live, { ...none, queryWindowSeconds: 10 }).clip).toEqual({ start: 990, end: undefined });
    expect(liveWindow(live, { ...none, queryWindowSeconds: 10 }).live.dvrWindowSeconds).toBe(10);
    expect(liveWindow(live, { ...none, queryWindowSeconds: 300 })).toEqual(liveWindow(live, none));
    const shifted = liveWindow(live, { ...none, timeShiftSeconds: 60 });
    expect(shifted.clip).toEqual({ start: 910, end: 940 });
    expect(shifted.live).toEqual({ ...live, dvrWindowSeconds: 90 });
  });

  test('a range: cut at the live point, closed once it ends before it, from the archive start', () => {
    const open = liveWindow(live, { ...none, range: { start: 500, end: undefined, parameter: 't' } });
    expect(open).toEqual({ clip: { start: 500, end: undefined }, live: { ...live, dvrWindowSeconds: 500 } });
    const past = liveWindow(live, { ...none, range: { start: 500, end: 600, parameter: 't' } });
    expect(past.clip).toEqual({ start: 500, end: 600 });
    expect(past.live.ended).toBe(true);
    const spanning = liveWindow(live, { ...none, range: { start: 500, end: 2000, parameter: 't' } });
    expect([spanning.clip, spanning.live.ended]).toEqual([{ start: 500, end: undefined }, false]);
    const early = liveWindow(live, { ...none, range: { start: undefined, end: 600, parameter: 't' } });
    expect(early.clip).toEqual({ start: 100, end: 600 });
    const before = liveWindow(live, { ...none, range: { start: 0, end: 600, parameter: 't' } });
    expect(before.clip.start).toBe(100);
    const shifted = liveWindow(live, {
      ...none,
      range: { start: 500, end: 980, parameter: 't' },
      timeShiftSeconds: 60,
    });
    expect([shifted.clip, shifted.live.ended]).toEqual([{ start: 500, end: 940 }, false]);
    const windowed = liveWindow(live, {
      ...none,
      range: { start: 500, end: 600, parameter: 't' },
      queryWindowSeconds: 20,
    });
    expect(windowed.clip).toEqual({ start: 580, end: 600 });
  });

  test('an ended channel stays ended', () => {
    expect(
      liveWindow({ ...live, ended: true }, { ...none, range: { start: 500, end: undefined, parameter: 't' } }).live
        .ended,
    ).toBe(true);
  });
});
