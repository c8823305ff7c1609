// SHA-1 (FIPS 180-4 §6.1; RFC 3174): the digest of htpasswd's `{SHA}` entries, which store
// base64(SHA-1(password)) without a salt. Kept only because that format exists; prefer $apr1$.
//
// Input in 64-byte blocks of sixteen big-endian words, expanded to an 80-word schedule; the
// message is padded with 0x80, zeros and its length in bits as a big-endian 64-bit integer.

export const SHA1_BYTES: i32 = 20;

export class Sha1 {
  private h0: u32 = 0x67452301;
  private h1: u32 = 0xefcdab89;
  private h2: u32 = 0x98badcfe;
  private h3: u32 = 0x10325476;
  private h4: u32 = 0xc3d2e1f0;
  private readonly block: StaticArray<u8> = new StaticArray<u8>(64);
  private readonly w: StaticArray<u32> = new StaticArray<u32>(80);
  private fill: i32 = 0;
  private total: u64 = 0;

  /** Adds bytes[start, end) (clamped to the array). */
  update(bytes: Uint8Array, start: i32 = 0, end: i32 = i32.MAX_VALUE): Sha1 {
    let at = max(start, 0);
    const stop = min(end, bytes.length);
    const block = changetype<usize>(this.block);
    while (at < stop) {
      const take = min(64 - this.fill, stop - at); // [at, at + take) lies inside bytes
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

  updateByte(value: i32): Sha1 {
    unchecked((this.block[this.fill] = <u8>value));
    this.fill++;
    this.total++;
    if (this.fill == 64) {
      this.compress();
      this.fill = 0;
    }
    return this;
  }

  /** The 20-byte digest; the object must not be updated afterwards. */
  digest(): Uint8Array {
    const bits = this.total << 3;
    this.updateByte(0x80);
    if (this.fill > 56) {
      while (this.fill != 0) this.updateByte(0);
    }
    const block = changetype<usize>(this.block);
    memory.fill(block + <usize>this.fill, 0, <usize>(56 - this.fill));
    store<u64>(block + 56, bswap<u64>(bits)); // big-endian length (FIPS 180-4 §5.1.1)
    this.compress();
    this.fill = 0;
    const out = new Uint8Array(SHA1_BYTES);
    const o = out.dataStart;
    store<u32>(o, bswap<u32>(this.h0));
    store<u32>(o + 4, bswap<u32>(this.h1));
    store<u32>(o + 8, bswap<u32>(this.h2));
    store<u32>(o + 12, bswap<u32>(this.h3));
    store<u32>(o + 16, bswap<u32>(this.h4));
    return out;
  }

  private compress(): void {
    const w = this.w;
    const block = this.block;
    const x = changetype<usize>(block);
    for (let t = 0; t < 16; t++) unchecked((w[t] = bswap<u32>(load<u32>(x + ((<usize>t) << 2)))));
    for (let t = 16; t < 80; t++) {
      unchecked((w[t] = rotl<u32>(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1)));
    }
    let a = this.h0;
    let b = this.h1;
    let c = this.h2;
    let d = this.h3;
    let e = this.h4;
    for (let t = 0; t < 80; t++) {
      let f: u32;
      let k: u32;
      if (t < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (t < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (t < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6;
      }
      const temp = rotl<u32>(a, 5) + f + e + k + unchecked(w[t]);
      e = d;
      d = c;
      c = rotl<u32>(b, 30);
      b = a;
      a = temp;
    }
    this.h0 += a;
    this.h1 += b;
    this.h2 += c;
    this.h3 += d;
    this.h4 += e;
  }
}

/** SHA-1 of `bytes` in one call. */
export function sha1(bytes: Uint8Array): Uint8Array {
  return new Sha1().update(bytes).digest();
}
