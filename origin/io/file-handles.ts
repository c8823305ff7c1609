// Segment delivery I/O: open source files, reused across requests (their read buffers: io/buffers.ts).
//
// A segment is a few rewritten boxes plus byte ranges of one source file. Opening, fstat-ing and
// closing that file for every request, and allocating a fresh read buffer for every chunk, cost
// more than the read itself (profiled: open + close + stat ≈ 13 % and GC ≈ 15 % of a worker
// serving fMP4 segments). nginx keeps descriptors in its open_file_cache for the same reason.
//
// Consistency: a handle is trusted for as long as the presentation store trusts a stat
// (`statTtlMs`), so within that window an old index reads the old file's bytes through the old
// descriptor (the inode it indexed), never a replaced file's. With a TTL of 0 nothing is kept.

import { promises as fs, read as readCallback } from 'node:fs';
import { originError } from '../errors';
import { ioError, openRegularFile, readFully, ReadIntoSource, SourceOpener } from './source';

interface Opened {
  handle: fs.FileHandle;
  /** The file's size when it was opened (fstat once per open). */
  size: number;
}

interface Entry {
  handle: Promise<Opened>;
  opened: number;
  refs: number;
  /** Replaced or evicted: close once the last reader releases it. */
  retired: boolean;
}

export interface Lease {
  handle: fs.FileHandle;
  size: number;
  release(): void;
}

export class FileHandles {
  private readonly open = new Map<string, Entry>();
  /** Next time idle expired handles are swept (a handle nobody asks for again is still closed). */
  private nextSweep = 0;
  /** Descriptors open now: kept, in use, or retired and not yet closed (/metrics). */
  private descriptors = 0;

  /**
   * @param ttlMs how long an opened handle is reused (0: one open per lease)
   * @param max   handles kept open at most (idle ones are closed first)
   */
  constructor(
    private readonly ttlMs: number,
    private readonly max = 256,
  ) {}

  async acquire(file: string): Promise<Lease> {
    if (this.ttlMs <= 0) {
      const { handle, size } = await this.openCounted(file);
      return { handle, size, release: () => this.closeCounted(handle) };
    }
    const now = performance.now();
    this.sweep(now);
    let entry = this.open.get(file);
    if (entry !== undefined && now - entry.opened >= this.ttlMs) {
      this.retire(file, entry);
      entry = undefined;
    }
    if (entry === undefined) {
      entry = { handle: this.openCounted(file), opened: now, refs: 0, retired: false };
      const e = entry;
      this.open.set(file, e);
      // A failed open is not kept: the next request tries again.
      e.handle.catch(() => {
        if (this.open.get(file) === e) this.open.delete(file);
      });
      this.trim();
    } else {
      // Most recently used last: trim() closes from the front.
      this.open.delete(file);
      this.open.set(file, entry);
    }
    const e = entry;
    e.refs++;
    let opened: Opened;
    try {
      opened = await e.handle;
    } catch (err) {
      e.refs--;
      throw err;
    }
    let released = false;
    return {
      handle: opened.handle,
      size: opened.size,
      release: () => {
        if (released) return;
        released = true;
        e.refs--;
        if (e.retired && e.refs === 0) this.closeEntry(e);
      },
    };
  }

  /** Sources over kept handles, for the segment writers (origin/segments/hls-segments.ts): close() releases. */
  readonly opener: SourceOpener = async (path) => {
    const lease = await this.acquire(path);
    let closed = false;
    const file: OpenFile = { fd: lease.handle.fd, name: path, size: lease.size };
    const source: ReadIntoSource = {
      name: path,
      size: lease.size,
      read: (offset, length) => readFully(lease.handle, path, lease.size, offset, length),
      readInto: (target, offset, length) => readInto(file, target, offset, length),
      close: async () => {
        if (!closed) lease.release();
        closed = true;
      },
    };
    return source;
  };

  /** Handles currently kept (tests). */
  get size(): number {
    return this.open.size;
  }

  /** Descriptors open now, kept or still in use after being retired. */
  get openDescriptors(): number {
    return this.descriptors;
  }

  private async openCounted(file: string): Promise<Opened> {
    const opened = await openRegularFile(file);
    this.descriptors++;
    return opened;
  }

  private closeCounted(handle: fs.FileHandle): void {
    this.descriptors--;
    handle.close().catch(() => undefined);
  }

  private closeEntry(e: Entry): void {
    e.handle.then((o) => this.closeCounted(o.handle)).catch(() => undefined);
  }

  /** Closes every kept handle (those in use once released): the owner is done with them. */
  close(): void {
    for (const [file, e] of this.open) this.retire(file, e);
  }

  /** At most once per TTL: closes the idle handles whose TTL has passed. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + this.ttlMs;
    for (const [file, e] of this.open) if (e.refs === 0 && now - e.opened >= this.ttlMs) this.retire(file, e);
  }

  private retire(file: string, e: Entry): void {
    if (this.open.get(file) === e) this.open.delete(file);
    e.retired = true;
    if (e.refs === 0) this.closeEntry(e);
  }

  private trim(): void {
    if (this.open.size <= this.max) return;
    for (const [file, e] of this.open) {
      if (this.open.size <= this.max) break;
      if (e.refs === 0) this.retire(file, e);
    }
  }
}

/** A descriptor open for reading, with its path (for messages) and its size when opened. */
interface OpenFile {
  fd: number;
  name: string;
  size: number;
}

/**
 * Exactly `length` bytes at `offset` of an open file of `size` bytes into target[0, length)
 * (the segment writers' pooled buffers, io/buffers.ts), or an OriginError. The callback
 * form of read on the descriptor: FileHandle.read's promise machinery cost more than the call.
 * Settles only once no read into `target` is running.
 */
async function readInto(
  { fd, name, size }: OpenFile,
  target: Uint8Array,
  offset: number,
  length: number,
): Promise<void> {
  if (!(
    Number.isSafeInteger(offset) &&
    Number.isSafeInteger(length) &&
    offset >= 0 &&
    length >= 0 &&
    offset + length <= size &&
    length <= target.byteLength
  )) {
    throw originError(
      'corrupt-media',
      `read of ${length} bytes at ${offset} is past the end of the file (${size} bytes)`,
      { subject: name },
    );
  }
  let done = 0;
  while (done < length) {
    const bytesRead = await new Promise<number>((resolve, reject) => {
      readCallback(fd, target, done, length - done, offset + done, (err, n) =>
        err ? reject(ioError(name, err)) : resolve(n),
      );
    });
    if (bytesRead === 0) throw originError('io', `file shrank while reading at ${offset + done}`, { subject: name });
    done += bytesRead;
  }
}
