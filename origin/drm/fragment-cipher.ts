// The encryption of one source fragment's samples, worked out once and applied to its bytes as
// often as they are read (ISO/IEC 23001-7 §9, §10): where each sample's protected ranges lie in
// the fragment's payload, its IV (cenc, 8 or 16 bytes: drm/ivs.ts; cbcs, the constant IV) and
// whether it gets a cipher of its own. Working it out reads every slice header of the fragment
// (drm/subsamples.ts); applying it is the cipher's work alone, so a layout kept between requests
// (segments/fmp4/encrypted-layout.ts) spares the rest. The plan is flat typed arrays, made once:
// applying it allocates nothing per sample but what Node's ciphers return. It holds no key bytes
// of its own: the key is the presentation's CencProtection's, by reference (and a KeyObject of
// it, one per key, as createCipheriv would make for every call). Pure.
//
// cenc (the same bytes as sample-cipher.ts cencEncrypt on each sample, tested):
// - 16-byte IVs (DASH, HLS fMP4) must be continuous (drm/ivs.ts continuousIvs): the fragment's
//   samples are then one keystream from sample 0's IV, and one CTR cipher encrypts them all:
//   one update() per protected range of a large sample, the small samples between them gathered
//   (each from a block boundary) into one update(); a sample whose protected bytes end inside a
//   block has the rest of that block's keystream skipped. No createCipheriv per sample (~3 µs each);
// - 8-byte IVs (Smooth): each sample is a keystream of its own. A sample with 2 KiB or more to
//   protect (video) gets a CTR cipher of its own from IV‖0, one update() per protected range: the
//   keystream runs on across its subsamples (§9.5.2); smaller samples (AAC frames, small slices)
//   are batched, as cencEncryptSamples does: their counter blocks laid out in one buffer, one
//   AES-ECB pass makes their keystream, XORed a 32-bit word at a time into their gathered bytes.
// The buffers are reused from call to call; what Node's ciphers return is freed once copied back
// (drm/spent-outputs.ts), not left to the garbage collector.
// cbcs: sample-cipher.ts cbcsEncryptSamples (one CBC cipher across the fragment's ranges).

import { createCipheriv, createSecretKey, KeyObject } from 'node:crypto';
import { originError } from '../errors';
import type { CencScheme } from '../model/protection';
import { continuousIvs } from './ivs';
import { cbcsEncryptSamples, CbcsSample, Pattern } from './sample-cipher';
import { SpentOutputs } from './spent-outputs';
import type { Subsample } from './subsamples';

/** One sample of a fragment's payload and how it is encrypted. */
export interface PlannedSample {
  /** Offset of the sample in the payload, bytes. */
  at: number;
  size: number;
  /** cenc: the sample's IV, 8 bytes, or 16 as continuousIvs makes them; cbcs: empty (the constant IV). */
  iv: Uint8Array;
  /** undefined: the whole sample is protected (audio). */
  subsamples: readonly Subsample[] | undefined;
}

/** What a FragmentCipher encrypts with: the key (the protection's own bytes), scheme, cbcs IV and pattern. */
export interface CipherSetup {
  key: Uint8Array;
  scheme: CencScheme;
  /** cbcs: the track's constant IV (§10.4.1). */
  constantIv: Uint8Array;
  /** cbcs: 1:9 for video, 0:0 for audio. */
  pattern: Pattern;
}

/** At this many protected bytes a cenc sample gets a CTR cipher of its own (setup cost < batching cost). */
const OWN_CIPHER_FROM = 2048;

/** Encrypts a fragment's payload in place, the same bytes every time (the IVs are fixed). */
export class FragmentCipher {
  /** [start, end) of every non-empty protected range, in payload offsets, sample after sample. */
  private readonly ranges: Int32Array;
  /** Sample k's ranges are ranges[2·first[k] … 2·first[k+1]). */
  private readonly first: Int32Array;
  /** cenc: the IVs (8 or 16 bytes each), back to back. */
  private readonly ivs: Uint8Array;
  /** cenc: 16-byte IVs, one keystream across the fragment. */
  private readonly continuous: boolean;
  /** cenc: sample k's protected bytes, rounded up to blocks; 0 for a sample with a cipher of its own. */
  private readonly batched: Int32Array;
  /** cenc, continuous: sample k's protected bytes. */
  private readonly bytes: Int32Array;
  private readonly batchedBlocks: number;
  /** cbcs: the samples as cbcsEncryptSamples takes them (offsets only; views are made per call). */
  private readonly cbcs: ReadonlyArray<Pick<PlannedSample, 'at' | 'size' | 'subsamples'>>;

  constructor(
    private readonly setup: CipherSetup,
    samples: readonly PlannedSample[],
    /** The payload's length, bytes: the samples cover it exactly. */
    readonly payloadLength: number,
  ) {
    const n = samples.length;
    const cenc = setup.scheme === 'cenc';
    const ivSize = cenc ? (samples[0]?.iv.byteLength ?? 8) : 0;
    const ranges: number[] = [];
    this.first = new Int32Array(n + 1);
    this.ivs = new Uint8Array(ivSize * n);
    this.batched = new Int32Array(cenc ? n : 0);
    this.bytes = new Int32Array(cenc ? n : 0);
    let blocks = 0;
    samples.forEach((s, k) => {
      this.first[k] = ranges.length >> 1;
      let bytes = 0;
      for (const [a, b] of protectedRanges(s)) {
        if (b > a) ranges.push(a, b);
        bytes += b - a;
      }
      if (cenc) {
        if (s.iv.byteLength !== ivSize || (ivSize !== 8 && ivSize !== 16)) {
          throw originError('internal', `a ${s.iv.byteLength}-byte IV in a fragment of ${ivSize}-byte IVs`, {
            subject: 'fragment-cipher',
          });
        }
        this.ivs.set(s.iv, ivSize * k);
        this.bytes[k] = bytes;
        if (bytes < OWN_CIPHER_FROM) blocks += this.batched[k] = Math.ceil(bytes / 16);
      }
    });
    this.first[n] = ranges.length >> 1;
    this.continuous = ivSize === 16;
    // One keystream from sample 0's IV gives each sample its own IV's bytes only when the IVs are
    // exactly the continuous ones (a low half from 0, each sample's blocks after the last's).
    if (this.continuous && n > 0 && !sameBytes(continuousIvs(this.ivs.subarray(0, 8), this.bytes), this.ivs)) {
      throw originError('internal', '16-byte IVs that do not run on from sample to sample', {
        subject: 'fragment-cipher',
      });
    }
    this.ranges = Int32Array.from(ranges);
    this.batchedBlocks = blocks;
    this.cbcs = setup.scheme === 'cbcs' ? samples.map(({ at, size, subsamples }) => ({ at, size, subsamples })) : [];
  }

  /** Encrypts `payload` (the fragment's samples back to back, clear) in place. */
  apply(payload: Uint8Array): void {
    if (payload.byteLength !== this.payloadLength) {
      throw originError('internal', `a ${payload.byteLength}-byte payload for a plan of ${this.payloadLength} bytes`, {
        subject: 'fragment-cipher',
      });
    }
    if (this.setup.scheme === 'cbcs') {
      const list: CbcsSample[] = this.cbcs.map((s) => ({
        sample: payload.subarray(s.at, s.at + s.size),
        subsamples: s.subsamples,
      }));
      try {
        if (list.length > 0) cbcsEncryptSamples(this.setup.key, this.setup.constantIv, list, this.setup.pattern, spent);
      } finally {
        spent.release();
      }
      return;
    }
    const key = keyObjectOf(this.setup.key);
    try {
      if (this.continuous) {
        if (this.ivs.byteLength > 0) this.applyContinuous(payload, key);
      } else {
        this.applyPerSample(payload, key);
      }
    } finally {
      spent.release();
    }
  }

  /** 8-byte IVs: a CTR cipher per large sample, the small ones batched. */
  private applyPerSample(payload: Uint8Array, key: KeyObject): void {
    const { ranges, first, ivs, batched } = this;
    for (let k = 0; k < batched.length; k++) {
      if (batched[k] !== 0 || first[k] === first[k + 1]) continue;
      for (let j = 0; j < 8; j++) COUNTER[j] = ivs[8 * k + j]!;
      // createCipheriv copies the counter block it is given.
      const cipher = createCipheriv('aes-128-ctr', key, COUNTER);
      for (let r = 2 * first[k]!; r < 2 * first[k + 1]!; r += 2) {
        const a = ranges[r]!;
        payload.set(spent.keep(cipher.update(payload.subarray(a, ranges[r + 1]!))), a);
      }
    }
    if (this.batchedBlocks > 0) this.applyBatched(payload, key);
  }

  /**
   * 16-byte continuous IVs: one CTR cipher from sample 0's IV over the fragment. Large samples'
   * ranges are updated where they lie; each run of small samples between them is gathered, each
   * from a block boundary, into one update(). A sample ending inside a block skips the rest of it.
   */
  private applyContinuous(payload: Uint8Array, key: KeyObject): void {
    const { ranges, first, batched, bytes } = this;
    const cipher = createCipheriv('aes-128-ctr', key, this.ivs.subarray(0, 16));
    const { data } = scratch(this.batchedBlocks * 16);
    let pending = 0; // gathered bytes, whole blocks
    let runFrom = 0; // the first sample of the gathered run
    const flush = (until: number): void => {
      if (pending > 0) {
        const out = spent.keep(cipher.update(data.subarray(0, pending)));
        let x = 0;
        for (let k = runFrom; k < until; k++) {
          if (batched[k] === 0) continue;
          let y = x;
          for (let r = 2 * first[k]!; r < 2 * first[k + 1]!; r += 2) {
            const [a, b] = [ranges[r]!, ranges[r + 1]!];
            payload.set(out.subarray(y, y + b - a), a);
            y += b - a;
          }
          x += batched[k]! * 16;
        }
      }
      pending = 0;
      runFrom = until;
    };
    for (let k = 0; k < batched.length; k++) {
      if (batched[k] !== 0) {
        let x = pending;
        for (let r = 2 * first[k]!; r < 2 * first[k + 1]!; r += 2) {
          data.set(payload.subarray(ranges[r]!, ranges[r + 1]!), x);
          x += ranges[r + 1]! - ranges[r]!;
        }
        pending += batched[k]! * 16;
        continue;
      }
      if (bytes[k] === 0) continue;
      flush(k);
      runFrom = k + 1;
      for (let r = 2 * first[k]!; r < 2 * first[k + 1]!; r += 2) {
        const a = ranges[r]!;
        payload.set(spent.keep(cipher.update(payload.subarray(a, ranges[r + 1]!))), a);
      }
      const rest = bytes[k]! % 16;
      if (rest !== 0) spent.keep(cipher.update(ZEROS.subarray(0, 16 - rest)));
    }
    flush(batched.length);
  }

  /** The samples with less than OWN_CIPHER_FROM to protect, under one AES-ECB keystream. */
  private applyBatched(payload: Uint8Array, key: KeyObject): void {
    const { ranges, first, ivs, batched } = this;
    const total = this.batchedBlocks;
    const { counters, data } = scratch(total * 16);
    const words = new Int32Array(counters.buffer, 0, total * 4);
    const ivWords = new Int32Array(IV_WORDS.buffer);
    // Counter blocks IV‖0‖j (big-endian) as host-order words; the protected bytes of each sample
    // gathered from a block boundary.
    let at = 0;
    for (let k = 0; k < batched.length; k++) {
      const blocks = batched[k]!;
      if (blocks === 0) continue;
      for (let j = 0; j < 8; j++) IV_WORDS[j] = ivs[8 * k + j]!;
      const hi = ivWords[0]!;
      const lo = ivWords[1]!;
      for (let j = 0, w = at >> 2; j < blocks; j++, w += 4) {
        words[w] = hi;
        words[w + 1] = lo;
        words[w + 2] = 0;
        words[w + 3] = BIG_ENDIAN_HOST ? j : swap32(j);
      }
      let x = at;
      for (let r = 2 * first[k]!; r < 2 * first[k + 1]!; r += 2) {
        data.set(payload.subarray(ranges[r]!, ranges[r + 1]!), x);
        x += ranges[r + 1]! - ranges[r]!;
      }
      at += blocks * 16;
    }
    const ecb = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
    const out = spent.keep(ecb.update(counters.subarray(0, total * 16)));
    const keystream = (out.byteOffset & 3) === 0 ? out : Buffer.from(out);
    const k32 = new Int32Array(keystream.buffer, keystream.byteOffset, total * 4);
    const d32 = new Int32Array(data.buffer, 0, total * 4);
    for (let i = 0; i < d32.length; i++) d32[i] = d32[i]! ^ k32[i]!;
    at = 0;
    for (let k = 0; k < batched.length; k++) {
      const blocks = batched[k]!;
      if (blocks === 0) continue;
      let x = at;
      for (let r = 2 * first[k]!; r < 2 * first[k + 1]!; r += 2) {
        const [a, b] = [ranges[r]!, ranges[r + 1]!];
        payload.set(data.subarray(x, x + b - a), a);
        x += b - a;
      }
      at += blocks * 16;
    }
  }

  /** Bytes this plan keeps alive (a cache's cost), roughly. */
  get cost(): number {
    return (
      256 +
      this.ranges.byteLength +
      this.first.byteLength +
      this.ivs.byteLength +
      this.batched.byteLength +
      this.bytes.byteLength +
      96 * this.cbcs.length
    );
  }
}

/** [start, end) of each protected range of a sample, in payload offsets. */
function protectedRanges({ at, size, subsamples }: PlannedSample): Array<[number, number]> {
  if (subsamples === undefined) return [[at, at + size]];
  const out: Array<[number, number]> = [];
  let x = at;
  for (const s of subsamples) {
    x += s.clear;
    out.push([x, x + s.protected]);
    x += s.protected;
  }
  if (x !== at + size) {
    throw originError('internal', `subsamples cover ${x - at} bytes of a ${size}-byte sample`, {
      subject: 'fragment-cipher',
    });
  }
  return out;
}

/**
 * The cipher outputs of the apply() running (it is synchronous), freed when it returns: left to the
 * collector, they cost more CPU in mark-compacts than the AES itself (drm/spent-outputs.ts).
 */
const spent = new SpentOutputs();

/** What a continuous cipher is given to skip the rest of a block (its output is dropped). */
const ZEROS = new Uint8Array(16);

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** IV‖0 for the per-sample CTR ciphers: the last 8 bytes stay 0. */
const COUNTER = new Uint8Array(16);
const IV_WORDS = new Uint8Array(8);

const BIG_ENDIAN_HOST = new Uint8Array(Uint32Array.of(1).buffer)[0] === 0;

/** A 32-bit word with its bytes reversed. */
function swap32(v: number): number {
  return ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24);
}

/** The batched path's buffers, reused (apply is synchronous): grown to the largest fragment seen, capped. */
let counters = new Uint8Array(0);
let data = new Uint8Array(0);
const KEEP_SCRATCH_UP_TO = 1 << 20;

function scratch(bytes: number): { counters: Uint8Array; data: Uint8Array } {
  if (counters.byteLength >= bytes) return { counters, data };
  const fresh = { counters: new Uint8Array(bytes), data: new Uint8Array(bytes) };
  if (bytes <= KEEP_SCRATCH_UP_TO) ({ counters, data } = fresh);
  return fresh;
}

/** The KeyObject of a key's bytes, one per key (the protection's bytes, by identity). */
const keyObjects = new WeakMap<Uint8Array, KeyObject>();

function keyObjectOf(key: Uint8Array): KeyObject {
  let k = keyObjects.get(key);
  if (k === undefined) keyObjects.set(key, (k = createSecretKey(key)));
  return k;
}
