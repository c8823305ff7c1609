// Builds a presentation (model/presentation.ts) from a server manifest's text: parses the .ism,
// reads its stored options, loads each source it names through the store's loader and resolves
// every track against its source's fragment table. Errors in the .ism are the operator's (500s),
// never the client's.

import * as path from 'node:path';
import { OriginError, originError } from '../errors';
import { MediaFile, TrackProperties, TrackType } from '../model/media';
import type { TimedEvent } from '../model/timed-metadata';
import { compareInstants, Instant, Presentation, PresentationTrack, ticksIn } from '../model/presentation';
import { optionsFromManifest } from '../options/registry';
import { protectionOf } from '../drm/protection';
import { ismTrackToProperties } from './ism-tracks';
import { parseServerManifest } from './server-manifest';

export type MediaFileLoader = (absolutePath: string) => Promise<MediaFile>;
/** The timed-metadata events of a track of a source (media/event-index.ts through the store). */
export type EventLoader = (absolutePath: string, trackId: number) => Promise<TimedEvent[]>;

/** Builds a presentation from the .ism text; media files come from the (cached) loader. */
export async function buildPresentation(
  ismPath: string,
  text: string,
  stat: { mtimeMs: number; size: number },
  loadMedia: MediaFileLoader,
  loadEvents?: EventLoader,
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
    if (sameKind(track.properties.type) !== sameKind(properties.type)) {
      // The .ism's element decides how a track is written (an MPEG-TS video stream, an audio
      // group): it must be what the source holds, or every segment of it fails later.
      throw originError(
        'corrupt-media',
        `${fileName} names trackID ${properties.trackID} of ${t.src}, a ${track.properties.type} track, as ${properties.type}`,
        { subject: fileName },
      );
    }
    if (track.fragments.count === 0) {
      // The reference answers 415 FMP4_MISSING_TFRA for an empty input track (docs/specs.md, reference §8).
      throw originError('unsupported-media', `track ${properties.trackName} (${t.src}) has no fragments`, {
        subject: fileName,
      });
    }
    // The source's timescale is the truth for every time in its fragment table.
    properties.TimeScale = track.properties.TimeScale;
    const built: PresentationTrack = {
      index,
      properties,
      src,
      fragments: track.fragments,
      moov: media.moov,
      headers: media.headers,
    };
    if (carriesEvents(properties, track.properties)) {
      if (loadEvents === undefined) throw originError('internal', 'no event loader', { subject: fileName });
      const events = await loadEvents(src, properties.trackID);
      if (events.length > 0) built.events = events;
    }
    tracks.push(built);
  }
  const media = tracks.filter((t) => t.properties.type !== 'data');
  if (media.length === 0)
    throw originError('corrupt-media', 'the server manifest lists no media tracks', { subject: fileName });
  checkUniqueNames(tracks, fileName);
  const origin = earliestStart(media);
  const durationSeconds = Math.max(...media.map((t) => endSeconds(t, origin)));
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
    protection: asServerError(() => protectionOf(options, tracks, fileName), fileName),
  };
}

/** Text in a source is `textstream` or `data` (a `meta` handler): both are a .ism's textstream. */
const sameKind = (t: TrackType): TrackType => (t === 'data' ? 'textstream' : t);

/**
 * A metadata track (its source says urim or evte; the .ism must agree, or the track is not
 * what the .ism describes), or a media track the .ism notes InbandEvents=emsg on.
 */
function carriesEvents(fromIsm: TrackProperties, fromSource: TrackProperties): boolean {
  if ((fromIsm.type === 'data') !== (fromSource.type === 'data'))
    throw originError(
      'corrupt-media',
      `track ${fromIsm.trackName} is ${fromIsm.type} in the server manifest but ${fromSource.type} (${fromSource.FourCC}) in its source`,
    );
  return fromIsm.type === 'data' || fromIsm.InbandEvents === 'emsg';
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

function endSeconds(t: PresentationTrack, origin: Instant): number {
  const f = t.fragments;
  const ts = t.properties.TimeScale;
  const end = f.times[f.count - 1]! + BigInt(f.durations[f.count - 1]!) - ticksIn(origin, ts);
  return Number(end) / ts;
}
