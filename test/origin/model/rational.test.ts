import { formatRational, parseRational, rational, rationalEquals } from '../../../origin/rational';

test('rationals reduce and compare exactly', () => {
  expect(rational(60000, 2002)).toEqual({ num: 30000, den: 1001 });
  expect(rational(48, 2)).toEqual({ num: 24, den: 1 });
  expect(rational(3, -6)).toEqual({ num: -1, den: 2 });
  expect(rationalEquals(rational(30000, 1001), rational(30000, 1001))).toBe(true);
  expect(rationalEquals(rational(30000, 1001), rational(2997, 100))).toBe(false);
});

test('parse and format', () => {
  expect(parseRational('48/25')).toEqual({ num: 48, den: 25 });
  expect(parseRational(' 25 ')).toEqual({ num: 25, den: 1 });
  expect(formatRational(rational(30000, 1001))).toBe('30000/1001');
  expect(formatRational(rational(50, 2))).toBe('25');
  for (const bad of ['', '1/0', 'abc', '1.5', '1/', '/2', '1/2/3', '99999999999999999'])
    expect(parseRational(bad)).toBeUndefined();
});

test('a zero denominator is an error, not Infinity', () => {
  expect(() => rational(1, 0)).toThrow(RangeError);
});
