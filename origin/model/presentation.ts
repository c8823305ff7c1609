// A presentation: one server manifest (.ism) with its tracks resolved against the fragmented
// sources it names (built by ism/presentation-builder.ts). Built once per (path, mtime, size)
// and shared by every output format, so a
// Smooth `<c>`, a DASH `<S>` and an HLS `#EXTINF` always come from the same fragment table
// (CONTRIBUTING.md design rule 2).

import { FragmentTable, TrackHeader, TrackProperties } from './media';
import { ServerManifest } from './server-manifest';
import { StreamOptions } from '../options/registry';
import type { Protection } from './protection';
import type { TimedEvent } from './timed-metadata';
import type { LiveDescription, TrackArchiveFiles } from './live';

export interface PresentationTrack {
  /** Position in the server manifest (the order every output lists tracks in). */
  index: number;
  /** From the server manifest (names, bitrates) completed by the source (fragments). */
  properties: TrackProperties;
  /** Absolute path of the source file. */
  src: string;
  fragments: FragmentTable;
  /** The source's moov: part of every ETag of its segments. */
  moov: Uint8Array;
  /** The source's track headers by track id (its own and those of the tracks muxed with it). */
  headers: ReadonlyMap<number, TrackHeader>;
  /**
   * Timed-metadata events this track carries, in presentation order, times on the source's
   * timeline: a metadata track's samples, or a media track's inband emsg boxes
   * (model/timed-metadata.ts). Undefined: none.
   */
  events?: readonly TimedEvent[];
  /**
   * A live channel's track: the archive files behind its fragment table, whose offsets are on
   * their common byte axis, and `src` names the track's archive directory (model/live.ts).
   */
  archive?: TrackArchiveFiles;
}

/** An instant as ticks of a timescale, exact. */
export interface Instant {
  ticks: bigint;
  timescale: number;
}

export interface Presentation {
  /** Absolute path of the .ism. */
  path: string;
  /** The .ism basename without its extension: the default `<name>` of every URL. */
  baseName: string;
  mtimeMs: number;
  size: number;
  manifest: ServerManifest;
  /** Options stored in the head (defaults < these < query). */
  options: StreamOptions;
  tracks: PresentationTrack[];
  /**
   * The earliest first-fragment time over every media track of the .ism (not just the selected
   * ones, so that a segment's URL and bytes never depend on a filter). DASH and HLS output
   * times are source times minus this instant: the presentation starts at 0 there, and the
   * negative AAC priming time of ffmpeg's ismv files (tfxd −213333) becomes a valid `tfdt`.
   */
  origin: Instant;
  /**
   * End of the longest media track, seconds from `origin`. Timed-metadata tracks count for
   * neither: with `timed_metadata` off, a presentation with one is served byte for byte as it
   * would be without it.
   */
  durationSeconds: number;
  /** The encryption its DRM options ask for (origin/drm/protection.ts); undefined: clear. */
  protection: Protection | undefined;
  /**
   * A live channel (a `.isml` read through origin/live/channel-presentation.ts): `origin` is the
   * fixed channel anchor, not the earliest fragment. Undefined: a VOD presentation.
   */
  live?: LiveDescription;
}

export function compareInstants(a: Instant, b: Instant): number {
  const l = a.ticks * BigInt(b.timescale);
  const r = b.ticks * BigInt(a.timescale);
  return l < r ? -1 : l > r ? 1 : 0;
}

/** An instant in another timescale, rounded down (exact when the timescales divide). */
export function ticksIn(i: Instant, timescale: number): bigint {
  const num = i.ticks * BigInt(timescale);
  const den = BigInt(i.timescale);
  const q = num / den;
  return num % den !== 0n && num < 0n ? q - 1n : q;
}
