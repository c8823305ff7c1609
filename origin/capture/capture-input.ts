// Where a capture's streams come from. A URL of this origin (a path through `<name>.ism/` or
// `.isml/`) is read as the DASH of the same presentation with the same query: the origin itself
// applies `filter` and `t` (snapping the clip to GOPs, origin/model/timeline.ts), and its MPD
// states exact times in the tracks' own timescales, which a Smooth manifest (10 MHz) and an HLS
// playlist (EXTINF seconds) round. Any other URL is a third-party manifest, read as it is; its
// `filter` and `t` are taken off the query and applied here, the filter on the properties the
// manifest states (docs/guide/capture.md lists them).

import { FilterSyntaxError, filterEngine } from '../../host-glue/filter/filter-engine';
import { originError } from '../errors';
import { parseLiveRange } from '../model/live-time';
import { CaptureStream, ManifestView, refuse } from './capture-model';
import { parseMpd } from './dash-manifest';
import { fetchText, FetchOptions, shownUrl } from './fetcher';
import { isMultivariant, parseMediaPlaylist, parseMultivariant, PlaylistRef } from './hls-playlist';

export interface CaptureInput {
  /** The manifest the capture reads. */
  manifestUrl: string;
  format: 'dash' | 'hls';
  /** Applied by the origin (this origin's URLs). */
  byOrigin: boolean;
  /** Third-party only: applied here. */
  filter?: string;
  t?: string;
  /**
   * This origin's URLs: the live range's end and `time_shift`, UTC seconds (docs/guide/live.md
   * #time-controls). The origin lists the range; the capture only needs to know when to stop
   * reloading a dynamic MPD.
   */
  originLive?: { end?: number; shift: number };
}

const ORIGIN_PATH = /^(.*\.isml?)\/(.*)$/i;

export function captureInput(given: string): CaptureInput {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw originError('bad-request', `${given} is not a URL (http://, https:// or file://)`);
  }
  if (!['http:', 'https:', 'file:'].includes(url.protocol)) throw refuse(`the scheme ${url.protocol}`, shownUrl(given));
  const ours = ORIGIN_PATH.exec(url.pathname);
  if (ours !== null && url.protocol !== 'file:') {
    const rest = ours[2]!;
    if (/\.f4m$/i.test(rest)) throw refuse('HDS (.f4m)', shownUrl(given));
    if (!/(^|\/)(manifest|[^/]*\.mpd|[^/]*\.m3u8)$/i.test(rest))
      throw originError('bad-request', `${shownUrl(given)} is not a client manifest (Manifest, .mpd, .m3u8)`);
    const originLive = liveControls(url.searchParams);
    url.pathname = `${ours[1]!}/.mpd`;
    return { manifestUrl: url.href, format: 'dash', byOrigin: true, ...(originLive ? { originLive } : {}) };
  }
  const filter = url.searchParams.get('filter');
  const t = url.searchParams.get('t');
  url.searchParams.delete('filter');
  url.searchParams.delete('t');
  const format = /\.mpd$/i.test(url.pathname) ? 'dash' : /\.m3u8?$/i.test(url.pathname) ? 'hls' : undefined;
  if (format === undefined) throw refuse('a manifest that is neither .mpd nor .m3u8', shownUrl(given));
  return {
    manifestUrl: url.href,
    format,
    byOrigin: false,
    ...(filter !== null ? { filter } : {}),
    ...(t !== null ? { t } : {}),
  };
}

/**
 * The end of a live range and the shift, read with the origin's own grammar (model/live-time.ts,
 * on the channel timeline: seconds since 1970). Undefined when the query cannot be a live one
 * (a VOD `t` in hh:mm:ss): the origin answers a static MPD then, and the end is its end.
 */
function liveControls(q: URLSearchParams): CaptureInput['originLive'] {
  const opt = (name: string): string | undefined => q.get(name) ?? undefined;
  const shift = Number(q.get('time_shift') ?? 0);
  try {
    const range = parseLiveRange(opt('t'), opt('vbegin'), opt('vend'), 0);
    return { ...(range?.end !== undefined ? { end: range.end } : {}), shift: Number.isFinite(shift) ? shift : 0 };
  } catch {
    return undefined;
  }
}

/** Reads the manifest (and for HLS the media playlists) now: called again for each live reload. */
export async function loadView(input: CaptureInput, fetch: FetchOptions, nowMs: number): Promise<ManifestView> {
  const text = await fetchText(input.manifestUrl, fetch);
  if (input.format === 'dash') {
    const view = parseMpd(text, shownUrl(input.manifestUrl), nowMs);
    return { ...view, streams: applyFilter(view.streams, input.filter) };
  }
  let refs: PlaylistRef[];
  if (isMultivariant(text)) refs = parseMultivariant(text, input.manifestUrl);
  else refs = [{ url: input.manifestUrl, properties: { type: 'video' } as PlaylistRef['properties'] }];
  if (input.filter !== undefined) {
    const keep = select(
      input.filter,
      refs.map((r) => r.properties),
    );
    refs = refs.filter((_, i) => keep[i]);
  }
  const streams: CaptureStream[] = [];
  let dynamic = false;
  let anchorMs: number | undefined;
  let target = 0;
  for (const ref of refs) {
    const playlist = parseMediaPlaylist(await fetchText(ref.url, fetch), ref.url);
    dynamic ||= !playlist.ended;
    anchorMs ??= playlist.anchorMs;
    target = Math.max(target, playlist.targetDuration);
    streams.push({ id: ref.url, properties: ref.properties, initUrl: playlist.initUrl, segments: playlist.segments });
  }
  // RFC 8216 §6.3.4: a client reloads a changed playlist after one target duration; half keeps us close.
  return {
    dynamic,
    ...(anchorMs !== undefined ? { anchorMs } : {}),
    reloadSeconds: Math.max(target / 2, 0.5),
    streams,
  };
}

function applyFilter(streams: CaptureStream[], filter: string | undefined): CaptureStream[] {
  if (filter === undefined) return streams;
  const keep = select(
    filter,
    streams.map((s) => s.properties),
  );
  return streams.filter((_, i) => keep[i]);
}

function select(filter: string, props: Parameters<ReturnType<typeof filterEngine>['select']>[1]): boolean[] {
  try {
    return filterEngine().select(filter, props);
  } catch (e) {
    if (e instanceof FilterSyntaxError) throw originError('bad-filter', `filter=${filter}: ${e.message}`);
    throw e;
  }
}
