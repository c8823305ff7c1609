// The plugin's own MD5 (RFC 1321), SHA-1 (FIPS 180-4 / RFC 3174), Apache $apr1$, base64 and
// UTF-8 checks, compiled from assembly/edge/ into a test-only module: the published test
// vectors, then random inputs against independent implementations (Node's crypto, OpenSSL's
// `passwd -apr1`, Buffer, TextDecoder). Behaviour through the plugin is in basic-auth and token
// tests; this pins the primitives down byte for byte.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { CryptoProbe } from './crypto-probe';

let probe: CryptoProbe;
beforeAll(() => {
  probe = new CryptoProbe();
});

const ascii = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));

describe('MD5', () => {
  // RFC 1321 appendix A.5.
  test.each([
    ['', 'd41d8cd98f00b204e9800998ecf8427e'],
    ['a', '0cc175b9c0f1b6a831c399e269772661'],
    ['abc', '900150983cd24fb0d6963f7d28e17f72'],
    ['message digest', 'f96b697d7cb7938d525a2f31aaf161d0'],
    ['abcdefghijklmnopqrstuvwxyz', 'c3fcd3d76192e4007dfb496cca67e13b'],
    ['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 'd174ab98d277d9f5a5611c2c9f419d9f'],
    ['1234567890'.repeat(8), '57edf4a22be3c955ac49da2e2107b67a'],
  ])('RFC 1321 A.5: MD5(%j)', (input, digest) => {
    expect(probe.md5(ascii(input))).toBe(digest);
  });

  test('every length around the padding boundaries (0..200 bytes) equals Node', () => {
    for (let n = 0; n <= 200; n++) {
      const bytes = new Uint8Array(n).map((_, i) => (i * 37 + n) & 0xff);
      expect(probe.md5(bytes)).toBe(createHash('md5').update(bytes).digest('hex'));
    }
  });

  test('random byte strings equal Node (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        (bytes) => probe.md5(bytes) === createHash('md5').update(bytes).digest('hex'),
      ),
      { numRuns: 500 },
    );
  });
});

describe('MD5 over ASCII text and the token comparison (the allocation-free token check)', () => {
  test('updateAscii over any range of an ASCII text equals MD5 of those bytes (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 300 }),
        fc.nat(),
        fc.nat(),
        (text, a, b) => {
          const start = text.length === 0 ? 0 : a % (text.length + 1);
          const end = start + (text.length === 0 ? 0 : b % (text.length - start + 1));
          return (
            probe.md5Ascii(text, start, end) ===
            createHash('md5')
              .update(Buffer.from(text.slice(start, end), 'latin1'))
              .digest('hex')
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  test('the hex comparison: equal in either case, any other digit or a short text is unequal', () => {
    const digest = createHash('md5').update('x').digest('hex');
    const text = `/token/${digest}/rest`;
    expect(probe.hexDigestEqual(text, 7, digest)).toBe(true);
    expect(probe.hexDigestEqual(text.toUpperCase(), 7, digest)).toBe(true);
    for (let i = 0; i < 32; i++) {
      for (const c of '0123456789abcdefgG/ ') {
        if (c === digest[i]) continue;
        const changed = `/token/${digest.slice(0, i)}${c}${digest.slice(i + 1)}/rest`;
        expect(probe.hexDigestEqual(changed, 7, digest)).toBe(false);
      }
    }
    expect(probe.hexDigestEqual(`/token/${digest.slice(0, 31)}`, 7, digest)).toBe(false);
    expect(probe.hexDigestEqual(text, -1, digest)).toBe(false);
  });
});

describe('SHA-1', () => {
  // FIPS 180-4 examples (csrc.nist.gov) and RFC 3174 §7.3 tests 1-4.
  test.each([
    ['abc', 'a9993e364706816aba3e25717850c26c9cd0d89d'],
    ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '84983e441c3bd26ebaae4aa1f95129e5e54670f1'],
    [
      '0123456701234567012345670123456701234567012345670123456701234567'.repeat(10),
      'dea356a2cddd90c7a7ecedc5ebb563934f460452',
    ],
    ['', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
  ])('SHA-1(%j)', (input, digest) => {
    expect(probe.sha1(ascii(input))).toBe(digest);
  });

  test('FIPS 180 / RFC 3174 test 3: one million "a"', () => {
    expect(probe.sha1(new Uint8Array(1_000_000).fill(0x61))).toBe('34aa973cd4c4daa4f61eeb2bdbad27316534016f');
  });

  test('every length 0..200 and random byte strings equal Node', () => {
    for (let n = 0; n <= 200; n++) {
      const bytes = new Uint8Array(n).map((_, i) => (i * 91 + 7 * n) & 0xff);
      expect(probe.sha1(bytes)).toBe(createHash('sha1').update(bytes).digest('hex'));
    }
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        (bytes) => probe.sha1(bytes) === createHash('sha1').update(bytes).digest('hex'),
      ),
      { numRuns: 500 },
    );
  });
});

describe('$apr1$ (Apache MD5-crypt)', () => {
  // Produced by `openssl passwd -apr1 -salt <salt> <password>` (OpenSSL 3.0.19): empty, short,
  // 16 and 17 bytes (the "alternate sum" loop boundary), over two MD5 blocks, UTF-8, salts of 1,
  // 6 and 8 characters.
  test.each([
    ['', 's', '$apr1$s$e2aCb9PLCjZ2t55SoAxXn.'],
    ['a', 'saltsalt', '$apr1$saltsalt$OEnK0QmmvoDzFw9W2yFYT/'],
    ['password', 's', '$apr1$s$wTQMZ4z911tqGswPTKm4X/'],
    ['password', './Az09', '$apr1$./Az09$Wvb4.y.Tn1EZmcpVVJ3ww1'],
    ['0123456789abcdef', 'saltsalt', '$apr1$saltsalt$noZiBycUL1t9WTQEO7/nr1'],
    ['0123456789abcdefg', './Az09', '$apr1$./Az09$Mb7qWGPXjdHRi0g2Y1fxB1'],
    [
      'a very long password that spans more than two md5 blocks of sixteen......',
      'saltsalt',
      '$apr1$saltsalt$yI1.0kXRkRstkYFhMqYr60',
    ],
    ['pässwörd', 's', '$apr1$s$/KuNgW0uqd2rn.Rw0X7rH.'],
  ])('%j with salt %j', (password, salt, expected) => {
    expect(`$apr1$${salt}$${probe.apr1(new Uint8Array(Buffer.from(password, 'utf8')), salt)}`).toBe(expected);
  });

  const haveOpenssl = ((): boolean => {
    try {
      execFileSync('openssl', ['version'], { stdio: 'pipe' });
      return true;
    } catch {
      return false;
    }
  })();

  (haveOpenssl ? test : test.skip)('random passwords and salts equal OpenSSL', () => {
    const crypt64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    const samples = fc.sample(
      fc.record({
        password: fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !s.startsWith('-') && !s.includes('\0')),
        salt: fc.string({ unit: fc.constantFrom(...crypt64), minLength: 1, maxLength: 8 }),
      }),
      { numRuns: 40, seed: 7 },
    );
    for (const { password, salt } of samples) {
      const reference = execFileSync('openssl', ['passwd', '-apr1', '-salt', salt, '--', password]).toString().trim();
      expect(`$apr1$${salt}$${probe.apr1(new Uint8Array(Buffer.from(password, 'utf8')), salt)}`).toBe(reference);
    }
  });
});

describe('base64 (RFC 4648 §4, strict)', () => {
  test('round trips with Buffer, padded and unpadded', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64');
        expect(probe.base64Encode(bytes)).toBe(text);
        expect(probe.base64Decode(text)).toBe(Buffer.from(bytes).toString('hex'));
        expect(probe.base64Decode(text.replace(/=+$/, ''))).toBe(Buffer.from(bytes).toString('hex'));
      }),
      { numRuns: 300 },
    );
  });

  test.each([
    ['Y', 'one character is not a byte'],
    ['YQ=', 'one "=" where two are needed'],
    ['YWI==', 'padding the length does not need'],
    ['YR==', 'non-zero unused bits (a second spelling of "a")'],
    ['YQ==YQ==', 'padding in the middle'],
    ['Y Q==', 'a space'],
    ['YQ-_', 'the URL-safe alphabet'],
    ['YWJj=', 'padding after a whole group'],
  ])('refuses %j (%s)', (text) => {
    expect(probe.base64Decode(text)).toBeNull();
  });
});

describe('UTF-8 validation (what decodeURIComponent accepts)', () => {
  const fatal = new TextDecoder('utf-8', { fatal: true });
  const valid = (b: Uint8Array): boolean => {
    try {
      fatal.decode(b);
      return true;
    } catch {
      return false;
    }
  };

  test.each([
    [[0xc0, 0xaf], false], // overlong "/"
    [[0xe0, 0x80, 0xaf], false], // overlong "/"
    [[0xed, 0xa0, 0x80], false], // surrogate
    [[0xf4, 0x90, 0x80, 0x80], false], // past U+10FFFF
    [[0xc3, 0xa9], true],
    [[0xf0, 0x9f, 0x98, 0x80], true],
    [[0xe2, 0x82], false], // truncated
  ])('%j -> %s', (bytes, expected) => {
    expect(probe.utf8Valid(new Uint8Array(bytes))).toBe(expected);
  });

  test('agrees with a fatal TextDecoder on random bytes', () => {
    const bytes = fc.uint8Array({ maxLength: 12 }).map((b) => b.map((x) => (x < 0x60 ? x + 0x80 : x)));
    fc.assert(
      fc.property(bytes, (b) => probe.utf8Valid(b) === valid(b)),
      { numRuns: 3000 },
    );
  });
});
