// One live channel (publishing point `<name>.isml`) as the ingest process owns it: its tracks, each
// with its archive (archive.ts), its state (idle | started | stopped) and its health counters.
// Every change goes through one queue per channel, so redundant encoders pushing the same
// (track, time) at once archive it once: the first wins, the other is counted as a duplicate.
// After each change the channel's status file is rewritten (status.ts), which is how the
// serving workers see it (docs/design/live.md#workers).
//
// Decisions (docs/guide/live.md#ingest):
// - A track is (stream name, track ID): `Streams(<name>)` and the moov's track_ID. An encoder whose
//   header differs for a known track (sample description, timescale, handler) is refused with 412
//   ingest-header-mismatch: one channel, one configuration; a new Period is not made from it.
//   The same header again (a reconnect, a redundant encoder) is accepted.
// - Times must be UTC: a fragment whose time is more than a day from the channel's clock is
//   refused (400 ingest-not-utc), never re-anchored: re-anchoring would make two origins fed by
//   the same encoders disagree, and dash.js reads live Smooth `t` as UTC.
// - End of stream: an `mfra` or a `styp` with `lmsg` ends its stream's tracks, as does the
//   graceful end of a POST that carried its own header and media (ffmpeg's CMAF output sends
//   neither box). The channel is stopped once every track has ended and no ingest request is
//   open. A dropped connection ends nothing: the encoder is expected back.

import * as path from 'node:path';
import { originError } from '../errors';
import { TrackHeader } from '../model/media';
import { MoovTrack, readMoov } from '../media/moov';
import { StreamOptions } from '../options/registry';
import { ArchiveIo, TrackArchive } from './archive';
import { IngestFragment, IngestHeader } from './ingest-parser';
import { LivePublished, publishedMessage } from './fragment-table';
import { ChannelStatus, encodeStatus, MAX_RESTARTS, TrackStatus } from './status';
import { bitrateOfStreamName, liveTrackNames } from './track-names';

export type ChannelState = 'idle' | 'started' | 'stopped';

/** How far an ingest time may be from the channel's clock and still count as UTC, seconds. */
export const UTC_TOLERANCE_SECONDS = 86_400;

export interface ChannelConfig {
  /** Decoded URL path of the `.isml`, e.g. `/live/ch1.isml`. */
  name: string;
  /** Its archive directory (`<ch>.isml.archive`). */
  archiveDir: string;
  options: StreamOptions;
  io: ArchiveIo;
  /** Milliseconds since the epoch (injectable for tests). */
  now: () => number;
  /** fsync each append (default true). */
  sync?: boolean;
  /** Told of each fragment once it is published (fragment-table.ts: the serving processes' tables). */
  onPublish?: (m: LivePublished) => void;
}

interface LiveTrack {
  status: TrackStatus;
  /** What the header's moov says of the track. */
  track: MoovTrack;
  header: TrackHeader;
  init: Uint8Array;
  archive: TrackArchive;
  ended: boolean;
}

export class Channel {
  state: ChannelState = 'idle';
  private readonly tracks = new Map<string, LiveTrack>();
  private openRequests = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private writing: Promise<void> | undefined;
  private dirty = false;

  private constructor(readonly config: ChannelConfig) {}

  /** Opens a channel: reloads its status and every track's archive (a restart continues). */
  static async open(config: ChannelConfig, stored: ChannelStatus | undefined): Promise<Channel> {
    const c = new Channel(config);
    await config.io.write.mkdir(config.archiveDir);
    if (stored !== undefined) await c.reload(stored);
    return c;
  }

  get encoders(): number {
    return this.openRequests;
  }

  /** Runs `f` after every change queued before it (one change at a time per channel). */
  serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** An ingest request starts: refused on a stopped channel unless it may restart. */
  requestOpened(): void {
    if (this.state === 'stopped' && !this.config.options.bool('restart_on_encoder_reconnect'))
      throw originError(
        'channel-stopped',
        `${this.config.name} is stopped (its stream ended); create it with --restart_on_encoder_reconnect to let encoders start it again`,
      );
    this.openRequests++;
    this.changed();
  }

  /** An ingest request ended; `endsTracks`: the stream's tracks that its graceful end ends. */
  requestClosed(endsTracks: readonly string[]): Promise<void> {
    return this.serial(async () => {
      this.openRequests--;
      for (const key of endsTracks) {
        const t = this.tracks.get(key);
        if (t !== undefined) t.ended = true;
      }
      this.maybeStop();
      this.changed();
      // What the request did is in the status file before it is answered.
      await this.flush();
    });
  }

  /** The header an earlier request of this stream sent (one segment per request sends it once). */
  knownHeader(stream: string): IngestHeader | undefined {
    const mine = [...this.tracks.values()].filter((t) => t.status.stream === stream);
    if (mine.length === 0) return undefined;
    return { init: mine[0]!.init, tracks: mine.map((t) => t.track), serverManifest: undefined };
  }

  /** A header: registers its tracks, or refuses it when it differs from a known track's. */
  header(stream: string, h: IngestHeader): Promise<string[]> {
    return this.serial(async () => {
      for (const t of h.tracks) {
        const known = this.tracks.get(trackKey(stream, t.header.trackID));
        if (known !== undefined && !sameHeader(known.header, t.header))
          throw originError(
            'ingest-header-mismatch',
            `track ${t.header.trackID} of Streams(${stream}) differs from the channel's (${describe(known.header)} then ${describe(t.header)})`,
          );
      }
      const names = liveTrackNames(h);
      const keys: string[] = [];
      for (const t of h.tracks) {
        const key = trackKey(stream, t.header.trackID);
        keys.push(key);
        const known = this.tracks.get(key);
        if (known !== undefined) {
          known.init = h.init;
          continue;
        }
        const { archive } = await TrackArchive.open(
          this.config.io,
          path.join(this.config.archiveDir, key),
          { type: t.properties.type, timescale: t.header.timescale },
          { segmentSeconds: this.segmentSeconds(), sync: this.config.sync },
        );
        const named = names.get(t.header.trackID);
        this.tracks.set(key, {
          status: {
            key,
            stream,
            trackId: t.header.trackID,
            type: t.properties.type,
            timescale: t.header.timescale,
            trackName: named?.trackName ?? t.properties.type,
            systemBitrate: named?.systemBitrate ?? bitrateOfStreamName(stream) ?? 0,
            fourCC: t.properties.FourCC,
            fragments: 0,
            lastTime: undefined,
            gaps: 0,
            duplicates: 0,
            late: 0,
            events: 0,
            files: [],
            discontinuities: 0,
            restarts: [],
          },
          track: t,
          header: t.header,
          init: h.init,
          archive,
          ended: false,
        });
      }
      this.changed();
      return keys;
    });
  }

  /** A fragment of a stream's track: archived (then published), or counted as a duplicate. */
  fragment(stream: string, f: IngestFragment): Promise<'archived' | 'duplicate' | 'late'> {
    return this.serial(async () => {
      const key = trackKey(stream, f.trackId);
      const t = this.tracks.get(key);
      if (t === undefined)
        throw originError(
          'ingest-no-header',
          `a fragment of track ${f.trackId} of Streams(${stream}) before its header`,
        );
      this.checkUtc(f.time, t.header.timescale);
      const s = t.status;
      let outcome: 'archived' | 'duplicate' | 'late';
      if (t.archive.has(f.time)) {
        s.duplicates++;
        outcome = 'duplicate';
      } else if (s.lastTime !== undefined && f.time < s.lastTime) {
        // Older than what is archived and not a copy of it: the archive only grows forward.
        s.late++;
        outcome = 'late';
      } else {
        const end = t.archive.lastEnd();
        if (end !== undefined && f.time > end) s.gaps++;
        const prev = s.lastTime;
        if (prev !== undefined && end !== undefined && breaksTimeline(prev, end, f.time)) {
          s.discontinuities++;
          s.restarts = [...s.restarts, f.time.toString()].slice(-MAX_RESTARTS);
        }
        const published = await t.archive.append(t.init, f);
        s.fragments = t.archive.count;
        s.lastTime = f.time;
        s.files = t.archive.files.map((x) => x.start.toString());
        s.events += f.events.length;
        await this.purge(t);
        if (published !== undefined)
          this.config.onPublish?.(
            publishedMessage(
              this.config.name,
              key,
              prev,
              [{ ...published.record, file: published.file }],
              t.archive.files.map((x) => x.start),
            ),
          );
        outcome = 'archived';
      }
      t.ended = f.last;
      if (!f.last && this.state !== 'started') this.state = 'started';
      this.maybeStop();
      this.changed();
      return outcome;
    });
  }

  /** An end-of-stream box (mfra) for the tracks of a stream. */
  endOfStream(stream: string): Promise<void> {
    return this.serial(async () => {
      for (const t of this.tracks.values()) if (t.status.stream === stream) t.ended = true;
      this.maybeStop();
      this.changed();
    });
  }

  status(): ChannelStatus {
    return {
      state: this.state,
      updated: new Date(this.config.now()).toISOString(),
      encoders: this.openRequests,
      tracks: [...this.tracks.values()].map((t) => ({ ...t.status })),
    };
  }

  /** Writes the status file once more changes have settled; resolves when it is on disk. */
  async flush(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  async close(): Promise<void> {
    await this.queue;
    await this.flush();
    for (const t of this.tracks.values()) await t.archive.close();
  }

  private maybeStop(): void {
    if (this.state !== 'started' || this.openRequests > 0) return;
    if (this.tracks.size > 0 && [...this.tracks.values()].every((t) => t.ended)) this.state = 'stopped';
  }

  private checkUtc(time: bigint, timescale: number): void {
    const seconds = Number(time / BigInt(timescale));
    const now = this.config.now() / 1000;
    if (Math.abs(seconds - now) > UTC_TOLERANCE_SECONDS)
      throw originError(
        'ingest-not-utc',
        `fragment time ${time}/${timescale} (${seconds} s since 1970) is not within a day of now: encoders must send UTC times (ffmpeg: -output_ts_offset <epoch seconds>)`,
      );
  }

  /**
   * Seconds of media kept: archive_length with archiving (unset: all), else the DVR window
   * (dvr_window_length, 30 s when unset, as the reference's default).
   */
  private retentionSeconds(): number | undefined {
    const o = this.config.options;
    if (o.bool('archiving')) return o.int('archive_length') || undefined;
    return o.int('dvr_window_length') || 30;
  }

  /** archive_segment_length, or files of 60 s when media is purged (purge removes whole files). */
  private segmentSeconds(): number {
    const given = this.config.options.int('archive_segment_length') ?? 0;
    if (given > 0) return given;
    return this.retentionSeconds() === undefined ? 0 : 60;
  }

  private async purge(t: LiveTrack): Promise<void> {
    const keep = this.retentionSeconds();
    const end = t.archive.lastEnd();
    if (keep === undefined || end === undefined) return;
    if ((await t.archive.purge(end - BigInt(keep) * BigInt(t.header.timescale))) > 0) {
      t.status.files = t.archive.files.map((x) => x.start.toString());
      t.status.fragments = t.archive.count;
    }
  }

  private changed(): void {
    this.dirty = true;
    if (this.writing !== undefined) return;
    this.writing = (async () => {
      while (this.dirty) {
        this.dirty = false;
        const file = path.join(this.config.archiveDir, STATUS_FILE);
        await this.config.io.write.writeAtomic(file, encodeStatus(this.status())).catch(() => undefined);
      }
      this.writing = undefined;
    })();
  }

  private async reload(stored: ChannelStatus): Promise<void> {
    // An ingest process that died had encoders connected: they are gone now.
    this.state = stored.state;
    for (const s of stored.tracks) {
      const { archive } = await TrackArchive.open(
        this.config.io,
        path.join(this.config.archiveDir, s.key),
        { type: s.type, timescale: s.timescale },
        { segmentSeconds: this.segmentSeconds(), sync: this.config.sync },
      );
      const init = await archive.storedInit();
      if (init === undefined) {
        await archive.close();
        continue;
      }
      // The init is ftyp then moov: the moov starts after the ftyp's size.
      const ftypSize = new DataView(init.buffer, init.byteOffset, 4).getUint32(0);
      const track = readMoov(init.subarray(ftypSize), 'archive', 0).tracks.find((t) => t.header.trackID === s.trackId);
      if (track === undefined) {
        await archive.close();
        continue;
      }
      let lastTime: bigint | undefined;
      for (const f of archive.files)
        for (const r of f.records) if (lastTime === undefined || r.time > lastTime) lastTime = r.time;
      this.tracks.set(s.key, {
        status: {
          ...s,
          fragments: archive.count,
          lastTime,
          files: archive.files.map((x) => x.start.toString()),
        },
        track,
        header: track.header,
        init,
        archive,
        ended: stored.state === 'stopped',
      });
    }
    this.changed();
  }
}

export const STATUS_FILE = 'channel.json';

export function trackKey(stream: string, trackId: number): string {
  // A directory name: the stream name with anything but letters, digits, `.`, `_`, `-` replaced.
  return `${stream.replace(/[^A-Za-z0-9._-]/g, '_')}-${trackId}`;
}

/**
 * Whether a fragment at `time` after the newest one (at `last`, ending at `end`) starts a new
 * run: it neither continues the timeline (`time` = `end`) nor lies on its grid, a whole number of
 * the newest fragment's durations D after it within D/8 (media missing, the same encoder resuming:
 * a gap; AAC fragments are whole frames, so audio durations vary by a tick around D, and the
 * slot tolerance of model/timeline.ts absorbs that). An encoder restarted with a new anchor (ffmpeg
 * with another -output_ts_offset) breaks it; an epoch-locked one resuming after a stall or a
 * restart does not (docs/design/live.md, "Restarts and gaps").
 */
export function breaksTimeline(last: bigint, end: bigint, time: bigint): boolean {
  const d = end - last;
  if (time === end || d <= 0n) return false;
  if (time < end) return true;
  const off = (time - last) % d;
  return off > d / 8n && off < d - d / 8n;
}

function sameHeader(a: TrackHeader, b: TrackHeader): boolean {
  return a.timescale === b.timescale && a.handler === b.handler && Buffer.from(a.stsd).equals(Buffer.from(b.stsd));
}

function describe(h: TrackHeader): string {
  return `${h.sampleEntry} at ${h.timescale} Hz`;
}
