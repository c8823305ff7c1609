// Test-only module (never shipped): exposes the edge plugin's digests and codecs to jest
// (test/assembly/edge/crypto.test.ts compiles it with asc and calls it through
// @assemblyscript/loader). Binary input crosses as hex text, so any byte sequence can be tried.

import { constantTimeEqualHexIgnoreCase, hexValue, isValidUtf8, toHex, utf8Bytes } from '../../assembly/edge/bytes';
import { Md5, md5 } from '../../assembly/edge/md5';
import { sha1 } from '../../assembly/edge/sha1';
import { apr1Hash } from '../../assembly/edge/apr1';
import { base64Decode, base64Encode } from '../../assembly/edge/base64';

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) {
    out[i] = <u8>((hexValue(hex.charCodeAt(2 * i)) << 4) | hexValue(hex.charCodeAt(2 * i + 1)));
  }
  return out;
}

export function md5Hex(inputHex: string): string {
  return toHex(md5(fromHex(inputHex)));
}

export function sha1Hex(inputHex: string): string {
  return toHex(sha1(fromHex(inputHex)));
}

/** $apr1$ hash part for a password and salt given as hex bytes. */
export function apr1(passwordHex: string, saltHex: string): string {
  return apr1Hash(fromHex(passwordHex), fromHex(saltHex));
}

/** Hex of the decoded bytes, or "!" if the text is not canonical base64. */
export function base64DecodeHex(text: string): string {
  const bytes = base64Decode(text);
  return bytes === null ? '!' : toHex(bytes);
}

export function base64EncodeHex(inputHex: string): string {
  return base64Encode(fromHex(inputHex));
}

export function utf8Valid(inputHex: string): bool {
  const bytes = fromHex(inputHex);
  return isValidUtf8(bytes, bytes.length);
}

export function utf8Of(text: string): string {
  return toHex(utf8Bytes(text));
}

/** MD5 of text[start, end) through Md5.updateAscii (the caller passes ASCII text). */
export function md5AsciiHex(text: string, start: i32, end: i32): string {
  return toHex(new Md5().updateAscii(text, start, end).digest());
}

/** The token check's comparison: text[at, at + 32) against a digest given as hex. */
export function hexDigestEqual(text: string, at: i32, digestHex: string): bool {
  return constantTimeEqualHexIgnoreCase(text, at, fromHex(digestHex));
}
