// HEAD and Range from the same bytes as GET (RFC 9110 §9.3.2, §14), for every kind of encrypted
// segment the origin makes: DASH cenc and cbcs, Smooth (PIFF), HLS AES-128 (MPEG-TS, fMP4 and
// its init section), HLS SAMPLE-AES MPEG-TS, packed audio and fMP4. For the init segment and the
// first and last media segment of every track: HEAD has GET's length, type and ETag and no body;
// first-byte, middle, open-ended and suffix ranges are 206 with the slice of GET's body; a range
// past the end is 416; a second GET is the same bytes.

import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten, smoothWritten } from '../server/written-urls';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_main_900k.ismv', 'audio_eng_64k.isma'];
const KEYS = 'https://keys.example/k';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin(
    { cenc: FILES, cbcs: FILES, aes: FILES, sa: FILES },
    {
      cenc: [`--drm_a.key=${KID}:${KEY}`, `--iss.key=${KID}:${KEY}`],
      cbcs: [`--drm_a.key=${KID}:${KEY}`, '--mpd.protection_scheme=cbcs'],
      aes: [`--hls.key=:${KEY}`, `--hls.license_server_url=${KEYS}`],
      sa: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes', `--hls.license_server_url=${KEYS}`],
    },
  );
}, 60_000);

afterAll(() => origin?.server.close());

const pathOf = (u: string): string => {
  const x = new URL(u, origin.url);
  return x.pathname + x.search;
};

async function ok(url: string): Promise<string> {
  const r = await get(origin.url, url);
  expect([url, r.status]).toEqual([url, 200]);
  return r.text;
}

/** The init (if any) and the first and last media segment of each track or media playlist. */
function firstAndLast(written: Array<{ url: string; kind: string; key: string }>): string[] {
  const out: string[] = [];
  for (const key of new Set(written.map((w) => w.key))) {
    const mine = written.filter((w) => w.key === key);
    const media = mine.filter((w) => w.kind === 'media');
    out.push(...mine.filter((w) => w.kind === 'init').map((w) => w.url), media[0]!.url, media[media.length - 1]!.url);
  }
  return out.map(pathOf);
}

/** RFC 8216 §4.3.4: the media playlists of a master, then their EXT-X-MAP and segment URIs. */
async function hlsSegments(master: string): Promise<string[]> {
  const masterUrl = new URL(master, origin.url);
  const lines = (await ok(master)).split('\n');
  const lists = lines.filter((l) => l !== '' && !l.startsWith('#'));
  for (const l of lines.filter((x) => x.startsWith('#EXT-X-MEDIA:TYPE=AUDIO'))) {
    const uri = /URI="([^"]+)"/.exec(l)?.[1];
    if (uri !== undefined) lists.push(uri);
  }
  const written: Array<{ url: string; kind: string; key: string }> = [];
  for (const list of new Set(lists)) {
    const listUrl = new URL(list, masterUrl);
    const text = await ok(pathOf(listUrl.href));
    const map = /#EXT-X-MAP:URI="([^"]+)"/.exec(text)?.[1];
    if (map !== undefined) written.push({ url: new URL(map, listUrl).href, kind: 'init', key: list });
    for (const s of text.split('\n').filter((l) => l !== '' && !l.startsWith('#')))
      written.push({ url: new URL(s, listUrl).href, kind: 'media', key: list });
  }
  return firstAndLast(written);
}

async function segmentsOf(kind: string): Promise<string[]> {
  const [name, format, query] = kind.split(' ') as [string, string, string | undefined];
  if (format === 'dash' || format === 'smooth') {
    const manifest = format === 'dash' ? `/${name}.ism/.mpd` : `/${name}.ism/Manifest`;
    const text = await ok(manifest);
    const url = `${origin.url}${manifest}`;
    return firstAndLast(format === 'dash' ? dashWritten(text, url) : smoothWritten(text, url));
  }
  return hlsSegments(`/${name}.ism/.m3u8${query === undefined ? '' : `?${query}`}`);
}

test.each([
  'cenc dash',
  'cbcs dash',
  'cenc smooth',
  'aes hls',
  'aes hls hls_fmp4=true',
  'sa hls',
  'sa hls hls_no_multiplex=true',
  'sa hls hls_fmp4=true',
])(
  '%s: HEAD and every Range kind answered from the bytes of GET',
  async (kind) => {
    const urls = await segmentsOf(kind);
    // Two tracks: their first and last segments, with the init segment where there is one.
    expect(urls.length).toBeGreaterThanOrEqual(kind.endsWith(' hls') ? 2 : 4);
    for (const url of urls) {
      const whole = await get(origin.url, url);
      expect([url, whole.status]).toEqual([url, 200]);
      const n = whole.body.length;
      expect(n).toBeGreaterThan(100);
      const again = await get(origin.url, url);
      expect([url, again.body.equals(whole.body), again.headers.etag]).toEqual([url, true, whole.headers.etag]);
      const head = await get(origin.url, url, {}, 'HEAD');
      expect([
        url,
        head.status,
        head.headers['content-length'],
        head.headers['content-type'],
        head.headers.etag,
      ]).toEqual([url, 200, String(n), whole.headers['content-type'], whole.headers.etag]);
      expect(head.body.length).toBe(0);
      const mid = Math.floor(n / 2);
      for (const [range, from, to] of [
        ['bytes=0-0', 0, 0],
        [`bytes=17-${mid}`, 17, mid],
        [`bytes=${mid}-`, mid, n - 1],
        ['bytes=-100', n - 100, n - 1],
        [`bytes=${n - 10}-${n + 1000}`, n - 10, n - 1],
      ] as Array<[string, number, number]>) {
        const part = await get(origin.url, url, { range });
        expect([url, range, part.status, part.headers['content-range']]).toEqual([
          url,
          range,
          206,
          `bytes ${from}-${to}/${n}`,
        ]);
        expect([url, range, part.body.equals(whole.body.subarray(from, to + 1))]).toEqual([url, range, true]);
      }
      const past = await get(origin.url, url, { range: `bytes=${n}-` });
      expect([url, past.status, past.headers['content-range']]).toEqual([url, 416, `bytes */${n}`]);
    }
  },
  60_000,
);
