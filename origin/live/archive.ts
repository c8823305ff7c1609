// The archive of one live track: append-only files through the storage seam, and an index of its
// fragments keyed by exact 64-bit time (docs/design/live.md#archive).
//
//   <channel>.isml.archive/<track key>/<t>.<cmfv|cmfa|cmft>   init (ftyp + moov), then fragments
//   <channel>.isml.archive/<track key>/<t>.idx                 archive-index.ts: one record a fragment
//
// `<t>` is the decode time of the file's first fragment. Each archive file is a valid fragmented
// MP4 file on its own (DASH-IF ingest: "CMAF header + fragments = valid CMAF track file"), so
// ffprobe and `origin package` read it. A fragment is published (in `records`, visible to
// readers of the index) only after its bytes and then its index record are on disk, in that
// order, each fsynced: a crash leaves at worst a tail that reload() detects and cuts off.
// A new file starts every `segmentSeconds`; purge() removes whole files.

import * as path from 'node:path';
import { ArchiveStorage, AppendFile } from '../io/archive-storage';
import { Storage } from '../io/storage';
import {
  INDEX_HEADER_BYTES,
  IndexRecord,
  ProducerTime,
  readIndexHeader,
  readIndexRecords,
  writeIndexHeader,
  writeIndexRecord,
} from './archive-index';

export interface ArchiveIo {
  read: Storage;
  write: ArchiveStorage;
}

/** One archive file of a track with its published fragments (in file order). */
export interface ArchiveFile {
  /** Path of the media file. */
  media: string;
  /** Decode time of its first fragment (its name). */
  start: bigint;
  records: IndexRecord[];
}

export interface TrackArchiveOptions {
  /** Seconds per archive file; 0 keeps one file. */
  segmentSeconds: number;
  /** Whether every append is fsynced before it is published (default true). */
  sync?: boolean;
}

/** What reload() found and dropped, for the log and the tests. */
export interface ReloadReport {
  files: number;
  fragments: number;
  /** Index records that did not check, and the media bytes past the last good fragment, cut off. */
  droppedRecords: number;
  droppedBytes: number;
}

const EXTENSIONS: Record<string, string> = { video: 'cmfv', audio: 'cmfa', textstream: 'cmft', data: 'cmfm' };

export class TrackArchive {
  readonly files: ArchiveFile[] = [];
  /** Every archived time, for the duplicate check of redundant encoders. */
  private readonly times = new Set<bigint>();
  /** End (time + duration) of the latest fragment. */
  private end: bigint | undefined;
  private media: AppendFile | undefined;
  private index: AppendFile | undefined;

  private constructor(
    private readonly io: ArchiveIo,
    readonly dir: string,
    readonly type: string,
    readonly timescale: number,
    private readonly opts: TrackArchiveOptions,
  ) {}

  /** Opens the archive of a track at `dir`, reloading what is there (and cutting a torn tail). */
  static async open(
    io: ArchiveIo,
    dir: string,
    track: { type: string; timescale: number },
    opts: TrackArchiveOptions,
  ): Promise<{ archive: TrackArchive; report: ReloadReport }> {
    const a = new TrackArchive(io, dir, track.type, track.timescale, opts);
    await io.write.mkdir(dir);
    const report = await a.reload();
    return { archive: a, report };
  }

  /** The init (ftyp + moov) the newest archive file starts with, or undefined when there is none. */
  async storedInit(): Promise<Uint8Array | undefined> {
    const last = this.files[this.files.length - 1];
    if (last === undefined) return undefined;
    const header = await this.readIndexHeader(indexPathOf(last.media));
    if (header === undefined || header.initSize === 0) return undefined;
    const src = await this.io.read.open(last.media);
    try {
      return await src.read(0, header.initSize);
    } finally {
      await src.close();
    }
  }

  has(time: bigint): boolean {
    return this.times.has(time);
  }

  get count(): number {
    return this.times.size;
  }

  /** End (time + duration) of the latest fragment, or undefined when empty. */
  lastEnd(): bigint | undefined {
    return this.end;
  }

  private published(r: IndexRecord): void {
    this.times.add(r.time);
    const e = r.time + BigInt(r.duration);
    if (this.end === undefined || e > this.end) this.end = e;
  }

  /**
   * Appends one fragment (its bytes from the first emsg before its moof to the end of its mdat)
   * and publishes it once it is on disk, with its `prft` mapping in the index (archive-index.ts).
   * `init` starts a new archive file when one is due. Answers the published record and its
   * file, undefined for a duplicate.
   */
  async append(
    init: Uint8Array,
    f: {
      time: bigint;
      duration: number;
      keyframe: boolean;
      inband?: number;
      bytes: Uint8Array;
      producer?: ProducerTime;
    },
  ): Promise<{ record: IndexRecord; file: bigint } | undefined> {
    if (this.times.has(f.time)) return undefined;
    const current = this.files[this.files.length - 1];
    if (current === undefined || this.media === undefined || this.due(current, f.time))
      await this.startFile(init, f.time);
    const file = this.files[this.files.length - 1]!;
    const media = this.media!;
    const offset = media.size;
    await media.append(f.bytes);
    if (this.opts.sync !== false) await media.sync();
    const record: IndexRecord = {
      time: f.time,
      duration: f.duration,
      offset,
      size: f.bytes.byteLength,
      keyframe: f.keyframe,
      events: (f.inband ?? 0) > 0,
      ...(f.producer === undefined ? {} : { producer: f.producer }),
    };
    await this.index!.append(writeIndexRecord(record));
    if (this.opts.sync !== false) await this.index!.sync();
    file.records.push(record);
    this.published(record);
    return { record, file: file.start };
  }

  /** Removes whole archive files that end before `before` (track timescale); never the newest. */
  async purge(before: bigint): Promise<number> {
    let removed = 0;
    while (this.files.length > 1) {
      const f = this.files[0]!;
      const last = f.records[f.records.length - 1];
      if (last !== undefined && last.time + BigInt(last.duration) > before) break;
      this.files.shift();
      for (const r of f.records) this.times.delete(r.time);
      await this.io.write.remove(indexPathOf(f.media));
      await this.io.write.remove(f.media);
      removed++;
    }
    return removed;
  }

  async close(): Promise<void> {
    await this.media?.close();
    await this.index?.close();
    this.media = undefined;
    this.index = undefined;
  }

  private due(file: ArchiveFile, time: bigint): boolean {
    if (this.opts.segmentSeconds <= 0) return false;
    return time - file.start >= BigInt(this.opts.segmentSeconds) * BigInt(this.timescale);
  }

  private async startFile(init: Uint8Array, start: bigint): Promise<void> {
    await this.close();
    const media = path.join(this.dir, `${start}.${EXTENSIONS[this.type] ?? 'cmfm'}`);
    // A file of that name left over (its index lost) is replaced, never appended to.
    await this.io.write.remove(media);
    await this.io.write.remove(indexPathOf(media));
    this.media = await this.io.write.openAppend(media);
    await this.media.append(init);
    this.index = await this.io.write.openAppend(indexPathOf(media));
    await this.index.append(writeIndexHeader({ timescale: this.timescale, initSize: init.byteLength }));
    if (this.opts.sync !== false) {
      await this.media.sync();
      await this.index.sync();
    }
    this.files.push({ media, start, records: [] });
  }

  private async readIndexHeader(indexPath: string): Promise<ReturnType<typeof readIndexHeader>> {
    const src = await this.io.read.open(indexPath);
    try {
      return src.size < INDEX_HEADER_BYTES ? undefined : readIndexHeader(await src.read(0, INDEX_HEADER_BYTES));
    } finally {
      await src.close();
    }
  }

  /**
   * Reads every index of the directory, oldest first. A record that does not check ends its
   * index: it and everything after it are cut off, and the media file is cut after the last
   * good fragment. Appending continues in the newest file.
   */
  private async reload(): Promise<ReloadReport> {
    const names = await this.io.write.list(this.dir);
    const starts = names
      .map((n) => /^(-?\d{1,20})\.idx$/.exec(n)?.[1])
      .filter((s): s is string => s !== undefined)
      .map((s) => BigInt(s))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const report: ReloadReport = { files: 0, fragments: 0, droppedRecords: 0, droppedBytes: 0 };
    const ext = EXTENSIONS[this.type] ?? 'cmfm';
    for (const start of starts) {
      const media = path.join(this.dir, `${start}.${ext}`);
      const loaded = await this.loadFile(media, report);
      if (loaded === undefined) continue;
      this.files.push({ media, start, records: loaded });
      for (const r of loaded) this.published(r);
      report.files++;
      report.fragments += loaded.length;
    }
    const last = this.files[this.files.length - 1];
    if (last !== undefined) {
      this.media = await this.io.write.openAppend(last.media);
      this.index = await this.io.write.openAppend(indexPathOf(last.media));
    }
    return report;
  }

  /** One archive file's good records, its torn tail cut off; undefined (and removed) when unusable. */
  private async loadFile(media: string, report: ReloadReport): Promise<IndexRecord[] | undefined> {
    const indexPath = indexPathOf(media);
    let mediaSize: number;
    let indexBytes: Uint8Array;
    try {
      mediaSize = (await this.io.read.stat(media)).size;
      const src = await this.io.read.open(indexPath);
      try {
        indexBytes = await src.read(0, src.size);
      } finally {
        await src.close();
      }
    } catch {
      await this.io.write.remove(indexPath);
      return undefined;
    }
    const header = readIndexHeader(indexBytes);
    if (header === undefined || header.timescale !== this.timescale || mediaSize < header.initSize) {
      // Not even a whole header and init: nothing of it was ever published.
      await this.io.write.remove(indexPath);
      await this.io.write.remove(media);
      return undefined;
    }
    const body = indexBytes.subarray(INDEX_HEADER_BYTES);
    const { records, bytes } = readIndexRecords(body, mediaSize);
    const indexEnd = INDEX_HEADER_BYTES + bytes;
    const last = records[records.length - 1];
    const mediaEnd = last === undefined ? header.initSize : last.offset + last.size;
    if (indexEnd < indexBytes.byteLength) {
      report.droppedRecords += Math.ceil((indexBytes.byteLength - indexEnd) / 40);
      await this.io.write.truncate(indexPath, indexEnd);
    }
    if (mediaEnd < mediaSize) {
      report.droppedBytes += mediaSize - mediaEnd;
      await this.io.write.truncate(media, mediaEnd);
    }
    return records;
  }
}

export function indexPathOf(media: string): string {
  return media.replace(/\.[a-z0-9]+$/, '.idx');
}
