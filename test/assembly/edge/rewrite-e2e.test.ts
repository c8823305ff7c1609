// Aliases end to end: map files → `origin edge-config` → envoy.yaml → `origin edge` (the real
// host with build/edge.wasm) → the real origin. Every alias answers exactly the bytes of the
// query URL it stands for sent to the origin directly (that URL written from the reference's
// table in alias-edge.ts, not by the engine), over every playlist, I-frame playlist, init
// segment, segment and Smooth fragment an aliased manifest leads to; and the sibling media
// playlists of a rendition share their segments' paths.

import { get, Fetched } from '../../origin/server/server-helpers';
import { AliasSetup, directFor, startAliasEdge } from './alias-edge';

let s: AliasSetup;
beforeAll(async () => {
  s = await startAliasEdge();
}, 60_000);
afterAll(async () => {
  await s?.close();
});

/** The path and query of `relative` resolved against the URL it was read from. */
function resolve(relative: string, base: string): string {
  const u = new URL(relative, `http://edge.test${base}`);
  return u.pathname + u.search;
}

/** Fetches `alias` through the edge and its query URL from the origin: same status, type, bytes. */
async function same(alias: string): Promise<Fetched> {
  const direct = directFor(decodeURIComponent(alias));
  const [viaEdge, viaOrigin] = await Promise.all([get(s.edge.url, alias), get(s.origin.url, direct)]);
  expect({ alias, status: viaEdge.status }).toEqual({ alias, status: 200 });
  expect({ direct, status: viaOrigin.status }).toEqual({ direct, status: 200 });
  expect(viaEdge.headers['content-type']).toBe(viaOrigin.headers['content-type']);
  if (!viaEdge.body.equals(viaOrigin.body)) throw new Error(`${alias} through the edge differs from ${direct} direct`);
  return viaEdge;
}

/** URIs a playlist names: URI lines and URI="…" attributes. */
function playlistUris(text: string): string[] {
  const uris: string[] = [];
  for (const line of text.split('\n')) {
    if (line !== '' && !line.startsWith('#')) uris.push(line.trim());
    for (const m of line.matchAll(/URI="([^"]+)"/g)) uris.push(m[1]!);
  }
  return uris;
}

describe('each default rule: the alias answers the bytes of its query URL', () => {
  test.each([
    ['master', '/vod/tos.ism/fmp4/avc.m3u8'],
    ['master, TS', '/vod/tos.ism/ts/sd.m3u8'],
    ['master with a timeline', '/vod/tos.ism/fmp4/avc@intro.m3u8'],
    ['media playlist of a subclip', '/vod/tos.ism/fmp4/intro-video_eng=410594.m3u8?presentation_name=intro'],
    [
      'media playlist of the other subclip',
      '/vod/tos.ism/ts/late-audio_eng=64113-video_eng=410594.m3u8?presentation_name=late',
    ],
    ['media playlist, default name', '/vod/tos.ism/fmp4/tos-audio_nld=127958.m3u8'],
    ['I-frame playlist', '/vod/tos.ism/ts/keyframes/intro-video_eng=925835.m3u8?presentation_name=intro'],
    ['fMP4 init segment', '/vod/tos.ism/fmp4/hls/tos-video_eng=410594.m4s'],
    ['fMP4 segment of a subclip', '/vod/tos.ism/fmp4/hls/tos-video_eng=410594-2.m4s?t=0-0:00:06'],
    ['TS segment', '/vod/tos.ism/ts/tos-audio_eng=64113-video_eng=410594-1.ts'],
    ['packed audio segment', '/vod/tos.ism/ts/tos-audio_nld=127958-2.aac'],
    ['WebVTT segment', '/vod/tos.ism/ts/tos-textstream_eng=1549-1.webvtt'],
    ['I-frame segment', '/vod/tos.ism/ts/keyframes/tos-video_eng=410594-3.ts'],
    ['Smooth manifest', '/vod/tos.ism/avc/Manifest'],
  ])('%s: %s', async (_rule, alias) => {
    await same(alias);
  });

  test('a directory that is no alias format reaches the origin unchanged (a virtual path)', async () => {
    const [viaEdge, viaOrigin] = await Promise.all([
      get(s.edge.url, '/vod/tos.ism/other/avc.m3u8'),
      get(s.origin.url, '/vod/tos.ism/other/avc.m3u8'),
    ]);
    expect(viaEdge.status).toBe(200);
    expect(viaEdge.body.equals(viaOrigin.body)).toBe(true);
  });
});

describe('everything an aliased master leads to', () => {
  test.each([
    '/vod/tos.ism/fmp4/avc.m3u8',
    '/vod/tos.ism/fmp4/avc@intro.m3u8',
    '/vod/tos.ism/fmp4/sd@late.m3u8',
    '/vod/tos.ism/ts/avc.m3u8',
    '/vod/tos.ism/ts/sd@intro.m3u8',
    '/vod/tos.ism/ts/audio@late.m3u8',
  ])(
    '%s: every playlist and segment, through the edge, equals its query URL direct',
    async (master) => {
      const text = (await same(master)).text;
      const playlists = [...new Set(playlistUris(text).map((u) => resolve(u, master)))];
      expect(playlists.length).toBeGreaterThan(1);
      let segments = 0;
      for (const playlist of playlists) {
        const media = (await same(playlist)).text;
        expect(media).toContain('#EXT-X-ENDLIST');
        for (const uri of [...new Set(playlistUris(media).map((u) => resolve(u, playlist)))]) {
          await same(uri);
          segments++;
        }
      }
      expect(segments).toBeGreaterThan(playlists.length);
    },
    60_000,
  );

  test.each(['avc', 'sd'])(
    'Smooth under %s/: the aliased manifest and every fragment it names',
    async (dir) => {
      const manifest = (await same(`/vod/tos.ism/${dir}/Manifest`)).text;
      const urls: string[] = [];
      for (const m of manifest.matchAll(/<StreamIndex\b([^>]*)>([\s\S]*?)<\/StreamIndex>/g)) {
        const template = /\bUrl="([^"]*)"/.exec(m[1]!)![1]!;
        expect(template).not.toContain('?'); // suppress_query_parameters: the fragment rule adds the filter
        const bitrates = [...m[2]!.matchAll(/<QualityLevel\b[^>]*\bBitrate="(\d+)"/g)].map((q) => q[1]!);
        let time = 0n;
        for (const c of m[2]!.matchAll(/<c\b([^>]*)\/>/g)) {
          const t = /\bt="(\d+)"/.exec(c[1]!);
          if (t !== null) time = BigInt(t[1]!);
          for (const b of bitrates)
            urls.push(
              resolve(
                template.replace('{bitrate}', b).replace('{start time}', String(time)),
                `/vod/tos.ism/${dir}/Manifest`,
              ),
            );
          time += BigInt(/\bd="(\d+)"/.exec(c[1]!)![1]!);
        }
      }
      expect(urls.length).toBeGreaterThan(10);
      for (const u of urls) await same(u);
    },
    60_000,
  );
});

describe('the three sibling media playlists of a rendition', () => {
  // The whole presentation (tos-), the first six seconds (intro-, t=0-0:00:06) and from four
  // seconds on (late-, vbegin=0:00:04), all under suppress_query_parameters: the clips list the
  // whole presentation's 4 s segments that hold them, by the same URLs (numbers and queries), so
  // a CDN caches each segment once (docs/reference/edge-config.md#rewrite). Segments: 1 = 0-4 s,
  // 2 = 4-8 s, 3 = 8-10 s; intro lists 1 and 2, late 2 and 3.
  interface Sibling {
    /** Segment URIs resolved against the playlist (path + query), the init segment first when fMP4. */
    uris: string[];
    /** `#EXTINF:… <uri>` of each segment. */
    entries: string[];
    sequence: number;
  }
  const sibling = async (format: string, prefix: string, rendition: string, query: string): Promise<Sibling> => {
    const playlist = `/vod/tos.ism/${format}/${prefix}-${rendition}.m3u8${query}`;
    const text = (await same(playlist)).text;
    const lines = text.split('\n');
    const entries = lines.flatMap((l, i) =>
      l.startsWith('#EXTINF:') ? [`${l} ${resolve(lines[i + 1]!, playlist)}`] : [],
    );
    return {
      uris: playlistUris(text).map((u) => resolve(u, playlist)),
      entries,
      sequence: Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)![1]),
    };
  };
  const bytes = async (u: string): Promise<Buffer> => {
    const r = await get(s.edge.url, u);
    expect([u, r.status]).toEqual([u, 200]);
    return r.body;
  };

  test('the masters name them', async () => {
    for (const [master, prefix] of [
      ['avc', 'tos'],
      ['avc@intro', 'intro'],
      ['avc@late', 'late'],
    ]) {
      const text = (await same(`/vod/tos.ism/fmp4/${master}.m3u8`)).text;
      expect(text).toContain(`\n${prefix}-video_eng=410594.m3u8`);
    }
  });

  test.each([
    ['fmp4', 'video_eng=410594', 'hls/tos-video_eng=410594', 'm4s'],
    ['ts', 'audio_eng=64113-video_eng=410594', 'tos-audio_eng=64113-video_eng=410594', 'ts'],
  ])(
    '%s %s: where they overlap, the same segment URLs (queries included) and the same bytes through the edge',
    async (format, rendition, stem, ext) => {
      const whole = await sibling(format, 'tos', rendition, '');
      const intro = await sibling(format, 'intro', rendition, '?presentation_name=intro');
      const late = await sibling(format, 'late', rendition, '?presentation_name=late');
      const url = (n: number): string => `/vod/tos.ism/${format}/${stem}-${n}.${ext}`;
      // No clip query on any segment URL, and the whole presentation's numbers.
      expect(whole.entries.map((e) => e.split(' ')[1])).toEqual([1, 2, 3].map(url));
      expect(intro.entries).toEqual(whole.entries.slice(0, 2));
      expect(late.entries).toEqual(whole.entries.slice(1));
      expect([whole.sequence, intro.sequence, late.sequence]).toEqual([1, 1, 2]);
      // Every URI a clip names (init segment included) is one the whole presentation names.
      for (const u of [...intro.uris, ...late.uris]) expect(whole.uris).toContain(u);
      // Fetched through the edge, once per sibling that names it: the same bytes (and those of the
      // query URL direct, by `same`).
      for (const n of [1, 2, 3]) {
        const fetched = await Promise.all(
          [whole, intro, late]
            .filter((x) => x.uris.includes(url(n)))
            .map((x) => bytes(x.uris[x.uris.indexOf(url(n))]!)),
        );
        expect([n, fetched.length]).toEqual([n, n === 2 ? 3 : 2]);
        expect([n, fetched.every((b) => b.equals(fetched[0]!))]).toEqual([n, true]);
        await same(url(n));
      }
    },
  );
});
