// The index bench's reads: indexing a file (alone, in turn, metered for where the time went) and
// the reference floors any index of the same files costs at least.

import { closeSync, fstatSync, openSync, promises as fs, readSync } from 'node:fs';
import { IndexMode, readMediaFile } from '../origin/media/media-file';
import { ByteSource, FileSource } from '../origin/io/source';
import { MediaFile } from '../origin/model/media';
import { msSince, now } from './stats';

/** A ByteSource that counts reads and the time spent waiting for them. */
class MeteredSource implements ByteSource {
  reads = 0;
  bytes = 0;
  readMs = 0;
  constructor(private readonly inner: ByteSource) {}
  get name(): string {
    return this.inner.name;
  }
  get size(): number {
    return this.inner.size;
  }
  async read(offset: number, length: number): Promise<Uint8Array> {
    const t0 = now();
    this.reads++;
    this.bytes += length;
    try {
      return await this.inner.read(offset, length);
    } finally {
      this.readMs += msSince(t0);
    }
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

export async function indexOne(file: string, mode: IndexMode): Promise<MediaFile> {
  const source = await FileSource.open(file);
  try {
    return await readMediaFile(source, mode);
  } finally {
    await source.close();
  }
}

export async function indexSequential(files: string[], mode: IndexMode): Promise<MediaFile[]> {
  const out: MediaFile[] = [];
  for (const f of files) out.push(await indexOne(f, mode));
  return out;
}

/** One index per file with a split of where the time went. */
export async function indexMetered(
  file: string,
  mode: IndexMode,
): Promise<{
  media: MediaFile;
  openMs: number;
  readMs: number;
  closeMs: number;
  totalMs: number;
  reads: number;
  bytes: number;
}> {
  const t0 = now();
  const inner = await FileSource.open(file);
  const openMs = msSince(t0);
  const source = new MeteredSource(inner);
  const media = await readMediaFile(source, mode);
  const t1 = now();
  await source.close();
  const closeMs = msSince(t1);
  return {
    media,
    openMs,
    readMs: source.readMs,
    closeMs,
    totalMs: msSince(t0),
    reads: source.reads,
    bytes: source.bytes,
  };
}

// --- reference floors --------------------------------------------------------------------------

export async function floorOpenRead16(files: string[]): Promise<void> {
  for (const f of files) {
    const s = await FileSource.open(f);
    await s.read(s.size - 16, 16);
    await s.close();
  }
}

export async function floorReadMfra(files: string[]): Promise<number> {
  let total = 0;
  for (const f of files) {
    const h = await fs.open(f, 'r');
    try {
      const { size } = await h.stat();
      const tail = Buffer.allocUnsafe(16);
      await h.read(tail, 0, 16, size - 16);
      const mfraSize = tail.readUInt32BE(12);
      const mfra = Buffer.allocUnsafe(mfraSize);
      await h.read(mfra, 0, mfraSize, size - mfraSize);
      total += mfraSize;
    } finally {
      await h.close();
    }
  }
  return total;
}

export function floorSyncOpenRead16(files: string[]): void {
  const buf = Buffer.allocUnsafe(16);
  for (const f of files) {
    const fd = openSync(f, 'r');
    try {
      const { size } = fstatSync(fd);
      readSync(fd, buf, 0, 16, size - 16);
    } finally {
      closeSync(fd);
    }
  }
}

export async function warmPageCache(files: string[]): Promise<{ bytes: number; ms: number }> {
  const t0 = now();
  let bytes = 0;
  const buf = Buffer.allocUnsafe(1 << 20);
  for (const f of files) {
    const h = await fs.open(f, 'r');
    try {
      for (;;) {
        const { bytesRead } = await h.read(buf, 0, buf.byteLength, null);
        if (bytesRead === 0) break;
        bytes += bytesRead;
      }
    } finally {
      await h.close();
    }
  }
  return { bytes, ms: msSince(t0) };
}
