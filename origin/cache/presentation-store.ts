// The presentation store: the only place the playout path touches the file system for
// manifests and indexes. Parsed presentations and media indexes are cached by
// (path, mtime, size) with a byte bound; a changed file is picked up on the next request.
// Concurrent misses for the same key share one load (request coalescing).

// Imported, not the global: the global `performance` loads node:perf_hooks lazily on its first
// use, which was the first request (about a millisecond of module loading on the cold path).
import { performance } from 'node:perf_hooks';
import { originError } from '../errors';
import { MediaFile } from '../model/media';
import { readMediaFile } from '../media/media-file';
import { readTrackEvents } from '../media/event-index';
import type { TimedEvent } from '../model/timed-metadata';
import { FILE_STORAGE, FileStat, Storage } from '../io/storage';
import type { RootConfinement } from '../io/confine';
import { MAX_SERVER_MANIFEST_BYTES } from '../ism/server-manifest';
import { buildPresentation } from '../ism/presentation-builder';
import { Presentation } from '../model/presentation';

interface Entry<T> {
  key: string;
  value: Promise<T>;
  cost: number;
  /** The value once loaded, for synchronous hits. */
  settled?: { value: T };
}

/** A cache's counts since it was made (the origin's /metrics, origin/ops/metrics.ts). */
export interface CacheCounts {
  /** Lookups answered from the cache. */
  hits: number;
  /** Lookups that loaded (absent, or held for an older version). */
  misses: number;
  /** Entries dropped to stay within the bound. */
  evictions: number;
  /** Entries held, and their summed cost (bytes, for the byte-bounded caches). */
  entries: number;
  cost: number;
}

/** A small LRU with a cost bound; values are promises so concurrent misses coalesce. */
export class CostLru<T> {
  private readonly map = new Map<string, Entry<T>>();
  private total = 0;
  // Plain fields, read by /metrics: an increment per lookup.
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  constructor(private readonly maxCost: number) {}

  get(id: string, key: string, load: () => Promise<{ value: T; cost: number }>): Promise<T> {
    const hit = this.map.get(id);
    if (hit !== undefined && hit.key === key) {
      this.hits++;
      this.map.delete(id);
      this.map.set(id, hit);
      return hit.value;
    }
    this.misses++;
    if (hit !== undefined) this.remove(id);
    const entry: Entry<T> = { key, cost: 0, value: Promise.resolve() as unknown as Promise<T> };
    entry.value = load().then(
      ({ value, cost }) => {
        entry.settled = { value };
        if (this.map.get(id) === entry) {
          entry.cost = cost;
          this.total += cost;
          this.evict();
        }
        return value;
      },
      (e: unknown) => {
        // A failed load is not cached: the next request tries again.
        if (this.map.get(id) === entry) this.map.delete(id);
        throw e;
      },
    );
    this.map.set(id, entry);
    return entry.value;
  }

  /** A loaded value under (id, key), refreshed as most recent; undefined when absent or still loading. */
  peek(id: string, key: string): T | undefined {
    const hit = this.map.get(id);
    if (hit === undefined || hit.key !== key || hit.settled === undefined) return undefined;
    this.hits++;
    this.map.delete(id);
    this.map.set(id, hit);
    return hit.settled.value;
  }

  /** Forgets an entry (the next get loads it again). */
  delete(id: string): void {
    this.remove(id);
  }

  private remove(id: string): void {
    const e = this.map.get(id);
    if (e === undefined) return;
    this.total -= e.cost;
    this.map.delete(id);
  }

  private evict(): void {
    for (const id of this.map.keys()) {
      if (this.total <= this.maxCost || this.map.size <= 1) break;
      this.remove(id);
      this.evictions++;
    }
  }

  /** Its counts (a peek that finds nothing is no lookup: its caller goes on to get()). */
  counts(): CacheCounts {
    return {
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
      entries: this.map.size,
      cost: this.total,
    };
  }

  get size(): number {
    return this.map.size;
  }

  /** The summed cost of the loaded entries. */
  get cost(): number {
    return this.total;
  }
}

export interface StoreLimits {
  /** Bytes of fragment tables and moov boxes kept for media files. */
  mediaBytes: number;
  /** Number of presentations kept. */
  presentations: number;
  /**
   * How long a stat of the .ism or a source is trusted (ms). 0: every request stats every file,
   * so a change is seen by the next request; n: a change is seen at most n ms late.
   */
  statTtlMs?: number;
}

/**
 * statTtlMs: a second. Stat-ing the .ism and every source on each request cost a cached manifest
 * about a fifth of its CPU time (profiled; docs/design/performance.md#rendered-manifest-cache);
 * VOD files change rarely, and a change is still seen within the second. `--stat-ttl-ms 0` restores a stat per request.
 */
export const DEFAULT_LIMITS: StoreLimits = { mediaBytes: 256 << 20, presentations: 4096, statTtlMs: 1000 };

/** A remembered stat: trusted until `until`; `settled` once known (for the synchronous peek). */
interface StatEntry {
  until: number;
  stat: Promise<FileStat>;
  settled?: FileStat;
}

/** At most this many stats are remembered (a bound for roots with many files). */
const MAX_STATS = 16384;

export class PresentationStore {
  private readonly media: CostLru<MediaFile>;
  private readonly presentations: CostLru<Presentation>;
  /** How long a stat (and a kept source handle, io/file-handles.ts) is trusted, ms. */
  readonly statTtlMs: number;
  private readonly stats = new Map<string, StatEntry>();
  /** peek()'s answers, each trusted until the earliest expiry of the stats it rests on. */
  private readonly peeked = new Map<string, { presentation: Presentation; until: number }>();
  /** sourceVersions()'s answers: only presentations on versioned (remote) storage have one. */
  private readonly versions = new WeakMap<Presentation, ReadonlyMap<string, string>>();
  /** peek()'s answers from `peeked` (the presentation cache's other hits). */
  private peekedHits = 0;
  /** Told of each presentation built, with the milliseconds its load took (the server's debug log line). */
  onLoad?: (p: Presentation, ms: number) => void;

  constructor(
    limits: StoreLimits = DEFAULT_LIMITS,
    /** Where the .ism files and sources are (io/storage.ts); segment readers open theirs through it too. */
    readonly storage: Storage = FILE_STORAGE,
    /**
     * The served root's rule for symbolic links (io/confine.ts): a .ism or source under the root
     * that resolves outside it is as if absent. Checked with each stat, so once per stat TTL.
     */
    private readonly confinement?: RootConfinement,
  ) {
    this.media = new CostLru(limits.mediaBytes);
    this.presentations = new CostLru(limits.presentations);
    this.statTtlMs = limits.statTtlMs ?? 0;
  }

  private stat(p: string): Promise<FileStat> {
    if (this.statTtlMs <= 0) return this.confinedStat(p);
    const now = performance.now();
    const hit = this.stats.get(p);
    if (hit !== undefined && hit.until > now) return hit.stat;
    const stat = this.confinedStat(p);
    if (this.stats.size >= MAX_STATS) this.stats.clear();
    const entry: StatEntry = { until: now + this.statTtlMs, stat };
    this.stats.set(p, entry);
    stat.then(
      (v) => (entry.settled = v),
      () => undefined,
    );
    // A failed stat is not remembered: the next request looks again.
    stat.catch(() => {
      if (this.stats.get(p)?.stat === stat) this.stats.delete(p);
    });
    return stat;
  }

  private async confinedStat(p: string): Promise<FileStat> {
    const stat = await this.storage.stat(p);
    // Remote storage has no links; the rule is the local root's (io/confine.ts).
    if (this.storage.remote?.(p) === undefined) await this.confinement?.check(p);
    return stat;
  }

  /**
   * The presentation at an absolute .ism path, synchronously, when everything `presentation()`
   * would look at is already known and trusted (the stats of the .ism and of every source within
   * the stat TTL, the presentation and its media indexes loaded and current); else undefined.
   * The answer is the one presentation() would give, without its promises (a cached manifest's
   * hot path).
   */
  peek(ismPath: string): Presentation | undefined {
    if (this.statTtlMs <= 0) return undefined;
    const now = performance.now();
    // The answer cannot change before the earliest of its stats expires (a stat is replaced only
    // once expired), so it is remembered until then: one lookup per request instead of a key
    // string per file.
    const known = this.peeked.get(ismPath);
    if (known !== undefined && known.until > now) {
      this.peekedHits++;
      return known.presentation;
    }
    let until = Infinity;
    const key = (path: string): string | undefined => {
      const e = this.stats.get(path);
      if (e === undefined || e.until <= now || e.settled === undefined) return undefined;
      until = Math.min(until, e.until);
      return statKey(e.settled);
    };
    const ismKey = key(ismPath);
    if (ismKey === undefined) return undefined;
    const p = this.presentations.peek(ismPath, ismKey);
    if (p === undefined) return undefined;
    for (const t of p.tracks) {
      const mediaKey = key(t.src);
      const m = mediaKey === undefined ? undefined : this.media.peek(t.src, mediaKey);
      if (m === undefined || m.tracks.every((mt) => mt.fragments !== t.fragments)) return undefined;
    }
    if (this.peeked.size >= MAX_STATS) this.peeked.clear();
    this.peeked.set(ismPath, { presentation: p, until });
    return p;
  }

  /**
   * The version (FileStat.version) of each source a presentation's indexes were read from, when
   * its storage has versions (remote storage): segment reads open their sources with it, so they
   * read the bytes those indexes describe or fail (io/remote/http-storage.ts).
   */
  sourceVersions(p: Presentation): ReadonlyMap<string, string> | undefined {
    return this.versions.get(p);
  }

  /**
   * Forgets what is known of files (their object changed under a read): the next request stats
   * them again, and reads new indexes for whatever changed.
   */
  forget(paths: readonly string[]): void {
    for (const f of paths) {
      this.stats.delete(f);
      this.storage.forget?.(f);
    }
    // peek()'s answers rest on stats: without them the next peek looks again.
    this.peeked.clear();
  }

  /**
   * Forgets every stat (a reload moved locations between storages): the next request of each file
   * looks again, so no presentation indexed on one storage is read from another.
   */
  forgetAll(): void {
    this.stats.clear();
    this.peeked.clear();
  }

  /** The presentation at an absolute .ism path; not-found when there is none. */
  async presentation(ismPath: string): Promise<Presentation> {
    const presentation = await this.load(ismPath);
    // A source replaced under an unchanged .ism must not be served from a stale index: its new
    // index replaces the old one in the media cache, and the presentation built on the old one
    // is dropped and built once more (then cached again).
    // The sources are looked at concurrently: one round trip for all of them, not one each.
    const media = await Promise.all(presentation.tracks.map((t) => this.mediaFile(t.src)));
    for (const [i, t] of presentation.tracks.entries()) {
      if (media[i]!.tracks.every((m) => m.fragments !== t.fragments)) {
        this.presentations.delete(ismPath);
        return this.load(ismPath);
      }
    }
    return presentation;
  }

  private async load(ismPath: string): Promise<Presentation> {
    const stat = await this.stat(ismPath);
    if (stat.size > MAX_SERVER_MANIFEST_BYTES)
      throw originError('corrupt-media', `server manifest of ${stat.size} bytes exceeds ${MAX_SERVER_MANIFEST_BYTES}`, {
        subject: ismPath,
      });
    return this.presentations.get(ismPath, statKey(stat), async () => {
      const started = performance.now();
      const text = await this.storage.readText(ismPath, stat.version);
      const scope = this.storage.remote?.(ismPath);
      const versions = new Map<string, string>();
      const value = await buildPresentation(
        ismPath,
        text,
        stat,
        async (src) => {
          // A presentation lives in one place: sources of a remote .ism in its location, those of a
          // local one on local disk (a remote .ism naming ../../etc/x never reads this machine's files).
          if (this.storage.remote?.(src)?.dir !== scope?.dir)
            throw originError('forbidden', 'a source outside the location of its server manifest', { subject: src });
          const { file, version } = await this.versionedMedia(src);
          if (version !== undefined) versions.set(src, version);
          return file;
        },
        this.loadEvents,
      );
      if (scope !== undefined && !scope.secure && !scope.insecureKeys && value.protection !== undefined)
        throw originError('storage-insecure', 'a server manifest with keys on plain http:// storage', {
          subject: ismPath,
        });
      if (versions.size > 0) this.versions.set(value, versions);
      this.onLoad?.(value, performance.now() - started);
      return { value, cost: 1 };
    });
  }

  /** The counts of the presentation cache (its cost is entries) and of the media-index cache (bytes). */
  counts(): { presentations: CacheCounts; media: CacheCounts } {
    const presentations = this.presentations.counts();
    return {
      presentations: { ...presentations, hits: presentations.hits + this.peekedHits },
      media: this.media.counts(),
    };
  }

  /**
   * The timed-metadata events of one track (media/event-index.ts), read when its presentation is
   * built and kept with it: a few hundred bytes a second of metadata, never asked for again.
   */
  private readonly loadEvents = async (absolutePath: string, trackId: number): Promise<TimedEvent[]> => {
    const { file, version } = await this.versionedMedia(absolutePath);
    const source = await this.storage.open(absolutePath, version);
    try {
      return await readTrackEvents(source, file, trackId);
    } finally {
      source.close().catch(() => undefined);
    }
  };

  async mediaFile(absolutePath: string): Promise<MediaFile> {
    return (await this.versionedMedia(absolutePath)).file;
  }

  /** The index of a source and the version (FileStat.version) it was read from. */
  private async versionedMedia(absolutePath: string): Promise<{ file: MediaFile; version: string | undefined }> {
    const stat = await this.stat(absolutePath);
    const file = await this.media.get(absolutePath, statKey(stat), async () => {
      const source = await this.storage.open(absolutePath, stat.version);
      try {
        const value = await readMediaFile(source, 'fast');
        return { value, cost: mediaCost(value) };
      } finally {
        // Not waited for: the index is complete, and a read-only close cannot lose data; the
        // first request no longer pays one more thread-pool round trip per source.
        source.close().catch(() => undefined);
      }
    });
    return { file, version: stat.version };
  }
}

/** A file's version in the caches' keys. */
function statKey(s: FileStat): string {
  return s.version === undefined ? `${s.mtimeMs}:${s.size}` : `${s.mtimeMs}:${s.size}:${s.version}`;
}

function mediaCost(m: MediaFile): number {
  let bytes = m.moov.byteLength + 1024;
  for (const t of m.tracks) bytes += t.fragments.count * 41;
  return bytes;
}
