// Reads a channel through the storage seam into the inputs of channelPresentation: the `.isml`
// (its options), channel.json (state, tracks, files; its mtime and size are the version), each
// track's index files, and the head of each track's first archive file (init + first fragment).
// A worker calls this when channel.json's version changed since the presentation it holds.

import * as path from 'node:path';
import { originError } from '../errors';
import { parseServerManifest } from '../ism/server-manifest';
import { FileStat, Storage } from '../io/storage';
import { Presentation } from '../model/presentation';
import { optionsFromManifest } from '../options/registry';
import { STATUS_FILE } from './channel';
import { readArchivedEvents } from './channel-events';
import { channelPresentation, ChannelTrackInput } from './channel-presentation';
import { readChannelStatus, readTrackFiles, trackDirOf } from './channel-reader';
import { archiveDirOf } from './channels';

/** The path of a channel's status file, whose (mtime, size) is the channel's version. */
export function statusFileOf(root: string, isml: string): string {
  return path.join(archiveDirOf(path.join(root, ...isml.split('/'))), STATUS_FILE);
}

/** The version of a channel now: channel.json's stat (undefined before the first ingest). */
export async function channelVersion(storage: Storage, root: string, isml: string): Promise<FileStat | undefined> {
  return storage.stat(statusFileOf(root, isml)).catch(() => undefined);
}

/** The channel at a decoded `.isml` URL path as a presentation, read at `version`. */
export async function loadChannelPresentation(
  storage: Storage,
  root: string,
  isml: string,
  version: FileStat,
): Promise<Presentation> {
  const file = path.join(root, ...isml.split('/'));
  const status = await readChannelStatus(storage, root, isml);
  const manifest = parseServerManifest(await storage.readText(file), isml);
  const tracks: ChannelTrackInput[] = [];
  for (const t of status.tracks) {
    const files = await readTrackFiles(storage, root, isml, t);
    const first = files.find((f) => f.records.length > 0);
    if (first === undefined) continue;
    const source = await storage.open(first.media);
    try {
      const r = first.records[0]!;
      // The init, then the first fragment (its timing gives the frame rate when the SPS has none).
      const head = await source.read(0, r.offset + r.size);
      // Timed metadata (channel-events.ts): the events, and the records moved past their emsg.
      const name = `${isml} ${t.key}`;
      const read = await readArchivedEvents(storage, files, { type: t.type, trackId: t.trackId, head, name });
      tracks.push({ status: t, files: read.files, head, dir: trackDirOf(root, isml, t), events: read.events });
    } finally {
      await source.close();
    }
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
