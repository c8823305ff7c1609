// The URLs the outputs write, relative to the directory of the manifest that names them
// (`<pres>.ism/` or `<pres>.ism/<virtual path>/`). The reference's naming (docs/reference/urls.md),
// so existing players, CDN rules and scripts keep working. The route table
// (server/routes.ts) parses exactly these shapes back.

import type { SegmentKind } from '../model/rendition';
import { PlayoutView } from '../model/view';

/** Appends the carried query (already encoded, with its `?`) to a URL. */
function withQuery(view: PlayoutView, url: string): string {
  return url + view.carriedQuery;
}

/** The query of a URL naming a playlist that writes URLs itself (view.playlistQuery). */
function withPlaylistQuery(view: PlayoutView, url: string): string {
  return url + (view.playlistQuery ?? view.carriedQuery);
}

export const smoothUrls = {
  /** MS-SSTR §2.2.2.3 StreamIndex Url: `{bitrate}` and `{start time}` are filled in by the client. */
  template: (view: PlayoutView, trackName: string): string =>
    withQuery(view, `QualityLevels({bitrate})/Fragments(${trackName}={start time})`),
};

export const dashUrls = {
  init: (view: PlayoutView): string => withQuery(view, `dash/${view.name}-$RepresentationID$.dash`),
  media: (view: PlayoutView): string => {
    const byNumber = view.options.str('mpd_segment_template') === 'number';
    return withQuery(view, `dash/${view.name}-$RepresentationID$-${byNumber ? '$Number$' : '$Time$'}.dash`);
  },
};

/**
 * `key` is a rendition key (origin/model/rendition.ts): `<trackName>=<bitrate>`, or an audio and a
 * video key joined by `-` for a multiplexed rendition (`audio_eng=64008-video_eng=401000`).
 * Segments are numbered from 1 (reference 1.11+, docs/specs.md reference §3.2). MPEG-TS, packed audio
 * and WebVTT segments sit beside the playlists; fMP4 segments and init segments under `hls/`;
 * I-frame playlists under `keyframes/`, and the URLs they write are relative to that directory.
 */
export const hlsUrls = {
  master: (view: PlayoutView): string => withQuery(view, `${view.name}.m3u8`),
  media: (view: PlayoutView, key: string): string => withPlaylistQuery(view, `${view.name}-${key}.m3u8`),
  init: (view: PlayoutView, key: string): string => withQuery(view, `hls/${view.name}-${key}.m4s`),
  segment: (view: PlayoutView, key: string, n: number, kind: SegmentKind = 'm4s'): string => {
    const [before, after] = hlsSegmentUrlParts(view, key, kind);
    return before + n + after;
  },
  /** The I-frame playlist of a video track, `keyframes/<name>-<videokey>.m3u8`. */
  iframes: (view: PlayoutView, key: string): string => withPlaylistQuery(view, `keyframes/${view.name}-${key}.m3u8`),
  /** Entry n (the n-th source fragment of the view) of an I-frame playlist, relative to keyframes/. */
  iframeSegment: (view: PlayoutView, key: string, n: number, kind: 'ts' | 'm4s'): string =>
    withQuery(view, `${view.name}-${key}-${n}.${kind}`),
  /** The init segment as an I-frame playlist (in keyframes/) names it. */
  iframeInit: (view: PlayoutView, key: string): string => withQuery(view, `../hls/${view.name}-${key}.m4s`),
};

/**
 * An HLS segment URL around its number: `hlsUrls.segment(view, key, n, kind)` is
 * `before + n + after`. A media playlist writes one per segment; the parts are made once.
 */
export function hlsSegmentUrlParts(view: PlayoutView, key: string, kind: SegmentKind): [before: string, after: string] {
  return kind === 'm4s'
    ? [`hls/${view.name}-${key}-`, withQuery(view, '.m4s')]
    : [`${view.name}-${key}-`, withQuery(view, `.${kind}`)];
}
