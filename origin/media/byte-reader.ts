// A bounds-checked big-endian cursor over a byte view. Every read checks its length first and
// names the box path and absolute file offset of the offender (CONTRIBUTING.md design rule 4), so a corrupt
// file produces "moof@1234/traf/trun: needs 12 bytes at 1300, box ends at 1296" instead of a
// RangeError from deep inside DataView.

import { OriginError, originError } from '../errors';

export class ByteReader {
  private readonly view: DataView;
  private pos: number;

  /**
   * @param bytes  the bytes to read (a view; never copied)
   * @param path   box path used in error messages
   * @param base   absolute file offset of bytes[0], for error messages
   */
  constructor(
    readonly bytes: Uint8Array,
    readonly path: string,
    readonly base = 0,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
  }

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.bytes.byteLength - this.pos;
  }

  fail(message: string): never {
    throw corruptAt(this.path, this.base + this.pos, message);
  }

  need(count: number): void {
    if (count < 0 || this.pos + count > this.bytes.byteLength) {
      this.fail(`needs ${count} bytes, box has ${this.remaining} left`);
    }
  }

  skip(count: number): void {
    this.need(count);
    this.pos += count;
  }

  u8(): number {
    this.need(1);
    return this.view.getUint8(this.pos++);
  }

  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }

  u24(): number {
    this.need(3);
    const v = (this.view.getUint8(this.pos) << 16) | this.view.getUint16(this.pos + 1);
    this.pos += 3;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  i32(): number {
    this.need(4);
    const v = this.view.getInt32(this.pos);
    this.pos += 4;
    return v;
  }

  /** Unsigned 64-bit as a JS number; fails past 2^53 rather than silently rounding. */
  u64(): number {
    const v = this.u64Big();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`64-bit value ${v} exceeds 2^53`);
    return Number(v);
  }

  u64Big(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.pos);
    this.pos += 8;
    return v;
  }

  /** Signed 64-bit, exact (tfxd/tfdt times can be negative in ffmpeg output: AAC priming). */
  i64Big(): bigint {
    this.need(8);
    const v = this.view.getBigInt64(this.pos);
    this.pos += 8;
    return v;
  }

  /** Unsigned integer of `size` bytes (1, 2, 3, 4 or 8), as used by tfra's variable-width fields. */
  uintN(size: number): number {
    switch (size) {
      case 1:
        return this.u8();
      case 2:
        return this.u16();
      case 3:
        return this.u24();
      case 4:
        return this.u32();
      case 8:
        return this.u64();
      default:
        return this.fail(`unsupported field width ${size}`);
    }
  }

  fourcc(): string {
    this.need(4);
    const s = String.fromCharCode(...this.bytes.subarray(this.pos, this.pos + 4));
    this.pos += 4;
    return s;
  }

  slice(count: number): Uint8Array {
    this.need(count);
    const s = this.bytes.subarray(this.pos, this.pos + count);
    this.pos += count;
    return s;
  }
}

/** A corrupt-media error naming the box path and the absolute file offset. */
export function corruptAt(path: string, offset: number, message: string): OriginError {
  return originError('corrupt-media', `${message} (at file offset ${offset})`, { subject: path });
}
