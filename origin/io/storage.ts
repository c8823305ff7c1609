// The storage seam: where the origin finds the .ism files and the media sources. Everything that
// reads them goes through a Storage — the presentation store (stat, the .ism's text, the index
// read of each source) and every segment reader (Smooth/DASH fMP4, MPEG-TS, packed audio, WebVTT,
// HDS), which take a SourceOpener made by segmentSources below. The file system is the default;
// the start-up warm-up's synthetic files (server/warm-up.ts) and a remote store are drop-ins.

import { promises as fs } from 'node:fs';
import { OriginError, originError } from '../errors';
import { FileHandles } from './file-handles';
import { ByteSource, FileSource, ioError, SourceOpener } from './source';

export type FileStat = {
  mtimeMs: number;
  size: number;
  /**
   * What names this version of the file besides mtime and size (remote storage: its ETag), part
   * of the caches' keys; opening with it reads that version or fails (io/remote/http-storage.ts).
   */
  version?: string;
};

/** Where a path of a remote location lives (the storage seam's answer for the server's checks). */
export interface RemoteScope {
  /** The location's directory: a presentation and its sources share one. */
  dir: string;
  /** Reached over TLS. */
  secure: boolean;
  /** A server manifest with keys may be read over plain http (`proxy_insecure_keys`). */
  insecureKeys: boolean;
}

/**
 * Where the store finds the .ism files and sources: the file system, or anything that answers the
 * same three questions. Errors are OriginErrors, as statFile and ioError make them.
 */
export interface Storage {
  stat(path: string): Promise<FileStat>;
  /** The text of the file; with `version` (FileStat.version), of that version or an error. */
  readText(path: string, version?: string): Promise<string>;
  /** A source with positional reads, of `version` when given; the caller closes it. */
  open(path: string, version?: string): Promise<ByteSource>;
  /** The remote location of a path, undefined for local files (a Storage without remotes omits it). */
  remote?(path: string): RemoteScope | undefined;
  /** Forgets what is known of a path whose object changed under a read. */
  forget?(path: string): void;
}

export const FILE_STORAGE: Storage = {
  stat: statFile,
  readText: (p) =>
    fs.readFile(p, 'utf8').catch((e: unknown) => {
      throw ioError(p, e);
    }),
  open: (p) => FileSource.open(p),
};

export async function statFile(p: string): Promise<FileStat> {
  try {
    const s = await fs.stat(p);
    if (!s.isFile()) throw originError('not-found', 'not a file', { subject: p });
    return { mtimeMs: s.mtimeMs, size: s.size };
  } catch (e) {
    throw e instanceof OriginError ? e : ioError(p, e);
  }
}

/**
 * Whether the served root can be listed (a directory entry read through opendir): /readyz's check
 * that storage is reachable. Undefined when it can, else the reason (an error code, never a path).
 */
export async function rootReadable(root: string): Promise<string | undefined> {
  try {
    const dir = await fs.opendir(root);
    try {
      await dir.read();
    } finally {
      await dir.close();
    }
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException)?.code ?? 'unreadable';
  }
}

/**
 * The sources segment requests read from `storage`. On the file system they are kept handles
 * (`files`, io/file-handles.ts: one open per file and stat TTL, reads straight into pooled
 * buffers); any other storage opens its own sources (its open is the seam).
 */
export function segmentSources(storage: Storage, files: FileHandles): SourceOpener {
  if (storage === FILE_STORAGE) return files.opener;
  if (storage.remote !== undefined)
    return (path, version) => (storage.remote!(path) === undefined ? files.opener(path) : storage.open(path, version));
  return (path) => storage.open(path);
}
