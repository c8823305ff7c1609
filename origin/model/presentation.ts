// A presentation: one server manifest (.ism) with its tracks resolved against the fragmented
// sources it names. Built once per (path, mtime, size) and shared by every output format, so a
// Smooth `<c>`, a DASH `<S>` and an HLS `#EXTINF` always come from the same fragment table
// (house style §2).

import * as path from 'node:path';
import { OriginError, originError } from '../errors';
import { ismTrackToProperties } from '../ism/ism-tracks';
import { parseServerManifest, ServerManifest } from '../ism/server-manifest';
import { FragmentTable, MediaFile, TrackProperties } from './media';
import { optionsFromManifest, StreamOptions } from '../options/registry';

export interface PresentationTrack {
  /** Position in the server manifest (the order every output lists tracks in). */
  index: number;
  /** From the server manifest (names, bitrates) completed by the source (fragments). */
  properties: TrackProperties;
  /** Absolute path of the source file. */
  src: string;
  fragments: FragmentTable;
  /** The source's moov, for init segments. */
  moov: Uint8Array;
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
   * The earliest first-fragment time over every track of the .ism (not just the selected
   * ones, so that a segment's URL and bytes never depend on a filter). DASH and HLS output
   * times are source times minus this instant: the presentation starts at 0 there, and the
   * negative AAC priming time of ffmpeg's ismv files (tfxd −213333) becomes a valid `tfdt`.
   */
  origin: Instant;
  /** End of the longest track, seconds from `origin`. */
  durationSeconds: number;
}

export type MediaFileLoader = (absolutePath: string) => Promise<MediaFile>;

/** Builds a presentation from the .ism text; media files come from the (cached) loader. */
export async function buildPresentation(
  ismPath: string,
  text: string,
  stat: { mtimeMs: number; size: number },
  loadMedia: MediaFileLoader,
): Promise<Presentation> {
  const fileName = path.basename(ismPath);
  const manifest = asServerError(() => parseServerManifest(text, fileName), fileName);
  const options = asServerError(() => optionsFromManifest(manifest.meta, fileName), fileName);
  const dir = path.dirname(ismPath);
  const tracks: PresentationTrack[] = [];
  // Every source is loaded at once: a cold start waits for the slowest source, not for the sum
  // of their read round trips (five 2-hour sources: about 50 sequential reads before). The
  // results are still taken in manifest order, so the first error reported is the one the
  // sequential loop reported; the others are observed here so that none goes unhandled.
  const loads = manifest.tracks.map((t) => {
    const load = loadMedia(path.resolve(dir, t.src));
    load.catch(() => undefined);
    return load;
  });
  for (const [index, t] of manifest.tracks.entries()) {
    const properties = asServerError(() => ismTrackToProperties(t, index), fileName);
    const src = path.resolve(dir, t.src);
    const media = await loads[index]!.catch((e: unknown) => {
      // A source the .ism names but that cannot be read is the operator's problem (500), never a
      // 404 that would tell the client a presentation exists without it.
      if (e instanceof OriginError && (e.kind === 'not-found' || e.kind === 'bad-request')) {
        throw originError('missing-source', `source ${t.src}: ${e.message}`, { subject: fileName });
      }
      throw e;
    });
    const track = media.tracks.find((m) => m.properties.trackID === properties.trackID);
    if (track === undefined) {
      throw originError(
        'corrupt-media',
        `${fileName} names trackID ${properties.trackID} of ${t.src}, which has no such track`,
        { subject: fileName },
      );
    }
    if (track.fragments.count === 0) {
      // The reference answers 415 FMP4_MISSING_TFRA for an empty input track (origin-reference §8).
      throw originError('unsupported-media', `track ${properties.trackName} (${t.src}) has no fragments`, {
        subject: fileName,
      });
    }
    // The source's timescale is the truth for every time in its fragment table.
    properties.TimeScale = track.properties.TimeScale;
    tracks.push({ index, properties, src, fragments: track.fragments, moov: media.moov });
  }
  if (tracks.length === 0)
    throw originError('corrupt-media', 'the server manifest lists no tracks', { subject: fileName });
  checkUniqueNames(tracks, fileName);
  const origin = earliestStart(tracks);
  const durationSeconds = Math.max(...tracks.map((t) => endSeconds(t, origin)));
  const baseName = fileName.replace(/\.isml?$/i, '');
  return {
    path: ismPath,
    baseName,
    mtimeMs: stat.mtimeMs,
    size: stat.size,
    manifest,
    options,
    tracks,
    origin,
    durationSeconds,
  };
}

/** Errors in the .ism are the operator's, not the client's: never a 400 for them. */
function asServerError<T>(f: () => T, fileName: string): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof OriginError && e.kind === 'bad-request')
      throw originError('corrupt-media', e.message, { subject: fileName });
    throw e;
  }
}

/** URLs name tracks by (trackName, bitrate): two tracks with the same pair could not be addressed. */
function checkUniqueNames(tracks: PresentationTrack[], fileName: string): void {
  const seen = new Set<string>();
  for (const t of tracks) {
    const key = `${t.properties.trackName}=${t.properties.systemBitrate}`;
    if (seen.has(key))
      throw originError(
        'corrupt-media',
        `two tracks are named ${key}; repackage so that (trackName, systemBitrate) is unique`,
        { subject: fileName },
      );
    seen.add(key);
  }
}

function earliestStart(tracks: PresentationTrack[]): Instant {
  let best: Instant | undefined;
  for (const t of tracks) {
    const candidate = { ticks: t.fragments.times[0]!, timescale: t.properties.TimeScale };
    if (best === undefined || compareInstants(candidate, best) < 0) best = candidate;
  }
  return best!;
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

function endSeconds(t: PresentationTrack, origin: Instant): number {
  const f = t.fragments;
  const ts = t.properties.TimeScale;
  const end = f.times[f.count - 1]! + BigInt(f.durations[f.count - 1]!) - ticksIn(origin, ts);
  return Number(end) / ts;
}
