// Range reads of one location's objects in flight in a worker (http-storage.ts), joined by the reads
// they contain: a request for bytes that another request's read is fetching now (a segment inside
// the span a concurrent request asked for, or the same segment) waits for that read instead of
// making its own. Identical requests are also joined by the storage client (storage-client.ts);
// this joins a read contained in a wider one.
//
// Why nothing is kept once it arrived: a range read carries `If-Match: <ETag of the indexed
// object>`, and storage answers 412 for a replaced object (remote-storage.md "Consistency"). Bytes
// kept past their read would answer later requests without that check, so a source replaced on
// storage would go on being served as it was (consistently, but not as storage has it now). A read
// in flight is as current as a read of one's own would be. Reads are keyed by path *and* the
// version their If-Match carries: a read pinned to another version (another index) never joins.

import { originError } from '../../errors';

export type RangeRead = (offset: number, length: number) => Promise<Uint8Array>;

interface Pending {
  start: number;
  end: number;
  bytes: Promise<Uint8Array>;
}

/** Reads in flight of one object version looked at per read at most (a bound on the scan). */
const MAX_PENDING_PER_KEY = 64;

export class InFlightRanges {
  /** Reads in flight by `path\nversion`, oldest first. */
  private readonly byKey = new Map<string, Pending[]>();
  /** Reads that joined one in flight, and reads that went to storage: tests and benches. */
  joined = 0;
  fetched = 0;

  /**
   * Exactly `length` bytes at `offset` of `path` at `version`: from a read in flight that
   * contains them, else `fetch(offset, length)`. The bytes may be shared by several callers:
   * copy before writing into them.
   */
  async read(path: string, version: string, offset: number, length: number, fetch: RangeRead): Promise<Uint8Array> {
    const key = `${path}\n${version}`;
    const end = offset + length;
    const list = this.byKey.get(key);
    const found = list?.find((p) => p.start <= offset && end <= p.end);
    if (found !== undefined) {
      this.joined++;
      const bytes = await found.bytes;
      return bytes.subarray(offset - found.start, end - found.start);
    }
    this.fetched++;
    const pending: Pending = { start: offset, end, bytes: fetch(offset, length) };
    if (list === undefined) this.byKey.set(key, [pending]);
    else if (list.length < MAX_PENDING_PER_KEY) list.push(pending);
    try {
      const bytes = await pending.bytes;
      if (bytes.byteLength !== length)
        throw originError('storage-error', `${path}: a read of ${length} bytes answered ${bytes.byteLength}`);
      return bytes;
    } finally {
      this.settle(key, pending);
    }
  }

  /** Reads in flight now (tests). */
  get pending(): number {
    let n = 0;
    for (const list of this.byKey.values()) n += list.length;
    return n;
  }

  private settle(key: string, pending: Pending): void {
    const list = this.byKey.get(key);
    if (list === undefined) return;
    const i = list.indexOf(pending);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.byKey.delete(key);
  }
}
