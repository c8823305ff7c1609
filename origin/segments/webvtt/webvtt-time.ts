// Exact time arithmetic for the TTML → WebVTT conversion, TTML time expressions and the timing
// parameters that give them meaning. Times are signed rationals of seconds over bigint (no
// floating point: `100t` at ttp:tickRate 10000000 or frames at 30000/1001 must land on the
// same millisecond every time, and cue boundaries of adjacent samples must compare equal).

import { originError } from '../../errors';
import { attribute, XmlElement } from './webvtt-xml';

/** n/d seconds, d > 0, reduced. */
export interface Seconds {
  readonly n: bigint;
  readonly d: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

export function seconds(n: bigint, d = 1n): Seconds {
  if (d === 0n) throw new RangeError('zero denominator');
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
}

export const ZERO: Seconds = { n: 0n, d: 1n };

export const add = (a: Seconds, b: Seconds): Seconds => seconds(a.n * b.d + b.n * a.d, a.d * b.d);
export const sub = (a: Seconds, b: Seconds): Seconds => seconds(a.n * b.d - b.n * a.d, a.d * b.d);
export const cmp = (a: Seconds, b: Seconds): number => {
  const x = a.n * b.d - b.n * a.d;
  return x < 0n ? -1 : x > 0n ? 1 : 0;
};
export const min = (a: Seconds, b: Seconds): Seconds => (cmp(a, b) <= 0 ? a : b);
export const max = (a: Seconds, b: Seconds): Seconds => (cmp(a, b) >= 0 ? a : b);
export const equal = (a: Seconds, b: Seconds): boolean => a.n === b.n && a.d === b.d;

/** Ticks of a track timescale as seconds. */
export function fromTicks(ticks: bigint, timescale: number): Seconds {
  return seconds(ticks, BigInt(timescale));
}

/** Whole milliseconds, rounded half up (exact: floor((2·1000·n + d) / 2d)). */
export function roundedMillis(t: Seconds): bigint {
  const num = 2000n * t.n + t.d;
  const den = 2n * t.d;
  const q = num / den;
  return num % den !== 0n && num < 0n ? q - 1n : q; // bigint division truncates toward zero
}

/** WebVTT timestamp `hh:mm:ss.ttt` (W3C WebVTT §4.1: hours are two or more digits). */
export function formatTimestamp(ms: bigint): string {
  if (ms < 0n) throw new RangeError(`negative WebVTT timestamp ${ms} ms`);
  const pad = (v: bigint, width: number): string => v.toString().padStart(width, '0');
  return `${pad(ms / 3600000n, 2)}:${pad((ms / 60000n) % 60n, 2)}:${pad((ms / 1000n) % 60n, 2)}.${pad(ms % 1000n, 3)}`;
}

// ---------------------------------------------------------------------------------------------
// TTML timing parameters (TTML1 §6.2) and time expressions (TTML1 §10.3.1, Annex N.2).
// ---------------------------------------------------------------------------------------------

export const TTP_NS = 'http://www.w3.org/ns/ttml#parameter';
/** The DFXP draft namespace some Smooth Streaming encoders still write. */
export const TTP_NS_2006 = 'http://www.w3.org/2006/10/ttaf1#parameter';

export interface TimingParameters {
  /** ttp:frameRate (§6.2.4), frames per second before the multiplier; default 30. */
  frameRate: bigint;
  /** Effective frame rate: frameRate × ttp:frameRateMultiplier (§6.2.5), frames per second. */
  effectiveFrameRate: Seconds;
  /** ttp:subFrameRate (§6.2.9), sub-frames per frame; default 1. */
  subFrameRate: bigint;
  /** ttp:tickRate (§6.2.10), ticks per second. */
  tickRate: Seconds;
}

/** Longest time expression we read (a bound on the bigint work a hostile sample can cause). */
const MAX_EXPRESSION = 40;

/** The timing parameters of a `tt` element; any time base but `media` is refused (§6.2.11). */
export function timingParameters(tt: XmlElement): TimingParameters {
  const get = (local: string): string | undefined =>
    (attribute(tt, TTP_NS, local) ?? attribute(tt, TTP_NS_2006, local))?.trim();
  const timeBase = get('timeBase') ?? 'media';
  if (timeBase !== 'media') {
    throw originError(
      'unsupported-media',
      `ttp:timeBase="${timeBase.slice(0, 20)}" is not supported: only the media time base maps onto the track timeline (TTML1 §6.2.11)`,
    );
  }
  const positive = (local: string): bigint | undefined => {
    const v = get(local);
    if (v === undefined) return undefined;
    if (!/^[0-9]{1,9}$/.test(v) || BigInt(v) === 0n)
      throw originError('corrupt-media', `ttp:${local}="${v.slice(0, 20)}" is not a positive integer`);
    return BigInt(v);
  };
  const declaredFrameRate = positive('frameRate');
  const frameRate = declaredFrameRate ?? 30n;
  let multiplier = seconds(1n);
  const m = get('frameRateMultiplier');
  if (m !== undefined) {
    const parts = /^([0-9]{1,9})\s+([0-9]{1,9})$/.exec(m);
    if (parts === null || BigInt(parts[1]!) === 0n || BigInt(parts[2]!) === 0n) {
      throw originError('corrupt-media', `ttp:frameRateMultiplier="${m.slice(0, 30)}" is not two positive integers`);
    }
    multiplier = seconds(BigInt(parts[1]!), BigInt(parts[2]!));
  }
  const effectiveFrameRate = seconds(frameRate * multiplier.n, multiplier.d);
  const subFrameRate = positive('subFrameRate') ?? 1n;
  const tick = positive('tickRate');
  // §6.2.10: without ttp:tickRate, ticks are sub-frames when a frame rate is given, else seconds.
  const tickRate =
    tick !== undefined
      ? seconds(tick)
      : declaredFrameRate !== undefined
        ? seconds(effectiveFrameRate.n * subFrameRate, effectiveFrameRate.d)
        : seconds(1n);
  return { frameRate, effectiveFrameRate, subFrameRate, tickRate };
}

/** A decimal `12` or `12.345` as an exact rational. */
function decimal(whole: string, fraction: string | undefined): Seconds {
  const digits = fraction ?? '';
  return seconds(BigInt(whole + digits), 10n ** BigInt(digits.length));
}

const mul = (a: Seconds, b: Seconds): Seconds => seconds(a.n * b.n, a.d * b.d);
const div = (a: Seconds, b: Seconds): Seconds => seconds(a.n * b.d, a.d * b.n);

const CLOCK = /^([0-9]{2,}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+)|:([0-9]{2,})(?:\.([0-9]+))?)?$/;
const OFFSET = /^([0-9]+)(?:\.([0-9]+))?(h|ms|m|s|f|t)$/;
const UNIT: Record<string, Seconds> = { h: seconds(3600n), m: seconds(60n), s: seconds(1n), ms: seconds(1n, 1000n) };

/**
 * A `<timeExpression>` (TTML1 §10.3.1) as seconds, relative to its syncbase:
 *   clock-time  hh:mm:ss | hh:mm:ss.fff | hh:mm:ss:ff | hh:mm:ss:ff.sub
 *   offset-time <count>[.<fraction>](h|m|s|ms|f|t)
 * Frames count at the effective frame rate, ticks at the tick rate (Annex N.2).
 */
export function parseTimeExpression(raw: string, p: TimingParameters, attributeName: string): Seconds {
  const text = raw.trim();
  const bad = (why: string): never => {
    throw originError(
      'corrupt-media',
      `${attributeName}="${raw.slice(0, MAX_EXPRESSION)}" is not a TTML time expression: ${why}`,
    );
  };
  if (text.length > MAX_EXPRESSION) bad(`longer than ${MAX_EXPRESSION} characters`);
  const c = CLOCK.exec(text);
  if (c !== null) {
    const [, h, m, s, fraction, frames, subFrames] = c;
    if (Number(m) > 59) bad('minutes above 59');
    let t = add(seconds(BigInt(h!) * 3600n + BigInt(m!) * 60n), decimal(s!, fraction));
    if (cmp(t, seconds(BigInt(h!) * 3600n + BigInt(m!) * 60n + 60n)) > 0) bad('seconds above 60');
    if (frames !== undefined) {
      if (BigInt(frames) >= p.frameRate) bad(`frame ${frames} is not below the frame rate ${p.frameRate}`);
      const subFrame = subFrames === undefined ? 0n : BigInt(subFrames);
      if (subFrame >= p.subFrameRate) bad(`sub-frame ${subFrames} is not below the sub-frame rate ${p.subFrameRate}`);
      t = add(t, div(seconds(BigInt(frames) * p.subFrameRate + subFrame, p.subFrameRate), p.effectiveFrameRate));
    }
    return t;
  }
  const o = OFFSET.exec(text);
  if (o === null) bad('expected hh:mm:ss[.fff], hh:mm:ss:ff or a number with h, m, s, ms, f or t');
  const [, whole, fraction, metric] = o!;
  const count = decimal(whole!, fraction);
  if (metric === 'f') return div(count, p.effectiveFrameRate);
  if (metric === 't') return div(count, p.tickRate);
  return mul(count, UNIT[metric!]!);
}
