// The header-pair wire format ("pairs") of proxy-wasm ABI 0.2.1, one reader and one writer
// (docs/specs.md ABI §3.1; fixture: fixtures/abi/header-pairs.txt).
//
//   u32 N | N x (u32 key_len, u32 value_len) | N x (key, 0x00, value, 0x00)     all little-endian
//
// The reader is as strict as cpp-host PairsUtil::toPairs: more than 1024 pairs or 1 MiB, a
// length running past the end, a missing NUL terminator or any byte after the last terminator
// makes the whole buffer malformed, and a malformed buffer means an EMPTY map (Envoy reports no
// error either). Lengths are compared with the bytes remaining, never added to an offset, so a
// length near 2^32 cannot wrap in wasm32 arithmetic. An empty buffer and the spec's single 0x00
// byte are the empty map.

/** One header (or trailer / metadata) entry. Names are lower-case when they come from Envoy. */
export class Header {
  constructor(
    public name: string,
    public value: string,
  ) {}
}

/** cpp-host PROXY_WASM_HOST_PAIRS_MAX_COUNT / _MAX_BYTES (include/proxy-wasm/limits.h). */
export const MAX_PAIRS_COUNT: u32 = 1024;
export const MAX_PAIRS_BYTES: usize = 1 << 20;

/** Validates without allocating; returns the pair count, or -1 if malformed. */
function validatePairs(ptr: usize, size: usize): i32 {
  if (size > MAX_PAIRS_BYTES) return -1;
  if (size < 4) return size == 0 || (size == 1 && load<u8>(ptr) == 0) ? 0 : -1;
  const count = load<u32>(ptr);
  if (count > MAX_PAIRS_COUNT) return -1;
  let remaining = size - 4;
  const sizesBytes = (<usize>count) << 3; // <= 8 KiB, cannot wrap
  if (sizesBytes > remaining) return -1;
  remaining -= sizesBytes;
  let sizeAt = ptr + 4;
  let dataAt = sizeAt + sizesBytes;
  for (let i: u32 = 0; i < count; i++) {
    for (let part = 0; part < 2; part++) {
      const length = <usize>load<u32>(sizeAt);
      sizeAt += 4;
      // Needs length bytes plus the NUL: length + 1 <= remaining, written without the addition.
      if (length >= remaining) return -1;
      if (load<u8>(dataAt + length) != 0) return -1;
      dataAt += length + 1;
      remaining -= length + 1;
    }
  }
  return remaining == 0 ? <i32>count : -1;
}

/** Parses `size` bytes at `ptr`; null if malformed. Layer-internal (takes a pointer). */
export function parsePairsAt(ptr: usize, size: usize): Header[] | null {
  const count = validatePairs(ptr, size);
  if (count < 0) return null;
  const headers = new Array<Header>(0);
  if (count == 0) return headers;
  let sizeAt = ptr + 4;
  let dataAt = sizeAt + ((<usize>count) << 3);
  for (let i = 0; i < count; i++) {
    const nameLength = <usize>load<u32>(sizeAt);
    const valueLength = <usize>load<u32>(sizeAt + 4);
    sizeAt += 8;
    const name = String.UTF8.decodeUnsafe(dataAt, nameLength, false);
    dataAt += nameLength + 1;
    const value = String.UTF8.decodeUnsafe(dataAt, valueLength, false);
    dataAt += valueLength + 1;
    headers.push(new Header(name, value));
  }
  return headers;
}

/** Parses a pairs buffer; null if malformed (the caller decides; Envoy would use an empty map). */
export function parsePairs(bytes: ArrayBuffer): Header[] | null {
  return parsePairsAt(changetype<usize>(bytes), <usize>bytes.byteLength);
}

/** Parses a pairs buffer the way Envoy does: malformed -> empty map. */
export function decodePairs(bytes: ArrayBuffer): Header[] {
  const headers = parsePairs(bytes);
  return headers !== null ? headers : new Array<Header>(0);
}

/** Serialises headers (an empty list -> 00 00 00 00). Null if the result would exceed the host's
 * limits: Envoy would silently read such a buffer as an empty map (and, for
 * proxy_set_header_map_pairs, wipe the headers), so the caller must not send it. */
export function encodePairs(headers: Header[]): ArrayBuffer | null {
  const count = headers.length;
  if (<u32>count > MAX_PAIRS_COUNT) return null;
  // Size first (CONTRIBUTING.md design rule 5: compute, allocate once, write with a cursor, check they agree).
  const names = new Array<ArrayBuffer>(0);
  const values = new Array<ArrayBuffer>(0);
  let total: u64 = 4;
  for (let i = 0; i < count; i++) {
    const header = headers[i];
    const name = String.UTF8.encode(header.name);
    const value = String.UTF8.encode(header.value);
    names.push(name);
    values.push(value);
    total += 8 + <u64>name.byteLength + 1 + <u64>value.byteLength + 1;
    if (total > <u64>MAX_PAIRS_BYTES) return null;
  }
  const out = new ArrayBuffer(<i32>total);
  const base = changetype<usize>(out);
  store<u32>(base, <u32>count);
  let sizeAt = base + 4;
  let dataAt = sizeAt + ((<usize>count) << 3);
  for (let i = 0; i < count; i++) {
    const name = names[i];
    const value = values[i];
    store<u32>(sizeAt, <u32>name.byteLength);
    store<u32>(sizeAt + 4, <u32>value.byteLength);
    sizeAt += 8;
    dataAt = writeTerminated(dataAt, name);
    dataAt = writeTerminated(dataAt, value);
  }
  return dataAt - base == <usize>total ? out : null;
}

function writeTerminated(at: usize, bytes: ArrayBuffer): usize {
  const length = <usize>bytes.byteLength;
  memory.copy(at, changetype<usize>(bytes), length);
  store<u8>(at + length, 0);
  return at + length + 1;
}

/** First value of `name` (exact, case-sensitive match: Envoy's names are lower-case), or null. */
export function findHeader(headers: Header[], name: string): string | null {
  for (let i = 0, n = headers.length; i < n; i++) {
    const header = headers[i];
    if (header.name == name) return header.value;
  }
  return null;
}
