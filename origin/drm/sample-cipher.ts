// Common encryption of one sample (ISO/IEC 23001-7 §9 and §10), in place:
// - cenc (§10.1): AES-128-CTR; the counter block is the 8-byte per-sample IV followed by a 64-bit
//   block counter from 0, or a 16-byte IV itself (§9.2); the protected ranges of all subsamples of a sample form one continuous
//   keystream (§9.5.2), which a Node CTR cipher gives across update() calls;
// - cbcs (§10.4): AES-128-CBC with the constant IV, restarted at every subsample; within a
//   protected range a crypt:skip pattern of 16-byte blocks (video 1:9, audio 0:0 = every whole
//   block), the crypt blocks chained as one CBC stream; a trailing partial block stays clear.
// The gather/scatter of cbcs blocks is one update() per subsample: per-block update() calls cost
// four times as much (docs/design/drm.md).

import { createCipheriv } from 'node:crypto';
import type { SpentOutputs } from './spent-outputs';
import { originError } from '../errors';
import type { Subsample } from './subsamples';

export interface Pattern {
  crypt: number;
  skip: number;
}

/**
 * cenc: encrypts the protected ranges (or the whole sample when `subsamples` is undefined). An
 * 8-byte IV is the counter block's high half (the block counter from 0), a 16-byte one the whole
 * initial counter block (§9.2).
 */
export function cencEncrypt(
  key: Uint8Array,
  iv: Uint8Array,
  sample: Uint8Array,
  subsamples?: readonly Subsample[],
): void {
  const counter = new Uint8Array(16);
  counter.set(iv, 0);
  const cipher = createCipheriv('aes-128-ctr', key, counter);
  for (const [start, end] of protectedRanges(sample.byteLength, subsamples)) {
    if (end > start) sample.set(cipher.update(sample.subarray(start, end)), start);
  }
  cipher.final();
}

/**
 * cencEncrypt on ranges already listed, without final(): CTR is a stream mode, final() gives no
 * byte, and its call cost a sixth of what a video sample's cipher costs besides the AES.
 */
function ctrRanges(
  key: Uint8Array,
  iv8: Uint8Array,
  sample: Uint8Array,
  ranges: ReadonlyArray<[number, number]>,
): void {
  // One counter block for every cipher: createCipheriv copies the IV it is given.
  COUNTER.set(iv8, 0);
  const cipher = createCipheriv('aes-128-ctr', key, COUNTER);
  for (const [start, end] of ranges) {
    if (end > start) sample.set(cipher.update(sample.subarray(start, end)), start);
  }
}

/** IV‖0: the last 8 bytes stay 0. */
const COUNTER = new Uint8Array(16);

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
      ctrRanges(key, s.iv8, s.sample, ranges);
      continue;
    }
    const blocks = Math.ceil(bytes / 16);
    if (blocks === 0) continue; // nothing to protect
    small.push({ s, ranges, blocks });
    total += blocks;
  }
  if (total === 0) return;
  // Counter blocks IV‖0‖j (big-endian) as host-order 32-bit words, and the protected bytes of each
  // sample gathered from a block boundary: the XOR then runs a word at a time on aligned arrays
  // (a byte loop, or a DataView on the samples, costs several times as much).
  const counters = new Uint8Array(total * 16);
  const words = new Int32Array(counters.buffer);
  const data = new Uint8Array(total * 16);
  let at = 0;
  for (const { s, ranges, blocks } of small) {
    counters.set(s.iv8, at);
    const hi = words[at >> 2]!;
    const lo = words[(at >> 2) + 1]!;
    for (let j = 0, w = at >> 2; j < blocks; j++, w += 4) {
      words[w] = hi;
      words[w + 1] = lo;
      words[w + 3] = BIG_ENDIAN_HOST ? j : swap32(j); // the 64-bit block counter's high half stays 0
    }
    let x = at;
    for (const [a, b] of ranges) {
      data.set(s.sample.subarray(a, b), x);
      x += b - a;
    }
    at += blocks * 16;
  }
  const ecb = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
  const out = ecb.update(counters);
  ecb.final();
  const keystream = (out.byteOffset & 3) === 0 ? out : Buffer.from(out);
  const k32 = new Int32Array(keystream.buffer, keystream.byteOffset, total * 4);
  const d32 = new Int32Array(data.buffer);
  for (let i = 0; i < d32.length; i++) d32[i] = d32[i]! ^ k32[i]!;
  at = 0;
  for (const { s, ranges, blocks } of small) {
    let x = at;
    for (const [a, b] of ranges) {
      s.sample.set(data.subarray(x, x + b - a), a);
      x += b - a;
    }
    at += blocks * 16;
  }
}

const BIG_ENDIAN_HOST = new Uint8Array(Uint32Array.of(1).buffer)[0] === 0;

/** A 32-bit word with its bytes reversed. */
function swap32(v: number): number {
  return ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24);
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

/** One sample for cbcsEncryptSamples. */
export interface CbcsSample {
  sample: Uint8Array;
  subsamples: readonly Subsample[] | undefined;
}

/**
 * cbcs for many samples under one key, constant IV and pattern: the bytes cbcsEncrypt gives on
 * each. CBC restarts with the constant IV at every subsample (§10.4.2), but a cipher cannot be
 * reset and a new one costs about 4 µs, more than the crypt blocks of a subsample take. So one
 * CBC cipher runs over all of them, and the first block of each protected range is XORed with
 * IV ⊕ (the previous ciphertext block) before it goes in: CBC then computes E(P ⊕ IV) for it,
 * what a fresh cipher from the IV would. The crypt blocks of a range are gathered into one buffer
 * (pattern 1:9) or taken where they lie (0:0, contiguous), encrypted with one update() and put
 * back. Tested against cbcsEncrypt.
 */
export function cbcsEncryptSamples(
  key: Uint8Array,
  iv16: Uint8Array,
  samples: readonly CbcsSample[],
  pattern: Pattern,
  /** Where the cipher's outputs go to be freed once copied back (drm/spent-outputs.ts). */
  spent?: SpentOutputs,
): void {
  const cipher = createCipheriv('aes-128-cbc', key, iv16).setAutoPadding(false);
  const update = (input: Uint8Array): Uint8Array => {
    const out = cipher.update(input);
    spent?.keep(out);
    return plain(out);
  };
  // IV ⊕ the last ciphertext block: what the next range's first block is XORed with (0 at first).
  const fix = new Uint8Array(16);
  const { crypt } = pattern;
  const period = crypt + pattern.skip;
  let gathered = new Uint8Array(0);
  let g = new DataView(gathered.buffer);
  for (const { sample, subsamples } of samples) {
    const view = new DataView(sample.buffer, sample.byteOffset, sample.byteLength);
    for (const [start, end] of protectedRanges(sample.byteLength, subsamples)) {
      const whole = Math.floor((end - start) / 16);
      if (whole === 0) continue;
      let encrypted: Uint8Array;
      if (period === 0 || pattern.skip === 0) {
        // Every whole block: the range itself, its first block fixed in place (overwritten next).
        for (let j = 0; j < 16; j++) sample[start + j] = sample[start + j]! ^ fix[j]!;
        encrypted = update(sample.subarray(start, start + whole * 16));
        sample.set(encrypted, start);
      } else {
        const blocks = patternCount(whole, pattern);
        if (blocks === 0) continue;
        if (gathered.byteLength < blocks * 16) {
          gathered = new Uint8Array(Math.max(blocks * 16, 2 * gathered.byteLength));
          g = new DataView(gathered.buffer);
        }
        let k = 0;
        for (let b = 0; b < whole; b += period) {
          for (let c = 0; c < crypt && b + c < whole; c++, k += 16) copy16(g, k, view, start + (b + c) * 16);
        }
        for (let j = 0; j < 16; j++) gathered[j] = gathered[j]! ^ fix[j]!;
        encrypted = update(gathered.subarray(0, k));
        const e = new DataView(encrypted.buffer, encrypted.byteOffset, encrypted.byteLength);
        k = 0;
        for (let b = 0; b < whole; b += period) {
          for (let c = 0; c < crypt && b + c < whole; c++, k += 16) copy16(view, start + (b + c) * 16, e, k);
        }
      }
      const last = encrypted.byteLength - 16;
      for (let j = 0; j < 16; j++) fix[j] = iv16[j]! ^ encrypted[last + j]!;
    }
  }
  cipher.final();
}

/** 16 bytes from `from` at `fromAt` to `to` at `toAt`, four at a time (a byte loop or a subarray per block costs several times as much). */
function copy16(to: DataView, toAt: number, from: DataView, fromAt: number): void {
  to.setInt32(toAt, from.getInt32(fromAt));
  to.setInt32(toAt + 4, from.getInt32(fromAt + 4));
  to.setInt32(toAt + 8, from.getInt32(fromAt + 8));
  to.setInt32(toAt + 12, from.getInt32(fromAt + 12));
}

/** Crypt blocks of a pattern among `whole` blocks. */
function patternCount(whole: number, { crypt, skip }: Pattern): number {
  const period = crypt + skip;
  return Math.floor(whole / period) * crypt + Math.min(whole % period, crypt);
}

/** A plain view of a Buffer: Buffer#subarray and indexing cost more on a Buffer. */
function plain(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
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
