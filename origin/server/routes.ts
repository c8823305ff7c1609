// The URL grammar of the origin, declared once as data: each kind of URL with its pattern, what
// it needs (the pattern's named groups), its content type, how caches treat it and the handler
// that answers it (handlers.ts). The server dispatches on it, and docs/reference/urls.md is
// printed from it (test/origin/server/routes.test.ts checks that the two agree). Paths are
// `/<dir>/<pres>.ism/<tail>`; everything between `.ism/` and the part a pattern matches is a
// virtual path and is ignored, so relative URLs written by a manifest requested under a virtual
// path resolve to the same responses.

import { originError } from '../errors';
import { Format } from '../options/registry';
import {
  dashMpd,
  dashSegment,
  hdsFragment,
  hdsManifest,
  hlsFmp4Segment,
  hlsIFramePlaylist,
  hlsPlaylist,
  hlsSegment,
  iframeSegment,
  smoothFragment,
  smoothManifest,
} from './handlers';
import { hlsPart } from './live-low-latency';
import type { RouteHandler } from './route-handler';

export type RouteKind =
  | 'smooth-manifest'
  | 'smooth-fragment'
  | 'dash-mpd'
  | 'dash-init-or-media'
  | 'hls-playlist'
  | 'hls-fmp4'
  | 'hls-part'
  | 'hls-ts'
  | 'hls-aac'
  | 'hls-ac3'
  | 'hls-ec3'
  | 'hls-webvtt'
  | 'hls-iframe-playlist'
  | 'hls-iframe-ts'
  | 'hls-iframe-m4s'
  | 'hds-manifest'
  | 'hds-fragment';

export interface Route {
  kind: RouteKind;
  format: Format;
  /** Matched against the end of the tail (after `.ism/`). Named groups feed the handler. */
  pattern: RegExp;
  /** As docs/reference/urls.md shows it. */
  shape: string;
  contentType: string;
  description: string;
  /**
   * 'manifest': rendered text, kept by the rendered-manifest cache (cache/manifest-cache.ts) and
   * sent with the manifest Cache-Control; 'segment': the segment Cache-Control and byte ranges.
   */
  cacheClass: 'manifest' | 'segment';
  /** Answers a matched request, given its presentation and view (handlers.ts handlePlayout). */
  handler: RouteHandler;
}

export const ROUTES: readonly Route[] = [
  {
    kind: 'smooth-manifest',
    format: 'smooth',
    pattern: /(?:^|\/)manifest$/i,
    shape: '<pres>.ism/Manifest',
    contentType: 'text/xml; charset=utf-8',
    description: 'Smooth Streaming client manifest (MS-SSTR); any case',
    cacheClass: 'manifest',
    handler: smoothManifest,
  },
  {
    kind: 'smooth-fragment',
    format: 'smooth',
    pattern:
      /(?:^|\/)QualityLevels\((?<bitrate>\d{1,10})\)\/Fragments\((?<track>[^=/()]{1,128})=(?<time>-?\d{1,20})\)$/,
    shape: '<pres>.ism/QualityLevels(<bitrate>)/Fragments(<trackName>=<time>)',
    contentType: 'video/mp4',
    description: 'Smooth fragment: the source moof+mdat (with tfxd) starting at `<time>`',
    cacheClass: 'segment',
    handler: smoothFragment,
  },
  {
    kind: 'dash-mpd',
    format: 'dash',
    pattern: /(?:^|\/)(?<name>[^/]{0,256})\.mpd$/,
    shape: '<pres>.ism/.mpd, <pres>.ism/<name>.mpd',
    contentType: 'application/dash+xml',
    description: 'DASH MPD (static, isoff-live, SegmentTemplate + SegmentTimeline)',
    cacheClass: 'manifest',
    handler: dashMpd,
  },
  {
    kind: 'dash-init-or-media',
    format: 'dash',
    pattern: /(?:^|\/)dash\/(?<stem>[^/]{1,512})\.dash$/,
    shape: '<pres>.ism/dash/<name>-<trackName>=<bitrate>.dash, …-<time>.dash',
    contentType: 'video/mp4',
    description: 'DASH init segment, or media segment at `<time>` (`$Number$` with `mpd_segment_template=number`)',
    cacheClass: 'segment',
    handler: dashSegment,
  },
  // Before hls-fmp4, whose stem would take a part's tail too.
  {
    kind: 'hls-part',
    format: 'hls',
    pattern: /(?:^|\/)hls\/(?<stem>[^/]{1,512})-(?<n>\d{1,15})\.part(?<i>\d{1,4})\.m4s$/,
    shape: '<ch>.isml/hls/<name>-<trackName>=<bitrate>-<n>.part<i>.m4s',
    contentType: 'video/mp4',
    description:
      'LL-HLS part `<i>` (from 0) of segment `<n>` of a live channel (`hls_low_latency`, `hls_fmp4`): one ingest fragment as moof+mdat; the preload-hinted part waits for its arrival',
    cacheClass: 'segment',
    handler: hlsPart,
  },
  {
    kind: 'hls-fmp4',
    format: 'hls',
    pattern: /(?:^|\/)hls\/(?<stem>[^/]{1,512})\.m4s$/,
    shape: '<pres>.ism/hls/<name>-<trackName>=<bitrate>.m4s, …-<n>.m4s',
    contentType: 'video/mp4',
    description:
      "HLS fMP4 init segment (EXT-X-MAP), or media segment `<n>` (from 1, the whole presentation's number also in a sub-clip)",
    cacheClass: 'segment',
    handler: hlsFmp4Segment,
  },
  // keyframes/ first: the generic playlist and segment patterns below would take these tails too.
  {
    kind: 'hls-iframe-playlist',
    format: 'hls',
    pattern: /(?:^|\/)keyframes\/(?<stem>[^/]{1,512})\.m3u8$/,
    shape: '<pres>.ism/keyframes/<name>-<trackName>=<bitrate>.m3u8',
    contentType: 'application/vnd.apple.mpegurl',
    description: 'HLS I-frame playlist of a video track (`hls_client_manifest_version` 4 or more)',
    cacheClass: 'manifest',
    handler: hlsIFramePlaylist,
  },
  {
    kind: 'hls-iframe-ts',
    format: 'hls',
    pattern: /(?:^|\/)keyframes\/(?<stem>[^/]{1,512})-(?<n>\d{1,10})\.ts$/,
    shape: '<pres>.ism/keyframes/<name>-<trackName>=<bitrate>-<n>.ts',
    contentType: 'video/mp2t',
    description:
      'HLS I-frame segment: PAT, PMT and the keyframe that starts source fragment `<n>` of the presentation (from 1)',
    cacheClass: 'segment',
    handler: iframeSegment('ts'),
  },
  {
    kind: 'hls-iframe-m4s',
    format: 'hls',
    pattern: /(?:^|\/)keyframes\/(?<stem>[^/]{1,512})-(?<n>\d{1,10})\.m4s$/,
    shape: '<pres>.ism/keyframes/<name>-<trackName>=<bitrate>-<n>.m4s',
    contentType: 'video/mp4',
    description: 'The same keyframe as moof+mdat (`hls_fmp4`; init segment `hls/<name>-<trackName>=<bitrate>.m4s`)',
    cacheClass: 'segment',
    handler: iframeSegment('m4s'),
  },
  {
    kind: 'hls-ts',
    format: 'hls',
    pattern: /(?:^|\/)(?<stem>[^/]{1,512})-(?<n>\d{1,10})\.ts$/,
    shape: '<pres>.ism/<name>-<key>-<n>.ts',
    contentType: 'video/mp2t',
    description:
      "HLS MPEG-TS segment `<n>` (from 1, the whole presentation's number also in a sub-clip) of a rendition with video; `<key>` is a video `<trackName>=<bitrate>` or `<audio key>-<video key>` (multiplexed)",
    cacheClass: 'segment',
    handler: hlsSegment('ts'),
  },
  {
    kind: 'hls-aac',
    format: 'hls',
    pattern: /(?:^|\/)(?<stem>[^/]{1,512})-(?<n>\d{1,10})\.aac$/,
    shape: '<pres>.ism/<name>-<trackName>=<bitrate>-<n>.aac',
    contentType: 'audio/aac',
    description: 'HLS packed audio segment (RFC 8216 §3.4) of an AAC track: ID3 timestamp, ADTS frames',
    cacheClass: 'segment',
    handler: hlsSegment('aac'),
  },
  {
    kind: 'hls-ac3',
    format: 'hls',
    pattern: /(?:^|\/)(?<stem>[^/]{1,512})-(?<n>\d{1,10})\.ac3$/,
    shape: '<pres>.ism/<name>-<trackName>=<bitrate>-<n>.ac3',
    contentType: 'audio/ac3',
    description: 'HLS packed audio segment of an AC-3 track: ID3 timestamp, AC-3 syncframes',
    cacheClass: 'segment',
    handler: hlsSegment('ac3'),
  },
  {
    kind: 'hls-ec3',
    format: 'hls',
    pattern: /(?:^|\/)(?<stem>[^/]{1,512})-(?<n>\d{1,10})\.ec3$/,
    shape: '<pres>.ism/<name>-<trackName>=<bitrate>-<n>.ec3',
    contentType: 'audio/eac3',
    description: 'HLS packed audio segment of an E-AC-3 track: ID3 timestamp, E-AC-3 syncframes',
    cacheClass: 'segment',
    handler: hlsSegment('ec3'),
  },
  {
    kind: 'hls-webvtt',
    format: 'hls',
    pattern: /(?:^|\/)(?<stem>[^/]{1,512})-(?<n>\d{1,10})\.webvtt$/,
    shape: '<pres>.ism/<name>-<trackName>=<bitrate>-<n>.webvtt',
    contentType: 'text/vtt',
    description: 'HLS WebVTT segment `<n>` (RFC 8216 §3.5) of a text track, converted from TTML',
    cacheClass: 'segment',
    handler: hlsSegment('webvtt'),
  },
  {
    kind: 'hls-playlist',
    format: 'hls',
    pattern: /(?:^|\/)(?<stem>[^/]{0,512})\.m3u8$/,
    shape: '<pres>.ism/.m3u8, <pres>.ism/<name>.m3u8, <pres>.ism/<name>-<key>.m3u8',
    contentType: 'application/vnd.apple.mpegurl',
    description:
      'HLS master playlist, or the media playlist of a rendition (`<key>`: one track, or audio + video multiplexed)',
    cacheClass: 'manifest',
    handler: hlsPlaylist,
  },
  {
    kind: 'hds-manifest',
    format: 'hds',
    pattern: /(?:^|\/)(?<stem>[^/]{0,512})\.f4m$/,
    shape: '<pres>.ism/.f4m, <pres>.ism/<name>.f4m, <pres>.ism/<name>-<key>.f4m',
    contentType: 'application/f4m+xml',
    description:
      'HDS manifest (F4M; set-level with `hds_multi_level`), or the stream-level manifest of one media (`<key>`: audio + video multiplexed, or one track)',
    cacheClass: 'manifest',
    handler: hdsManifest,
  },
  {
    kind: 'hds-fragment',
    format: 'hds',
    pattern: /(?:^|\/)(?<stem>[^/]{1,512})Seg(?<segment>\d{1,10})-Frag(?<fragment>\d{1,10})$/,
    shape: '<pres>.ism/<name>-<key>Seg1-Frag<n>',
    contentType: 'video/f4f',
    description: 'HDS fragment `<n>` (from 1) of a media: afra, moof and an mdat of FLV tags',
    cacheClass: 'segment',
    handler: hdsFragment,
  },
];

export interface PresentationRequest {
  route: Route;
  /** Decoded path of the .ism relative to the root, with a leading `/`. */
  ismPath: string;
  /** Decoded path after `.ism/`. */
  tail: string;
  groups: Record<string, string>;
}

/** Longest path we look at: longer ones are refused before any work (414). */
export const MAX_PATH_LENGTH = 4096;

/**
 * Decodes a request path exactly once, segment by segment, and refuses what could escape the
 * root or be read two ways: `..` and `.` segments, encoded `/` or `\`, NUL, backslashes,
 * empty segments. Returns the decoded segments.
 */
export function decodePath(rawPath: string): string[] {
  if (rawPath.length > MAX_PATH_LENGTH)
    throw originError('url-too-long', `URL path longer than ${MAX_PATH_LENGTH} characters`);
  if (!rawPath.startsWith('/')) throw originError('bad-path', 'the path must start with /');
  const segments = rawPath.slice(1).split('/');
  return segments.map((raw, i) => {
    if (/%2f|%5c/i.test(raw)) throw originError('bad-path', 'encoded slash in the path');
    let s: string;
    try {
      s = decodeURIComponent(raw);
    } catch {
      throw originError('bad-path', `malformed percent-encoding in the path: "${raw.slice(0, 64)}"`);
    }
    if (s === '..' || s === '.') throw originError('bad-path', 'dot segments are not allowed in the path');
    if (s.includes('\0') || s.includes('\\')) throw originError('bad-path', 'NUL or backslash in the path');
    if (s === '' && i < segments.length - 1) throw originError('bad-path', 'empty segment in the path');
    return s;
  });
}

/** Splits `/dir/pres.ism/tail` and matches the tail against the table; undefined when no `.ism` segment. */
export function matchPresentationRoute(segments: readonly string[]): PresentationRequest | undefined {
  const at = segments.findIndex((s) => /\.ism$/i.test(s));
  if (at < 0) return undefined;
  const ismPath = '/' + segments.slice(0, at + 1).join('/');
  const tail = segments.slice(at + 1).join('/');
  if (tail === '')
    throw originError(
      'unknown-url',
      'a presentation URL needs a manifest or segment after .ism/ (e.g. .mpd, .m3u8, Manifest)',
    );
  return matchTail(ismPath, tail);
}

/** The route of the tail after `.ism/` (or a live channel's `.isml/`); 404 unknown-url when none. */
export function matchTail(ismPath: string, tail: string): PresentationRequest {
  for (const route of ROUTES) {
    const m = route.pattern.exec(tail);
    if (m !== null) return { route, ismPath, tail, groups: { ...(m.groups ?? {}) } };
  }
  throw originError('unknown-url', `no output has a URL like "${tail.slice(0, 128)}"`);
}

/** The URL table of docs/reference/urls.md (test/origin/server/routes.test.ts keeps the two equal). */
export function routesMarkdown(): string {
  const rows = ROUTES.map(
    (r) => `| ${r.format} | \`${r.shape.replace(/, /g, '`, `')}\` | ${r.description} | \`${r.contentType}\` |`,
  );
  return ['| format | URL (after the server root) | what | Content-Type |', '|---|---|---|---|', ...rows].join('\n');
}
