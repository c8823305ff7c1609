// How a serving worker sees a channel: through the read side of the storage seam only (stat,
// readText, open), never by asking the ingest process. The ingest process publishes a fragment
// by appending its index record after its bytes, and rewrites the channel's status file
// atomically; a reader takes the status file, then each track's index files, and trusts only
// records that check (archive-index.ts), so a read racing an append sees the fragment or not,
// never half of it.

import * as path from 'node:path';
import { OriginError, originError } from '../errors';
import { Storage } from '../io/storage';
import { INDEX_HEADER_BYTES, readIndexHeader, readIndexRecords, IndexRecord } from './archive-index';
import { indexPathOf } from './archive';
import { STATUS_FILE } from './channel';
import { archiveDirOf } from './channels';
import { ChannelStatus, decodeStatus, TrackStatus } from './status';

const EXTENSIONS: Record<string, string> = { video: 'cmfv', audio: 'cmfa', textstream: 'cmft', data: 'cmfm' };

/** The status of the channel at a decoded `.isml` path; idle with no tracks before any ingest. */
export async function readChannelStatus(storage: Storage, root: string, isml: string): Promise<ChannelStatus> {
  const file = path.join(root, ...isml.split('/'));
  try {
    await storage.stat(file);
  } catch (e) {
    if (e instanceof OriginError && (e.kind === 'not-found' || e.kind === 'io'))
      throw originError('unknown-channel', `no publishing point ${isml}`);
    throw e;
  }
  const text = await storage.readText(path.join(archiveDirOf(file), STATUS_FILE)).catch(() => undefined);
  const status = text === undefined ? undefined : decodeStatus(text);
  return status ?? { state: 'idle', updated: new Date(0).toISOString(), encoders: 0, tracks: [] };
}

/** One archive file of a track as a reader finds it: its size, its init size, its published fragments. */
export interface ReadArchiveFile {
  media: string;
  /** The decode time of its first fragment, which names it (TrackStatus.files). */
  start: bigint;
  /** Bytes of the media file when its index was read. */
  size: number;
  /** Bytes of the ftyp + moov at its start. */
  initSize: number;
  records: IndexRecord[];
}

/** A published fragment and the archive file that holds it (the start time its file is named by). */
export interface LiveFragment extends IndexRecord {
  file: bigint;
}

/** Every published fragment of one track, oldest file first, read from its index files. */
export async function readTrackRecords(
  storage: Storage,
  root: string,
  isml: string,
  track: TrackStatus,
): Promise<LiveFragment[]> {
  return (await readTrackFiles(storage, root, isml, track)).flatMap((f) =>
    f.records.map((r) => ({ ...r, file: f.start })),
  );
}

/**
 * The archive files of one track with their published fragments, oldest first. The media file is
 * stat'ed before its index is read: every record read then lies within the size taken (the
 * ingest process appends bytes before their record).
 */
export async function readTrackFiles(
  storage: Storage,
  root: string,
  isml: string,
  track: TrackStatus,
): Promise<ReadArchiveFile[]> {
  const dir = trackDirOf(root, isml, track);
  const out: ReadArchiveFile[] = [];
  for (const start of track.files) {
    const media = archiveFileOf(dir, track.type, start);
    try {
      const mediaSize = (await storage.stat(media)).size;
      const src = await storage.open(indexPathOf(media));
      try {
        const bytes = await src.read(0, src.size);
        const header = readIndexHeader(bytes);
        if (header === undefined) continue;
        const { records } = readIndexRecords(bytes.subarray(INDEX_HEADER_BYTES), mediaSize);
        out.push({ media, start: BigInt(start), size: mediaSize, initSize: header.initSize, records });
      } finally {
        await src.close();
      }
    } catch {
      // Purged between the status read and this one: its fragments are gone.
      continue;
    }
  }
  return out;
}

/** The archive file of a track (its directory, its type) that starts at `start`. */
export function archiveFileOf(dir: string, type: string, start: bigint | string): string {
  return path.join(dir, `${start}.${EXTENSIONS[type] ?? 'cmfm'}`);
}

/** The archive directory of a track: `<ch>.isml.archive/<stream>-<trackID>`. */
export function trackDirOf(root: string, isml: string, track: TrackStatus): string {
  return path.join(archiveDirOf(path.join(root, ...isml.split('/'))), track.key);
}
