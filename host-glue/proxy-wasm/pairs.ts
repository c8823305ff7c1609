// The serialized header map ("pairs") of proxy-wasm ABI 0.2.1, §3.1:
//
//   u32 N | N × { u32 key_len, u32 value_len } | N × { key, 0x00, value, 0x00 }   (little-endian)
//
// Parsing is strict in cpp-host's order (PairsUtil::toPairs): over 1 MiB, under 4 bytes, over
// 1024 pairs, sizes missing, a key/value past the end or not followed by 0x00, or any byte left
// over -> malformed. Envoy never reports malformed pairs; it uses an EMPTY map (§6.19), which is
// what toHeaderList() returns. fixtures/abi/header-pairs.txt is the shared annotated fixture.
//
// Header names and values are byte strings. HeaderList holds them as latin1 strings (one char
// per byte, which is how Node's http module presents header bytes), so bytes round-trip exactly.

import { LIMITS } from './abi';
import type { HeaderList } from './http-filter';

export type BytePair = [Uint8Array, Uint8Array];

/** Strict parse; null means malformed (the caller decides: Envoy uses an empty map). */
export function parsePairs(bytes: Uint8Array): BytePair[] | null {
  if (bytes.length > LIMITS.pairsMaxBytes) return null;
  // Size 0 is how an empty map is handed over (§3.2); the spec also allows a single 0x00 byte.
  // cpp-host treats anything under 4 bytes as empty; other short buffers are reported malformed.
  if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === 0)) return [];
  if (bytes.length < 4) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(0, true);
  if (count > LIMITS.pairsMaxCount) return null;
  // Plain JS numbers: no u32 wrap-around (the fixture's *-overflows cases).
  let at = 4;
  if (at + count * 8 > bytes.length) return null;
  const sizes: Array<[number, number]> = [];
  for (let i = 0; i < count; i++, at += 8) sizes.push([view.getUint32(at, true), view.getUint32(at + 4, true)]);
  const pairs: BytePair[] = [];
  for (const [keyLen, valueLen] of sizes) {
    const key = takeTerminated(bytes, at, keyLen);
    if (key === null) return null;
    at += keyLen + 1;
    const value = takeTerminated(bytes, at, valueLen);
    if (value === null) return null;
    at += valueLen + 1;
    pairs.push([key, value]);
  }
  return at === bytes.length ? pairs : null;
}

/** `len` bytes at `at` followed by 0x00, or null. Bytes inside may be 0x00 (lengths decide). */
function takeTerminated(bytes: Uint8Array, at: number, len: number): Uint8Array | null {
  if (at + len + 1 > bytes.length || bytes[at + len] !== 0) return null;
  return bytes.slice(at, at + len);
}

/** Exactly the §3.1 layout; an empty list is the 4 bytes `00 00 00 00` (cpp-host marshalPairs). */
export function serializePairs(pairs: readonly BytePair[]): Uint8Array {
  const size = pairs.reduce((n, [k, v]) => n + 8 + k.length + 1 + v.length + 1, 4);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, pairs.length, true);
  let at = 4;
  for (const [k, v] of pairs) {
    view.setUint32(at, k.length, true);
    view.setUint32(at + 4, v.length, true);
    at += 8;
  }
  for (const [k, v] of pairs) {
    out.set(k, at);
    at += k.length + 1; // the NUL is already 0
    out.set(v, at);
    at += v.length + 1;
  }
  return out;
}

/** One byte per char (the low byte, as Buffer's latin1 does); a fresh array, never a pooled Buffer. */
export function latin1Bytes(s: string): Uint8Array {
  const n = s.length;
  const out = new Uint8Array(n);
  if (n > 64) out.set(Buffer.from(s, 'latin1'));
  else for (let i = 0; i < n; i++) out[i] = s.charCodeAt(i);
  return out;
}

export function latin1String(b: Uint8Array): string {
  const n = b.length;
  if (n > 64) return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
  let text = '';
  for (let i = 0; i < n; i++) text += String.fromCharCode(b[i]!);
  return text;
}

/** A header map from pairs bytes, as Envoy reads them: malformed -> empty (§6.19). */
export function toHeaderList(bytes: Uint8Array): HeaderList {
  return (parsePairs(bytes) ?? []).map(([k, v]) => [latin1String(k), latin1String(v)]);
}

export function fromHeaderList(headers: HeaderList): Uint8Array {
  return serializePairs(headers.map(([k, v]) => [latin1Bytes(k), latin1Bytes(v)]));
}
