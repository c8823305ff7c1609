// Memory hand-off between host and module (docs/specs.md ABI §1.1, §3.2).
//
// The host returns variable-size results by calling the module's allocator from inside the
// hostcall, copying the bytes there and writing (pointer, size) as two little-endian u32 into
// slots the module passed. Here:
//   * the allocator hands out unmanaged TLSF memory (heap.alloc): the GC never sees or moves it;
//   * the slots are one static, never-collected region (memory.data), cleared before every call
//     so that a host that writes nothing reads back as "empty";
//   * take*() copies the result into a managed object and frees the host's block at once, so
//     nothing outside this file ever holds a raw pointer.
// The allocator runs under Envoy's restricted-callback list (§1.1): it must not call the host.

/** Largest single block the host may ask for; larger requests get 0 (the host then reports
 * INVALID_MEMORY_ACCESS) instead of TLSF's "allocation too large" abort, which would trap. */
export const MAX_HOST_ALLOCATION: usize = 32 << 20;

// Return slots: [0] pointer or scalar u32, [4] size or flags, [8] u64 (time, metric value).
const SLOTS: usize = memory.data(16, 8);
export const RET_PTR: usize = SLOTS;
export const RET_SIZE: usize = SLOTS + 4;
export const RET_U64: usize = SLOTS + 8;

/** Body of proxy_on_memory_allocate: `size` writable bytes, or 0 on refusal. */
export function allocateForHost(size: usize): usize {
  if (size > MAX_HOST_ALLOCATION) return 0;
  // A zero-byte request still gets a real block so that the pointer is freeable like any other.
  return heap.alloc(size == 0 ? 1 : size);
}

/** Zeroes the return slots before a hostcall. */
export function clearReturnSlots(): void {
  store<u64>(SLOTS, 0);
  store<u64>(SLOTS + 8, 0);
}

/** True if [ptr, ptr + size) lies inside linear memory (wasm32: compare in 64 bits). */
function inMemory(ptr: usize, size: usize): bool {
  return <u64>ptr + <u64>size <= (<u64>memory.size() << 16);
}

/** Frees a block the host obtained from allocateForHost, if it plausibly is one. */
function releaseHostBlock(ptr: usize): void {
  // heap.alloc blocks are 16-byte aligned and above the static data; anything else is not ours
  // and handing it to heap.free would fail TLSF's assertions (a trap).
  if (ptr >= __heap_base && (ptr & 15) == 0 && inMemory(ptr, 0)) heap.free(ptr);
}

/** The (pointer, size) result of the last hostcall as a fresh ArrayBuffer; the host block is freed.
 * Empty result (0, 0) -> empty buffer; an impossible result -> null. */
export function takeBytes(): ArrayBuffer | null {
  const ptr = <usize>load<u32>(RET_PTR);
  const size = <usize>load<u32>(RET_SIZE);
  if (ptr == 0) return size == 0 ? new ArrayBuffer(0) : null;
  if (size > MAX_HOST_ALLOCATION || !inMemory(ptr, size)) {
    releaseHostBlock(ptr);
    return null;
  }
  const out = new ArrayBuffer(<i32>size);
  memory.copy(changetype<usize>(out), ptr, size);
  releaseHostBlock(ptr);
  return out;
}

/** Like takeBytes, decoded as UTF-8 (invalid sequences are decoded leniently, never trap). */
export function takeString(): string | null {
  const ptr = <usize>load<u32>(RET_PTR);
  const size = <usize>load<u32>(RET_SIZE);
  if (ptr == 0) return size == 0 ? "" : null;
  if (size > MAX_HOST_ALLOCATION || !inMemory(ptr, size)) {
    releaseHostBlock(ptr);
    return null;
  }
  const text = String.UTF8.decodeUnsafe(ptr, size, false);
  releaseHostBlock(ptr);
  return text;
}

/** Data pointer of a managed buffer for the duration of a hostcall (the caller keeps `buf` alive). */
// @ts-ignore: decorator
@inline export function dataOf(buf: ArrayBuffer): usize {
  return changetype<usize>(buf);
}

/** Byte length of a managed buffer as the ABI's u32. */
// @ts-ignore: decorator
@inline export function sizeOf(buf: ArrayBuffer): usize {
  return <usize>buf.byteLength;
}
