// Byte sources: what the media layer reads (CONTRIBUTING.md design rule 3). Parsers take the bytes these return;
// a remote-storage source can replace the file one without them noticing. Sources are opened
// through the storage seam (io/storage.ts): the file system's, over kept handles for segment reads
// (io/file-handles.ts), or any other Storage's.

import { promises as fs } from 'node:fs';
import { OriginError, originError } from '../errors';

export interface ByteSource {
  /** For messages: the path or URL. */
  readonly name: string;
  readonly size: number;
  /** Exactly `length` bytes at `offset`, or an io error. */
  read(offset: number, length: number): Promise<Uint8Array>;
  /**
   * A hint: bytes [offset, offset + length) are about to be read, in any pieces. A remote source
   * (io/remote/remote-source.ts) fetches them in one round trip; files have no use for it.
   */
  willNeed?(offset: number, length: number): void;
  close(): Promise<void>;
}

/** A source that can read straight into a caller's buffer (io/file-handles.ts's kept-handle sources). */
export interface ReadIntoSource extends ByteSource {
  /** Exactly `length` bytes at file offset `offset` into target[0, length), or an OriginError. */
  readInto(target: Uint8Array, offset: number, length: number): Promise<void>;
}

export function canReadInto(source: ByteSource): source is ReadIntoSource {
  return typeof (source as Partial<ReadIntoSource>).readInto === 'function';
}

export class FileSource implements ByteSource {
  private constructor(
    readonly name: string,
    readonly size: number,
    private readonly handle: fs.FileHandle,
  ) {}

  static async open(path: string): Promise<FileSource> {
    const { handle, size } = await openRegularFile(path);
    return new FileSource(path, size, handle);
  }

  read(offset: number, length: number): Promise<Uint8Array> {
    return readFully(this.handle, this.name, this.size, offset, length);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

/** Opens a regular file for reading and takes its size (one fstat); errors as OriginError. */
export async function openRegularFile(path: string): Promise<{ handle: fs.FileHandle; size: number }> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(path, 'r');
  } catch (e) {
    throw ioError(path, e);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw originError('bad-request', 'not a regular file', { subject: path });
    return { handle, size: stat.size };
  } catch (e) {
    await handle.close().catch(() => undefined);
    throw e instanceof OriginError ? e : ioError(path, e);
  }
}

/** Exactly `length` bytes at `offset` of an open file of `size` bytes, or an OriginError. */
export async function readFully(
  handle: fs.FileHandle,
  name: string,
  size: number,
  offset: number,
  length: number,
): Promise<Uint8Array> {
  if (offset < 0 || length < 0 || offset + length > size) {
    throw originError(
      'corrupt-media',
      `read of ${length} bytes at ${offset} is past the end of the file (${size} bytes)`,
      { subject: name },
    );
  }
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, offset + done);
    if (bytesRead === 0) throw originError('io', `file shrank while reading at ${offset + done}`, { subject: name });
    done += bytesRead;
  }
  return buffer;
}

export function ioError(path: string, e: unknown): OriginError {
  const code = (e as NodeJS.ErrnoException)?.code;
  // ENOTDIR: a file where the path wants a directory (`/file.txt/x.ism`); ENAMETOOLONG: a segment
  // past the file system's bound; ELOOP: links in a circle. Each is "no such file", not a storage
  // failure (the URL fuzzing found `/file.txt/x.ism/...` answered 500 io).
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG' || code === 'ELOOP')
    return originError('not-found', 'no such file', { subject: path });
  if (code === 'EACCES' || code === 'EPERM') return originError('forbidden', 'permission denied', { subject: path });
  if (code === 'EISDIR') return originError('bad-request', 'is a directory, not a file', { subject: path });
  return originError('io', (e as Error)?.message ?? String(e), { subject: path });
}

/** An in-memory source, for tests and for bytes already read. */
export class BufferSource implements ByteSource {
  readonly size: number;
  constructor(
    readonly name: string,
    private readonly bytes: Uint8Array,
  ) {
    this.size = bytes.byteLength;
  }
  async read(offset: number, length: number): Promise<Uint8Array> {
    if (offset < 0 || length < 0 || offset + length > this.size) {
      throw originError('corrupt-media', `read of ${length} bytes at ${offset} is past the end (${this.size} bytes)`, {
        subject: this.name,
      });
    }
    return this.bytes.subarray(offset, offset + length);
  }
  async close(): Promise<void> {}
}

/**
 * Opens a source by path (a file here; the kept-handle opener of the server, a remote store);
 * `version` (io/storage.ts FileStat.version) pins a remote source to the object its index read.
 */
export type SourceOpener = (path: string, version?: string) => Promise<ByteSource>;

export const openFile: SourceOpener = (path) => FileSource.open(path);

/** `f` over a source `open` gives for `path`, closed afterwards whatever `f` did. */
export async function withSource<T>(
  open: SourceOpener,
  path: string,
  f: (source: ByteSource) => Promise<T>,
): Promise<T> {
  const source = await open(path);
  try {
    return await f(source);
  } finally {
    await source.close();
  }
}

/**
 * Bytes already read from `inner` at file offset `start`: reads inside them are answered from
 * memory, others go to `inner`. A segment writer reads its fragments' whole byte range once and
 * then parses moofs and takes sample data from it (one read instead of one per box and run).
 * Closing closes `inner`.
 */
export class SpanSource implements ByteSource {
  readonly name: string;
  readonly size: number;
  private readonly bytes: Uint8Array;
  constructor(
    private readonly inner: ByteSource,
    private readonly start: number,
    bytes: Uint8Array,
  ) {
    this.name = inner.name;
    this.size = inner.size;
    // A plain Uint8Array view: Buffer#subarray builds a Buffer per call, several times slower,
    // and the segment writers take one view per sample.
    this.bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  async read(offset: number, length: number): Promise<Uint8Array> {
    const at = offset - this.start;
    if (at >= 0 && length >= 0 && at + length <= this.bytes.byteLength) return this.bytes.subarray(at, at + length);
    return this.inner.read(offset, length);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
