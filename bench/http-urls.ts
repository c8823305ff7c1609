// The URLs of a presentation as a client finds them: read from the origin's own Smooth manifest,
// MPD and HLS playlists (no knowledge of the origin's URL grammar besides the manifest URLs).
// Used by bench/http-bench.ts to pick segments and to request "every URL" of the presentation.

import * as http from 'node:http';

export interface Fetched {
  status: number;
  body: Buffer;
}

export function fetchUrl(url: string, agent?: http.Agent): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    http
      .get(url, agent === undefined ? {} : { agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function text(url: string): Promise<string> {
  const r = await fetchUrl(url);
  if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status}`);
  return r.body.toString('utf8');
}

const attr = (tag: string, name: string): string | undefined => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];

/** Start times from a list of `<S t d r>` / `<c t d r>` elements (MS-SSTR §2.2.2.6, ISO/IEC 23009-1 §5.3.9.6). */
function timeline(elements: string[]): bigint[] {
  const times: bigint[] = [];
  let t = 0n;
  for (const e of elements) {
    const start = attr(e, 't');
    if (start !== undefined) t = BigInt(start);
    const d = BigInt(attr(e, 'd') ?? '0');
    const r = Number(attr(e, 'r') ?? '0');
    for (let i = 0; i <= r; i++) {
      times.push(t);
      t += d;
    }
  }
  return times;
}

export interface TrackUrls {
  /** What the URLs are: `<trackName>=<bitrate>` or the playlist. */
  name: string;
  bitrate: number;
  video: boolean;
  /** An I-frame playlist's (EXT-X-I-FRAME-STREAM-INF). */
  iframes?: boolean;
  init?: string;
  segments: string[];
}

/** Smooth: one entry per QualityLevel of every StreamIndex. */
export async function smoothUrls(manifestUrl: string): Promise<TrackUrls[]> {
  const doc = await text(manifestUrl);
  const base = manifestUrl.replace(/\/[^/]*$/, '/');
  const out: TrackUrls[] = [];
  for (const m of doc.matchAll(/<StreamIndex\b([^>]*)>([\s\S]*?)<\/StreamIndex>/g)) {
    const head = m[1]!;
    const template = attr(head, 'Url')!;
    const times = timeline([...m[2]!.matchAll(/<c\b[^>]*>/g)].map((x) => x[0]));
    for (const q of m[2]!.matchAll(/<QualityLevel\b[^>]*>/g)) {
      const bitrate = attr(q[0], 'Bitrate')!;
      const url = (t: bigint): string =>
        base + template.replace(/\{bitrate\}/i, bitrate).replace(/\{start[ _]time\}/i, String(t));
      out.push({
        name: `${attr(head, 'Name')}=${bitrate}`,
        bitrate: Number(bitrate),
        video: attr(head, 'Type') === 'video',
        segments: times.map(url),
      });
    }
  }
  return out;
}

/** DASH: SegmentTemplate + SegmentTimeline with $RepresentationID$ and $Time$ or $Number$. */
export async function dashUrls(mpdUrl: string): Promise<TrackUrls[]> {
  const doc = await text(mpdUrl);
  const base = mpdUrl.replace(/\?.*$/, '').replace(/\/[^/]*$/, '/');
  const out: TrackUrls[] = [];
  for (const m of doc.matchAll(/<AdaptationSet\b([^>]*)>([\s\S]*?)<\/AdaptationSet>/g)) {
    const tmpl = /<SegmentTemplate\b[^>]*>/.exec(m[2]!)![0];
    const media = attr(tmpl, 'media')!.replace(/&amp;/g, '&');
    const init = attr(tmpl, 'initialization')!.replace(/&amp;/g, '&');
    const startNumber = Number(attr(tmpl, 'startNumber') ?? '1');
    const times = timeline([...m[2]!.matchAll(/<S\b[^>]*>/g)].map((x) => x[0]));
    for (const r of m[2]!.matchAll(/<Representation\b[^>]*>/g)) {
      const id = attr(r[0], 'id')!;
      const fill = (s: string, t: bigint, n: number): string =>
        base + s.replace('$RepresentationID$', id).replace('$Time$', String(t)).replace('$Number$', String(n));
      out.push({
        name: id,
        bitrate: Number(attr(r[0], 'bandwidth')),
        video: attr(m[1]!, 'contentType') === 'video',
        init: fill(init, 0n, 0),
        segments: times.map((t, i) => fill(media, t, startNumber + i)),
      });
    }
  }
  return out;
}

/**
 * HDS: the F4M's media (Adobe F4M 1.0 `<media url bitrate>`), each with the URLs of fragments
 * 1..`fragments` (`<url>Seg1-Frag<n>`, the origin's one segment run; the count is the caller's:
 * one fragment per source fragment, as Smooth's `<c>` lists them).
 */
export async function hdsUrls(f4mUrl: string, fragments: number): Promise<TrackUrls[]> {
  const doc = await text(f4mUrl);
  const base = f4mUrl.replace(/\?.*$/, '').replace(/\/[^/]*$/, '/');
  return [...doc.matchAll(/<media\b[^>]*>/g)].map((m) => {
    const url = new URL(attr(m[0], 'url')!, base).href;
    return {
      name: url,
      bitrate: Number(attr(m[0], 'bitrate') ?? 0) * 1000,
      video: attr(m[0], 'width') !== undefined,
      segments: Array.from({ length: fragments }, (_, i) => `${url}Seg1-Frag${i + 1}`),
    };
  });
}

/** HLS: the master's media playlists (variants and EXT-X-MEDIA), each with its segments and EXT-X-MAP. */
export async function hlsUrls(masterUrl: string): Promise<TrackUrls[]> {
  const master = await text(masterUrl);
  const playlists = new Map<string, { bitrate: number; video: boolean; iframes: boolean }>();
  const lines = master.split('\n').map((l) => l.trim());
  lines.forEach((line, i) => {
    const uri = /URI="([^"]+)"/.exec(line)?.[1];
    const bitrate = Number(/(?:^|[:,])BANDWIDTH=(\d+)/.exec(line)?.[1] ?? 0);
    if (line.startsWith('#EXT-X-MEDIA:') && uri !== undefined)
      playlists.set(new URL(uri, masterUrl).href, { bitrate: 0, video: /TYPE=VIDEO/.test(line), iframes: false });
    // RFC 8216 §4.3.4.3: an I-frame playlist's URI is an attribute of the tag itself.
    if (line.startsWith('#EXT-X-I-FRAME-STREAM-INF:') && uri !== undefined)
      playlists.set(new URL(uri, masterUrl).href, { bitrate, video: true, iframes: true });
    if (line.startsWith('#EXT-X-STREAM-INF:')) {
      const next = lines[i + 1]!;
      playlists.set(new URL(next, masterUrl).href, { bitrate, video: /RESOLUTION=/.test(line), iframes: false });
    }
  });
  const out: TrackUrls[] = [];
  for (const [url, info] of playlists) {
    const doc = await text(url);
    const map = /#EXT-X-MAP:URI="([^"]+)"/.exec(doc)?.[1];
    const segments = doc
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map((l) => new URL(l, url).href);
    out.push({
      name: url,
      bitrate: info.bitrate,
      video: info.video,
      ...(info.iframes ? { iframes: true } : {}),
      ...(map !== undefined ? { init: new URL(map, url).href } : {}),
      segments,
    });
  }
  return out;
}
