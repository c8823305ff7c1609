// The writing half of the storage seam, for the live archive (origin/live/archive.ts): append-only
// files, their fsync, the truncation of a torn tail, whole-file removal and atomic small writes.
// Reading the archive goes through the ordinary Storage (io/storage.ts), so a worker that only
// serves reads a channel the way it reads any source. The file system is the one implementation;
// a remote archive would be another ArchiveStorage (what it must keep: an append is durable once
// sync() resolves, and nothing is published before that).

import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { ioError } from './source';

/** A file open for appending: bytes go at its end, in the order given. */
export interface AppendFile {
  readonly path: string;
  /** Bytes in the file (what is on disk plus what append() has written). */
  readonly size: number;
  append(bytes: Uint8Array): Promise<void>;
  /** The data appended so far is on stable storage (fdatasync). */
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface ArchiveStorage {
  mkdir(dir: string): Promise<void>;
  /** File names (not paths) in `dir`; [] when it does not exist. */
  list(dir: string): Promise<string[]>;
  /** Opens (creating it when absent) a file for appending at its current end. */
  openAppend(file: string): Promise<AppendFile>;
  /** Cuts a file to `size` bytes (a torn tail after a crash). */
  truncate(file: string, size: number): Promise<void>;
  remove(file: string): Promise<void>;
  /** Replaces a small file at once (a temporary file renamed over it): readers see old or new. */
  writeAtomic(file: string, bytes: Uint8Array): Promise<void>;
}

class FileAppend implements AppendFile {
  constructor(
    readonly path: string,
    private handle: fs.FileHandle,
    public size: number,
  ) {}

  async append(bytes: Uint8Array): Promise<void> {
    let done = 0;
    try {
      while (done < bytes.byteLength) {
        // Positional writes: the file offset is ours, whatever else has the file open.
        const { bytesWritten } = await this.handle.write(bytes, done, bytes.byteLength - done, this.size + done);
        done += bytesWritten;
      }
    } catch (e) {
      throw ioError(this.path, e);
    } finally {
      this.size += done;
    }
  }

  async sync(): Promise<void> {
    await this.handle.datasync().catch((e: unknown) => {
      throw ioError(this.path, e);
    });
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}

export const FILE_ARCHIVE_STORAGE: ArchiveStorage = {
  mkdir: async (dir) => {
    await fs.mkdir(dir, { recursive: true }).catch((e: unknown) => {
      throw ioError(dir, e);
    });
  },
  list: async (dir) => {
    try {
      return await fs.readdir(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw ioError(dir, e);
    }
  },
  openAppend: async (file) => {
    try {
      const handle = await fs.open(file, 'a+');
      const { size } = await handle.stat();
      return new FileAppend(file, handle, size);
    } catch (e) {
      throw ioError(file, e);
    }
  },
  truncate: async (file, size) => {
    await fs.truncate(file, size).catch((e: unknown) => {
      throw ioError(file, e);
    });
  },
  remove: async (file) => {
    await fs.rm(file, { force: true }).catch((e: unknown) => {
      throw ioError(file, e);
    });
  },
  writeAtomic: async (file, bytes) => {
    const tmp = nodePath.join(nodePath.dirname(file), `.${nodePath.basename(file)}.${process.pid}.tmp`);
    try {
      await fs.writeFile(tmp, bytes);
      await fs.rename(tmp, file);
    } catch (e) {
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw ioError(file, e);
    }
  },
};
