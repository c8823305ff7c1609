// The sample cipher (origin/drm/sample-cipher.ts) against the rules of ISO/IEC 23001-7 written
// out here with Node's deciphers: cenc's keystream runs on across subsamples (§9.5.2); cbcs
// restarts CBC with the constant IV in every subsample and encrypts 1 block in 10 (§10.4), a
// trailing partial block left clear; 0:0 encrypts every whole block. ffmpeg is the independent
// judge of the whole (dash-encryption.test.ts).

import { createDecipheriv, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import {
  cbcsEncrypt,
  cbcsEncryptSamples,
  cencEncrypt,
  cencEncryptSamples,
  patternBlocks,
} from '../../../origin/drm/sample-cipher';
import type { Subsample } from '../../../origin/drm/subsamples';

const KEY = Buffer.from('3a2a1b68dd2bd9b2eeb25e84c4776668', 'hex');
const IV8 = Buffer.from('0102030405060708', 'hex');
const IV16 = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');

const subsampleLists = fc
  .array(fc.record({ clear: fc.nat(300), protected: fc.nat(700) }), { minLength: 1, maxLength: 6 })
  .map((list) => list as Subsample[]);

test('cenc: the protected bytes, joined, are one CTR stream from IV‖0; clear bytes untouched', () => {
  fc.assert(
    fc.property(subsampleLists, (subs) => {
      const size = subs.reduce((n, s) => n + s.clear + s.protected, 0);
      const plain = randomBytes(size);
      const sample = Uint8Array.from(plain);
      cencEncrypt(KEY, IV8, sample, subs);
      const joined: Buffer[] = [];
      let at = 0;
      for (const s of subs) {
        expect(Buffer.from(sample.subarray(at, at + s.clear)).equals(plain.subarray(at, at + s.clear))).toBe(true);
        at += s.clear;
        joined.push(Buffer.from(sample.subarray(at, at + s.protected)));
        at += s.protected;
      }
      const d = createDecipheriv('aes-128-ctr', KEY, Buffer.concat([IV8, Buffer.alloc(8)]));
      const decrypted = d.update(Buffer.concat(joined));
      const expected = Buffer.concat(
        subs.map((s, i) => plain.subarray(offset(subs, i) + s.clear, offset(subs, i) + s.clear + s.protected)),
      );
      expect(decrypted.equals(expected)).toBe(true);
    }),
  );
});

test('cencEncryptSamples (batched keystream for small samples) gives the bytes cencEncrypt gives', () => {
  const sample = fc.record({
    size: fc.oneof(fc.nat(600), fc.integer({ min: 1900, max: 5000 })),
    iv: fc.uint8Array({ minLength: 8, maxLength: 8 }),
    split: fc.option(fc.array(fc.nat(400), { minLength: 1, maxLength: 5 }), { nil: undefined }),
  });
  fc.assert(
    fc.property(fc.array(sample, { minLength: 1, maxLength: 12 }), (list) => {
      const items = list.map(({ size, iv, split }) => {
        // Subsamples that cover the sample exactly (or none: the whole sample).
        let subs: Subsample[] | undefined;
        if (split !== undefined) {
          subs = [];
          let left = size;
          for (const c of split) {
            const clear = Math.min(c, left);
            const prot = Math.min(c * 3, left - clear);
            subs.push({ clear, protected: prot });
            left -= clear + prot;
          }
          subs.push({ clear: left, protected: 0 });
        }
        return { plain: randomBytes(size), iv8: Buffer.from(iv), subsamples: subs };
      });
      const one = items.map((x) => Uint8Array.from(x.plain));
      items.forEach((x, i) => cencEncrypt(KEY, x.iv8, one[i]!, x.subsamples));
      const batched = items.map((x) => ({ sample: Uint8Array.from(x.plain), iv8: x.iv8, subsamples: x.subsamples }));
      cencEncryptSamples(KEY, batched);
      batched.forEach((b, i) => expect(Buffer.from(b.sample).equals(Buffer.from(one[i]!))).toBe(true));
    }),
  );
});

test('cenc without subsamples encrypts the whole sample', () => {
  const plain = randomBytes(1000);
  const sample = Uint8Array.from(plain);
  cencEncrypt(KEY, IV8, sample);
  const d = createDecipheriv('aes-128-ctr', KEY, Buffer.concat([IV8, Buffer.alloc(8)]));
  expect(d.update(sample).equals(plain)).toBe(true);
});

test('cbcs 1:9: per subsample, blocks 0, 10, 20 … chained from the constant IV; the rest clear', () => {
  fc.assert(
    fc.property(subsampleLists, (subs) => {
      const size = subs.reduce((n, s) => n + s.clear + s.protected, 0);
      const plain = randomBytes(size);
      const sample = Uint8Array.from(plain);
      cbcsEncrypt(KEY, IV16, sample, { crypt: 1, skip: 9 }, subs);
      subs.forEach((s, i) => {
        const start = offset(subs, i) + s.clear;
        const blocks = patternBlocks(start, start + s.protected, { crypt: 1, skip: 9 });
        const d = createDecipheriv('aes-128-cbc', KEY, IV16).setAutoPadding(false);
        const got = d.update(Buffer.concat(blocks.map((b) => Buffer.from(sample.subarray(b, b + 16)))));
        expect(got.equals(Buffer.concat(blocks.map((b) => plain.subarray(b, b + 16))))).toBe(true);
      });
      // Bytes in no crypt block are the plain ones.
      const crypt = new Set<number>();
      subs.forEach((s, i) => {
        const start = offset(subs, i) + s.clear;
        for (const b of patternBlocks(start, start + s.protected, { crypt: 1, skip: 9 }))
          for (let k = 0; k < 16; k++) crypt.add(b + k);
      });
      for (let k = 0; k < size; k++) if (!crypt.has(k)) expect(sample[k]).toBe(plain[k]);
    }),
  );
});

test('cbcsEncryptSamples (one cipher across samples and subsamples) gives the bytes cbcsEncrypt gives', () => {
  // Patterns: video's 1:9, audio's 0:0, and others a scheme allows (2:8, 1:0, 0:9 encrypts nothing).
  const pattern = fc.constantFrom(
    { crypt: 1, skip: 9 },
    { crypt: 0, skip: 0 },
    { crypt: 2, skip: 8 },
    { crypt: 1, skip: 0 },
    { crypt: 0, skip: 9 },
  );
  const sample = fc.record({
    size: fc.oneof(fc.nat(40), fc.nat(600), fc.integer({ min: 1900, max: 6000 })),
    split: fc.option(fc.array(fc.nat(500), { minLength: 1, maxLength: 5 }), { nil: undefined }),
  });
  fc.assert(
    fc.property(
      fc.array(sample, { minLength: 1, maxLength: 10 }),
      pattern,
      fc.uint8Array({ minLength: 16, maxLength: 16 }),
      (list, p, iv) => {
        const items = list.map(({ size, split }) => ({ plain: randomBytes(size), subsamples: covering(size, split) }));
        const one = items.map((x) => Uint8Array.from(x.plain));
        items.forEach((x, i) => cbcsEncrypt(KEY, iv, one[i]!, p, x.subsamples));
        // The samples as views of one payload, as the segment writer hands them over.
        const payload = Buffer.concat(items.map((x) => x.plain));
        let at = 0;
        const batched = items.map((x) => {
          const view = new Uint8Array(payload.buffer, payload.byteOffset + at, x.plain.length);
          at += x.plain.length;
          return { sample: view, subsamples: x.subsamples };
        });
        cbcsEncryptSamples(KEY, iv, batched, p);
        batched.forEach((b, i) => expect(Buffer.from(b.sample).equals(Buffer.from(one[i]!))).toBe(true));
      },
    ),
  );
});

test('patternBlocks: 1:9 takes every tenth whole block, 0:0 every whole block, never a partial one', () => {
  expect(patternBlocks(0, 16 * 25 + 5, { crypt: 1, skip: 9 })).toEqual([0, 160, 320]);
  expect(patternBlocks(7, 7 + 16 * 3 + 15, { crypt: 0, skip: 0 })).toEqual([7, 23, 39]);
  expect(patternBlocks(0, 15, { crypt: 0, skip: 0 })).toEqual([]);
});

/** Subsamples that cover `size` bytes exactly, from a list of clear sizes (undefined: none, the whole sample). */
function covering(size: number, split: number[] | undefined): Subsample[] | undefined {
  if (split === undefined) return undefined;
  const subs: Subsample[] = [];
  let left = size;
  for (const c of split) {
    const clear = Math.min(c, left);
    const prot = Math.min(c * 3, left - clear);
    subs.push({ clear, protected: prot });
    left -= clear + prot;
  }
  subs.push({ clear: left, protected: 0 });
  return subs;
}

function offset(subs: readonly Subsample[], i: number): number {
  return subs.slice(0, i).reduce((n, s) => n + s.clear + s.protected, 0);
}
