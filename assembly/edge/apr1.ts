// Apache's `$apr1$` password hash (apr_md5_encode in APR's crypto/apr_md5.c): Poul-Henning
// Kamp's FreeBSD MD5-crypt with the magic string "$apr1$" instead of "$1$". The format of
// htpasswd -m, the default of Apache's htpasswd since 2.2.18.
//
//   $apr1$<salt: up to 8 characters, ends at '$'>$<22 characters of the crypt alphabet>
//
// The algorithm, as those sources define it (pw = password bytes, s = salt bytes):
//   alt   = MD5(pw s pw)
//   ctx   = MD5 of: pw, "$apr1$", s, then alt repeated to the length of pw (16 at a time),
//           then for each bit of len(pw) from the lowest: a 0x00 byte if the bit is 1, else pw[0]
//   1000 rounds i = 0..999: MD5 of (i odd ? pw : digest) (i % 3 ? s) (i % 7 ? pw)
//                                  (i odd ? digest : pw)
//   output: the digest's bytes in the groups (0,6,12) (1,7,13) (2,8,14) (3,9,15) (4,10,5) (11),
//           each group as a 24-bit big-endian number written 6 bits at a time from the low end
//           in "./0-9A-Za-z" (4 characters per group, 2 for the last).
// Checked against `openssl passwd -apr1` in test/assembly/edge/crypto.test.ts.

import { Md5 } from './md5';
import { utf8Bytes } from './bytes';

const MAGIC = '$apr1$';
const CRYPT64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const APR1_SALT_MAX: i32 = 8;
export const APR1_HASH_LENGTH: i32 = 22;

/** True if `c` is in the crypt alphabet "./0-9A-Za-z". */
export function isCrypt64(c: i32): bool {
  return (c >= 0x2e && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** The 22-character hash part of $apr1$<salt>$<hash> for `password` and `salt` (<= 8 bytes). */
export function apr1Hash(password: Uint8Array, salt: Uint8Array): string {
  const pwLength = password.length;
  const saltLength = min(salt.length, APR1_SALT_MAX);
  const alternate = new Md5().update(password).update(salt, 0, saltLength).update(password).digest();

  const ctx = new Md5().update(password).update(utf8Bytes(MAGIC)).update(salt, 0, saltLength);
  for (let left = pwLength; left > 0; left -= 16) ctx.update(alternate, 0, min(left, 16));
  for (let bits = pwLength; bits != 0; bits >>>= 1) {
    // The quirk every implementation keeps: a NUL byte for a set bit, the first password byte
    // for a clear one.
    if (bits & 1) ctx.updateByte(0);
    else ctx.updateByte(<i32>password[0]);
  }
  const digest = ctx.digest();

  const round = new Md5(); // reset for each of the 1 000 rounds: no allocation per round
  for (let i = 0; i < 1000; i++) {
    round.reset();
    if (i & 1) round.update(password);
    else round.update(digest);
    if (i % 3 != 0) round.update(salt, 0, saltLength);
    if (i % 7 != 0) round.update(password);
    if (i & 1) round.update(digest);
    else round.update(password);
    round.digestInto(digest);
  }

  let out = '';
  out += crypt64(digest, 0, 6, 12, 4);
  out += crypt64(digest, 1, 7, 13, 4);
  out += crypt64(digest, 2, 8, 14, 4);
  out += crypt64(digest, 3, 9, 15, 4);
  out += crypt64(digest, 4, 10, 5, 4);
  out += crypt64(digest, -1, -1, 11, 2);
  return out;
}

/** Bytes (hi, mid, lo) as a 24-bit number (-1 = 0), `count` characters from the low end. */
function crypt64(digest: Uint8Array, hi: i32, mid: i32, lo: i32, count: i32): string {
  let value: u32 =
    (hi >= 0 ? (<u32>digest[hi]) << 16 : 0) | (mid >= 0 ? (<u32>digest[mid]) << 8 : 0) | (<u32>digest[lo]);
  let out = '';
  for (let i = 0; i < count; i++) {
    out += CRYPT64.charAt(<i32>(value & 63));
    value >>= 6;
  }
  return out;
}
