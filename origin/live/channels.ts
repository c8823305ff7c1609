// The channels of the ingest process: a publishing point is opened on its first ingest request
// and kept. Only this process writes a channel's archive (docs/design/live.md#workers); a channel
// whose `.isml` does not exist is refused (404 unknown-channel, as the DASH-IF ingest spec asks
// for an unknown publishing point).

import * as path from 'node:path';
import { OriginError, originError } from '../errors';
import { parseServerManifest } from '../ism/server-manifest';
import { optionsFromManifest } from '../options/registry';
import { ArchiveIo } from './archive';
import { Channel, STATUS_FILE } from './channel';
import { LivePublished } from './fragment-table';
import { decodeStatus } from './status';

export interface ChannelsOptions {
  /** The served root: `.isml` paths are relative to it. */
  root: string;
  io: ArchiveIo;
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
  /** fsync each append (default true). */
  sync?: boolean;
  /** Told of each published fragment (ChannelConfig.onPublish). */
  onPublish?: (m: LivePublished) => void;
}

/** `<dir>/<name>.isml` → `<dir>/<name>.isml.archive`. */
export function archiveDirOf(ismlFile: string): string {
  return `${ismlFile}.archive`;
}

export class Channels {
  private readonly open = new Map<string, Promise<Channel>>();

  constructor(private readonly o: ChannelsOptions) {}

  /** The channel of a decoded `.isml` URL path (`/live/ch1.isml`). */
  get(isml: string): Promise<Channel> {
    let c = this.open.get(isml);
    if (c === undefined) {
      c = this.load(isml);
      this.open.set(isml, c);
      // A channel that failed to open (no .isml yet) is asked for again next time.
      c.catch(() => this.open.delete(isml));
    }
    return c;
  }

  async closeAll(): Promise<void> {
    const all = await Promise.allSettled([...this.open.values()]);
    for (const r of all) if (r.status === 'fulfilled') await r.value.close();
    this.open.clear();
  }

  private async load(isml: string): Promise<Channel> {
    const file = path.join(this.o.root, ...isml.split('/'));
    let text: string;
    try {
      await this.o.io.read.stat(file);
      text = await this.o.io.read.readText(file);
    } catch (e) {
      if (e instanceof OriginError && (e.kind === 'not-found' || e.kind === 'io'))
        throw originError(
          'unknown-channel',
          `no publishing point ${isml} (create it with origin package -o <name>.isml)`,
        );
      throw e;
    }
    const manifest = parseServerManifest(text, isml);
    const archiveDir = archiveDirOf(file);
    const stored = await this.o.io.read
      .readText(path.join(archiveDir, STATUS_FILE))
      .then(decodeStatus)
      .catch(() => undefined);
    return Channel.open(
      {
        name: isml,
        archiveDir,
        options: optionsFromManifest(manifest.meta, isml),
        io: this.o.io,
        now: this.o.now ?? Date.now,
        sync: this.o.sync,
        onPublish: this.o.onPublish,
      },
      stored,
    );
  }
}
