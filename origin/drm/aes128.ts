// HLS AES-128 (RFC 8216 §4.3.2.4, §5.2): a whole segment encrypted with AES-128-CBC and PKCS#7
// padding, so an encrypted segment is 16·(⌊n/16⌋ + 1) bytes. The IV is `--hls.key_iv` when given,
// else the segment's media sequence number as a 128-bit big-endian integer, written into every
// EXT-X-KEY (hls.js treats a missing IV differently per method; writing it leaves nothing to
// guess). An fMP4 Media Initialization Section is encrypted too and its key line needs an IV
// (§4.3.2.5): it gets IV 0, which no media segment has (sequence numbers start at 1).

import { createCipheriv } from 'node:crypto';

/** The IV of the segment with media sequence number `n` (or of the init section: 0). */
export function sequenceIv(n: number): Uint8Array {
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(n), 8);
  return iv;
}

export const INIT_SECTION_IV = sequenceIv(0);

/** AES-128-CBC with PKCS#7 padding over the whole of `bytes`. */
export function aes128Encrypt(key: Uint8Array, iv: Uint8Array, bytes: Uint8Array): Uint8Array {
  const cipher = createCipheriv('aes-128-cbc', key, iv);
  return Buffer.concat([cipher.update(bytes), cipher.final()]);
}
