// MD5 (RFC 1321), incremental: the token digest of auth_token and the inner function of Apache's
// $apr1$ password hashes. MD5 is broken for collision resistance; both uses here are the formats
// the reference defines (mod_auth_token, htpasswd), not choices.
//
// State: four 32-bit words; input is taken in 64-byte blocks of sixteen little-endian words
// (RFC 1321 §3.4); the message is padded with 0x80, zeros and its length in bits as a
// little-endian 64-bit integer (§3.1, §3.2). Wasm memory is little-endian, so the words are
// plain loads from the block; input is copied into the block 64 bytes at a time.

/** Per-step additive constants: floor(abs(sin(i + 1)) * 2^32), i = 0..63 (RFC 1321 §3.4). */
const K: StaticArray<u32> = [
  0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501, 0x698098d8,
  0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
  0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87,
  0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
  0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039,
  0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
  0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
  0xeb86d391,
];

/** Left-rotation amounts, four per round (RFC 1321 §3.4). */
const R: StaticArray<u32> = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];

export const MD5_BYTES: i32 = 16;

export class Md5 {
  private a: u32 = 0x67452301;
  private b: u32 = 0xefcdab89;
  private c: u32 = 0x98badcfe;
  private d: u32 = 0x10325476;
  private readonly block: StaticArray<u8> = new StaticArray<u8>(64);
  private fill: i32 = 0;
  private total: u64 = 0;

  /** Back to the initial state, for another message (apr1 hashes 1 002 of them). */
  reset(): Md5 {
    this.a = 0x67452301;
    this.b = 0xefcdab89;
    this.c = 0x98badcfe;
    this.d = 0x10325476;
    this.fill = 0;
    this.total = 0;
    return this;
  }

  /** Adds bytes[start, end) (clamped to the array). */
  update(bytes: Uint8Array, start: i32 = 0, end: i32 = i32.MAX_VALUE): Md5 {
    let at = max(start, 0);
    const stop = min(end, bytes.length);
    const block = changetype<usize>(this.block);
    while (at < stop) {
      // Whole 64-byte pieces go into the block at once; [at, at + take) lies inside bytes.
      const take = min(64 - this.fill, stop - at);
      memory.copy(block + <usize>this.fill, bytes.dataStart + <usize>at, <usize>take);
      this.fill += take;
      this.total += <u64>take;
      at += take;
      if (this.fill == 64) {
        this.compress();
        this.fill = 0;
      }
    }
    return this;
  }

  /** Adds text[start, end) one byte per char; the caller has checked every char is ASCII
   * (then the bytes are the text's UTF-8). */
  updateAscii(text: string, start: i32, end: i32): Md5 {
    const stop = min(end, text.length);
    const block = changetype<usize>(this.block);
    const chars = changetype<usize>(text);
    for (let at = max(start, 0); at < stop; at++) {
      store<u8>(block + <usize>this.fill, <u8>load<u16>(chars + ((<usize>at) << 1)));
      this.fill++;
      this.total++;
      if (this.fill == 64) {
        this.compress();
        this.fill = 0;
      }
    }
    return this;
  }

  updateByte(value: i32): Md5 {
    unchecked((this.block[this.fill] = <u8>value));
    this.fill++;
    this.total++;
    if (this.fill == 64) {
      this.compress();
      this.fill = 0;
    }
    return this;
  }

  /** The 16-byte digest; the object must be reset before another update. */
  digest(): Uint8Array {
    const out = new Uint8Array(MD5_BYTES);
    this.digestInto(out);
    return out;
  }

  /** The digest written into out[0, 16) (out must hold 16 bytes). */
  digestInto(out: Uint8Array): void {
    const bits = this.total << 3;
    this.updateByte(0x80);
    if (this.fill > 56) {
      while (this.fill != 0) this.updateByte(0);
    }
    const block = changetype<usize>(this.block);
    memory.fill(block + <usize>this.fill, 0, <usize>(56 - this.fill));
    store<u64>(block + 56, bits); // wasm memory is little-endian, as RFC 1321 §3.2 wants
    this.compress();
    this.fill = 0;
    if (out.length < MD5_BYTES) return;
    const o = out.dataStart;
    store<u32>(o, this.a);
    store<u32>(o + 4, this.b);
    store<u32>(o + 8, this.c);
    store<u32>(o + 12, this.d);
  }

  /** RFC 1321 §3.4: four rounds of sixteen steps over the block's words (little-endian loads). */
  private compress(): void {
    const x = changetype<usize>(this.block);
    let a = this.a;
    let b = this.b;
    let c = this.c;
    let d = this.d;
    for (let i = 0; i < 16; i++) {
      const f = (b & c) | (~b & d);
      const t = d;
      d = c;
      c = b;
      b += rotl<u32>(a + f + unchecked(K[i]) + load<u32>(x + ((<usize>i) << 2)), unchecked(R[i & 3]));
      a = t;
    }
    for (let i = 16; i < 32; i++) {
      const f = (d & b) | (~d & c);
      const t = d;
      d = c;
      c = b;
      b += rotl<u32>(
        a + f + unchecked(K[i]) + load<u32>(x + ((<usize>((5 * i + 1) & 15)) << 2)),
        unchecked(R[4 + (i & 3)]),
      );
      a = t;
    }
    for (let i = 32; i < 48; i++) {
      const f = b ^ c ^ d;
      const t = d;
      d = c;
      c = b;
      b += rotl<u32>(
        a + f + unchecked(K[i]) + load<u32>(x + ((<usize>((3 * i + 5) & 15)) << 2)),
        unchecked(R[8 + (i & 3)]),
      );
      a = t;
    }
    for (let i = 48; i < 64; i++) {
      const f = c ^ (b | ~d);
      const t = d;
      d = c;
      c = b;
      b += rotl<u32>(
        a + f + unchecked(K[i]) + load<u32>(x + ((<usize>((7 * i) & 15)) << 2)),
        unchecked(R[12 + (i & 3)]),
      );
      a = t;
    }
    this.a += a;
    this.b += b;
    this.c += c;
    this.d += d;
  }
}

/** MD5 of `bytes` in one call. */
export function md5(bytes: Uint8Array): Uint8Array {
  return new Md5().update(bytes).digest();
}
