// The URLs each format's manifest names (Smooth fragments, DASH init and media segments, HLS
// playlists, maps and segments): what the edge tests request directly and through an edge.

import { parseM3u8 } from '../../origin/manifests/format-support';
import { request } from './edge-helpers';

const mpdParser = require('mpd-parser') as {
  parse(
    text: string,
    o: { manifestUri: string },
  ): { playlists: Playlist[]; mediaGroups: { AUDIO: Record<string, Record<string, { playlists: Playlist[] }>> } };
};
interface Playlist {
  segments: Array<{ resolvedUri: string; map: { resolvedUri: string } }>;
}

export const pathOf = (u: string): string => new URL(u).pathname + new URL(u).search;

/** MS-SSTR §2.2.2.3: the StreamIndex Url template filled for every QualityLevel and `<c>`. */
export function smoothUrls(manifest: string, base: string): string[] {
  const out: string[] = [];
  for (const m of manifest.matchAll(/<StreamIndex\b([^>]*)>([\s\S]*?)<\/StreamIndex>/g)) {
    const template = /\bUrl="([^"]*)"/.exec(m[1]!)![1]!.replace(/&amp;/g, '&');
    const bitrates = [...m[2]!.matchAll(/<QualityLevel\b[^>]*\bBitrate="(\d+)"/g)].map((q) => q[1]!);
    const times: bigint[] = [];
    let next = 0n;
    for (const c of m[2]!.matchAll(/<c\b([^>]*)\/>/g)) {
      const t = /\bt="(\d+)"/.exec(c[1]!);
      const d = BigInt(/\bd="(\d+)"/.exec(c[1]!)![1]!);
      const r = Number(/\br="(\d+)"/.exec(c[1]!)?.[1] ?? '1');
      let time = t !== null ? BigInt(t[1]!) : next;
      for (let i = 0; i < r; i++, time += d) times.push(time);
      next = time;
    }
    for (const b of bitrates)
      for (const t of times)
        out.push(new URL(template.replace('{bitrate}', b).replace('{start time}', String(t)), base).href);
  }
  return out;
}

export function dashUrls(mpd: string, base: string): string[] {
  const m = mpdParser.parse(mpd, { manifestUri: base });
  const lists = [...m.playlists];
  for (const group of Object.values(m.mediaGroups.AUDIO))
    for (const g of Object.values(group)) lists.push(...g.playlists);
  return lists.flatMap((p) => [p.segments[0]!.map.resolvedUri, ...p.segments.map((s) => s.resolvedUri)]);
}

/** RFC 8216 §4.3.4: the master's URIs, then each media playlist's map and segments. */
export async function hlsUrls(master: string, base: string, server: string): Promise<string[]> {
  const m = parseM3u8(master).manifest;
  const lists = (m.playlists ?? []).map((p) => p.uri);
  for (const kind of [m.mediaGroups.AUDIO, m.mediaGroups.SUBTITLES])
    for (const group of Object.values(kind))
      for (const r of Object.values(group)) if (r.uri !== undefined) lists.push(r.uri); // a rendition in the variant's own stream has none
  const out: string[] = [];
  for (const uri of lists) {
    const url = new URL(uri, base).href;
    out.push(url);
    const list = parseM3u8((await request(server, pathOf(url))).body.toString()).manifest;
    const init = list.segments[0]?.map?.uri;
    if (init !== undefined) out.push(new URL(init, url).href);
    for (const s of list.segments) out.push(new URL(s.uri, url).href);
  }
  return out;
}
