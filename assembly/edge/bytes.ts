// Byte helpers of the edge plugin: hex, UTF-8 bytes of strings, UTF-8 validation, and the
// constant-time comparison every secret check goes through.
//
// Nothing here indexes past a length it has not checked: an out-of-bounds access aborts, and an
// abort traps the VM (docs/specs.md ABI §5.1).

const HEX_LOWER = "0123456789abcdef";
const HEX_UPPER = "0123456789ABCDEF";

/**
 * The UTF-16 unit text[i] without String#charCodeAt's call and range check (that call, on the
 * shadow stack, was the largest single cost of the per-request loops). The caller has checked
 * 0 <= i < text.length.
 */
// @ts-ignore: decorator
@inline export function codeUnit(text: string, i: i32): i32 {
  return <i32>load<u16>(changetype<usize>(text) + (<usize>i << 1));
}

/** The UTF-8 bytes of `text` (lone surrogates become U+FFFD, as String.UTF8 does). */
export function utf8Bytes(text: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(text, false));
}

/** Lower-case hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  const n = bytes.length;
  const out = changetype<string>(__new(<usize>n << 2, idof<string>()));
  const o = changetype<usize>(out);
  for (let i = 0; i < n; i++) {
    const b = <i32>unchecked(bytes[i]);
    store<u16>(o + (<usize>i << 2), <u16>hexDigitLower(b >> 4));
    store<u16>(o + (<usize>i << 2) + 2, <u16>hexDigitLower(b & 15));
  }
  return out;
}

/** One upper-case `%XX` escape of a byte (RFC 3986 §2.1 recommends upper case). */
export function percentByte(b: i32): string {
  return "%" + HEX_UPPER.charAt((b >> 4) & 15) + HEX_UPPER.charAt(b & 15);
}

/** Value of one hex digit (either case), or -1. */
export function hexValue(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/** True if every character of `text` is a hex digit (and there is at least one). */
export function isHex(text: string): bool {
  const n = text.length;
  if (n == 0) return false;
  for (let i = 0; i < n; i++) if (hexValue(text.charCodeAt(i)) < 0) return false;
  return true;
}

/**
 * Equality of two byte arrays in time that depends only on their lengths, never on where they
 * first differ (a byte-by-byte early exit would let a client find a digest one byte at a time).
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): bool {
  if (a.length != b.length) return false;
  let diff: i32 = 0;
  for (let i = 0, n = a.length; i < n; i++) diff |= <i32>a[i] ^ <i32>b[i];
  return diff == 0;
}

/** Equality of two texts (UTF-16 units) in time that depends only on their lengths. */
export function constantTimeEqualText(a: string, b: string): bool {
  if (a.length != b.length) return false;
  let diff: i32 = 0;
  for (let i = 0, n = a.length; i < n; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff == 0;
}

/**
 * Equality of two ASCII texts, ignoring ASCII letter case, in time that depends only on the
 * lengths (hex digests: mod_auth_token compares case-insensitively).
 */
export function constantTimeEqualIgnoreCase(a: string, b: string): bool {
  if (a.length != b.length) return false;
  let diff: i32 = 0;
  for (let i = 0, n = a.length; i < n; i++) diff |= foldCase(a.charCodeAt(i)) ^ foldCase(b.charCodeAt(i));
  return diff == 0;
}

/**
 * text[at, at + 2 × digest.length) equals the lower-case hex of `digest`, ignoring ASCII letter
 * case, in time that depends only on the digest's length: the same answer as
 * constantTimeEqualIgnoreCase(text.substring(...), toHex(digest)) without building either
 * string. The expected digits are computed without a branch on the (secret-derived) digest.
 */
export function constantTimeEqualHexIgnoreCase(text: string, at: i32, digest: Uint8Array): bool {
  const n = digest.length;
  if (at < 0 || at + 2 * n > text.length) return false; // lengths only: not secret
  let diff: i32 = 0;
  for (let i = 0; i < n; i++) {
    const b = <i32>unchecked(digest[i]);
    diff |= foldCase(codeUnit(text, at + 2 * i)) ^ hexDigitLower(b >> 4);
    diff |= foldCase(codeUnit(text, at + 2 * i + 1)) ^ hexDigitLower(b & 15);
  }
  return diff == 0;
}

/** '0'-'9', 'a'-'f' for 0..15 without a branch: 39 more past 9 (the gap from '9'+1 to 'a'). */
function hexDigitLower(v: i32): i32 {
  return 0x30 + v + (((9 - v) >> 31) & 39);
}

/** ASCII upper-case letters to lower case, without a data-dependent branch. */
function foldCase(c: i32): i32 {
  // 0x20 when c is in 'A'..'Z', else 0: both range tests as sign bits.
  const isUpper = ((0x40 - c) & (c - 0x5b)) >>> 31;
  return c | (isUpper << 5);
}

/**
 * True if `bytes[0, length)` is well-formed UTF-8 (RFC 3629 §4: no overlong forms, no
 * surrogates, nothing past U+10FFFF). decodeURIComponent refuses the same inputs, so the
 * plugin and the origin agree on what a percent-decoded path or query part is.
 */
export function isValidUtf8(bytes: Uint8Array, length: i32): bool {
  return isValidUtf8At(bytes.dataStart, min(length, bytes.length));
}

/** isValidUtf8 over the `n` bytes at `ptr` (memory the caller owns, e.g. a scratch buffer). */
export function isValidUtf8At(ptr: usize, n: i32): bool {
  let i = 0;
  while (i < n) {
    const b0 = <i32>load<u8>(ptr + <usize>i);
    if (b0 < 0x80) {
      i++;
      continue;
    }
    let need = 0;
    let lower = 0x80;
    let upper = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf) need = 1;
    else if (b0 >= 0xe0 && b0 <= 0xef) {
      need = 2;
      if (b0 == 0xe0) lower = 0xa0; // overlong
      if (b0 == 0xed) upper = 0x9f; // surrogates
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      need = 3;
      if (b0 == 0xf0) lower = 0x90; // overlong
      if (b0 == 0xf4) upper = 0x8f; // past U+10FFFF
    } else return false;
    if (i + need >= n) return false; // the sequence runs past the end
    const b1 = <i32>load<u8>(ptr + <usize>(i + 1));
    if (b1 < lower || b1 > upper) return false;
    for (let k = 2; k <= need; k++) {
      const bk = <i32>load<u8>(ptr + <usize>(i + k));
      if (bk < 0x80 || bk > 0xbf) return false;
    }
    i += need + 1;
  }
  return true;
}
