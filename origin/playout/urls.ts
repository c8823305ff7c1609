// The URLs the outputs write, relative to the directory of the manifest that names them
// (`<pres>.ism/` or `<pres>.ism/<virtual path>/`). The reference's naming (origin-reference
// §3.6), so existing players, CDN rules and scripts keep working. The route table
// (server/routes.ts) parses exactly these shapes back.

import { PlayoutView } from './view';

/** Appends the carried query (already encoded, with its `?`) to a URL. */
function withQuery(view: PlayoutView, url: string): string {
  return url + view.carriedQuery;
}

export const smoothUrls = {
  /** MS-SSTR §2.2.2.3 StreamIndex Url: `{bitrate}` and `{start time}` are filled in by the client. */
  template: (view: PlayoutView, trackName: string): string => withQuery(view, `QualityLevels({bitrate})/Fragments(${trackName}={start time})`),
};

export const dashUrls = {
  init: (view: PlayoutView): string => withQuery(view, `dash/${view.name}-$RepresentationID$.dash`),
  media: (view: PlayoutView): string => {
    const byNumber = view.options.str('mpd_segment_template') === 'number';
    return withQuery(view, `dash/${view.name}-$RepresentationID$-${byNumber ? '$Number$' : '$Time$'}.dash`);
  },
};

/** `key` is `<trackName>=<bitrate>`, or several joined by `-` for a multiplexed rendition. */
export const hlsUrls = {
  master: (view: PlayoutView): string => withQuery(view, `${view.name}.m3u8`),
  media: (view: PlayoutView, key: string): string => withQuery(view, `${view.name}-${key}.m3u8`),
  init: (view: PlayoutView, key: string): string => withQuery(view, `hls/${view.name}-${key}.m4s`),
  /** HLS segments are numbered from 1 (reference 1.11+, origin-reference §3.2). */
  segment: (view: PlayoutView, key: string, n: number): string => withQuery(view, `hls/${view.name}-${key}-${n}.m4s`),
};
