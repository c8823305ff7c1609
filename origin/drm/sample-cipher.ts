// Common encryption of one sample (ISO/IEC 23001-7 §9 and §10), in place:
// - cenc (§10.1): AES-128-CTR; the counter block is the 8-byte per-sample IV followed by a 64-bit
//   block counter from 0; the protected ranges of all subsamples of a sample form one continuous
//   keystream (§9.5.2), which a Node CTR cipher gives across update() calls;
// - cbcs (§10.4): AES-128-CBC with the constant IV, restarted at every subsample; within a
//   protected range a crypt:skip pattern of 16-byte blocks (video 1:9, audio 0:0 = every whole
//   block), the crypt blocks chained as one CBC stream; a trailing partial block stays clear.
// The gather/scatter of cbcs blocks is one update() per subsample: per-block update() calls cost
// four times as much (docs/design/drm.md).

import { createCipheriv } from 'node:crypto';
import { originError } from '../errors';
import type { Subsample } from './subsamples';

export interface Pattern {
  crypt: number;
  skip: number;
}

/** cenc: encrypts the protected ranges (or the whole sample when `subsamples` is undefined). */
export function cencEncrypt(
  key: Uint8Array,
  iv8: Uint8Array,
  sample: Uint8Array,
  subsamples?: readonly Subsample[],
): void {
  const counter = new Uint8Array(16);
  counter.set(iv8, 0);
  const cipher = createCipheriv('aes-128-ctr', key, counter);
  for (const [start, end] of protectedRanges(sample.byteLength, subsamples)) {
    if (end > start) sample.set(cipher.update(sample.subarray(start, end)), start);
  }
  cipher.final();
}

/** One sample for cencEncryptSamples. */
export interface CencSample {
  sample: Uint8Array;
  iv8: Uint8Array;
  subsamples: readonly Subsample[] | undefined;
}

/** Above this many protected bytes a sample gets a CTR cipher of its own (setup cost < XOR cost). */
const BATCH_BELOW = 2048;

/**
 * cenc for many samples at once, the same bytes as cencEncrypt on each. A sample with few
 * protected bytes (an AAC frame) costs more in cipher setup (about 5 µs) than in encryption, so
 * those are batched: every counter block of every such sample (IV‖block number) is laid out in one
 * buffer, one AES-ECB pass turns them into the CTR keystream, and it is XORed in. Larger samples
 * (video) get a CTR cipher each (docs/design/drm.md). Tested against cencEncrypt.
 */
export function cencEncryptSamples(key: Uint8Array, samples: readonly CencSample[]): void {
  const small: Array<{ s: CencSample; ranges: Array<[number, number]>; blocks: number }> = [];
  let total = 0;
  for (const s of samples) {
    const ranges = protectedRanges(s.sample.byteLength, s.subsamples);
    let bytes = 0;
    for (const [a, b] of ranges) bytes += b - a;
    if (bytes >= BATCH_BELOW) {
      cencEncrypt(key, s.iv8, s.sample, s.subsamples);
      continue;
    }
    const blocks = Math.ceil(bytes / 16);
    small.push({ s, ranges, blocks });
    total += blocks;
  }
  if (total === 0) return;
  const counters = new Uint8Array(total * 16);
  const view = new DataView(counters.buffer);
  let at = 0;
  for (const { s, blocks } of small) {
    const iv = new DataView(s.iv8.buffer, s.iv8.byteOffset, 8);
    const hi = iv.getUint32(0);
    const lo = iv.getUint32(4);
    for (let j = 0; j < blocks; j++, at += 16) {
      view.setUint32(at, hi);
      view.setUint32(at + 4, lo);
      view.setUint32(at + 12, j); // the 64-bit block counter's high half stays 0
    }
  }
  const ecb = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
  const out = ecb.update(counters);
  ecb.final();
  const keystream = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  let k = 0;
  for (const { s, ranges, blocks } of small) {
    const bytes = s.sample;
    let x = k;
    for (const [a, b] of ranges) {
      for (let i = a; i < b; i++) bytes[i] = bytes[i]! ^ keystream[x++]!;
    }
    k += blocks * 16;
  }
}

/** cbcs: encrypts each protected range with `pattern` and the constant IV. */
export function cbcsEncrypt(
  key: Uint8Array,
  iv16: Uint8Array,
  sample: Uint8Array,
  pattern: Pattern,
  subsamples?: readonly Subsample[],
): void {
  for (const [start, end] of protectedRanges(sample.byteLength, subsamples)) {
    const blocks = patternBlocks(start, end, pattern);
    if (blocks.length === 0) continue;
    const gathered = new Uint8Array(blocks.length * 16);
    blocks.forEach((at, i) => gathered.set(sample.subarray(at, at + 16), i * 16));
    const cipher = createCipheriv('aes-128-cbc', key, iv16).setAutoPadding(false);
    const out = cipher.update(gathered);
    cipher.final();
    // A plain view: Buffer#subarray makes an object per block.
    const encrypted = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    blocks.forEach((at, i) => sample.set(encrypted.subarray(i * 16, i * 16 + 16), at));
  }
}

/** Offsets of the 16-byte blocks a pattern encrypts in [start, end) (0:0 = every whole block). */
export function patternBlocks(start: number, end: number, pattern: Pattern): number[] {
  const out: number[] = [];
  const whole = Math.floor((end - start) / 16);
  const period = pattern.crypt + pattern.skip;
  for (let b = 0; b < whole; b++) {
    if (period === 0 || b % period < pattern.crypt) out.push(start + b * 16);
  }
  return out;
}

/** [start, end) of each protected range, in sample order. */
function protectedRanges(size: number, subsamples: readonly Subsample[] | undefined): Array<[number, number]> {
  if (subsamples === undefined) return [[0, size]];
  const out: Array<[number, number]> = [];
  let at = 0;
  for (const s of subsamples) {
    at += s.clear;
    out.push([at, at + s.protected]);
    at += s.protected;
  }
  if (at !== size) {
    throw originError('internal', `subsamples cover ${at} bytes of a ${size}-byte sample`, {
      subject: 'sample-cipher',
    });
  }
  return out;
}
