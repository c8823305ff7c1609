// Aliases end to end: map files → `origin edge-config` → envoy.yaml → `origin edge` (the real
// host with build/edge.wasm) → the real origin. Every alias answers exactly the bytes of the
// query URL it stands for sent to the origin directly (that URL written from the reference's
// table in alias-edge.ts, not by the engine), over every playlist, I-frame playlist, init
// segment, segment and Smooth fragment an aliased manifest leads to; and the sibling media
// playlists of a rendition share their segments' paths.

import { get, Fetched } from '../server/server-helpers';
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
    ['media playlist of the other subclip', '/vod/tos.ism/ts/late-audio_eng=64113-video_eng=410594.m3u8?presentation_name=late'],
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
    const [viaEdge, viaOrigin] = await Promise.all([get(s.edge.url, '/vod/tos.ism/other/avc.m3u8'), get(s.origin.url, '/vod/tos.ism/other/avc.m3u8')]);
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
  ])('%s: every playlist and segment, through the edge, equals its query URL direct', async (master) => {
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
  }, 60_000);

  test.each(['avc', 'sd'])('Smooth under %s/: the aliased manifest and every fragment it names', async (dir) => {
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
        for (const b of bitrates) urls.push(resolve(template.replace('{bitrate}', b).replace('{start time}', String(time)), `/vod/tos.ism/${dir}/Manifest`));
        time += BigInt(/\bd="(\d+)"/.exec(c[1]!)![1]!);
      }
    }
    expect(urls.length).toBeGreaterThan(10);
    for (const u of urls) await same(u);
  }, 60_000);
});

describe('the three sibling media playlists of a rendition', () => {
  const RENDITION = 'video_eng=410594';
  const segmentsOf = async (prefix: string, query: string): Promise<string[]> => {
    const playlist = `/vod/tos.ism/fmp4/${prefix}-${RENDITION}.m3u8${query}`;
    return playlistUris((await same(playlist)).text).map((u) => resolve(u, playlist));
  };

  test('the masters name them; their segments have the same paths; where the clip starts at 0 they are the same segments', async () => {
    for (const [master, prefix] of [['avc', 'tos'], ['avc@intro', 'intro'], ['avc@late', 'late']]) {
      const text = (await same(`/vod/tos.ism/fmp4/${master}.m3u8`)).text;
      expect(text).toContain(`\n${prefix}-${RENDITION}.m3u8`);
    }
    const whole = await segmentsOf('tos', '');
    const intro = await segmentsOf('intro', '?presentation_name=intro');
    const late = await segmentsOf('late', '?presentation_name=late');
    const pathOf = (u: string): string => u.replace(/\?.*$/, '');
    // One naming for all three: <ism>/fmp4/hls/tos-<rendition>[-<n>].m4s, whatever the prefix.
    for (const u of [...intro, ...late]) expect(whole.map(pathOf)).toContain(pathOf(u));
    expect(whole.every((u) => u.startsWith('/vod/tos.ism/fmp4/hls/tos-video_eng=410594'))).toBe(true);
    // This origin writes the sub-clip's t/vbegin on its segment URLs (it numbers a sub-clip's
    // segments from 1, and a clip may end inside a segment), so the URLs differ by their query.
    // The intro clip (0 to 6 s) starts at 0: its init segment and first segment (0-4 s) are the
    // whole presentation's, byte for byte; its second (4-6 s) is a part of the whole's (4-8 s).
    expect(intro.every((u) => u.endsWith('?t=0-0:00:06'))).toBe(true);
    expect(late.every((u) => u.endsWith('?vbegin=0:00:04'))).toBe(true);
    expect([intro.length, whole.length]).toEqual([3, 4]);
    const bytes = async (u: string): Promise<Buffer> => (await get(s.edge.url, u)).body;
    expect((await bytes(intro[0]!)).equals(await bytes(whole[0]!))).toBe(true);
    expect((await bytes(intro[1]!)).equals(await bytes(whole[1]!))).toBe(true);
    expect((await bytes(intro[2]!)).length).toBeLessThan((await bytes(whole[2]!)).length);
    // The late clip's segment 1 is the whole presentation's segment 2 (4 s on): same bytes,
    // another number.
    const [late1, whole2] = await Promise.all([get(s.edge.url, late[1]!), get(s.edge.url, whole[2]!)]);
    expect([late[1]!, whole[2]!].map(pathOf)).toEqual(['/vod/tos.ism/fmp4/hls/tos-video_eng=410594-1.m4s', '/vod/tos.ism/fmp4/hls/tos-video_eng=410594-2.m4s']);
    expect(late1.body.equals(whole2.body)).toBe(true);
  });
});
