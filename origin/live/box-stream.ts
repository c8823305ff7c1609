// Cuts an ingest body into whole top-level boxes as its chunks arrive (ISO/IEC 14496-12 §4.2).
// Pure: chunks in, boxes out, no I/O. Memory is bounded by the largest box allowed: a box
// header declaring more than `maxBoxBytes` is refused as soon as its header is read, before any
// of its payload is kept, and at most one box is buffered at a time.

import { originError } from '../errors';
import { printable } from '../media/boxes';

export interface Box {
  type: string;
  /** The whole box, header included. */
  bytes: Uint8Array;
  /** Offset of its first byte in the body. */
  offset: number;
}

export class BoxSplitter {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** Size of the box being collected, once its header has been read. */
  private need = 0;
  private offset = 0;

  constructor(private readonly maxBoxBytes: number) {}

  /** Bytes received and not yet returned as a box. */
  get buffered(): number {
    return this.pendingBytes;
  }

  /** Adds a chunk; returns the boxes it completes, in order. */
  push(chunk: Uint8Array): Box[] {
    const out: Box[] = [];
    this.pending.push(chunk);
    this.pendingBytes += chunk.byteLength;
    for (;;) {
      if (this.need === 0) {
        if (this.pendingBytes < 8) break;
        this.need = this.headerSize();
        if (this.need === 0) break; // a 64-bit size whose 16 header bytes have not all arrived
      }
      if (this.pendingBytes < this.need) break;
      const all = this.take(this.need);
      out.push({ type: String.fromCharCode(all[4]!, all[5]!, all[6]!, all[7]!), bytes: all, offset: this.offset });
      this.offset += this.need;
      this.need = 0;
    }
    return out;
  }

  /**
   * Called at the end of the body: an error if a box was left incomplete (a truncated box).
   * Zero bytes left is a clean end.
   */
  end(): void {
    if (this.pendingBytes === 0) return;
    const head = this.peek(Math.min(8, this.pendingBytes));
    const type = head.byteLength >= 8 ? printable(String.fromCharCode(...head.subarray(4, 8))) : '?';
    throw originError(
      'ingest-bad-box',
      `the body ends inside a box: '${type}' at byte ${this.offset} has ${this.pendingBytes} of ${this.need || 'at least 8'} bytes`,
    );
  }

  /** The size of the box starting the pending bytes (0 when more header bytes are needed). */
  private headerSize(): number {
    const h = this.peek(Math.min(16, this.pendingBytes));
    const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
    let size = v.getUint32(0);
    const type = printable(String.fromCharCode(...h.subarray(4, 8)));
    let header = 8;
    if (size === 1) {
      if (h.byteLength < 16) return 0;
      const big = v.getBigUint64(8);
      size = big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(big);
      header = 16;
    } else if (size === 0) {
      // "to the end of the file": an ingest body has no end we could wait for.
      throw originError(
        'ingest-bad-box',
        `box '${type}' at byte ${this.offset} declares size 0 (to the end of the body)`,
      );
    }
    if (size < header)
      throw originError(
        'ingest-bad-box',
        `box '${type}' at byte ${this.offset} declares size ${size}, smaller than its header`,
      );
    if (size > this.maxBoxBytes)
      throw originError(
        'ingest-box-too-large',
        `box '${type}' at byte ${this.offset} declares ${size} bytes, more than the ingest bound of ${this.maxBoxBytes}`,
      );
    return size;
  }

  private peek(n: number): Uint8Array {
    const first = this.pending[0]!;
    if (first.byteLength >= n) return first.subarray(0, n);
    return concat(this.pending, this.pendingBytes).subarray(0, n);
  }

  private take(n: number): Uint8Array {
    const all = this.pending.length === 1 ? this.pending[0]! : concat(this.pending, this.pendingBytes);
    // A copy of the box: it outlives the chunk it came in (archived, kept as the track's init).
    const box = Uint8Array.prototype.slice.call(all, 0, n);
    const rest = all.subarray(n);
    this.pending = rest.byteLength > 0 ? [rest] : [];
    this.pendingBytes = rest.byteLength;
    return box;
  }
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
