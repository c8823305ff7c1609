// A channel as a Presentation (docs/design/live.md, "A channel as a presentation"): every output
// writer stays a function of a view, so live output is VOD output over a presentation whose
// - tracks come from the archived init's moov (as VOD reads a source's), named and rated from
//   channel.json (the Live Server Manifest Box, or the CMAF stream name `…-800k.cmfv`);
// - fragment table comes from the index records (no moof walk), its offsets on the byte axis of
//   the track's archive files end to end (model/live.ts TrackArchiveFiles), with a file column;
// - origin is the fixed channel anchor (the Unix epoch unless the caller gives another), not the
//   earliest fragment, which moves with the window: DASH `$Time$`, HLS media sequence numbers
//   ⌊(t − anchor)/D⌋ and PDT then agree across origins fed the same encoders;
// - version is channel.json's (mtime, size), which the ingest process rewrites on every publish;
// - timed metadata (channel-events.ts read it) rides on the tracks as VOD's does, a metadata
//   stream's on the first track.
// Pure: what the reader read (channel-reader.ts) in, a Presentation out; nothing here opens a file.

import { originError } from '../errors';
import { BufferSource } from '../io/source';
import { readMediaFile } from '../media/media-file';
import { FragmentTable } from '../model/media';
import { ArchiveFileSpan, LiveDescription, ProducerClock } from '../model/live';
import { ntpToUnixMs, producerClock } from '../media/prft';
import { Presentation, PresentationTrack } from '../model/presentation';
import { ServerManifest } from '../model/server-manifest';
import { orderEvents, TimedEvent } from '../model/timed-metadata';
import { StreamOptions } from '../options/registry';
import type { ReadArchiveFile } from './channel-reader';
import type { ChannelStatus, TrackStatus } from './status';

/** The reference's default DVR window (origin-reference.md §6: `dvr_window_length=30`). */
export const DEFAULT_DVR_WINDOW_SECONDS = 30;

/** One archived track as the reader found it. */
export interface ChannelTrackInput {
  status: TrackStatus;
  /** Its archive files, oldest first, each with its published fragments. */
  files: readonly ReadArchiveFile[];
  /** The first file's init (ftyp + moov) followed by its first fragment: the track's properties. */
  head: Uint8Array;
  /** The track's archive directory: the `src` of the presentation track. */
  dir: string;
  /** Its timed-metadata events (channel-events.ts), times on the ingest timeline. */
  events?: readonly TimedEvent[];
}

export interface ChannelInput {
  /** Absolute path of the `.isml`. */
  isml: string;
  /** channel.json's mtime and size: the presentation's version. */
  version: { mtimeMs: number; size: number };
  manifest: ServerManifest;
  options: StreamOptions;
  status: ChannelStatus;
  tracks: readonly ChannelTrackInput[];
  /** Seconds since 1970 of output time 0 (default 0, the Unix epoch). */
  anchorSeconds?: number;
}

/** Track types in the order every output lists them (VOD lists the .ism's order; live has none). */
const TYPE_ORDER = ['video', 'audio', 'textstream'];

export async function channelPresentation(input: ChannelInput): Promise<Presentation> {
  const anchorSeconds = input.anchorSeconds ?? 0;
  const withMedia = input.tracks
    .filter((t) => t.files.some((f) => f.records.length > 0) && TYPE_ORDER.includes(t.status.type))
    .sort((a, b) => TYPE_ORDER.indexOf(a.status.type) - TYPE_ORDER.indexOf(b.status.type));
  if (withMedia.length === 0)
    throw originError('fragment-not-yet', 'the channel has no media yet', { subject: input.isml });
  const tracks: PresentationTrack[] = [];
  for (const t of withMedia) tracks.push(await channelTrack(t, tracks.length, input.isml));
  // Metadata tracks are no tracks of the output (as the VOD view leaves them out): their events
  // join the first track's, since the view's events are the presentation's (model/view.ts).
  const metadata = input.tracks.filter((t) => t.status.type === 'data').flatMap((t) => t.events ?? []);
  if (metadata.length > 0) tracks[0]!.events = orderEvents([...(tracks[0]!.events ?? []), ...metadata]);
  let edge = -Infinity;
  let start = Infinity;
  for (const t of tracks) {
    const f = t.fragments;
    const ts = t.properties.TimeScale;
    start = Math.min(start, Number(f.times[0]!) / ts - anchorSeconds);
    edge = Math.max(edge, Number(f.times[f.count - 1]! + BigInt(f.durations[f.count - 1]!)) / ts - anchorSeconds);
  }
  const live: LiveDescription = {
    ended: input.status.state === 'stopped',
    publishedMs: Date.parse(input.status.updated) || input.version.mtimeMs,
    dvrWindowSeconds: input.options.int('dvr_window_length') ?? DEFAULT_DVR_WINDOW_SECONDS,
    anchorSeconds,
    edgeSeconds: edge,
    archiveStartSeconds: start,
  };
  const file = input.isml.split('/').pop()!;
  return {
    path: input.isml,
    baseName: file.replace(/\.isml$/i, ''),
    mtimeMs: input.version.mtimeMs,
    size: input.version.size,
    manifest: input.manifest,
    options: input.options,
    tracks,
    origin: { ticks: BigInt(anchorSeconds), timescale: 1 },
    durationSeconds: edge,
    // Encryption of live output is not built: a channel plays in the clear.
    protection: undefined,
    live,
  };
}

async function channelTrack(t: ChannelTrackInput, index: number, isml: string): Promise<PresentationTrack> {
  const s = t.status;
  // Smooth ingest of several tracks in one POST: each track's archive holds the whole moov but
  // only its own fragments.
  const media = await readMediaFile(new BufferSource(`${t.dir} (init)`, t.head), 'exact', s.trackId);
  const own = media.tracks.find((m) => m.properties.trackID === s.trackId);
  if (own === undefined)
    throw originError('corrupt-media', `the archived init of ${s.key} has no track ${s.trackId}`, { subject: isml });
  const properties = { ...own.properties };
  properties.trackName = s.trackName;
  if (s.systemBitrate > 0) properties.systemBitrate = s.systemBitrate;
  const { fragments, files, fileOf, producer } = fragmentTable(t.files);
  return {
    index,
    properties,
    src: t.dir,
    fragments,
    moov: media.moov,
    headers: media.headers,
    archive: {
      files,
      fileOf,
      restarts: s.restarts.map((x) => BigInt(x)),
      discontinuities: s.discontinuities,
      ...(producer === undefined ? {} : { producer }),
    },
    ...(t.events !== undefined && t.events.length > 0 ? { events: t.events } : {}),
  };
}

/**
 * The index records of a track's files as one fragment table on their common byte axis, and the
 * newest producer time with a wall-clock meaning (read in the same pass: no extra read).
 */
export function fragmentTable(input: readonly ReadArchiveFile[]): {
  fragments: FragmentTable;
  files: ArchiveFileSpan[];
  fileOf: Uint16Array;
  producer?: ProducerClock;
} {
  let producer: ProducerClock | undefined;
  const kept = input.filter((f) => f.records.length > 0);
  const count = kept.reduce((n, f) => n + f.records.length, 0);
  const times = new BigInt64Array(count);
  const durations = new Float64Array(count);
  const offsets = new Float64Array(count);
  const sizes = new Float64Array(count);
  const keyframes = new Uint8Array(count);
  const fileOf = new Uint16Array(count);
  const files: ArchiveFileSpan[] = [];
  let base = 0;
  let i = 0;
  table: for (const f of kept) {
    if (files.length === 0xffff) break;
    for (const r of f.records) {
      // A record not after the one before it (one writer never writes one) would break every
      // time search: the table ends there.
      if (i > 0 && r.time <= times[i - 1]!) break table;
      times[i] = r.time;
      durations[i] = r.duration;
      offsets[i] = base + r.offset;
      sizes[i] = r.size;
      keyframes[i] = r.keyframe ? 1 : 0;
      fileOf[i] = files.length;
      i++;
      const type = r.producer === undefined ? undefined : producerClock(r.producer.flags);
      if (type !== undefined)
        producer = {
          fragment: r.time,
          mediaTime: r.producer!.mediaTime,
          wallClockMs: ntpToUnixMs(r.producer!.ntp),
          type,
        };
    }
    files.push({ path: f.media, base, size: f.size });
    base += f.size;
  }
  return {
    fragments: {
      count: i,
      times: times.subarray(0, i),
      durations: durations.subarray(0, i),
      offsets: offsets.subarray(0, i),
      sizes: sizes.subarray(0, i),
      keyframes: keyframes.subarray(0, i),
    },
    files,
    fileOf: fileOf.subarray(0, i),
    ...(producer === undefined ? {} : { producer }),
  };
}
