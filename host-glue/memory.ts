// Bounds-checked access to a module's linear memory (§3.2, §6.17, §6.18).
//
// No view is ever kept: every access builds its Uint8Array/DataView from `memory.buffer` at that
// moment, because any call into the module (malloc inside a hostcall included) may grow the
// memory, which detaches the old ArrayBuffer. Pointers and sizes are wasm32 u32 values; JS
// receives i32 arguments signed, so everything goes through `>>> 0` first.

export class GuestMemory {
  constructor(private readonly memory: WebAssembly.Memory) {}

  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /** cpp-host getMemory: `ptr + size <= memory size`, in unsigned wasm32 arithmetic. */
  inBounds(ptr: number, size: number): boolean {
    return (ptr >>> 0) + (size >>> 0) <= this.byteLength;
  }

  /** A copy of `size` bytes at `ptr`, or null if out of bounds. */
  read(ptr: number, size: number): Uint8Array | null {
    if (!this.inBounds(ptr, size)) return null;
    const start = ptr >>> 0;
    return new Uint8Array(this.memory.buffer).slice(start, start + (size >>> 0));
  }

  write(ptr: number, data: Uint8Array): boolean {
    if (!this.inBounds(ptr, data.length)) return false;
    new Uint8Array(this.memory.buffer).set(data, ptr >>> 0);
    return true;
  }

  getU32(ptr: number): number | null {
    if (!this.inBounds(ptr, 4)) return null;
    return new DataView(this.memory.buffer).getUint32(ptr >>> 0, true);
  }

  /** u32 little-endian (§3.2: pointers, sizes, tokens, log level). */
  setU32(ptr: number, value: number): boolean {
    if (!this.inBounds(ptr, 4)) return false;
    new DataView(this.memory.buffer).setUint32(ptr >>> 0, value >>> 0, true);
    return true;
  }

  /** u64 little-endian (§6.20: time, metrics). */
  setU64(ptr: number, value: bigint): boolean {
    if (!this.inBounds(ptr, 8)) return false;
    new DataView(this.memory.buffer).setBigUint64(ptr >>> 0, BigInt.asUintN(64, value), true);
    return true;
  }
}
