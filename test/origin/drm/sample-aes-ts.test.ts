// SAMPLE-AES of elementary stream frames (origin/drm/sample-aes-ts.ts) against the tests' own
// decrypter (sample-aes-reference.ts, written from Apple's spec, sharing no code with the origin):
// every NAL unit and frame decrypts to exactly its clear bytes, the
// clear parts stay clear, and the encrypted NAL units carry no start code emulation. Bad samples
// are refused as corrupt-media; the audio setup information follows §2.3.4.

import { createCipheriv, randomBytes } from 'node:crypto';
import {
  addEmulationPrevention,
  audioSetupInformation,
  encryptAudioFrames,
  encryptAvcSample,
  encryptNalUnit,
} from '../../../origin/drm/sample-aes-ts';
import { OriginError } from '../../../origin/errors';
import {
  decryptAudioBlock as referenceDecryptAudio,
  decryptNal as referenceDecryptNal,
  emulationProblems,
  encryptedBlocks,
  unescape,
} from './sample-aes-reference';

const key = Buffer.from('3a2a1b68dd2bd9b2eeb25e84c4776668', 'hex');
const iv = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
const k = { key, iv };
const where = { file: 'test.ismv', offset: 1000 };

const decryptNal = (sealed: Buffer): Buffer => referenceDecryptNal(key, iv, sealed);

/** A slice NAL unit of `n` bytes: random, zero-heavy where asked, escaped as an encoder would. */
function sliceNal(type: number, n: number, zeros = false): Buffer {
  const body = randomBytes(n);
  if (zeros) for (let i = 0; i < n; i += 7) body[i] = 0;
  body[0] = 0x60 | type;
  body[n - 1] = 0x80; // rbsp_stop_one_bit
  return addEmulationPrevention(body);
}

describe('H.264 NAL units (§2.2)', () => {
  test.each([1, 5])('type %i: every length decrypts to the clear NAL unit, the lead and the 9 of 10 clear', (type) => {
    const lengths = [49, 50, 63, 64, 65, 200, 207, 208, 209, 210, 1000, 5000];
    for (const n of lengths) {
      for (const zeros of [false, true]) {
        const nal = sliceNal(type, n, zeros);
        const sealed = Buffer.from(encryptNalUnit(nal, k));
        expect(emulationProblems(sealed)).toEqual([]);
        expect(decryptNal(sealed).equals(nal)).toBe(true);
        // Read back escaped: only the encrypted blocks differ from the clear NAL unit.
        const raw = unescape(sealed);
        expect(raw.length).toBe(nal.length);
        const blocks = encryptedBlocks(nal.length);
        expect(blocks.length).toBe(Math.ceil((nal.length - 48) / 160));
        for (let i = 0; i < nal.length; i++) {
          const inBlock = blocks.some((p) => i >= p && i < p + 16);
          if (!inBlock && raw[i] !== nal[i]) throw new Error(`clear byte ${i} of ${n} changed`);
        }
        expect(blocks.every((p) => !raw.subarray(p, p + 16).equals(nal.subarray(p, p + 16)))).toBe(true);
      }
    }
  });

  test('the IV restarts at every NAL unit: two equal NAL units encrypt to equal bytes', () => {
    const nal = sliceNal(5, 700);
    expect(Buffer.from(encryptNalUnit(nal, k)).equals(Buffer.from(encryptNalUnit(nal, k)))).toBe(true);
    const other = { key, iv: Buffer.alloc(16) };
    expect(Buffer.from(encryptNalUnit(nal, other)).equals(Buffer.from(encryptNalUnit(nal, k)))).toBe(false);
  });

  test('the blocks of a NAL unit are one CBC chain (block 2 depends on block 1)', () => {
    const nal = sliceNal(1, 400);
    const sealed = unescape(Buffer.from(encryptNalUnit(nal, k)));
    const c1 = createCipheriv('aes-128-cbc', key, iv).setAutoPadding(false).update(nal.subarray(32, 48));
    expect(sealed.subarray(32, 48).equals(c1)).toBe(true);
    const c2 = createCipheriv('aes-128-cbc', key, c1).setAutoPadding(false).update(nal.subarray(192, 208));
    expect(sealed.subarray(192, 208).equals(c2)).toBe(true);
  });

  test('a NAL unit that already holds emulation prevention bytes keeps them through decryption', () => {
    const nal = Buffer.alloc(300, 0x55);
    nal[0] = 0x65;
    // 00 00 03 01 in the clear lead, in an encrypted block and in a clear stretch.
    for (const at of [10, 40, 100]) Buffer.from([0, 0, 3, 1]).copy(nal, at);
    const sealed = Buffer.from(encryptNalUnit(nal, k));
    expect(emulationProblems(sealed)).toEqual([]);
    expect(sealed.length).toBeGreaterThanOrEqual(nal.length + 2); // 03 doubled outside the cipher
    expect(decryptNal(sealed).equals(nal)).toBe(true);
  });

  test.each([
    ['48 bytes of type 5', 5, 48],
    ['SEI', 6, 500],
    ['SPS', 7, 60],
    ['PPS', 8, 60],
    ['AUD', 9, 60],
    ['type 2 (data partition A)', 2, 500],
  ])('%s stays clear, the very same bytes', (_, type, n) => {
    const nal = Buffer.alloc(n, 0x42);
    nal[0] = 0x60 | type;
    expect(encryptNalUnit(nal, k)).toBe(nal);
  });

  test('emulation prevention round-trips and is only added where needed', () => {
    for (let t = 0; t < 200; t++) {
      const raw = randomBytes(64);
      for (let i = 0; i < raw.length; i++) if (raw[i]! < 0xc0) raw[i] = raw[i]! & 3; // many 00..03
      raw[raw.length - 1] = 0x80;
      const escaped = addEmulationPrevention(raw);
      expect(emulationProblems(escaped)).toEqual([]);
      expect(unescape(escaped).equals(raw)).toBe(true);
    }
    const plain = Buffer.from([1, 2, 0, 4, 0, 0, 4]);
    expect(addEmulationPrevention(plain)).toBe(plain);
    expect([...addEmulationPrevention(Buffer.from([9, 0, 0]))]).toEqual([9, 0, 0, 3]);
  });
});

/** An MP4 sample: each NAL unit behind a `size`-byte length. */
function sample(nals: Buffer[], size = 4): Buffer {
  return Buffer.concat(
    nals.flatMap((n) => {
      const length = Buffer.alloc(size);
      length.writeUIntBE(n.length, 0, size);
      return [length, n];
    }),
  );
}

function nalsOf(s: Uint8Array, size = 4): Buffer[] {
  const b = Buffer.from(s);
  const out: Buffer[] = [];
  for (let i = 0; i < b.length;) {
    const n = b.readUIntBE(i, size);
    out.push(b.subarray(i + size, i + size + n));
    i += size + n;
  }
  return out;
}

describe('H.264 samples', () => {
  test.each([4, 3])('%i-byte lengths: each NAL unit encrypted in place, its length rewritten', (size) => {
    const sei = Buffer.from([0x06, 5, 1, 0xff, 0x80]);
    const slices = [sliceNal(5, 3000, true), sliceNal(1, 900), sliceNal(1, 40)];
    const clear = sample([sei, ...slices], size);
    const sealed = encryptAvcSample(clear, size, k, where);
    const nals = nalsOf(sealed, size);
    expect(nals.length).toBe(4);
    expect(nals[0]!.equals(sei)).toBe(true);
    expect(nals[3]!.equals(slices[2]!)).toBe(true);
    nals.slice(1).forEach((n, i) => expect(decryptNal(n).equals(slices[i]!)).toBe(true));
    expect(Buffer.from(clear).equals(sample([sei, ...slices], size))).toBe(true); // the input untouched
  });

  test('a sample with nothing to encrypt is returned as it is', () => {
    const clear = sample([Buffer.from([0x06, 1, 2, 0x80]), sliceNal(1, 48)]);
    expect(encryptAvcSample(clear, 4, k, where)).toBe(clear);
  });

  test.each([
    ['a length past the end', Buffer.from([0, 0, 0, 9, 0x65, 1, 2])],
    ['a zero length', Buffer.from([0, 0, 0, 0, 0, 0, 0, 1, 0x65])],
    ['a cut length field', Buffer.from([0, 0, 0, 1, 0x65, 0, 0])],
  ])('%s is corrupt-media naming the file and offset', (_, bad) => {
    const e = (() => {
      try {
        encryptAvcSample(bad, 4, k, where);
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(OriginError);
    expect((e as OriginError).code).toBe('corrupt-media');
    expect((e as OriginError).message).toContain('test.ismv');
    expect((e as OriginError).message).toContain('1000');
  });
});

const decryptAudioBlock = (frame: Buffer): Buffer => referenceDecryptAudio(key, iv, frame);

describe('audio frames (§2.3)', () => {
  test('AAC and AC-3: every size decrypts to the clear frame, the first 16 and the last partial block clear', () => {
    const frames = [0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 100, 371, 1536].map((n) => randomBytes(n));
    for (const codec of ['aac', 'ac3'] as const) {
      const sealed = encryptAudioFrames(
        codec,
        frames,
        k,
        frames.map(() => where),
      );
      sealed.forEach((s, i) => {
        const f = frames[i]!;
        expect(s.byteLength).toBe(f.length);
        expect(decryptAudioBlock(Buffer.from(s)).equals(f)).toBe(true);
        const whole = 16 + Math.max(0, Math.floor((f.length - 16) / 16)) * 16;
        expect(Buffer.from(s.subarray(0, 16)).equals(f.subarray(0, 16))).toBe(true);
        expect(Buffer.from(s.subarray(whole)).equals(f.subarray(whole))).toBe(true);
        if (f.length >= 32) expect(Buffer.from(s).equals(f)).toBe(false);
      });
    }
  });

  /** An E-AC-3 syncframe of `words` 16-bit words: syncword, strmtyp 0, frmsiz = words − 1. */
  const syncframe = (words: number): Buffer => {
    const f = randomBytes(words * 2);
    f[0] = 0x0b;
    f[1] = 0x77;
    f[2] = ((words - 1) >> 8) & 0x07;
    f[3] = (words - 1) & 0xff;
    return f;
  };

  test('E-AC-3: each syncframe of a sample is its own protected block', () => {
    const parts = [syncframe(200), syncframe(57), syncframe(300)];
    const [sealed] = encryptAudioFrames('ec3', [Buffer.concat(parts)], k, [where]);
    let at = 0;
    for (const p of parts) {
      const s = Buffer.from(sealed!.subarray(at, at + p.length));
      expect(decryptAudioBlock(s).equals(p)).toBe(true);
      at += p.length;
    }
  });

  test.each([
    ['no syncword', Buffer.alloc(64, 1)],
    ['a syncframe longer than the sample', syncframe(40).subarray(0, 60)],
  ])('E-AC-3 with %s is corrupt-media', (_, bad) => {
    expect(() => encryptAudioFrames('ec3', [bad], k, [where])).toThrow(/E-AC-3/);
  });
});

describe('audio setup information (§2.3.4)', () => {
  test('AAC: audio_type by object type, priming 0, version 1, the AudioSpecificConfig', () => {
    const lc = Uint8Array.from([0x12, 0x10]);
    expect(Buffer.from(audioSetupInformation({ kind: 'aac', asc: lc }, undefined, 'a')).toString('hex')).toBe(
      Buffer.concat([Buffer.from('zaac'), Buffer.from([0, 0, 1, 2, 0x12, 0x10])]).toString('hex'),
    );
    const he = Uint8Array.from([0x2b, 0x92, 0x08, 0x00]); // object type 5 (SBR)
    expect(
      Buffer.from(audioSetupInformation({ kind: 'aac', asc: he }, undefined, 'a'))
        .subarray(0, 4)
        .toString(),
    ).toBe('zach');
    const ps = Uint8Array.from([0xeb, 0x09, 0x88, 0x00]); // object type 29 (PS)
    expect(
      Buffer.from(audioSetupInformation({ kind: 'aac', asc: ps }, undefined, 'a'))
        .subarray(0, 4)
        .toString(),
    ).toBe('zacp');
    expect(() => audioSetupInformation({ kind: 'aac', asc: Uint8Array.from([0x0a, 0x10]) }, undefined, 'a')).toThrow(
      /object type 1/,
    );
  });

  test('AC-3: the first 10 bytes of a syncframe, crc1 zeroed; E-AC-3: the dec3 payload', () => {
    const frame = Buffer.from('0b77abcd1340e1ff3f86ffff', 'hex');
    const ac3 = { kind: 'ac3' as const, channels: 6, bsid: 8, sampleRate: 48000, record: Uint8Array.from([1, 2, 3]) };
    const info = Buffer.from(audioSetupInformation(ac3, frame, 'a'));
    expect(info.toString('hex')).toBe(`${Buffer.from('zac3').toString('hex')}0000010a0b7700001240e1ff3f86`);
    expect(() => audioSetupInformation(ac3, frame.subarray(0, 9), 'a')).toThrow(/syncframe/);
    const dec3 = Uint8Array.from([0x08, 0x00, 0x20, 0x0f, 0x00]);
    const ec3 = { kind: 'ec3' as const, channels: 6, bsid: 16, sampleRate: 48000, record: dec3 };
    expect(Buffer.from(audioSetupInformation(ec3, undefined, 'a')).toString('hex')).toBe(
      `${Buffer.from('zec3').toString('hex')}00000105${Buffer.from(dec3).toString('hex')}`,
    );
  });
});
