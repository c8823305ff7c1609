// A serving process's table of every live track's published fragments, kept in memory so that a
// request does not read every index file (docs/design/live.md#freshness).
//
// The ingest process says what it publishes: after each fragment's index record is on disk it
// sends `{live, track, prev, records, files}` (LivePublished) — over the cluster IPC to every
// worker of `origin serve --workers N`, by a plain call in a single process. A message is a hint;
// the index files are the truth:
// - a message whose `prev` (the time of the track's fragment before it) is the table's newest
//   extends the table; one whose records the table has is a repeat and changes nothing; any other
//   (a message was missed) marks the track stale, and its next use reads the index files again;
// - a track the table has not read yet is read from its index files on first use (a worker
//   started after the channel), unless the message holds the track's first fragment;
// - each use compares the table with the channel's status (`channel.json`, written after the
//   index): a status newer than the table (the last message was missed) reads the index again.
// `files` names the track's archive files after the publish: fragments of a file purged since
// leave the table. Messages that arrive while a track is read are applied after the read.

import { Storage } from '../io/storage';
import { LiveFragment, readTrackRecords } from './channel-reader';
import { TrackStatus } from './status';

/** One published fragment in a message: JSON-safe (IPC), times as decimal strings. */
export interface PublishedRecord {
  /** Track timescale, exact. */
  time: string;
  duration: number;
  offset: number;
  size: number;
  keyframe: boolean;
  events: boolean;
  /** Start time of its archive file (the file's name). */
  file: string;
  /** Its `prft` mapping (archive-index.ts ProducerTime), the 64-bit values as decimal strings. */
  producer?: { ntp: string; mediaTime: string; flags: number };
}

/** What the ingest process sends after a publish. */
export interface LivePublished {
  /** Decoded URL path of the channel's `.isml`. */
  live: string;
  /** The track's key (`<stream>-<trackID>`, status.ts). */
  track: string;
  /** Time of the track's newest fragment before these; null for its first. */
  prev: string | null;
  records: PublishedRecord[];
  /** Start times of the track's archive files after the publish, oldest first. */
  files: string[];
}

const DECIMAL = /^-?\d{1,20}$/;

/** Whether an IPC message is a LivePublished (other messages share the channel). */
export function isLivePublished(m: unknown): m is LivePublished {
  const o = m as Partial<LivePublished> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.live === 'string' &&
    typeof o.track === 'string' &&
    (o.prev === null || (typeof o.prev === 'string' && DECIMAL.test(o.prev))) &&
    Array.isArray(o.records) &&
    o.records.every(
      (r) =>
        typeof r?.time === 'string' &&
        DECIMAL.test(r.time) &&
        DECIMAL.test(String(r.file)) &&
        (r.producer === undefined ||
          (DECIMAL.test(String(r.producer.ntp)) &&
            DECIMAL.test(String(r.producer.mediaTime)) &&
            typeof r.producer.flags === 'number')),
    ) &&
    Array.isArray(o.files) &&
    o.files.every((f) => typeof f === 'string' && DECIMAL.test(f))
  );
}

/** The message for fragments just published (channel.ts sends it). */
export function publishedMessage(
  live: string,
  track: string,
  prev: bigint | undefined,
  published: ReadonlyArray<LiveFragment>,
  files: readonly bigint[],
): LivePublished {
  return {
    live,
    track,
    prev: prev === undefined ? null : prev.toString(),
    records: published.map((r) => ({
      time: r.time.toString(),
      duration: r.duration,
      offset: r.offset,
      size: r.size,
      keyframe: r.keyframe,
      events: r.events,
      file: r.file.toString(),
      ...(r.producer === undefined
        ? {}
        : {
            producer: {
              ntp: r.producer.ntp.toString(),
              mediaTime: r.producer.mediaTime.toString(),
              flags: r.producer.flags,
            },
          }),
    })),
    files: files.map(String),
  };
}

interface TrackEntry {
  fragments: LiveFragment[];
  /** Time of the newest fragment. */
  last: bigint | undefined;
  stale: boolean;
  /** A read of the index files in progress, and the messages that came meanwhile. */
  reading: Promise<TrackEntry> | undefined;
  pending: LivePublished[];
}

/** What the table did, for the tests and the metrics. */
export interface FragmentTableCounts {
  /** Messages that extended a track. */
  extended: number;
  /** Messages that showed a missed one (the track read again on its next use). */
  missed: number;
  /** Messages about tracks not read yet, or repeats. */
  ignored: number;
  /** Reads of a track's index files. */
  reads: number;
}

export class LiveFragmentTable {
  private readonly tracks = new Map<string, TrackEntry>();
  readonly counts: FragmentTableCounts = { extended: 0, missed: 0, ignored: 0, reads: 0 };

  constructor(
    private readonly storage: Storage,
    private readonly root: string,
  ) {}

  /** Told of every message after the table took it (server.ts: the LL-HLS waiters). */
  onApply: ((m: LivePublished) => void) | undefined;

  /** Takes a message of the ingest process. */
  apply(m: LivePublished): void {
    this.take(m);
    this.onApply?.(m);
  }

  private take(m: LivePublished): void {
    const key = entryKey(m.live, m.track);
    const entry = this.tracks.get(key);
    if (entry === undefined) {
      if (m.prev !== null) return void this.counts.ignored++;
      // The track's first fragment: nothing in its index the message does not hold.
      this.tracks.set(key, { fragments: [], last: undefined, stale: false, reading: undefined, pending: [] });
      return this.take(m);
    }
    if (entry.reading !== undefined) return void entry.pending.push(m);
    this.extend(entry, m);
  }

  /**
   * The published fragments of a track, oldest first. `track` is its status as `channel.json`
   * says: a table behind it reads the index files again.
   */
  async fragments(isml: string, track: TrackStatus): Promise<readonly LiveFragment[]> {
    const key = entryKey(isml, track.key);
    let entry = this.tracks.get(key);
    const behind =
      entry !== undefined && track.lastTime !== undefined && (entry.last === undefined || entry.last < track.lastTime);
    if (entry === undefined || entry.stale || behind) entry = await this.read(key, isml, track, entry);
    else if (entry.reading !== undefined) entry = await entry.reading;
    return entry.fragments;
  }

  private extend(entry: TrackEntry, m: LivePublished): void {
    const records = m.records.map((r): LiveFragment => ({
      time: BigInt(r.time),
      duration: r.duration,
      offset: r.offset,
      size: r.size,
      keyframe: r.keyframe,
      events: r.events,
      file: BigInt(r.file),
      ...(r.producer === undefined
        ? {}
        : {
            producer: {
              ntp: BigInt(r.producer.ntp),
              mediaTime: BigInt(r.producer.mediaTime),
              flags: r.producer.flags,
            },
          }),
    }));
    const first = records.findIndex((r) => entry.last === undefined || r.time > entry.last);
    if (first < 0) return void this.counts.ignored++;
    const before = first === 0 ? (m.prev === null ? undefined : BigInt(m.prev)) : records[first - 1]!.time;
    if (entry.stale || before !== entry.last) {
      entry.stale = true;
      return void this.counts.missed++;
    }
    for (const r of records.slice(first)) entry.fragments.push(r);
    entry.last = entry.fragments[entry.fragments.length - 1]?.time ?? entry.last;
    const files = new Set(m.files);
    if (entry.fragments.length > 0 && !files.has(entry.fragments[0]!.file.toString()))
      entry.fragments = entry.fragments.filter((r) => files.has(r.file.toString()));
    this.counts.extended++;
  }

  private read(key: string, isml: string, track: TrackStatus, old: TrackEntry | undefined): Promise<TrackEntry> {
    if (old?.reading !== undefined) return old.reading;
    const entry: TrackEntry = old ?? { fragments: [], last: undefined, stale: false, reading: undefined, pending: [] };
    this.tracks.set(key, entry);
    this.counts.reads++;
    entry.reading = readTrackRecords(this.storage, this.root, isml, track)
      .then((fragments) => {
        entry.fragments = fragments;
        entry.last = fragments.reduce<bigint | undefined>(
          (a, r) => (a === undefined || r.time > a ? r.time : a),
          undefined,
        );
        entry.stale = false;
        return entry;
      })
      .finally(() => {
        entry.reading = undefined;
        const pending = entry.pending.splice(0);
        for (const m of pending) this.extend(entry, m);
      });
    return entry.reading;
  }
}

function entryKey(isml: string, track: string): string {
  return `${isml}\n${track}`;
}
