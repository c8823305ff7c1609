// Exact time arithmetic and TTML time expressions, checked against hand-computed rationals and
// (for rounding) against an independent integer computation.

import fc from 'fast-check';
import {
  formatTimestamp,
  fromTicks,
  parseTimeExpression,
  roundedMillis,
  seconds,
  Seconds,
  timingParameters,
} from '../../../../origin/segments/webvtt/webvtt-time';
import { parseXml } from '../../../../origin/segments/webvtt/webvtt-xml';

const params = (attrs = '') =>
  timingParameters(
    parseXml(`<tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ${attrs}/>`, 4),
  );
const t = (expr: string, attrs = ''): Seconds => parseTimeExpression(expr, params(attrs), 'begin');

test('time expressions are exact rationals', () => {
  expect(t('00:00:01.25')).toEqual(seconds(5n, 4n));
  expect(t('00:00:00:01', 'ttp:frameRate="30" ttp:frameRateMultiplier="1000 1001"')).toEqual(seconds(1001n, 30000n));
  expect(t('1t', 'ttp:frameRate="30" ttp:frameRateMultiplier="1000 1001" ttp:subFrameRate="2"')).toEqual(
    seconds(1001n, 60000n),
  );
  expect(t('1t', 'ttp:tickRate="10000000"')).toEqual(seconds(1n, 10000000n));
  expect(t('2.5f', 'ttp:frameRate="24"')).toEqual(seconds(5n, 48n));
  expect(t('00:00:60')).toEqual(seconds(60n)); // the leap-second form is in the grammar
});

test('timing parameters: defaults and the tick rate rule of TTML1 §6.2.10', () => {
  expect(params()).toMatchObject({
    frameRate: 30n,
    subFrameRate: 1n,
    tickRate: seconds(1n),
    effectiveFrameRate: seconds(30n),
  });
  expect(params('ttp:frameRate="25" ttp:subFrameRate="4"').tickRate).toEqual(seconds(100n));
  expect(params('ttp:frameRate="25" ttp:tickRate="90000"').tickRate).toEqual(seconds(90000n));
});

test('rounding to milliseconds is half up and exact', () => {
  expect(roundedMillis(seconds(1n, 2000n))).toBe(1n); // 0.5 ms
  expect(roundedMillis(seconds(4999n, 10000000n))).toBe(0n); // 0.4999 ms
  expect(roundedMillis(seconds(-1n, 2000n))).toBe(0n); // −0.5 ms rounds up to 0
  expect(roundedMillis(seconds(-3n, 2000n))).toBe(-1n); // −1.5 ms → −1
  expect(roundedMillis(fromTicks(1n, 3))).toBe(333n);
  expect(roundedMillis(fromTicks(2n, 3))).toBe(667n);
});

test('rounding agrees with a decimal-string computation for any ticks and timescale', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 1, max: 10000000 }), (ticks, timescale) => {
      // ms = ticks·1000/timescale: whole part by integer division, half up from the remainder.
      const num = ticks * 1000n;
      const den = BigInt(timescale);
      const whole = num / den;
      const up = (num % den) * 2n >= den ? 1n : 0n;
      expect(roundedMillis(fromTicks(ticks, timescale))).toBe(whole + up);
    }),
  );
});

test('WebVTT timestamps', () => {
  expect(formatTimestamp(0n)).toBe('00:00:00.000');
  expect(formatTimestamp(3723004n)).toBe('01:02:03.004');
  expect(formatTimestamp(360000000n)).toBe('100:00:00.000');
  expect(() => formatTimestamp(-1n)).toThrow(RangeError);
});
