// The one ISO BMFF box writer of the fMP4 output (CONTRIBUTING.md design rule 5, after shaka-packager's
// `ComputeSize()` before `Write()`): a box is a tree of `Writable` nodes whose sizes are known
// before a byte is written. `serialize` sums them, allocates once, writes with a cursor and checks
// that every box wrote exactly the bytes its header announced. A mismatch is a bug in this code,
// never bad input, so it is an 'internal' error.
//
// Box header layout: ISO/IEC 14496-12 §4.2 (size, type, optional largesize; FullBox adds an
// 8-bit version and 24-bit flags).

import { OriginError, originError } from '../errors';

/** A node of a box tree: its exact byte size, and how to write those bytes. */
export interface Writable {
  readonly size: number;
  write(w: BoxWriter): void;
}

const U32_MAX = 0xffffffff;
const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

function internal(message: string): OriginError {
  return originError('internal', message, { subject: 'box-writer' });
}

function checkInt(name: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) throw internal(`${name} value ${v} is outside ${min}..${max}`);
}

/** A big-endian cursor over a buffer allocated once at its final size. */
export class BoxWriter {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  private pos = 0;

  constructor(size: number) {
    checkInt('buffer size', size, 0, 2 ** 31 - 1);
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }

  get offset(): number {
    return this.pos;
  }

  private claim(count: number): number {
    if (this.pos + count > this.bytes.byteLength) {
      throw internal(`write of ${count} bytes at ${this.pos} overruns the ${this.bytes.byteLength}-byte buffer`);
    }
    const at = this.pos;
    this.pos += count;
    return at;
  }

  u8(v: number): void {
    checkInt('u8', v, 0, 0xff);
    this.view.setUint8(this.claim(1), v);
  }

  u16(v: number): void {
    checkInt('u16', v, 0, 0xffff);
    this.view.setUint16(this.claim(2), v);
  }

  i16(v: number): void {
    checkInt('i16', v, -0x8000, 0x7fff);
    this.view.setInt16(this.claim(2), v);
  }

  u24(v: number): void {
    checkInt('u24', v, 0, 0xffffff);
    const at = this.claim(3);
    this.view.setUint8(at, v >>> 16);
    this.view.setUint16(at + 1, v & 0xffff);
  }

  u32(v: number): void {
    checkInt('u32', v, 0, U32_MAX);
    this.view.setUint32(this.claim(4), v);
  }

  i32(v: number): void {
    checkInt('i32', v, -0x80000000, 0x7fffffff);
    this.view.setInt32(this.claim(4), v);
  }

  /** Unsigned 64-bit, exact (times are bigint end to end). */
  u64(v: bigint): void {
    if (v < 0n || v > U64_MAX) throw internal(`u64 value ${v} is outside 0..2^64-1`);
    this.view.setBigUint64(this.claim(8), v);
  }

  i64(v: bigint): void {
    if (v < I64_MIN || v > I64_MAX) throw internal(`i64 value ${v} is outside -2^63..2^63-1`);
    this.view.setBigInt64(this.claim(8), v);
  }

  /** Signed 16.16 fixed point (§8.2.2 rate, §8.3.2 width/height, matrix). */
  fixed16_16(v: number): void {
    this.i32(Math.round(v * 0x10000));
  }

  /** Signed 8.8 fixed point (§8.2.2 volume, §12.2.2 balance). */
  fixed8_8(v: number): void {
    this.i16(Math.round(v * 0x100));
  }

  /** Four printable characters (box types, brands, handler types). */
  fourcc(s: string): void {
    if (!/^[\x20-\x7e]{4}$/.test(s)) throw internal(`'${s}' is not a four-character code`);
    const at = this.claim(4);
    for (let i = 0; i < 4; i++) this.bytes[at + i] = s.charCodeAt(i);
  }

  /** UTF-8 text with its NUL terminator (§8.4.3 hdlr name, §8.7.2 url location). */
  cstring(s: string): void {
    const encoded = new TextEncoder().encode(s);
    this.raw(encoded);
    this.u8(0);
  }

  raw(bytes: Uint8Array): void {
    this.bytes.set(bytes, this.claim(bytes.byteLength));
  }

  /** Throws unless exactly `size` bytes were written. */
  finish(): Uint8Array {
    if (this.pos !== this.bytes.byteLength) {
      throw internal(`wrote ${this.pos} bytes into a buffer computed as ${this.bytes.byteLength}`);
    }
    return this.bytes;
  }
}

/** Leaf nodes: one per field type, so a box is declared as a list of typed fields. */
export const field = {
  u8: (v: number): Writable => ({ size: 1, write: (w) => w.u8(v) }),
  u16: (v: number): Writable => ({ size: 2, write: (w) => w.u16(v) }),
  i16: (v: number): Writable => ({ size: 2, write: (w) => w.i16(v) }),
  u24: (v: number): Writable => ({ size: 3, write: (w) => w.u24(v) }),
  u32: (v: number): Writable => ({ size: 4, write: (w) => w.u32(v) }),
  i32: (v: number): Writable => ({ size: 4, write: (w) => w.i32(v) }),
  u64: (v: bigint): Writable => ({ size: 8, write: (w) => w.u64(v) }),
  i64: (v: bigint): Writable => ({ size: 8, write: (w) => w.i64(v) }),
  fixed16_16: (v: number): Writable => ({ size: 4, write: (w) => w.fixed16_16(v) }),
  fixed8_8: (v: number): Writable => ({ size: 2, write: (w) => w.fixed8_8(v) }),
  fourcc: (s: string): Writable => ({ size: 4, write: (w) => w.fourcc(s) }),
  cstring: (s: string): Writable => ({ size: new TextEncoder().encode(s).byteLength + 1, write: (w) => w.cstring(s) }),
  bytes: (b: Uint8Array): Writable => ({ size: b.byteLength, write: (w) => w.raw(b) }),
  zeros: (count: number): Writable => ({ size: count, write: (w) => w.raw(new Uint8Array(count)) }),
  /** Bytes and fields that belong together without a box header of their own. */
  group: (...content: Writable[]): Writable => ({
    size: sumSizes(content),
    write: (w) => content.forEach((c) => c.write(w)),
  }),
};

function sumSizes(content: readonly Writable[]): number {
  return content.reduce((s, c) => s + c.size, 0);
}

/**
 * A box (§4.2). The 32-bit size form is used whenever it fits; past 4 GiB the box gets
 * `size = 1` and a 64-bit largesize.
 */
export function box(type: string, ...content: Writable[]): Writable {
  const payload = sumSizes(content);
  const header = payload + 8 > U32_MAX ? 16 : 8;
  const size = payload + header;
  return {
    size,
    write(w) {
      const start = w.offset;
      if (header === 8) w.u32(size);
      else w.u32(1);
      w.fourcc(type);
      if (header === 16) w.u64(BigInt(size));
      for (const c of content) c.write(w);
      if (w.offset - start !== size) throw internal(`box '${type}' wrote ${w.offset - start} bytes, computed ${size}`);
    },
  };
}

/** A FullBox (§4.2): version (8 bits) and flags (24 bits) before the payload. */
export function fullBox(type: string, version: number, flags: number, ...content: Writable[]): Writable {
  return box(type, field.u8(version), field.u24(flags), ...content);
}

/** Writes nodes back to back into one buffer allocated at the computed size. */
export function serialize(...nodes: Writable[]): Uint8Array {
  const w = new BoxWriter(sumSizes(nodes));
  for (const n of nodes) n.write(w);
  return w.finish();
}

/** `ftyp` (§4.3) or `styp` (§8.16.2): same payload, different type. */
export function brandBox(type: 'ftyp' | 'styp', major: string, minor: number, compatible: readonly string[]): Writable {
  return box(type, field.fourcc(major), field.u32(minor), ...compatible.map((b) => field.fourcc(b)));
}
