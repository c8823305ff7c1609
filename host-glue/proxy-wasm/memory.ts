// Bounds-checked access to a module's linear memory (§3.2, §6.17, §6.18).
//
// Any call into the module (malloc inside a hostcall included) may grow the memory, which
// detaches the old ArrayBuffer. The views below are cached and every access first checks them:
// a detached buffer's views read length 0 (WebAssembly JS API, Memory.grow), and only then is
// `memory.buffer`, a call into the engine, read again and the views rebuilt. A shared memory's
// old buffer is not detached when it grows, so for one `memory.buffer` is compared every time.
// Pointers and sizes are wasm32 u32 values; JS receives i32 arguments signed, so everything
// goes through `>>> 0` first.

const RECENT_SLOTS = 64;
const RECENT_MAX_BYTES = 64;

export class GuestMemory {
  private buffer: ArrayBuffer;
  private u8: Uint8Array;
  private view: DataView;
  private readonly shared: boolean;
  /** Strings read lately (header names, mostly), by a hash of their bytes: see readLatin1. */
  private readonly recent: Array<string | undefined> = new Array<string | undefined>(RECENT_SLOTS).fill(undefined);

  constructor(private readonly memory: WebAssembly.Memory) {
    this.buffer = memory.buffer;
    this.shared = typeof SharedArrayBuffer !== 'undefined' && (this.buffer as unknown) instanceof SharedArrayBuffer;
    this.u8 = new Uint8Array(this.buffer);
    this.view = new DataView(this.buffer);
  }

  /** Views over the current buffer (rebuilt after growth). */
  private refresh(): void {
    if (this.u8.length !== 0 && !this.shared) return;
    const buffer = this.memory.buffer;
    if (buffer !== this.buffer) {
      this.buffer = buffer;
      this.u8 = new Uint8Array(buffer);
      this.view = new DataView(buffer);
    }
  }

  get byteLength(): number {
    this.refresh();
    return this.u8.length;
  }

  /** cpp-host getMemory: `ptr + size <= memory size`, in unsigned wasm32 arithmetic. */
  inBounds(ptr: number, size: number): boolean {
    return (ptr >>> 0) + (size >>> 0) <= this.byteLength;
  }

  /** A copy of `size` bytes at `ptr`, or null if out of bounds. */
  read(ptr: number, size: number): Uint8Array | null {
    this.refresh();
    const start = ptr >>> 0;
    const end = start + (size >>> 0);
    if (end > this.u8.length) return null;
    return this.u8.slice(start, end);
  }

  /**
   * The `size` bytes at `ptr` as a latin1 string (one char per byte, how HeaderList holds
   * bytes), or null if out of bounds. No intermediate copy for the short keys and values of
   * header calls.
   */
  readLatin1(ptr: number, size: number): string | null {
    this.refresh();
    const start = ptr >>> 0;
    const end = start + (size >>> 0);
    const u8 = this.u8;
    if (end > u8.length) return null;
    const n = end - start;
    if (n > 4096) return Buffer.from(this.buffer, start, n).toString('latin1');
    if (n === 0) return '';
    // A plugin reads the same few names (`:path`, `authorization`) on every request: a string
    // read lately with the same bytes is returned again, found by a hash of its length and
    // end bytes and compared byte for byte (no subarray, no new string).
    const slot = n <= RECENT_MAX_BYTES ? (n * 31 + u8[start]! * 7 + u8[end - 1]!) & (RECENT_SLOTS - 1) : -1;
    if (slot >= 0) {
      const known = this.recent[slot];
      if (known !== undefined && known.length === n) {
        let i = 0;
        while (i < n && known.charCodeAt(i) === u8[start + i]) i++;
        if (i === n) return known;
      }
    }
    // fromCharCode over the bytes: one char per byte, as latin1; no Buffer object in between.
    const text = String.fromCharCode.apply(null, u8.subarray(start, end) as unknown as number[]);
    if (slot >= 0) this.recent[slot] = text;
    return text;
  }

  write(ptr: number, data: Uint8Array): boolean {
    this.refresh();
    const start = ptr >>> 0;
    if (start + data.length > this.u8.length) return false;
    this.u8.set(data, start);
    return true;
  }

  /** Writes a latin1 string (every char < 256) as one byte per char. */
  writeLatin1(ptr: number, text: string): boolean {
    this.refresh();
    const start = ptr >>> 0;
    const n = text.length;
    const u8 = this.u8;
    if (start + n > u8.length) return false;
    if (n > 4096) {
      Buffer.from(this.buffer, start, n).write(text, 'latin1');
      return true;
    }
    for (let i = 0; i < n; i++) u8[start + i] = text.charCodeAt(i);
    return true;
  }

  getU32(ptr: number): number | null {
    this.refresh();
    const at = ptr >>> 0;
    if (at + 4 > this.u8.length) return null;
    return this.view.getUint32(at, true);
  }

  /** u32 little-endian (§3.2: pointers, sizes, tokens, log level). */
  setU32(ptr: number, value: number): boolean {
    this.refresh();
    const at = ptr >>> 0;
    if (at + 4 > this.u8.length) return false;
    this.view.setUint32(at, value >>> 0, true);
    return true;
  }

  /** A u64 given as a JS number (an integer; above 2^53 only as exact as the double itself),
   * little-endian: the same bytes as setU64(BigInt(value)) without making a BigInt. */
  setU64Number(ptr: number, value: number): boolean {
    this.refresh();
    const at = ptr >>> 0;
    if (at + 8 > this.u8.length) return false;
    const high = Math.floor(value / 4294967296);
    this.view.setUint32(at, value - high * 4294967296, true);
    this.view.setUint32(at + 4, high >>> 0, true);
    return true;
  }

  /** u64 little-endian (§6.20: time, metrics). */
  setU64(ptr: number, value: bigint): boolean {
    this.refresh();
    const at = ptr >>> 0;
    if (at + 8 > this.u8.length) return false;
    this.view.setBigUint64(at, BigInt.asUintN(64, value), true);
    return true;
  }
}
