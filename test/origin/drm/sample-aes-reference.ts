// The tests' own SAMPLE-AES decrypter, written from Apple's "MPEG-2 Stream Encryption Format for
// HTTP Live Streaming" (§2.2 Listing 2-1, §2.3) and ITU-T H.264 §7.3.1, with AES-CBC chained by
// hand over AES-ECB: it shares no code with origin/drm/sample-aes-ts.ts, so the tests can judge it.

import { createDecipheriv } from 'node:crypto';

/** H.264 §7.3.1: emulation_prevention_three_byte after every 00 00, i + 2 < n. */
export function unescape(nal: Buffer): Buffer {
  const out: number[] = [];
  for (let i = 0; i < nal.length; i++) {
    if (i + 2 < nal.length && nal[i] === 0 && nal[i + 1] === 0 && nal[i + 2] === 3) {
      out.push(0, 0);
      i += 2;
    } else out.push(nal[i]!);
  }
  return Buffer.from(out);
}

/** AES-128-CBC decryption of whole blocks, chained by hand over AES-ECB. */
export function cbcDecrypt(key: Buffer, iv: Buffer, blocks: Buffer[]): Buffer[] {
  let previous = iv;
  return blocks.map((c) => {
    const ecb = createDecipheriv('aes-128-ecb', key, null).setAutoPadding(false);
    const d = Buffer.concat([ecb.update(c), ecb.final()]);
    const p = Buffer.from(d.map((b, i) => b ^ previous[i]!));
    previous = c;
    return p;
  });
}

/** §2.2 Listing 2-1, read back: the positions of the encrypted blocks of a NAL unit of n bytes. */
export function encryptedBlocks(n: number): number[] {
  const out: number[] = [];
  let at = 32; // nal_unit_type_byte + unencrypted_leader (31)
  let remaining = n - 32;
  while (remaining > 0) {
    if (remaining > 16) {
      out.push(at);
      at += 16;
      remaining -= 16;
    }
    const clear = Math.min(144, remaining);
    at += clear;
    remaining -= clear;
  }
  return out;
}

/** A NAL unit as a reader gets it back: for type 1 and 5 over 48 bytes, emulation prevention removed and the encrypted blocks decrypted. */
export function decryptNal(key: Buffer, iv: Buffer, sealed: Buffer): Buffer {
  const type = sealed[0]! & 0x1f;
  if ((type !== 1 && type !== 5) || sealed.length <= 48) return sealed; // never encrypted: read as it is
  const bytes = unescape(sealed);
  const at = encryptedBlocks(bytes.length);
  const plain = cbcDecrypt(
    key,
    iv,
    at.map((p) => bytes.subarray(p, p + 16)),
  );
  at.forEach((p, i) => plain[i]!.copy(bytes, p));
  return bytes;
}

/** §2.3: 16 bytes clear, the whole blocks after them decrypted (CBC from the IV), the rest clear. */
export function decryptAudioBlock(key: Buffer, iv: Buffer, frame: Buffer): Buffer {
  const out = Buffer.from(frame);
  const blocks = Math.floor((frame.length - 16) / 16);
  if (blocks <= 0) return out;
  const chunks = [...Array(blocks).keys()].map((b) => frame.subarray(16 + b * 16, 32 + b * 16));
  cbcDecrypt(key, iv, chunks).forEach((p, b) => p.copy(out, 16 + b * 16));
  return out;
}

/** No start code emulation (§7.4.1): no 00 00 0x with x ≤ 2, 00 00 03 only before 00..03 or at the end. */
export function emulationProblems(nal: Buffer): string[] {
  const out: string[] = [];
  for (let i = 0; i + 2 < nal.length; i++) {
    if (nal[i] !== 0 || nal[i + 1] !== 0) continue;
    if (nal[i + 2]! <= 2) out.push(`00 00 0${nal[i + 2]} at ${i}`);
    if (nal[i + 2] === 3 && i + 3 < nal.length && nal[i + 3]! > 3) out.push(`a needless 00 00 03 at ${i}`);
  }
  if (nal[nal.length - 1] === 0) out.push('ends with 00');
  return out;
}

/** The NAL units of an Annex B byte stream (start codes 00 00 01 / 00 00 00 01), without start codes. */
export function annexBNals(b: Buffer): Buffer[] {
  const starts: Array<[number, number]> = [];
  for (let i = 0; i + 2 < b.length; i++) {
    if (b[i] === 0 && b[i + 1] === 0 && b[i + 2] === 1) {
      starts.push([i > 0 && b[i - 1] === 0 ? i - 1 : i, i + 3]);
      i += 2;
    }
  }
  return starts.map(([, body], j) => b.subarray(body, j + 1 < starts.length ? starts[j + 1]![0] : b.length));
}
