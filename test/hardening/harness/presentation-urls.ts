// Every kind of URL a presentation has, found the way clients find them: the manifests of every
// format (Smooth, DASH, HLS with MPEG-TS, fMP4, packed audio and WebVTT, I-frame playlists, HDS)
// and, for each list of segments they write, its first and last segment (and init segment).
// Returned as paths after `/<name>.ism/` with their query, so they apply to any copy of the
// presentation under another name.

import { dashWritten, smoothWritten } from '../../origin/server/written-urls';
import { request } from './http';

/** The manifests asked for: each format's entry point, in its variants of the URL grammar. */
export const ENTRY_MANIFESTS = [
  'Manifest',
  '.mpd',
  '.m3u8',
  '.m3u8?hls_fmp4=true',
  '.m3u8?hls_no_multiplex=true',
  '.f4m',
  '.f4m?hds_multi_level=true',
];

async function text(base: string, path: string): Promise<string> {
  const r = await request(base, path);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.body.toString().slice(0, 200)}`);
  return r.body.toString('utf8');
}

const firstAndLast = <T>(list: readonly T[]): T[] =>
  list.length <= 1 ? [...list] : [list[0]!, list[list.length - 1]!];

/** The tails (after `/<name>.ism/`) of the presentation at `/<name>.ism`. */
export async function presentationTails(base: string, name: string): Promise<string[]> {
  const dir = `/${name}.ism/`;
  const tails = new Set<string>(ENTRY_MANIFESTS);
  const tailOf = (u: string): string => {
    const x = new URL(u, base + dir);
    if (!x.pathname.startsWith(dir)) throw new Error(`${u} is outside ${dir}`);
    return x.pathname.slice(dir.length) + x.search;
  };
  const smooth = smoothWritten(await text(base, dir + 'Manifest'), base + dir + 'Manifest');
  for (const key of new Set(smooth.map((w) => w.key)))
    firstAndLast(smooth.filter((w) => w.key === key)).forEach((w) => tails.add(tailOf(w.url)));
  const dash = dashWritten(await text(base, dir + '.mpd'), base + dir + '.mpd');
  for (const key of new Set(dash.map((w) => w.key))) {
    dash.filter((w) => w.key === key && w.kind === 'init').forEach((w) => tails.add(tailOf(w.url)));
    firstAndLast(dash.filter((w) => w.key === key && w.kind === 'media')).forEach((w) => tails.add(tailOf(w.url)));
  }
  for (const master of ENTRY_MANIFESTS.filter((m) => m.startsWith('.m3u8')))
    await hlsTails(base, dir + master, tails, tailOf);
  for (const f4m of ENTRY_MANIFESTS.filter((m) => m.startsWith('.f4m'))) await hdsTails(base, dir, f4m, tails);
  return [...tails];
}

/** RFC 8216 §4.3.4: the URIs of a master playlist, then of each media playlist it names. */
async function hlsTails(
  base: string,
  masterPath: string,
  tails: Set<string>,
  tailOf: (u: string) => string,
): Promise<void> {
  const masterUrl = base + masterPath;
  const uris = (playlist: string): string[] => [
    ...playlist.split('\n').filter((l) => l !== '' && !l.startsWith('#')),
    ...[...playlist.matchAll(/URI="([^"]+)"/g)].map((m) => m[1]!),
  ];
  for (const uri of uris(await text(base, masterPath))) {
    const url = new URL(uri, masterUrl).href;
    tails.add(tailOf(url));
    const list = await text(base, new URL(url).pathname + new URL(url).search);
    const media = list.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    firstAndLast(media).forEach((m) => tails.add(tailOf(new URL(m, url).href)));
    for (const m of list.matchAll(/#EXT-X-(?:MAP|KEY):.*URI="([^"]+)"/g)) tails.add(tailOf(new URL(m[1]!, url).href));
  }
}

/** F4M media URLs (Adobe HDS §4.3): `<url>Seg1-Frag<n>`, the first and the last fragment that exists. */
async function hdsTails(base: string, dir: string, f4m: string, tails: Set<string>): Promise<void> {
  const manifest = await text(base, dir + f4m);
  for (const m of manifest.matchAll(/<media\b[^>]*\burl="([^"]+)"/g)) {
    const media = m[1]!;
    const href = /\.f4m$/.test(media) ? media : undefined;
    if (href !== undefined) {
      tails.add(href);
      await hdsTails(base, dir, href, tails);
      continue;
    }
    let last = 1;
    while (last < 64 && (await request(base, `${dir}${media}Seg1-Frag${last + 1}`)).status === 200) last++;
    tails.add(`${media}Seg1-Frag1`);
    tails.add(`${media}Seg1-Frag${last}`);
  }
}
