// Every segment a live channel lists, in every format, read from its manifests as a client reads
// them: the DASH MPD's SegmentTimeline (`$Time$`), the HLS playlists (MPEG-TS and fMP4: media
// sequence number and PROGRAM-DATE-TIME of each segment, RFC 8216 §4.3.2.6, §4.3.3.2), the Smooth
// manifest's `<c>` chunks (MS-SSTR §2.2.2.6) and the HDS bootstrap's fragment runs. The failure
// drills compare these lists, and the bytes behind them, across restarts and across origins.

import * as http from 'node:http';
import { XMLParser } from 'fast-xml-parser';
import { parseAbst } from '../origin/segments/f4f/f4f-reader';

/** One listed segment (or init): its URL relative to the channel's `.isml/`, and what names it. */
export interface ListedSegment {
  format: 'dash' | 'hls-ts' | 'hls-fmp4' | 'smooth' | 'hds';
  url: string;
  /** HLS media sequence number. */
  msn?: number;
  /** HLS EXT-X-PROGRAM-DATE-TIME of the segment, ms since 1970. */
  pdtMs?: number;
  /** DASH `$Time$`, Smooth `t`, HDS fragment timestamp; track timescale. */
  time?: bigint;
}

export interface Got {
  status: number;
  body: Buffer;
  headers: http.IncomingHttpHeaders;
}

export function getBytes(url: string): Promise<Got> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }),
        );
      })
      .on('error', reject);
  });
}

async function text(url: string): Promise<string> {
  const r = await getBytes(url);
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.headers['x-origin-error'] ?? ''}`);
  return r.body.toString();
}

/** The manifests of every format of a channel (`base` = http://host:port/live/ch.isml), as text. */
export const MANIFESTS = ['.mpd', '.m3u8', '.m3u8?hls_fmp4=true', 'Manifest', '.f4m'];

/** Every manifest a client of the channel reads: the top ones and each HLS media playlist. */
export async function manifestTexts(base: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const m of MANIFESTS) {
    const body = await text(`${base}/${m}`);
    out.set(m, body);
    if (m.startsWith('.m3u8')) for (const p of uriLines(body)) out.set(p, await text(`${base}/${p}`));
  }
  return out;
}

/** The URI lines of a playlist (not tags). */
function uriLines(playlist: string): string[] {
  return playlist.split('\n').filter((l) => l.length > 0 && !l.startsWith('#'));
}

/** Every segment and init every format of the channel lists now. */
export async function listSegments(base: string): Promise<ListedSegment[]> {
  return [
    ...dashSegments(await text(`${base}/.mpd`)),
    ...(await hlsSegments(base, '.m3u8', 'hls-ts')),
    ...(await hlsSegments(base, '.m3u8?hls_fmp4=true', 'hls-fmp4')),
    ...smoothSegments(await text(`${base}/Manifest`)),
    ...hdsSegments(await text(`${base}/.f4m`)),
  ];
}

/** DASH: each AdaptationSet's SegmentTemplate over its SegmentTimeline, for each Representation. */
export function dashSegments(mpd: string): ListedSegment[] {
  const out: ListedSegment[] = [];
  for (const set of mpd.split('<AdaptationSet').slice(1)) {
    const init = /initialization="([^"]+)"/.exec(set)?.[1];
    const media = /media="([^"]+)"/.exec(set)?.[1];
    if (init === undefined || media === undefined) continue;
    const ids = [...set.matchAll(/<Representation id="([^"]+)"/g)].map((m) => m[1]!);
    const times = timelineTimes(set);
    for (const id of ids) {
      out.push({ format: 'dash', url: init.replace('$RepresentationID$', id) });
      for (const time of times)
        out.push({
          format: 'dash',
          url: media.replace('$RepresentationID$', id).replace('$Time$', String(time)),
          time,
        });
    }
  }
  return out;
}

/** The `<S>` start times of a SegmentTimeline (ISO/IEC 23009-1 §5.3.9.6: `t` optional, `r` repeats). */
export function timelineTimes(set: string): bigint[] {
  const times: bigint[] = [];
  let t = 0n;
  for (const s of set.matchAll(/<S(?: t="(\d+)")? d="(\d+)"(?: r="(\d+)")? \/>/g)) {
    if (s[1] !== undefined) t = BigInt(s[1]);
    for (let k = 0; k <= Number(s[3] ?? 0); k++) {
      times.push(t);
      t += BigInt(s[2]!);
    }
  }
  return times;
}

/** The `<S>` start times of the MPD's video (or `type`) AdaptationSet. */
export function setTimes(mpd: string, type = 'video'): bigint[] {
  const from = mpd.indexOf(`contentType="${type}"`);
  return timelineTimes(mpd.slice(from, mpd.indexOf('</AdaptationSet>', from)));
}

/** HLS: every media playlist of the master, each segment with its MSN and PDT, and each EXT-X-MAP. */
async function hlsSegments(base: string, master: string, format: 'hls-ts' | 'hls-fmp4'): Promise<ListedSegment[]> {
  const out: ListedSegment[] = [];
  const lists = new Set(uriLines(await text(`${base}/${master}`)));
  for (const m of (await text(`${base}/${master}`)).matchAll(/URI="([^"]+)"/g)) lists.add(m[1]!);
  for (const list of lists)
    for (const s of playlistSegments(await text(`${base}/${list}`), format))
      out.push({ ...s, url: relativeToChannel(list, s.url) });
  return out;
}

/** A URI of the playlist at `list` (relative to the channel) made relative to the channel (RFC 3986 §5). */
function relativeToChannel(list: string, uri: string): string {
  const channel = 'http://channel/c.isml/';
  const u = new URL(uri, new URL(list, channel));
  return u.href.startsWith(channel) ? u.href.slice(channel.length) : u.href;
}

/** The segments of one media playlist, their URIs as written (relative to the playlist). */
export function playlistSegments(playlist: string, format: ListedSegment['format']): ListedSegment[] {
  const out: ListedSegment[] = [];
  let msn = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)?.[1] ?? 0);
  let pdt: number | undefined;
  let duration = 0;
  for (const line of playlist.split('\n')) {
    const map = /^#EXT-X-MAP:URI="([^"]+)"/.exec(line);
    if (map !== null) out.push({ format, url: map[1]! });
    else if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:')) pdt = Date.parse(line.slice(25));
    else if (line.startsWith('#EXTINF:')) duration = parseFloat(line.slice(8));
    else if (line.length > 0 && !line.startsWith('#')) {
      out.push({ format, url: line, msn, pdtMs: pdt });
      msn++;
      if (pdt !== undefined) pdt += duration * 1000;
    }
  }
  return out;
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (n) => ['StreamIndex', 'QualityLevel', 'c', 'media', 'bootstrapInfo'].includes(n),
  parseTagValue: false,
});
type Attrs = Record<string, string>;

/** Smooth: each StreamIndex's Url template for each QualityLevel over its chunks. */
export function smoothSegments(manifest: string): ListedSegment[] {
  type Stream = Attrs & { QualityLevel: Attrs[]; c?: Attrs[] };
  const doc = xml.parse(manifest) as { SmoothStreamingMedia: { StreamIndex?: Stream[] } };
  const out: ListedSegment[] = [];
  for (const s of doc.SmoothStreamingMedia.StreamIndex ?? []) {
    const times: bigint[] = [];
    for (const c of s.c ?? []) {
      const prev = times[times.length - 1];
      const t = c.t !== undefined ? BigInt(c.t) : prev! + BigInt(s.c![times.length - 1]!.d!);
      for (let k = 0; k < Number(c.r ?? 1); k++) times.push(k === 0 ? t : times[times.length - 1]! + BigInt(c.d!));
    }
    for (const q of s.QualityLevel)
      for (const time of times)
        out.push({
          format: 'smooth',
          url: s.Url!.replace('{bitrate}', q.Bitrate!).replace(/\{start[ _]time\}/, String(time)),
          time,
        });
  }
  return out;
}

/** HDS: each media's fragments as its bootstrap's fragment runs number them (`Seg1-Frag<n>`). */
export function hdsSegments(f4m: string): ListedSegment[] {
  const doc = xml.parse(f4m) as { manifest: { media: Attrs[]; bootstrapInfo: Attrs[] } };
  const out: ListedSegment[] = [];
  for (const m of doc.manifest.media) {
    const info = doc.manifest.bootstrapInfo.find((b) => b.id === m.bootstrapInfoId) ?? doc.manifest.bootstrapInfo[0]!;
    const abst = parseAbst(Buffer.from(info['#text']!, 'base64'));
    const afrt = abst.fragmentRunTables[0]!;
    const now = (abst.currentMediaTime * BigInt(afrt.timeScale)) / BigInt(abst.timeScale);
    const runs = afrt.entries;
    for (const [k, e] of runs.entries()) {
      if (e.fragmentDuration === 0) continue;
      const next = runs[k + 1];
      const count =
        next !== undefined
          ? next.firstFragment - e.firstFragment
          : Number((now - e.firstFragmentTimestamp) / BigInt(e.fragmentDuration));
      for (let i = 0; i < count; i++)
        out.push({
          format: 'hds',
          url: `${m.url}Seg1-Frag${e.firstFragment + i}`,
          time: e.firstFragmentTimestamp + BigInt(i * e.fragmentDuration),
        });
    }
  }
  return out;
}

/** The bytes of every listed URL (each fetched once); a status other than 200 throws, naming the URL. */
export async function fetchSegments(base: string, list: readonly ListedSegment[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const s of list) {
    if (out.has(s.url)) continue;
    const r = await getBytes(`${base}/${s.url}`);
    if (r.status !== 200) throw new Error(`GET ${s.url}: ${r.status} ${r.headers['x-origin-error'] ?? ''}`);
    out.set(s.url, r.body);
  }
  return out;
}
