// Every URL a presentation's manifests write, for each format (Smooth, DASH, HLS with MPEG-TS and
// with fMP4 segments, HDS), found the way a client finds them: through the manifests an origin
// answers (written-urls.ts expands the templates). Paths relative to the presentation's .ism URL.

import { dashWritten, smoothWritten } from '../server/written-urls';
import { get } from '../server/server-helpers';

/** `tail` (after `<ism>/`) of every manifest and segment URL of the presentation at `ismUrl`. */
export async function crawl(base: string, ismPath: string): Promise<string[]> {
  const ismUrl = `${base}${ismPath}/`;
  const tails = new Set<string>();
  const tailOf = (u: string): string => {
    if (!u.startsWith(ismUrl)) throw new Error(`${u} is not under ${ismUrl}`);
    return u.slice(ismUrl.length);
  };
  const text = async (tail: string): Promise<string> => {
    const r = await get(base, `${ismPath}/${tail}`);
    if (r.status !== 200) throw new Error(`${tail}: ${r.status} ${r.text}`);
    tails.add(tail);
    return r.text;
  };
  for (const w of smoothWritten(await text('Manifest'), `${ismUrl}Manifest`)) tails.add(tailOf(w.url));
  for (const w of dashWritten(await text('.mpd'), `${ismUrl}.mpd`)) tails.add(tailOf(w.url));
  for (const query of ['', '?hls_fmp4=true']) await hlsUrls(`.m3u8${query}`, text, ismUrl, tails);
  await hdsUrls(base, ismPath, text, tails);
  return [...tails];
}

async function hlsUrls(
  master: string,
  text: (tail: string) => Promise<string>,
  ismUrl: string,
  tails: Set<string>,
): Promise<void> {
  const seen = new Set<string>();
  const walk = async (tail: string): Promise<void> => {
    if (seen.has(tail)) return;
    seen.add(tail);
    const body = await text(tail);
    for (const line of body.split('\n')) {
      const uris = line.startsWith('#') ? [...line.matchAll(/URI="([^"]+)"/g)].map((m) => m[1]!) : [line.trim()];
      for (const rel of uris) {
        if (rel === '') continue;
        const u = new URL(rel, ismUrl + tail).href;
        if (!u.startsWith(ismUrl)) throw new Error(`${u} is not under ${ismUrl}`);
        const t = u.slice(ismUrl.length);
        if (/\.m3u8(\?|$)/.test(t)) await walk(t);
        else tails.add(t);
      }
    }
  };
  await walk(master);
}

async function hdsUrls(
  base: string,
  ismPath: string,
  text: (tail: string) => Promise<string>,
  tails: Set<string>,
): Promise<void> {
  const f4m = await text('.f4m');
  for (const m of f4m.matchAll(/<media\b[^>]*\burl="([^"]+)"/g)) {
    for (let n = 1; n <= 100; n++) {
      const tail = `${m[1]!}Seg1-Frag${n}`;
      const r = await get(base, `${ismPath}/${tail}`);
      if (r.status === 404) break;
      tails.add(tail);
    }
  }
}
