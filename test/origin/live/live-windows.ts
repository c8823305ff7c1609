// What a live client manifest lists, read from the manifest the way each client reads it: the
// video track's first start and last end in UTC seconds, and whether it is still live. One
// reader per format, so a test can ask the same question of DASH, HLS (TS and fMP4), Smooth
// and HDS and compare the answers with one expectation.

import { XMLParser } from 'fast-xml-parser';
import { parseAbst } from '../segments/f4f/f4f-reader';

export type LiveFormat = 'dash' | 'hls-ts' | 'hls-fmp4' | 'smooth' | 'hds';
export const LIVE_FORMATS: readonly LiveFormat[] = ['dash', 'hls-ts', 'hls-fmp4', 'smooth', 'hds'];

/** The manifest path of a format under `<ch>.isml/`, with the query. */
export function manifestPath(format: LiveFormat, query: string): string {
  const q = (extra: string): string => [query, extra].filter((x) => x !== '').join('&');
  const withQ = (p: string, extra = ''): string => (q(extra) === '' ? p : `${p}?${q(extra)}`);
  switch (format) {
    case 'dash':
      return withQ('.mpd');
    case 'hls-ts':
      return withQ('ch-audio=64000-video=400000.m3u8');
    case 'hls-fmp4':
      return withQ('ch-video=400000.m3u8', 'hls_fmp4=true');
    case 'smooth':
      return withQ('Manifest');
    case 'hds':
      return withQ('.f4m');
  }
}

export interface ListedWindow {
  /** UTC seconds of the first listed video segment's start (HDS: modulo 2^22, as it writes it). */
  start: number;
  /** UTC seconds of the last listed video segment's end (HDS: modulo 2^22). */
  end: number;
  live: boolean;
  /** Segment URLs as listed (relative), video only where the format separates tracks. */
  urls: string[];
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (n, _path, _leaf, attribute) =>
    !attribute && ['StreamIndex', 'QualityLevel', 'c', 'media', 'bootstrapInfo', 'S', 'AdaptationSet'].includes(n),
  parseTagValue: false,
});
type Attrs = Record<string, string>;

export function listedWindow(format: LiveFormat, body: string): ListedWindow {
  if (format === 'dash') return dashWindow(body);
  if (format === 'smooth') return smoothWindow(body);
  if (format === 'hds') return hdsWindow(body);
  return hlsWindow(body);
}

function dashWindow(body: string): ListedWindow {
  type Set = Attrs & { SegmentTemplate: Attrs & { SegmentTimeline: { S: Attrs[] } } };
  const mpd = (xml.parse(body) as { MPD: Attrs & { Period: { AdaptationSet: Set[] } } }).MPD;
  const set = mpd.Period.AdaptationSet.find((s) => s.contentType === 'video')!;
  const template = set.SegmentTemplate;
  const ts = Number(template.timescale);
  const starts: bigint[] = [];
  let t = 0n;
  let end = 0n;
  for (const s of template.SegmentTimeline.S) {
    if (s.t !== undefined) t = BigInt(s.t);
    for (let k = 0; k <= Number(s.r ?? 0); k++) {
      starts.push(t);
      t += BigInt(s.d!);
      end = t;
    }
  }
  return {
    start: Number(starts[0]!) / ts,
    end: Number(end) / ts,
    live: mpd.type === 'dynamic',
    urls: starts.map((s) => template.media!.replace('$RepresentationID$', 'video=400000').replace('$Time$', String(s))),
  };
}

function hlsWindow(body: string): ListedWindow {
  const lines = body.split('\n');
  const pdt = Date.parse(/#EXT-X-PROGRAM-DATE-TIME:(.*)/.exec(body)![1]!) / 1000;
  const total = lines
    .filter((l) => l.startsWith('#EXTINF:'))
    .reduce((n, l) => n + Number(/#EXTINF:([\d.]+)/.exec(l)![1]), 0);
  return {
    start: pdt,
    end: Math.round((pdt + total) * 1000) / 1000,
    live: !body.includes('#EXT-X-ENDLIST'),
    urls: lines.filter((l) => l !== '' && !l.startsWith('#')),
  };
}

function smoothWindow(body: string): ListedWindow {
  type Stream = Attrs & { QualityLevel: Attrs[]; c?: Attrs[] };
  const root = (xml.parse(body) as { SmoothStreamingMedia: Attrs & { StreamIndex: Stream[] } }).SmoothStreamingMedia;
  const ts = Number(root.TimeScale ?? 10_000_000);
  const s = root.StreamIndex.find((x) => x.Type === 'video')!;
  const starts: bigint[] = [];
  let t = 0n;
  for (const c of s.c ?? []) {
    if (c.t !== undefined) t = BigInt(c.t);
    starts.push(t);
    t += BigInt(c.d!);
  }
  const template = s.Url!.replace('{bitrate}', s.QualityLevel[0]!.Bitrate!);
  return {
    start: Number(starts[0]!) / ts,
    end: Number(t) / ts,
    live: root.IsLive === 'TRUE',
    urls: starts.map((x) => template.replace(/\{start[ _]time\}/, String(x))),
  };
}

function hdsWindow(body: string): ListedWindow {
  const m = (xml.parse(body) as { manifest: Attrs & { media: Attrs[]; bootstrapInfo: Attrs[] } }).manifest;
  const abst = parseAbst(Buffer.from(m.bootstrapInfo[0]!['#text']!, 'base64'));
  const runs = abst.fragmentRunTables[0]!.entries.filter((e) => e.fragmentDuration > 0);
  const first = runs[0]!;
  const ts = abst.timeScale;
  const end = Number(abst.currentMediaTime) / ts;
  const count = Math.round((end - Number(first.firstFragmentTimestamp) / ts) / (first.fragmentDuration / ts));
  return {
    start: Number(first.firstFragmentTimestamp) / ts,
    end,
    live: m.streamType === 'live',
    // The media URL carries the query (model/hds-media.ts): the fragment's goes after its name.
    urls: Array.from({ length: count }, (_, k) => {
      const [name, query] = m.media[0]!.url!.split('?');
      return `${name}Seg1-Frag${first.firstFragment + k}${query === undefined ? '' : `?${query}`}`;
    }),
  };
}
