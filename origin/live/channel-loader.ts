// Reads a channel through the storage seam into the inputs of channelPresentation: the `.isml`
// (its options), channel.json (state, tracks, files; its mtime and size are the version), each
// track's published fragments, and the head of each track's first archive file (init + first
// fragment). A worker calls this when channel.json's version changed since the presentation it
// holds. The fragments come from the serving process's fragment table when it is given
// (fragment-table.ts: kept by the ingest process's messages, reading the index files itself
// when it missed one), else from the index files; a head is read once per archive file (an
// archive file's first bytes never change), not on every publish.

import * as path from 'node:path';
import { originError } from '../errors';
import { parseServerManifest } from '../ism/server-manifest';
import { FileStat, Storage } from '../io/storage';
import { Presentation } from '../model/presentation';
import { optionsFromManifest } from '../options/registry';
import { STATUS_FILE } from './channel';
import { readArchivedEvents } from './channel-events';
import { channelPresentation, ChannelTrackInput } from './channel-presentation';
import {
  archiveFileOf,
  LiveFragment,
  ReadArchiveFile,
  readChannelStatus,
  readTrackFiles,
  trackDirOf,
} from './channel-reader';
import { TrackStatus } from './status';
import { archiveDirOf } from './channels';

/** The path of a channel's status file, whose (mtime, size) is the channel's version. */
export function statusFileOf(root: string, isml: string): string {
  return path.join(archiveDirOf(path.join(root, ...isml.split('/'))), STATUS_FILE);
}

/** The version of a channel now: channel.json's stat (undefined before the first ingest). */
export async function channelVersion(
  storage: Pick<Storage, 'stat'>,
  root: string,
  isml: string,
): Promise<FileStat | undefined> {
  return storage.stat(statusFileOf(root, isml)).catch(() => undefined);
}

/** Where a loader finds a track's published fragments: LiveFragmentTable.fragments. */
export type FragmentSource = (isml: string, track: TrackStatus) => Promise<readonly LiveFragment[]>;

/** What a loader keeps between loads: heads of archive files by path (bounded, oldest out first). */
export class HeadCache {
  private readonly heads = new Map<string, Uint8Array>();
  constructor(private readonly max = 1024) {}

  async get(storage: Storage, media: string, bytes: number): Promise<Uint8Array> {
    const held = this.heads.get(media);
    if (held !== undefined && held.byteLength === bytes) return held;
    const source = await storage.open(media);
    try {
      const head = await source.read(0, bytes);
      if (this.max === 0) return head;
      if (this.heads.size >= this.max) this.heads.delete(this.heads.keys().next().value!);
      this.heads.set(media, head);
      return head;
    } finally {
      await source.close();
    }
  }
}

/**
 * A track's fragments as the archive files that hold them, oldest first: each file's size is
 * where its last published fragment ends (a reader reads published bytes only), its init size
 * where its first fragment starts.
 */
export function filesOfFragments(dir: string, type: string, fragments: readonly LiveFragment[]): ReadArchiveFile[] {
  const out: ReadArchiveFile[] = [];
  for (const f of fragments) {
    let last = out[out.length - 1];
    if (last === undefined || last.start !== f.file) {
      last = { media: archiveFileOf(dir, type, f.file), start: f.file, size: 0, initSize: f.offset, records: [] };
      out.push(last);
    }
    last.records.push(f);
    last.size = Math.max(last.size, f.offset + f.size);
  }
  return out;
}

/** The channel at a decoded `.isml` URL path as a presentation, read at `version`. */
export async function loadChannelPresentation(
  storage: Storage,
  root: string,
  isml: string,
  version: FileStat,
  from: { fragments?: FragmentSource; heads?: HeadCache } = {},
): Promise<Presentation> {
  const file = path.join(root, ...isml.split('/'));
  const status = await readChannelStatus(storage, root, isml);
  const manifest = parseServerManifest(await storage.readText(file), isml);
  const heads = from.heads ?? new HeadCache(0);
  const tracks: ChannelTrackInput[] = [];
  for (const t of status.tracks) {
    const dir = trackDirOf(root, isml, t);
    const files =
      from.fragments === undefined
        ? await readTrackFiles(storage, root, isml, t)
        : filesOfFragments(dir, t.type, await from.fragments(isml, t));
    const first = files.find((f) => f.records.length > 0);
    if (first === undefined) continue;
    const r = first.records[0]!;
    // The init, then the first fragment (its timing gives the frame rate when the SPS has none).
    const head = await heads.get(storage, first.media, r.offset + r.size);
    // Timed metadata (channel-events.ts): the events, and the records moved past their emsg.
    const name = `${isml} ${t.key}`;
    const read = await readArchivedEvents(storage, files, { type: t.type, trackId: t.trackId, head, name });
    tracks.push({ status: t, files: read.files, head, dir, events: read.events });
  }
  if (status.state === 'idle' && tracks.length === 0)
    throw originError('fragment-not-yet', 'the channel has no media yet', { subject: isml });
  return channelPresentation({
    isml: file,
    version: { mtimeMs: version.mtimeMs, size: version.size },
    manifest,
    options: optionsFromManifest(manifest.meta, isml),
    status,
    tracks,
  });
}
