// What one request sees of a presentation: the options in force (defaults < .ism head < query),
// the tracks the filters keep, each with its segments for the requested format. Every writer
// (Smooth, DASH, HLS) is a pure function of this view.

import { OriginError, originError } from '../errors';
import { parseQuery } from '../options/query';
import { applyQuery, Format, StreamOptions } from '../options/registry';
import { Instant, Presentation, PresentationTrack, ticksIn } from './presentation';
import { orderEvents, TimedEvent } from './timed-metadata';
import { SegmentList } from './segment-list';
import { Clip, parseClip, placeSegments } from './timeline';
import { LiveControls, liveNumbering, LiveNumbering, liveWindow, LiveViewWindow, listedSegments } from './live-window';
import { LiveDescription } from './live';
import { parseLiveRange } from './live-time';

export interface ViewTrack {
  track: PresentationTrack;
  /** At least one segment (buildView leaves out a track the clip empties). */
  segments: SegmentList;
  /**
   * Number (from 1) of `segments[0]` among the unclipped presentation's segments of the track
   * (1 without a clip). HLS numbers segment URLs by it, so that a clip and the whole presentation
   * name a segment alike (timeline.ts placeSegments); DASH `$Number$` counts from 1 per view.
   */
  firstNumber: number;
  /** A live track's numbers and timeline breaks (model/live-window.ts); undefined for VOD. */
  live?: LiveNumbering;
}

/** The index of a live track's segment numbered `nText` (its grid slots skip a gap's), or 404 unknown-time. */
export function liveSegmentIndex(t: ViewTrack, nText: string, what: string): number {
  const i = t.live?.numbers.indexOf(Number(nText)) ?? -1;
  if (i < 0) throw originError('unknown-time', `no segment ${nText} for ${what} in this live window`);
  return i;
}

/** The number of segment i of a view track: on the epoch grid for live (gaps keep theirs), else firstNumber + i. */
export function segmentNumber(t: ViewTrack, i: number): number {
  return t.live === undefined ? t.firstNumber + i : t.live.numbers[i]!;
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
   * A channel's live description as this view sees it (model/live-window.ts liveWindow: its
   * time controls may close it or deepen its window); undefined for VOD. The writers read this,
   * not `presentation.live`.
   */
  live?: LiveDescription;
  /**
   * Timed-metadata events the output carries (`timed_metadata` on), in presentation order, those
   * inside the view's media; empty when off. Metadata tracks are never in `tracks`.
   */
  events: readonly ViewEvent[];
  /**
   * HLS: the tracks each `variant_set` expression selects, as indices into `tracks`, in option
   * order; undefined when no variant_set is given (one set of every track).
   */
  variantSets?: number[][];
}

/** An event placed on the output timeline. */
export interface ViewEvent {
  event: TimedEvent;
  /** Output time: the event's time minus the presentation origin, exact, `timescale` ticks. */
  time: bigint;
  /**
   * The event's timescale when the origin is a whole number of its ticks, else the least common
   * multiple of the event's and the origin's (ffmpeg's audio starts 21.3 ms before 0: not a
   * whole ms; 1 kHz events then go out at 10 MHz).
   */
  timescale: number;
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
  /** A channel's time controls (the clip is then unused); absent: the DVR window at the edge. */
  live?: LiveControls;
}

const NO_CONTROLS: LiveControls = { range: undefined, timeShiftSeconds: 0, queryWindowSeconds: undefined };

export function buildView(p: Presentation, req: ViewRequest, select: TrackSelector): PlayoutView {
  const kept = select(p.tracks, req.options.str('track_filter'), req.filter, req.options.bool('timed_metadata'));
  const minLength = req.options.rational(MIN_LENGTH_OPTION[req.format]);
  const suppress = req.options.bool('suppress_query_parameters');
  // HLS under suppression writes segment URLs without the clip (HLS_SEGMENT_ADDRESSING), which
  // name whole unclipped segments: the playlist lists those (the clip widened to them).
  // A live window lists whole segments too: a segment URL names the same bytes as the window slides.
  const widen = (suppress && req.format === 'hls') || p.live !== undefined;
  // A live channel lists its DVR window or the request's range, numbered on the epoch grid
  // (model/live-window.ts).
  const window = p.live === undefined ? undefined : liveWindow(p.live, req.live ?? NO_CONTROLS);
  const clip = window === undefined ? req.clip : window.clip;
  const tracks: ViewTrack[] = [];
  for (const i of kept) {
    const track = p.tracks[i]!;
    // Metadata tracks reach the writers as events only (below).
    if (track.properties.type === 'data') continue;
    const placed = placeSegments(track, p.origin, clip, minLength, widen);
    if (placed === undefined) continue;
    if (p.live === undefined) {
      tracks.push({ track, segments: placed.segments, firstNumber: placed.number });
      continue;
    }
    const segments = listedSegments(placed.segments, minLength, track.properties.TimeScale, window!.live.ended);
    if (segments.count === 0) continue;
    // The minimum length in the track's ticks: live numbers are on its grid (live-window.ts liveGrid).
    const minTicks =
      minLength === undefined ? 0n : BigInt(Math.round((minLength.num * track.properties.TimeScale) / minLength.den));
    const live = liveNumbering(segments, track, minTicks);
    tracks.push({ track, segments, firstNumber: live.numbers[0]!, live });
  }
  if (tracks.length === 0) {
    if (window !== undefined) throw emptyLiveView(window, req.live ?? NO_CONTROLS);
    throw originError(
      'empty-clip',
      `the sub-clip selects no media: the presentation is ${p.durationSeconds.toFixed(3)} s long`,
      { subject: 't' },
    );
  }
  const name = req.options.str('presentation_name') ?? p.baseName;
  // A channel's segment URLs keep its time controls: outside the DVR window they name media only
  // with them (HLS_SEGMENT_ADDRESSING is VOD's: there every segment is always served).
  const hlsWhole = widen && p.live === undefined;
  const carriedQuery = carried(req.rawQuery, suppress ? (hlsWhole ? HLS_SEGMENT_ADDRESSING : ADDRESSING) : undefined);
  const playlistQuery = carried(req.rawQuery, suppress ? PLAYLIST_ADDRESSING : undefined);
  const view: PlayoutView = {
    presentation: p,
    format: req.format,
    name,
    options: req.options,
    carriedQuery,
    playlistQuery,
    clip,
    tracks,
    ...(window === undefined ? {} : { live: window.live }),
    events: req.options.bool('timed_metadata') ? viewEvents(p, tracks) : [],
  };
  if (req.format === 'hls') {
    const sets = variantSets(tracks, req.options.list('variant_set'), select);
    if (sets !== undefined) view.variantSets = sets;
  }
  return view;
}

/**
 * Why a channel's view holds no media: its range starts past the live point (not yet: 404, as
 * a channel with no media), or it lies wholly outside the archive (empty-clip).
 */
function emptyLiveView(window: LiveViewWindow, c: LiveControls): OriginError {
  const live = window.live;
  const at = (s: number): string => new Date(Math.round((live.anchorSeconds + s) * 1000)).toISOString();
  const point = live.edgeSeconds - c.timeShiftSeconds;
  const where = { subject: c.range?.parameter ?? (c.timeShiftSeconds > 0 ? 'time_shift' : 'dvr_window_length') };
  if (window.clip.start >= point) {
    const why = `the range starts at ${at(window.clip.start)}, after the live point ${at(point)}`;
    return originError('fragment-not-yet', why, where);
  }
  const holds = `the channel's archive holds ${at(live.archiveStartSeconds)} to ${at(live.edgeSeconds)}`;
  return originError('empty-clip', `the request selects no media: ${holds}`, where);
}

/**
 * The events of every track of the presentation (a filter removes no metadata: the selector
 * keeps metadata tracks, and a media track's inband events go with the presentation, not with
 * the track), duplicates removed, those whose output time lies within the view's media: from the
 * earliest first segment to the latest end over its tracks.
 */
function viewEvents(p: Presentation, tracks: ViewTrack[]): ViewEvent[] {
  const all = orderEvents(p.tracks.flatMap((t) => t.events ?? []));
  if (all.length === 0) return [];
  let start = Infinity;
  let end = -Infinity;
  for (const t of tracks) {
    const ts = t.track.properties.TimeScale;
    start = Math.min(start, Number(t.segments.time(0)) / ts);
    end = Math.max(end, Number(t.segments.end) / ts);
  }
  const out: ViewEvent[] = [];
  for (const event of all) {
    const placed = outputTime(event, p.origin);
    const at = Number(placed.time) / placed.timescale;
    if (at >= start && at < end) out.push({ event, ...placed });
  }
  return out;
}

function outputTime(e: TimedEvent, origin: Instant): { time: bigint; timescale: number } {
  const exact = (origin.ticks * BigInt(e.timescale)) % BigInt(origin.timescale) === 0n;
  // Both timescales divide their least common multiple: exact, if it fits 32 bits (emsg and
  // MPD timescales are 32-bit); else the event's own, the origin rounded down to its ticks.
  const common = exact ? e.timescale : lcm(e.timescale, origin.timescale);
  const timescale = common <= 0xffffffff ? common : e.timescale;
  const scale = BigInt(timescale / e.timescale);
  return { time: e.time * scale - ticksIn(origin, timescale), timescale };
}

function lcm(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return (a / x) * b;
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
      throw originError('bad-variant-set', `${which}, ${JSON.stringify(expression.slice(0, 256))}: ${detail}`, {
        subject: 'variant_set',
      });
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
const ADDRESSING = new Set([
  't',
  'vbegin',
  'vend',
  'mpd_segment_template',
  ...Object.values(MIN_LENGTH_OPTION),
  // A channel's view (model/live-window.ts): a segment outside the DVR window is served only in it.
  'time_shift',
  'dvr_window_length',
]);

/**
 * HLS segment URLs under suppression leave the clip out: the three sibling playlists of a
 * rendition (whole, and clipped by an edge alias) then name each segment by one URL, which a
 * CDN caches once (docs/reference/edge-config.md#rewrite). They can, because the playlist lists whole unclipped
 * segments (buildView `widen`) numbered as the unclipped presentation numbers them, so the URL
 * still names exactly the bytes it answers.
 */
const HLS_SEGMENT_ADDRESSING = new Set([...ADDRESSING].filter((name) => !['t', 'vbegin', 'vend'].includes(name)));

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
  const [t, vbegin, vend] = [value('t'), value('vbegin'), value('vend')];
  if (p.live === undefined)
    return buildView(
      p,
      { format, options, rawQuery, clip: parseClip(t, vbegin, vend), filter: value('filter') },
      select,
    );
  const live: LiveControls = {
    range: parseLiveRange(t, vbegin, vend, p.live.anchorSeconds),
    timeShiftSeconds: options.int('time_shift') ?? 0,
    queryWindowSeconds: pairs.some(([k]) => k === 'dvr_window_length') ? options.int('dvr_window_length') : undefined,
  };
  return buildView(p, { format, options, rawQuery, clip: undefined, filter: value('filter'), live }, select);
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
  return t.segments.count === 0 ? 0n : t.segments.end - t.segments.time(0);
}

/** Peak and average bitrate of a track's segments (bits per second), from the source bytes. */
export function bitrates(t: ViewTrack): { peak: number; average: number } {
  const { peak, bytes } = t.segments.stats;
  const total = Number(viewDuration(t)) / t.track.properties.TimeScale;
  const average = total > 0 ? (bytes * 8) / total : t.track.properties.systemBitrate;
  return { peak: Math.ceil(peak), average: Math.ceil(average) };
}
