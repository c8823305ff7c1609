// What one request sees of a presentation: the options in force (defaults < .ism head < query),
// the tracks the filters keep, each with its segments for the requested format. Every writer
// (Smooth, DASH, HLS) is a pure function of this view.

import { OriginError } from '../errors';
import { parseQuery } from '../options/query';
import { applyQuery, Format, StreamOptions } from '../options/registry';
import { Presentation, PresentationTrack } from './presentation';
import { Clip, columnsOf, parseClip, PlacedSegments, placeSegments, Segment, SegmentColumns } from './timeline';

export interface ViewTrack {
  track: PresentationTrack;
  segments: Segment[];
  /**
   * Number (from 1) of `segments[0]` among the unclipped presentation's segments of the track
   * (1 without a clip). HLS numbers segment URLs by it, so that a clip and the whole presentation
   * name a segment alike (timeline.ts placeSegments); DASH `$Number$` counts from 1 per view.
   */
  firstNumber: number;
}

export interface PlayoutView {
  presentation: Presentation;
  format: Format;
  /** `<name>` of every URL the output writes: presentation_name or the .ism basename. */
  name: string;
  options: StreamOptions;
  /** The query to carry into URLs the output writes, with its `?`, or '' (suppress_query_parameters). */
  carriedQuery: string;
  /**
   * The query of URLs that name another playlist (HLS media and I-frame playlists): the carried
   * query, plus `presentation_name` when suppression dropped it, because the playlist it names
   * writes URLs too. Undefined: the carried query.
   */
  playlistQuery?: string;
  clip: Clip | undefined;
  tracks: ViewTrack[];
  /**
   * HLS: the tracks each `variant_set` expression selects, as indices into `tracks`, in option
   * order; undefined when no variant_set is given (one set of every track).
   */
  variantSets?: number[][];
}

/** Selects tracks; the filter glue is injected so this module has no wasm dependency. */
export type TrackSelector = (
  tracks: readonly PresentationTrack[],
  trackFilter: string | undefined,
  filter: string | undefined,
  keepTimedMetadata: boolean,
) => number[];

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
  const suppress = req.options.bool('suppress_query_parameters');
  // HLS under suppression writes segment URLs without the clip (HLS_SEGMENT_ADDRESSING), which
  // name whole unclipped segments: the playlist lists those (the clip widened to them).
  const widen = suppress && req.format === 'hls';
  const tracks: ViewTrack[] = [];
  for (const i of kept) {
    const track = p.tracks[i]!;
    const placed = placeSegments(track, p.origin, req.clip, minLength, widen);
    if (placed !== undefined) tracks.push(placedTrack(track, placed));
  }
  if (tracks.length === 0) {
    throw new OriginError(
      'not-found',
      `the sub-clip selects no media: the presentation is ${p.durationSeconds.toFixed(3)} s long`,
      't',
      'empty-clip',
    );
  }
  const name = req.options.str('presentation_name') ?? p.baseName;
  const carriedQuery = carried(req.rawQuery, suppress ? (widen ? HLS_SEGMENT_ADDRESSING : ADDRESSING) : undefined);
  const playlistQuery = carried(req.rawQuery, suppress ? PLAYLIST_ADDRESSING : undefined);
  const view: PlayoutView = {
    presentation: p,
    format: req.format,
    name,
    options: req.options,
    carriedQuery,
    playlistQuery,
    clip: req.clip,
    tracks,
  };
  if (req.format === 'hls') {
    const sets = variantSets(tracks, req.options.list('variant_set'), select);
    if (sets !== undefined) view.variantSets = sets;
  }
  return view;
}

/** The placed segments of the view tracks buildView made. */
const placedOf = new WeakMap<ViewTrack, PlacedSegments>();

/**
 * A view track whose `segments` are made on first read (an own enumerable accessor: spreads and
 * comparisons see it as a field). The DASH writer and the bit rates read the columns instead
 * (segmentColumns below), so a first MPD makes no Segment objects.
 */
function placedTrack(track: PresentationTrack, placed: PlacedSegments): ViewTrack {
  const t: ViewTrack = {
    track,
    get segments(): Segment[] {
      return placed.segments();
    },
    firstNumber: placed.number,
  };
  placedOf.set(t, placed);
  return t;
}

/**
 * The segments of a view track as columns (model/timeline.ts SegmentColumns), without making
 * its Segment objects when buildView placed it; undefined when a value is not exact as a number
 * (the caller reads `segments`).
 */
export function segmentColumns(t: ViewTrack): SegmentColumns | undefined {
  const placed = placedOf.get(t);
  return placed !== undefined ? placed.columns : columnsOf(t.segments);
}

/** How many segments a view track has, without making them. */
export function segmentCount(t: ViewTrack): number {
  return placedOf.get(t)?.count ?? t.segments.length;
}

/**
 * Each variant_set expression evaluated with the request's track selector over the tracks the
 * filters kept (so `count()` counts what this request plays). A syntax error, or a set that
 * keeps none of the tracks (the request's filter removed all of them: the stored sets and the
 * filter contradict each other), is a 400 naming the parameter and the set; a variant_set in
 * the query replaces the server manifest's list, which is the remedy.
 */
function variantSets(tracks: ViewTrack[], expressions: string[], select: TrackSelector): number[][] | undefined {
  if (expressions.length === 0) return undefined;
  const candidates = tracks.map((t) => t.track);
  return expressions.map((expression, i) => {
    try {
      return select(candidates, undefined, expression, false);
    } catch (e) {
      if (!(e instanceof OriginError) || e.kind !== 'bad-request') throw e;
      // The selector reports the expression as `filter`; here it is this variant set.
      const detail = e.message.replace(/^filter: /, '');
      const which = expressions.length > 1 ? `set ${i + 1} of ${expressions.length}` : 'the set';
      throw new OriginError(
        'bad-request',
        `${which}, ${JSON.stringify(expression.slice(0, 256))}: ${detail}`,
        'variant_set',
        'bad-variant-set',
      );
    }
  });
}

/**
 * Parameters that decide which bytes a segment URL names: the sub-clip, the segmentation and the
 * DASH numbering. `suppress_query_parameters` drops everything else (a CDN then caches one copy
 * of each segment whatever the manifest's filter), but never these: without them a segment URL
 * written for a clip or a `$Number$` template would answer other media, with a 200. (HLS
 * segment URLs alone drop the clip, and list whole segments instead: HLS_SEGMENT_ADDRESSING.)
 */
const ADDRESSING = new Set(['t', 'vbegin', 'mpd_segment_template', ...Object.values(MIN_LENGTH_OPTION)]);

/**
 * HLS segment URLs under suppression leave the clip out: the three sibling playlists of a
 * rendition (whole, and clipped by an edge alias) then name each segment by one URL, which a
 * CDN caches once (README "URL aliases"). They can, because the playlist lists whole unclipped
 * segments (buildView `widen`) numbered as the unclipped presentation numbers them, so the URL
 * still names exactly the bytes it answers.
 */
const HLS_SEGMENT_ADDRESSING = new Set([...ADDRESSING].filter((name) => name !== 't' && name !== 'vbegin'));

/**
 * URLs of HLS media playlists also keep `presentation_name`: the playlist they name writes
 * segment URLs, which must carry on the name the master playlist chose. Segment URLs do not need
 * it (the name is in their path already), so only playlist URLs carry it.
 */
const PLAYLIST_ADDRESSING = new Set([...ADDRESSING, 'presentation_name']);

/** The query written into output URLs: all of it, or with suppression only the parameters kept. */
function carried(rawQuery: string, keep: ReadonlySet<string> | undefined): string {
  if (rawQuery === '') return '';
  if (keep === undefined) return `?${rawQuery}`;
  const kept = rawQuery.split('&').filter((part) => {
    const name = part.split('=', 1)[0]!;
    try {
      return keep.has(decodeURIComponent(name));
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
  return buildView(
    p,
    { format, options, rawQuery, clip: parseClip(value('t'), value('vbegin')), filter: value('filter') },
    select,
  );
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

/**
 * Memoization of pure functions of view objects, for the writers.
 *
 * A PlayoutView, its `tracks` array, its ViewTracks and their segments are never changed once
 * buildView returns them, and the server keeps each view per (presentation, format, raw query)
 * (server/handlers.ts ctx.views), also with the rendered-manifest cache off. What a writer derives
 * from a view track by walking its segments (a SegmentTimeline, the `<c>` list, EXTINF lines, bit
 * rates) is therefore the same on every render of that view: computed once per object and reused,
 * a later render is mostly string concatenation. This is not the server's rendered-manifest cache
 * (whole documents, keyed by request, bounded, optional): entries are parts of a document, live
 * exactly as long as the object they are keyed by (WeakMap), and hold only what a fresh render
 * would compute again.
 *
 * The owner is the object the value is derived from (a ViewTrack, a view's `tracks` array, a
 * view); `key` must name every other input (options, URL parts, protocol version...), since one
 * ViewTrack can appear in views that differ in those (a view spread with other options).
 */
export class ViewMemo<V> {
  private readonly byOwner = new WeakMap<object, Map<string, V>>();

  get(owner: object, key: string, compute: () => V): V {
    let known = this.byOwner.get(owner);
    if (known === undefined) {
      known = new Map();
      this.byOwner.set(owner, known);
    }
    let value = known.get(key);
    if (value === undefined) {
      value = compute();
      known.set(key, value);
    }
    return value;
  }
}

const bitrateMemo = new ViewMemo<{ peak: number; average: number }>();

/** Peak and average bitrate of a track's segments (bits per second), from the source bytes. */
export function bitrates(t: ViewTrack): { peak: number; average: number } {
  // A copy: the memoized object is shared by every render of the view.
  const { peak, average } = bitrateMemo.get(t, '', () => computeBitrates(t));
  return { peak, average };
}

function computeBitrates(t: ViewTrack): { peak: number; average: number } {
  const ts = t.track.properties.TimeScale;
  let bytes = 0;
  let peak = 0;
  // From the columns (timeline.ts SegmentColumns: the same numbers, exact) unless only the Segment
  // objects exist (Smooth, HLS): making columns then would be a pass more, not one less.
  const placed = placedOf.get(t);
  const c = placed !== undefined && placed.made && !placed.hasColumns ? undefined : segmentColumns(t);
  if (c?.stats !== undefined) {
    ({ peak, bytes } = c.stats);
  } else if (c !== undefined) {
    for (let k = 0; k < c.count; k++) {
      bytes += c.bytes[k]!;
      const secs = c.durations[k]! / ts;
      // Math.max without the call (no NaN here: bytes are finite and secs > 0).
      const rate = (c.bytes[k]! * 8) / secs;
      if (secs > 0 && rate > peak) peak = rate;
    }
  } else {
    for (const s of t.segments) {
      bytes += s.bytes;
      const secs = Number(s.duration) / ts;
      if (secs > 0) peak = Math.max(peak, (s.bytes * 8) / secs);
    }
  }
  const last = c === undefined ? 0 : c.count - 1;
  const span =
    c === undefined
      ? Number(viewDuration(t))
      : c.count === 0
        ? 0
        : c.offsets[last]! + c.durations[last]! - c.offsets[0]!;
  const total = span / ts;
  const average = total > 0 ? (bytes * 8) / total : t.track.properties.systemBitrate;
  return { peak: Math.ceil(peak), average: Math.ceil(average) };
}
