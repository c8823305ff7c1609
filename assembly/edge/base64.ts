// Base64 (RFC 4648 §4, the standard alphabet): the credentials of `Authorization: Basic`
// (RFC 7617 §2) and the digests of htpasswd `{SHA}` entries.
//
// Decoding is strict, because a lenient decoder gives one credential several spellings: only
// the alphabet, padding only at the end and only as much as the length needs, and the unused
// bits of the last character zero (RFC 4648 §3.5). Unpadded input is accepted (some clients
// omit it) as long as its length is possible.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function sextet(c: i32): i32 {
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  if (c == 0x2b) return 62;
  if (c == 0x2f) return 63;
  return -1;
}

/** The bytes `text` encodes, or null if it is not canonical base64. */
export function base64Decode(text: string): Uint8Array | null {
  let n = text.length;
  // Padding: at most two '=' at the end, and then the padded length is a multiple of 4.
  let padding = 0;
  while (n > 0 && padding < 2 && text.charCodeAt(n - 1) == 0x3d) {
    n--;
    padding++;
  }
  if (padding > 0 && (n + padding) % 4 != 0) return null;
  const rest = n % 4;
  if (rest == 1) return null; // one character holds only 6 bits: never a whole byte
  if (padding > 0 && padding != (4 - rest) % 4) return null;
  const out = new Uint8Array((n / 4) * 3 + (rest == 0 ? 0 : rest - 1));
  let bits: u32 = 0;
  let count = 0;
  let at = 0;
  for (let i = 0; i < n; i++) {
    const v = sextet(text.charCodeAt(i));
    if (v < 0) return null;
    bits = (bits << 6) | (<u32>v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      if (at >= out.length) return null;
      out[at++] = <u8>(bits >> (<u32>count));
      bits &= ((<u32>1) << (<u32>count)) - 1;
    }
  }
  if (bits != 0) return null; // non-zero unused bits: a second spelling of the same bytes
  return at == out.length ? out : null;
}

/** Standard base64 with padding. */
export function base64Encode(bytes: Uint8Array): string {
  const parts = new Array<string>(0);
  const n = bytes.length;
  for (let i = 0; i < n; i += 3) {
    const b0 = <u32>bytes[i];
    const b1 = i + 1 < n ? <u32>bytes[i + 1] : 0;
    const b2 = i + 2 < n ? <u32>bytes[i + 2] : 0;
    const triple = (b0 << 16) | (b1 << 8) | b2;
    parts.push(ALPHABET.charAt((triple >> 18) & 63));
    parts.push(ALPHABET.charAt((triple >> 12) & 63));
    parts.push(i + 1 < n ? ALPHABET.charAt((triple >> 6) & 63) : '=');
    parts.push(i + 2 < n ? ALPHABET.charAt(triple & 63) : '=');
  }
  return parts.join('');
}
