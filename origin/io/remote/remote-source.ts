// A source on remote storage: positional reads become HTTP range reads (http-storage.ts makes
// them, with the index's validator). The index reader asks for many small pieces (box headers, the
// moov, the mfra at the end): a read shorter than READ_AHEAD fetches READ_AHEAD bytes and keeps
// them, so the next small reads nearby cost no round trip. A segment reader that knows the span it
// is about to read (a fragment's moof and sample data, a segment's file parts) says so first
// (willNeed): the first read inside the span fetches all of it, one round trip instead of one per
// box or part. Every read returns bytes of its own (a copy when they come from the kept span):
// callers may write into what they get (the encrypting segment writers do).

import { originError } from '../../errors';
import type { ReadIntoSource } from '../source';
import type { RangeRead } from './in-flight-ranges';

export type { RangeRead } from './in-flight-ranges';

/**
 * Bytes fetched at least per round trip: the moov of a fragmented file and an mfra of a 30-minute
 * track (900 tfra entries) fit, and a segment's moof read fetches little more than it needs.
 */
export const READ_AHEAD = 64 << 10;

/** A hinted span larger than this is not fetched whole (a bound on one read's memory). */
export const MAX_HINT = 32 << 20;

export class RemoteSource implements ReadIntoSource {
  private span: { start: number; bytes: Uint8Array } | undefined;
  private hint: { start: number; end: number } | undefined;

  constructor(
    readonly name: string,
    readonly size: number,
    private readonly range: RangeRead,
  ) {}

  async read(offset: number, length: number): Promise<Uint8Array> {
    const { bytes, at } = await this.bytesOf(offset, length);
    return copy(bytes, at, length);
  }

  /** The same bytes as read, into target[0, length) (one copy less: the reply buffer's). */
  async readInto(target: Uint8Array, offset: number, length: number): Promise<void> {
    const { bytes, at } = await this.bytesOf(offset, length);
    target.set(bytes.subarray(at, at + length));
  }

  /**
   * Where the `length` bytes at `offset` are: bytes[at, at + length) of the kept span or of a
   * read's answer, which joined reads may share (never written to).
   */
  private async bytesOf(offset: number, length: number): Promise<{ bytes: Uint8Array; at: number }> {
    if (!(
      Number.isSafeInteger(offset) &&
      Number.isSafeInteger(length) &&
      offset >= 0 &&
      length >= 0 &&
      offset + length <= this.size
    ))
      throw originError(
        'corrupt-media',
        `read of ${length} bytes at ${offset} is past the end of the file (${this.size} bytes)`,
        { subject: this.name },
      );
    if (length === 0) return { bytes: new Uint8Array(0), at: 0 };
    const s = this.span;
    if (s !== undefined && offset >= s.start && offset + length <= s.start + s.bytes.byteLength)
      return { bytes: s.bytes, at: offset - s.start };
    const h = this.hint;
    if (h !== undefined && offset >= h.start && offset + length <= h.end) {
      const bytes = await this.range(h.start, h.end - h.start);
      this.span = { start: h.start, bytes };
      return { bytes, at: offset - h.start };
    }
    if (length >= READ_AHEAD) return { bytes: await this.range(offset, length), at: 0 };
    const fetched = Math.min(this.size - offset, READ_AHEAD);
    const bytes = await this.range(offset, fetched);
    this.span = { start: offset, bytes };
    return { bytes, at: 0 };
  }

  /**
   * Bytes [offset, offset + length) are about to be read (in any pieces): the first read inside
   * them fetches them all. Spans past the file or over MAX_HINT are not taken.
   */
  willNeed(offset: number, length: number): void {
    if (Number.isSafeInteger(offset) && offset >= 0 && length > 0 && length <= MAX_HINT && offset + length <= this.size)
      this.hint = { start: offset, end: offset + length };
  }

  async close(): Promise<void> {
    this.span = undefined;
    this.hint = undefined;
  }
}

/** `length` bytes of `bytes` from `at`, in memory of their own. */
function copy(bytes: Uint8Array, at: number, length: number): Uint8Array {
  return Buffer.from(bytes.subarray(at, at + length));
}
