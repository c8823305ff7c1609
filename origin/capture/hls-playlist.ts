// Reads HLS playlists for the capture (RFC 8216). A multivariant playlist (§4.3.4) gives the
// streams: each EXT-X-STREAM-INF's media playlist and each EXT-X-MEDIA TYPE=AUDIO rendition with a
// URI, the same URI once. A media playlist (§4.3.3) gives the segments: fMP4 with EXT-X-MAP, or
// without one MPEG-TS (§3.2: read by capture/ts-segments.ts, which refuses packed audio). Refused,
// naming the feature: EXT-X-KEY other than NONE (§4.3.2.4), EXT-X-BYTERANGE and a byte-ranged
// EXT-X-MAP (§4.3.2.2, §4.3.2.5); subtitle renditions are skipped (not media the capture writes).
// Pure: text in.

import { originError } from '../errors';
import { checkCodecs, manifestProperties, refuse, SegmentRef } from './capture-model';
import type { TrackProperties } from '../model/media';

export interface PlaylistRef {
  url: string;
  properties: TrackProperties;
}

export interface MediaPlaylist {
  /** '' for MPEG-TS segments (no EXT-X-MAP). */
  initUrl: string;
  segments: SegmentRef[];
  ended: boolean;
  targetDuration: number;
  /** Wall-clock ms of timeline 0 from EXT-X-PROGRAM-DATE-TIME (§4.3.2.6), when given. */
  anchorMs?: number;
}

/** Whether the text is a multivariant playlist rather than a media playlist. */
export function isMultivariant(text: string): boolean {
  return /^#EXT-X-STREAM-INF:/m.test(text);
}

export function parseMultivariant(text: string, url: string): PlaylistRef[] {
  checkHeader(text, url);
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const out = new Map<string, PlaylistRef>();
  lines.forEach((line, i) => {
    if (line.startsWith('#EXT-X-MEDIA:')) {
      const a = attributes(line.slice(13));
      if (a.TYPE !== 'AUDIO' || a.URI === undefined) return;
      const href = new URL(a.URI, url).href;
      const props = manifestProperties({
        type: 'audio',
        name: a.NAME ?? a.URI,
        bandwidth: 0,
        codecs: 'mp4a.40.2',
        ...(a.LANGUAGE !== undefined ? { language: a.LANGUAGE } : {}),
      });
      if (!out.has(href)) out.set(href, { url: href, properties: props });
    } else if (line.startsWith('#EXT-X-STREAM-INF:')) {
      const a = attributes(line.slice(18));
      const uri = lines.slice(i + 1).find((l) => l !== '' && !l.startsWith('#'));
      if (uri === undefined) throw originError('corrupt-media', `${url}: EXT-X-STREAM-INF without a URI`);
      const codecs = a.CODECS ?? '';
      checkCodecs(codecs, `${url}: ${uri}`);
      const [w, h] = (a.RESOLUTION ?? '').split('x').map(Number);
      const video = /avc[13]\./.test(codecs) || a.RESOLUTION !== undefined;
      const href = new URL(uri, url).href;
      const props = manifestProperties({
        type: video ? 'video' : 'audio',
        name: uri,
        bandwidth: Number(a.BANDWIDTH ?? 0),
        codecs,
        ...(w ? { width: w } : {}),
        ...(h ? { height: h } : {}),
      });
      if (!out.has(href)) out.set(href, { url: href, properties: props });
    }
  });
  return [...out.values()];
}

export function parseMediaPlaylist(text: string, url: string): MediaPlaylist {
  checkHeader(text, url);
  let initUrl: string | undefined;
  let targetDuration = 0;
  let sequence = 0;
  let extinf: number | undefined;
  let pdt: number | undefined;
  let position = 0;
  let anchorMs: number | undefined;
  const segments: SegmentRef[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#EXT-X-KEY:')) {
      const method = attributes(line.slice(11)).METHOD;
      if (method !== 'NONE') throw refuse(`encryption (EXT-X-KEY METHOD=${method ?? '?'})`, url);
    } else if (line.startsWith('#EXT-X-BYTERANGE')) throw refuse('byte ranges (EXT-X-BYTERANGE)', url);
    else if (line.startsWith('#EXT-X-MAP:')) {
      const a = attributes(line.slice(11));
      if (a.BYTERANGE !== undefined) throw refuse('byte ranges (EXT-X-MAP BYTERANGE)', url);
      if (a.URI === undefined) throw originError('corrupt-media', `${url}: EXT-X-MAP without URI`);
      initUrl = new URL(a.URI, url).href;
    } else if (line.startsWith('#EXT-X-TARGETDURATION:')) targetDuration = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-MEDIA-SEQUENCE:')) sequence = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:')) pdt = dateTime(line.slice(25), url);
    else if (line.startsWith('#EXTINF:')) extinf = Number(line.slice(8).split(',')[0]);
    else if (!line.startsWith('#')) {
      if (extinf === undefined || !Number.isFinite(extinf))
        throw originError('corrupt-media', `${url}: segment ${line} without EXTINF`);
      // With a program date time, times are wall clock from the first one; else they count from
      // the first segment listed (a sliding live playlist is re-anchored by its media sequence).
      if (pdt !== undefined && anchorMs === undefined) anchorMs = pdt - position * 1000;
      const start = pdt !== undefined && anchorMs !== undefined ? (pdt - anchorMs) / 1000 : position;
      segments.push({ url: new URL(line, url).href, start, duration: extinf, key: `s${sequence}` });
      position = start + extinf;
      pdt = pdt === undefined ? undefined : pdt + extinf * 1000;
      sequence++;
      extinf = undefined;
    }
  }
  return {
    initUrl: initUrl ?? '',
    segments,
    ended: /^#EXT-X-ENDLIST/m.test(text),
    targetDuration,
    ...(anchorMs !== undefined ? { anchorMs } : {}),
  };
}

function checkHeader(text: string, url: string): void {
  if (!text.startsWith('#EXTM3U')) throw originError('corrupt-media', `${url}: not an HLS playlist (no #EXTM3U)`);
  if (/^#EXT-X-SESSION-KEY:/m.test(text)) {
    const method = /METHOD=([A-Z0-9-]+)/.exec(text)?.[1];
    if (method !== 'NONE') throw refuse(`encryption (EXT-X-SESSION-KEY METHOD=${method ?? '?'})`, url);
  }
}

/** §4.2 attribute lists: NAME=value, values quoted or not; commas inside quotes kept. */
export function attributes(list: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of list.matchAll(/([A-Z0-9-]+)=("[^"]*"|[^,]*)/g)) out[m[1]!] = m[2]!.replace(/^"|"$/g, '');
  return out;
}

/** §4.3.2.6: ISO 8601 with a zone; ffmpeg writes `+0000`, which Date.parse wants as `+00:00`. */
function dateTime(text: string, url: string): number {
  const ms = Date.parse(text.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
  if (!Number.isFinite(ms)) throw originError('corrupt-media', `${url}: EXT-X-PROGRAM-DATE-TIME ${text} is not a date`);
  return ms;
}
