// The storage of a root with remote locations: paths under a location's directory go to its
// HttpStorage (an S3 one signs its requests), every other path to the file system. Reconfigured on SIGHUP: a location whose
// target and settings did not change keeps its storage (its connections and known validators).

import { FILE_STORAGE, FileStat, RemoteScope, Storage } from '../storage';
import type { ByteSource } from '../source';
import { HttpStorage, HttpStorageOptions } from './http-storage';
import { BackendKind, StorageStats } from './storage-stats';

export interface RemoteLocation extends HttpStorageOptions {
  /** A server manifest with keys may be read over plain http. */
  insecureKeys: boolean;
}

interface Mounted {
  storage: HttpStorage;
  scope: RemoteScope;
  key: string;
}

export class RoutedStorage implements Storage {
  /** Longest directory first. */
  private mounted: Mounted[] = [];
  /** Counters per backend kind, kept across reloads (/metrics). */
  readonly stats: Record<BackendKind, StorageStats> = { http: new StorageStats(), s3: new StorageStats() };

  constructor(locations: readonly RemoteLocation[]) {
    this.reconfigure(locations);
  }

  /** Replaces the locations; storages of unchanged ones are kept, the others closed. */
  reconfigure(locations: readonly RemoteLocation[]): void {
    const old = new Map(this.mounted.map((m) => [m.key, m]));
    const next: Mounted[] = [];
    for (const l of locations) {
      const key = JSON.stringify([
        l.dir,
        l.base,
        l.connections,
        l.timeoutMs,
        l.revalidateMs,
        l.retryDelaysMs,
        l.s3,
        l.negativeTtlMs,
      ]);
      const kept = old.get(key);
      old.delete(key);
      const storage = kept?.storage ?? new HttpStorage({ ...l, stats: this.stats[l.s3 === undefined ? 'http' : 's3'] });
      next.push({ storage, key, scope: { dir: l.dir, secure: storage.secure, insecureKeys: l.insecureKeys } });
    }
    for (const m of old.values()) m.storage.close();
    this.mounted = next.sort((a, b) => b.scope.dir.length - a.scope.dir.length);
  }

  private find(p: string): Mounted | undefined {
    for (const m of this.mounted) if (m.storage.holds(p)) return m;
    return undefined;
  }

  remote(p: string): RemoteScope | undefined {
    return this.find(p)?.scope;
  }

  stat(p: string): Promise<FileStat> {
    const m = this.find(p);
    return m === undefined ? FILE_STORAGE.stat(p) : m.storage.stat(p);
  }

  readText(p: string, version?: string): Promise<string> {
    const m = this.find(p);
    return m === undefined ? FILE_STORAGE.readText(p) : m.storage.readText(p, version);
  }

  open(p: string, version?: string): Promise<ByteSource> {
    const m = this.find(p);
    return m === undefined ? FILE_STORAGE.open(p) : m.storage.open(p, version);
  }

  forget(p: string): void {
    this.find(p)?.storage.forget(p);
  }

  /** The storages mounted now (tests and benches: their clients' counts). */
  get storages(): HttpStorage[] {
    return this.mounted.map((m) => m.storage);
  }

  close(): void {
    for (const m of this.mounted) m.storage.close();
    this.mounted = [];
  }
}
