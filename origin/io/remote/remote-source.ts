// A source on remote storage: positional reads become HTTP range reads (http-storage.ts makes
// them, with the index's validator). The index reader asks for many small pieces (box headers, the
// moov, the mfra at the end): a read shorter than READ_AHEAD fetches READ_AHEAD bytes and keeps
// them, so the next small reads nearby cost no round trip. Every read returns bytes of its own
// (a copy when they come from the kept span): callers may write into what they get (the
// encrypting segment writers do).

import { originError } from '../../errors';
import type { ByteSource } from '../source';

/**
 * Bytes fetched at least per round trip: the moov of a fragmented file and an mfra of a 30-minute
 * track (900 tfra entries) fit, and a segment's moof read fetches little more than it needs.
 */
export const READ_AHEAD = 64 << 10;

export type RangeRead = (offset: number, length: number) => Promise<Uint8Array>;

export class RemoteSource implements ByteSource {
  private span: { start: number; bytes: Uint8Array } | undefined;

  constructor(
    readonly name: string,
    readonly size: number,
    private readonly range: RangeRead,
  ) {}

  async read(offset: number, length: number): Promise<Uint8Array> {
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
        {
          subject: this.name,
        },
      );
    if (length === 0) return new Uint8Array(0);
    const s = this.span;
    if (s !== undefined && offset >= s.start && offset + length <= s.start + s.bytes.byteLength)
      return copy(s.bytes, offset - s.start, length);
    if (length >= READ_AHEAD) return copy(await this.range(offset, length), 0, length);
    const fetched = Math.min(this.size - offset, READ_AHEAD);
    const bytes = await this.range(offset, fetched);
    this.span = { start: offset, bytes };
    return copy(bytes, 0, length);
  }

  async close(): Promise<void> {
    this.span = undefined;
  }
}

/** `length` bytes of `bytes` from `at`, in memory of their own. */
function copy(bytes: Uint8Array, at: number, length: number): Uint8Array {
  return Buffer.from(bytes.subarray(at, at + length));
}
