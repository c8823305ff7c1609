// What one request sees of a presentation: the options in force (defaults < .ism head < query),
// the tracks the filters keep, each with its segments for the requested format. Every writer
// (Smooth, DASH, HLS) is a pure function of this view.

import { OriginError } from '../errors';
import { applyQuery, Format, parseQuery, StreamOptions } from '../options/registry';
import { Presentation, PresentationTrack } from '../presentation/presentation';
import { Clip, clipRange, parseClip, Segment, segmentTrack } from './timeline';

export interface ViewTrack {
  track: PresentationTrack;
  segments: Segment[];
}

export interface PlayoutView {
  presentation: Presentation;
  format: Format;
  /** `<name>` of every URL the output writes: presentation_name or the .ism basename. */
  name: string;
  options: StreamOptions;
  /** The query to carry into URLs the output writes, with its `?`, or '' (suppress_query_parameters). */
  carriedQuery: string;
  clip: Clip | undefined;
  tracks: ViewTrack[];
}

/** Selects tracks; the filter glue is injected so this module has no wasm dependency. */
export type TrackSelector = (tracks: readonly PresentationTrack[], trackFilter: string | undefined, filter: string | undefined, keepTimedMetadata: boolean) => number[];

export const MIN_LENGTH_OPTION: Record<Format, string> = {
  smooth: 'iss_minimum_fragment_length',
  dash: 'mpd_minimum_fragment_length',
  hls: 'hls_minimum_fragment_length',
  hds: 'hds_minimum_fragment_length',
};

export interface ViewRequest {
  format: Format;
  options: StreamOptions;
  rawQuery: string;
  clip: Clip | undefined;
  filter: string | undefined;
}

export function buildView(p: Presentation, req: ViewRequest, select: TrackSelector): PlayoutView {
  const kept = select(p.tracks, req.options.str('track_filter'), req.filter, req.options.bool('timed_metadata'));
  const minLength = req.options.rational(MIN_LENGTH_OPTION[req.format]);
  const tracks: ViewTrack[] = [];
  for (const i of kept) {
    const track = p.tracks[i]!;
    const range = clipRange(track, p.origin, req.clip);
    if (range.end === range.first) continue;
    tracks.push({ track, segments: segmentTrack(track, p.origin, range, minLength) });
  }
  if (tracks.length === 0) {
    throw new OriginError('not-found', `the sub-clip selects no media: the presentation is ${p.durationSeconds.toFixed(3)} s long`, 't', 'empty-clip');
  }
  const name = req.options.str('presentation_name') ?? p.baseName;
  const carriedQuery = carried(req.rawQuery, req.options.bool('suppress_query_parameters'));
  return { presentation: p, format: req.format, name, options: req.options, carriedQuery, clip: req.clip, tracks };
}

/**
 * Parameters that decide which bytes a segment URL names: the sub-clip, the segmentation and the
 * DASH numbering. `suppress_query_parameters` drops everything else (a CDN then caches one copy
 * of each segment whatever the manifest's filter), but never these: without them a segment URL
 * written for a clip or a `$Number$` template would answer other media, with a 200.
 */
const ADDRESSING = new Set(['t', 'vbegin', 'mpd_segment_template', ...Object.values(MIN_LENGTH_OPTION)]);

/** The query written into output URLs: all of it, or with suppression only the addressing part. */
function carried(rawQuery: string, suppress: boolean): string {
  if (rawQuery === '') return '';
  if (!suppress) return `?${rawQuery}`;
  const kept = rawQuery.split('&').filter((part) => {
    const name = part.split('=', 1)[0]!;
    try {
      return ADDRESSING.has(decodeURIComponent(name));
    } catch {
      return false;
    }
  });
  return kept.length === 0 ? '' : `?${kept.join('&')}`;
}

/** The view of a request's raw query (decoded once): options over the .ism's, the clip, the filter. */
export function viewForQuery(p: Presentation, format: Format, rawQuery: string, select: TrackSelector): PlayoutView {
  const pairs = parseQuery(rawQuery);
  const value = (name: string): string | undefined => pairs.find(([k]) => k === name)?.[1];
  const options = applyQuery(p.options, pairs);
  return buildView(p, { format, options, rawQuery, clip: parseClip(value('t'), value('vbegin')), filter: value('filter') }, select);
}

/** `<trackName>=<bitrate>`: the reference's representation id, used in every URL. */
export function trackKey(t: PresentationTrack): string {
  return `${t.properties.trackName}=${t.properties.systemBitrate}`;
}

/** Seconds of a track duration. */
export function seconds(ticks: bigint, timescale: number): number {
  return Number(ticks) / timescale;
}

/** Sum of the segment durations of a view track, in its timescale. */
export function viewDuration(t: ViewTrack): bigint {
  const s = t.segments;
  if (s.length === 0) return 0n;
  const last = s[s.length - 1]!;
  return last.time + last.duration - s[0]!.time;
}

/** Peak and average bitrate of a track's segments (bits per second), from the source bytes. */
export function bitrates(t: ViewTrack): { peak: number; average: number } {
  const ts = t.track.properties.TimeScale;
  let bytes = 0;
  let peak = 0;
  for (const s of t.segments) {
    bytes += s.bytes;
    const secs = Number(s.duration) / ts;
    if (secs > 0) peak = Math.max(peak, (s.bytes * 8) / secs);
  }
  const total = Number(viewDuration(t)) / ts;
  const average = total > 0 ? (bytes * 8) / total : t.track.properties.systemBitrate;
  return { peak: Math.ceil(peak), average: Math.ceil(average) };
}
