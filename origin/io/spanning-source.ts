// One ByteSource over several files placed end to end on one byte axis: how a live track, whose
// fragments are spread over several archive files (model/live.ts TrackArchiveFiles), is read by
// the segment readers written for one source file. A read that crosses from one file into the
// next is read as two reads; a file is opened on its first read and kept until close.

import { originError } from '../errors';
import { ByteSource, SourceOpener } from './source';

export interface SpanFile {
  path: string;
  /** Position of the file's byte 0 on the axis. */
  base: number;
  /** Bytes of the file that belong to the axis (published bytes; the file may have grown since). */
  size: number;
}

export class SpanningSource implements ByteSource {
  readonly size: number;
  private readonly opened = new Map<number, Promise<ByteSource>>();

  /** `files` in axis order, not overlapping. */
  constructor(
    readonly name: string,
    private readonly files: readonly SpanFile[],
    private readonly open: SourceOpener,
  ) {
    const last = files[files.length - 1];
    this.size = last === undefined ? 0 : last.base + last.size;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    if (offset < 0 || length < 0 || offset + length > this.size)
      throw originError('corrupt-media', `read of ${length} bytes at ${offset} is past the end (${this.size} bytes)`, {
        subject: this.name,
      });
    const pieces: Uint8Array[] = [];
    let at = offset;
    const end = offset + length;
    while (at < end) {
      const k = this.fileAt(at);
      const f = this.files[k]!;
      const take = Math.min(end, f.base + f.size) - at;
      if (take <= 0) throw originError('corrupt-media', `no archive file holds byte ${at}`, { subject: this.name });
      const source = await this.source(k);
      pieces.push(await source.read(at - f.base, take));
      at += take;
    }
    if (pieces.length === 1) return pieces[0]!;
    const out = new Uint8Array(length);
    let p = 0;
    for (const piece of pieces) {
      out.set(piece, p);
      p += piece.byteLength;
    }
    return out;
  }

  async close(): Promise<void> {
    const all = [...this.opened.values()];
    this.opened.clear();
    await Promise.all(all.map(async (s) => (await s.catch(() => undefined))?.close()));
  }

  /** The last file whose base is at or before `at` (binary search). */
  private fileAt(at: number): number {
    let lo = 0;
    let hi = this.files.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.files[mid]!.base <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private source(k: number): Promise<ByteSource> {
    let s = this.opened.get(k);
    if (s === undefined) {
      s = this.open(this.files[k]!.path);
      this.opened.set(k, s);
    }
    return s;
  }
}
