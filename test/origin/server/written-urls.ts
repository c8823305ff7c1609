// The URLs each manifest writes, expanded as a client would (MS-SSTR, ISO/IEC 23009-1, RFC 8216),
// for http-urls.test.ts.

import { XMLParser } from 'fast-xml-parser';
import { parseM3u8 } from '../manifests/format-support';
import { ok, origin } from './http-origin';

export interface Written {
  /** Absolute, resolved against the document that wrote it. */
  url: string;
  kind: 'playlist' | 'init' | 'media';
  /** Representation id / `<StreamIndex Name>=<Bitrate>` / media playlist URI. */
  key: string;
  time?: bigint;
  duration?: bigint;
  number?: number;
}

export const unescapeXml = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
export const attr = (attrs: string, name: string): string | undefined => {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m === null ? undefined : unescapeXml(m[1]!);
};

/** MS-SSTR §2.2.2.3/§2.2.2.6: the StreamIndex Url template filled for every QualityLevel and `<c>`. */
export function smoothWritten(manifest: string, manifestUrl: string): Written[] {
  const out: Written[] = [];
  for (const m of manifest.matchAll(/<StreamIndex\b([^>]*)>([\s\S]*?)<\/StreamIndex>/g)) {
    const name = attr(m[1]!, 'Name')!;
    const template = attr(m[1]!, 'Url')!;
    const bitrates = [...m[2]!.matchAll(/<QualityLevel\b([^>]*)>/g)].map((q) => attr(q[1]!, 'Bitrate')!);
    let next = 0n;
    const chunks: Array<{ time: bigint; duration: bigint }> = [];
    for (const c of m[2]!.matchAll(/<c\b([^>]*)\/>/g)) {
      const t = attr(c[1]!, 't');
      const d = BigInt(attr(c[1]!, 'd')!);
      // §2.2.2.6.1: r is the number of consecutive fragments of this duration.
      const r = Number(attr(c[1]!, 'r') ?? '1');
      let time = t !== undefined ? BigInt(t) : next;
      for (let i = 0; i < r; i++, time += d) chunks.push({ time, duration: d });
      next = time;
    }
    for (const b of bitrates) {
      for (const c of chunks) {
        const rel = template
          .replace('{bitrate}', b)
          .replace('{Bitrate}', b)
          .replace('{start time}', String(c.time))
          .replace('{start_time}', String(c.time));
        out.push({
          url: new URL(rel, manifestUrl).href,
          kind: 'media',
          key: `${name}=${b}`,
          time: c.time,
          duration: c.duration,
        });
      }
    }
  }
  return out;
}

/** An element as fast-xml-parser returns it: attributes as strings, children as objects. */
export type XmlNode = { [name: string]: unknown };
export const str = (node: XmlNode, name: string): string | undefined =>
  node[name] === undefined ? undefined : String(node[name]);
export const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  isArray: (n) => ['Period', 'AdaptationSet', 'Representation', 'S'].includes(n),
});

/** ISO/IEC 23009-1 §5.3.9.4/§5.3.9.6: each SegmentTemplate expanded for every S of its timeline. */
export function dashWritten(mpd: string, mpdUrl: string): Written[] {
  expect(mpd).not.toContain('<BaseURL'); // the expansion below resolves against the MPD URL only
  type Template = XmlNode & { SegmentTimeline: { S: XmlNode[] } };
  const doc = xml.parse(mpd) as {
    MPD: {
      Period: Array<{
        AdaptationSet: Array<{
          SegmentTemplate?: Template;
          Representation: Array<XmlNode & { SegmentTemplate?: Template }>;
        }>;
      }>;
    };
  };
  const out: Written[] = [];
  for (const period of doc.MPD.Period) {
    for (const set of period.AdaptationSet) {
      for (const rep of set.Representation) {
        const tpl = rep.SegmentTemplate ?? set.SegmentTemplate!;
        const id = str(rep, 'id')!;
        const fill = (s: string, time?: bigint, n?: number): string =>
          s
            .replace(/\$RepresentationID\$/g, id)
            .replace(/\$Bandwidth\$/g, str(rep, 'bandwidth')!)
            .replace(/\$Time\$/g, String(time))
            .replace(/\$Number\$/g, String(n));
        out.push({ url: new URL(fill(str(tpl, 'initialization')!), mpdUrl).href, kind: 'init', key: id });
        let time = 0n;
        let n = Number(str(tpl, 'startNumber') ?? '1');
        for (const s of tpl.SegmentTimeline.S) {
          if (str(s, 't') !== undefined) time = BigInt(str(s, 't')!);
          const d = BigInt(str(s, 'd')!);
          for (let i = 0; i <= Number(str(s, 'r') ?? '0'); i++, time += d, n++) {
            out.push({
              url: new URL(fill(str(tpl, 'media')!, time, n), mpdUrl).href,
              kind: 'media',
              key: id,
              time,
              duration: d,
              number: n,
            });
          }
        }
      }
    }
  }
  return out;
}

export interface ResolvedPlaylist {
  segments: Array<{ resolvedUri: string; map: { resolvedUri: string } }>;
}
export interface ResolvedMpd {
  playlists: ResolvedPlaylist[];
  mediaGroups: { AUDIO: Record<string, Record<string, { playlists: ResolvedPlaylist[] }>> };
}
export const mpdParser = require('mpd-parser') as { parse(text: string, opts: { manifestUri: string }): ResolvedMpd };

/** What mpd-parser (video.js's reader) resolves: its URLs must be ours (it skips stpp text). */
export function mpdParserUrls(mpd: string, mpdUrl: string): string[] {
  const m = mpdParser.parse(mpd, { manifestUri: mpdUrl });
  const lists = [...m.playlists];
  for (const group of Object.values(m.mediaGroups.AUDIO))
    for (const g of Object.values(group)) lists.push(...g.playlists);
  return lists.flatMap((p) => [p.segments[0]!.map.resolvedUri, ...p.segments.map((s) => s.resolvedUri)]);
}

/** RFC 8216 §4.3.4: every URI of the master, then of each media playlist (fetched). */
export async function hlsWritten(
  masterPath: string,
): Promise<{ written: Written[]; playlists: Map<string, ReturnType<typeof parseM3u8>['manifest']> }> {
  const masterUrl = origin.url + masterPath;
  const master = parseM3u8((await ok(masterPath)).text).manifest;
  const uris = [...(master.playlists ?? []).map((p) => p.uri)];
  for (const kind of [master.mediaGroups.AUDIO, master.mediaGroups.SUBTITLES]) {
    // A rendition without URI is carried in the variant's own (multiplexed) playlist (§4.3.4.1).
    for (const group of Object.values(kind))
      for (const r of Object.values(group)) if (r.uri !== undefined) uris.push(r.uri);
  }
  const written: Written[] = [];
  const playlists = new Map<string, ReturnType<typeof parseM3u8>['manifest']>();
  // An audio-only variant names the same playlist as its group's rendition, and a multiplexed
  // master's DEFAULT rendition the playlist of an audio-only variant, possibly spelled otherwise
  // (a raw `"` in a variant's URI line is `%22` in an EXT-X-MEDIA quoted-string, RFC 8216 §4.2):
  // fetch each resolved URL once.
  const seen = new Set<string>();
  for (const uri of uris) {
    const url = new URL(uri, masterUrl).href;
    if (seen.has(url)) continue;
    seen.add(url);
    written.push({ url, kind: 'playlist', key: uri });
    const list = parseM3u8((await ok(url)).text).manifest;
    playlists.set(uri, list);
    const init = list.segments[0]?.map?.uri;
    if (init !== undefined) written.push({ url: new URL(init, url).href, kind: 'init', key: uri });
    for (const s of list.segments)
      written.push({
        url: new URL(s.uri, url).href,
        kind: 'media',
        key: uri,
        duration: BigInt(Math.round(s.duration * 1e7)),
      });
  }
  return { written, playlists };
}

export async function writtenBy(format: 'smooth' | 'dash' | 'hls', manifestPath: string): Promise<Written[]> {
  if (format === 'hls') return (await hlsWritten(manifestPath)).written;
  // Sent as written (a raw `"` stays raw); URLs resolve against it as a client would.
  const url = origin.url + manifestPath;
  const text = (await ok(manifestPath)).text;
  return format === 'smooth' ? smoothWritten(text, url) : dashWritten(text, url);
}

/** The part of a URL after the manifest's directory, with the query. */
export const tailOf = (u: string, dir: string): string => {
  const x = new URL(u);
  expect(x.pathname.startsWith(dir)).toBe(true);
  return x.pathname.slice(dir.length) + x.search;
};
