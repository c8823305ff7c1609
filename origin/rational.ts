// Exact rationals for frame rates and option values like `48/25` (no floating point: a filter
// `FrameRate == 30000/1001` must select 29.97 fps tracks exactly).

export interface Rational {
  readonly num: number;
  readonly den: number;
}

function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Reduced rational with a positive denominator. */
export function rational(num: number, den: number): Rational {
  if (!Number.isSafeInteger(num) || !Number.isSafeInteger(den) || den === 0) {
    throw new RangeError(`invalid rational ${num}/${den}`);
  }
  const g = gcd(num, den) || 1;
  const sign = den < 0 ? -1 : 1;
  return { num: (sign * num) / g, den: (sign * den) / g };
}

export function formatRational(r: Rational): string {
  return r.den === 1 ? String(r.num) : `${r.num}/${r.den}`;
}

/** Parses `30000/1001`, `25` or `-3/2`; undefined when the text is not of that shape. */
export function parseRational(text: string): Rational | undefined {
  const m = /^(-?\d{1,15})(?:\/(\d{1,15}))?$/.exec(text.trim());
  if (m === null) return undefined;
  const den = m[2] === undefined ? 1 : Number(m[2]);
  if (den === 0) return undefined;
  return rational(Number(m[1]), den);
}

export function rationalEquals(a: Rational, b: Rational): boolean {
  return a.num === b.num && a.den === b.den;
}

export function rationalToNumber(r: Rational): number {
  return r.num / r.den;
}
