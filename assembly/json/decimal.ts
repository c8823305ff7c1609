// Decimal text -> nearest f64 (round half to even), so that configuration numbers read exactly
// as JSON.parse reads them. AssemblyScript's parseFloat is not good enough for that: it keeps 19
// digits, is sometimes an ulp off, and for 16-19 digit significands with exponents 23..37 it
// drops a factor of 10^(exp-22) altogether ("9.007199254756431e43" reads as 9.00719925475646e37;
// found by the differential test in test/assembly/proxy/json.test.ts).
//
// Method: a first guess within a few ulps (19 digits times a power of ten), then exact
// big-integer comparisons with the halfway points to the neighbouring doubles, stepping one ulp
// at a time (the correction step of Clinger's AlgorithmR, "How to read floating point numbers
// accurately", PLDI 1990).
//
// Input: the text of a number already validated by the JSON grammar (ASCII digits, optional
// '-', '.', exponent). Output: the value, or +-Infinity when it is beyond f64 range.

/** Significant digits kept exactly; later non-zero digits only act as a "sticky" excess, which
 * decides every case: a halfway point between two doubles has at most 767 significant digits. */
const MAX_DIGITS = 800;
/** 32-bit limbs per big integer: enough for 800 digits times 10^330 times 2^1077 (~ 6,000 bits). */
const LIMBS = 224;

class Big {
  limbs: StaticArray<u32> = new StaticArray<u32>(LIMBS);
  size: i32 = 0;
  overflow: bool = false;

  static of(value: u64): Big {
    const big = new Big();
    big.limbs[0] = <u32>value;
    big.limbs[1] = <u32>(value >> 32);
    big.size = value == 0 ? 0 : value >> 32 != 0 ? 2 : 1;
    return big;
  }

  /** this = this * factor + addend */
  mulAdd(factor: u32, addend: u32): void {
    let carry = <u64>addend;
    for (let i = 0; i < this.size; i++) {
      const t = <u64>this.limbs[i] * <u64>factor + carry;
      this.limbs[i] = <u32>t;
      carry = t >> 32;
    }
    if (carry != 0) this.push(<u32>carry);
  }

  private push(limb: u32): void {
    if (this.size >= LIMBS) {
      this.overflow = true;
      return;
    }
    this.limbs[this.size++] = limb;
  }

  mulPow10(n: i32): void {
    while (n >= 9) {
      this.mulAdd(1000000000, 0);
      n -= 9;
    }
    let factor: u32 = 1;
    for (let i = 0; i < n; i++) factor *= 10;
    this.mulAdd(factor, 0);
  }

  shiftLeft(bits: i32): void {
    if (this.size == 0 || bits == 0) return;
    const words = bits >> 5;
    const rest = bits & 31;
    if (this.size + words + 1 > LIMBS) {
      this.overflow = true;
      return;
    }
    let top: u32 = 0;
    if (rest != 0) top = this.limbs[this.size - 1] >> (32 - rest);
    for (let i = this.size - 1; i >= 0; i--) {
      const low = i > 0 && rest != 0 ? this.limbs[i - 1] >> (32 - rest) : 0;
      this.limbs[i + words] = (this.limbs[i] << rest) | low;
    }
    for (let i = 0; i < words; i++) this.limbs[i] = 0;
    this.size += words;
    if (top != 0) this.limbs[this.size++] = top;
  }

  compare(other: Big): i32 {
    if (this.size != other.size) return this.size > other.size ? 1 : -1;
    for (let i = this.size - 1; i >= 0; i--) {
      const a = this.limbs[i];
      const b = other.limbs[i];
      if (a != b) return a > b ? 1 : -1;
    }
    return 0;
  }
}

/** Significant digits and exponent of the number text: value = digits x 10^exponent. */
class Decimal {
  digits: string = '';
  exponent: i32 = 0;
  sticky: bool = false;
}

function decompose(base: usize, length: i32): Decimal {
  const d = new Decimal();
  const kept = new Array<string>(0);
  let count = 0;
  let pointShift = 0; // digits after the decimal point that were kept or dropped as zeros
  let afterPoint = false;
  let leading = true;
  let dropped = 0; // digits beyond MAX_DIGITS (before the point they still scale the value)
  let p = 0;
  if (load<u8>(base) == 0x2d) p++;
  for (; p < length; p++) {
    const c = <i32>load<u8>(base + <usize>p);
    if (c == 0x2e) {
      afterPoint = true;
      continue;
    }
    if (c < 0x30 || c > 0x39) break;
    if (leading && c == 0x30) {
      if (afterPoint) pointShift++;
      continue;
    }
    leading = false;
    if (count < MAX_DIGITS) {
      kept.push(String.fromCharCode(c));
      count++;
      if (afterPoint) pointShift++;
    } else {
      if (c != 0x30) d.sticky = true;
      if (!afterPoint) dropped++;
    }
  }
  let exponent = 0;
  if (p < length) {
    // exponent: [eE][+-]?digits, clamped (beyond +-100000 the result is 0 or Infinity anyway)
    p++;
    let negative = false;
    const sign = <i32>load<u8>(base + <usize>p);
    if (sign == 0x2d || sign == 0x2b) {
      negative = sign == 0x2d;
      p++;
    }
    for (; p < length; p++) {
      if (exponent < 100000) exponent = exponent * 10 + (<i32>load<u8>(base + <usize>p) - 0x30);
    }
    if (negative) exponent = -exponent;
  }
  // trailing zeros of the kept digits move into the exponent
  let end = kept.length;
  while (end > 0 && kept[end - 1] == '0') end--;
  d.digits = kept.slice(0, end).join('');
  d.exponent = exponent - pointShift + dropped + (kept.length - end);
  return d;
}

function digitsToBig(digits: string): Big {
  const big = new Big();
  let chunk: u32 = 0;
  let chunkDigits = 0;
  let scale: u32 = 1;
  for (let i = 0, n = digits.length; i < n; i++) {
    chunk = chunk * 10 + <u32>(digits.charCodeAt(i) - 0x30);
    scale *= 10;
    if (++chunkDigits == 9) {
      big.mulAdd(scale, chunk);
      chunk = 0;
      chunkDigits = 0;
      scale = 1;
    }
  }
  if (chunkDigits > 0) big.mulAdd(scale, chunk);
  return big;
}

/** Compares digits x 10^exponent (+ sticky) with h x 2^j: -1, 0, 1; 2 if the numbers are too big. */
function compareWithHalfway(d: Decimal, h: u64, j: i32): i32 {
  const left = digitsToBig(d.digits);
  const right = Big.of(h);
  if (d.exponent > 0) left.mulPow10(d.exponent);
  else right.mulPow10(-d.exponent);
  if (j > 0) right.shiftLeft(j);
  else left.shiftLeft(-j);
  if (left.overflow || right.overflow) return 2;
  const c = left.compare(right);
  return c == 0 && d.sticky ? 1 : c;
}

const MANTISSA_BITS: u64 = 52;
const HIDDEN: u64 = 1 << 52;

/** First guess: the leading 19 digits (one rounding) times 10^e (Math.pow, < 1 ulp). */
function guess(d: Decimal): f64 {
  const n = min(d.digits.length, 19);
  let leading: u64 = 0;
  for (let i = 0; i < n; i++) leading = leading * 10 + <u64>(d.digits.charCodeAt(i) - 0x30);
  const e = d.exponent + (d.digits.length - n);
  const m = <f64>leading;
  if (e >= 0) return m * Math.pow(10, <f64>e);
  if (e >= -308) return m / Math.pow(10, <f64>-e);
  return m / 1e308 / Math.pow(10, <f64>(-e - 308)); // subnormal results
}

/** Exact product of two doubles below 2^53 and 10^22: one rounding, the correct result. */
const EXACT_POWERS: StaticArray<f64> = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
  1e21, 1e22,
];

/** Nearest f64 to the validated JSON number text at base[0, length). */
export function decimalToF64(base: usize, length: i32): f64 {
  const negative = load<u8>(base) == 0x2d;
  const d = decompose(base, length);
  if (d.digits.length == 0) return negative ? -0.0 : 0.0;
  const magnitude = d.exponent + d.digits.length; // value < 10^magnitude
  if (magnitude > 310) return negative ? -Infinity : Infinity;
  if (magnitude < -330) return negative ? -0.0 : 0.0;

  let x: f64;
  if (d.digits.length <= 15 && d.exponent >= -22 && d.exponent <= 22) {
    // Clinger's fast path: both operands exact, so the one rounding is the correct one.
    let digits: u64 = 0;
    for (let i = 0, n = d.digits.length; i < n; i++) digits = digits * 10 + <u64>(d.digits.charCodeAt(i) - 0x30);
    const m = <f64>digits;
    x = d.exponent >= 0 ? m * EXACT_POWERS[d.exponent] : m / EXACT_POWERS[-d.exponent];
    return negative ? -x : x;
  }
  x = guess(d);
  if (!isFinite(x)) x = F64.MAX_VALUE;
  for (let iteration = 0; iteration < 64; iteration++) {
    const bits = reinterpret<u64>(x);
    const biased = <i32>(bits >> MANTISSA_BITS);
    const m: u64 = biased == 0 ? bits & (HIDDEN - 1) : (bits & (HIDDEN - 1)) | HIDDEN;
    const k: i32 = biased == 0 ? -1074 : biased - 1075;
    // Upper halfway point (2m+1) x 2^(k-1); a tie goes to the even mantissa.
    const up = compareWithHalfway(d, 2 * m + 1, k - 1);
    if (up == 2) break;
    if (up > 0 || (up == 0 && (m & 1) != 0)) {
      if (x == F64.MAX_VALUE) return negative ? -Infinity : Infinity;
      x = reinterpret<f64>(bits + 1);
      continue;
    }
    if (m == 0) break;
    // Lower halfway point; the gap below a power of two (not subnormal) is half as wide.
    const atBoundary = m == HIDDEN && biased > 1;
    const down = atBoundary ? compareWithHalfway(d, 4 * m - 1, k - 2) : compareWithHalfway(d, 2 * m - 1, k - 1);
    if (down == 2) break;
    if (down < 0 || (down == 0 && (m & 1) != 0)) {
      x = reinterpret<f64>(bits - 1);
      continue;
    }
    break;
  }
  return negative ? -x : x;
}
