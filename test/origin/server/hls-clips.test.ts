// HLS segments of sub-clips over HTTP: a clip's segment URLs carry the numbers of the unclipped
// presentation (t, vbegin; with and without suppress_query_parameters), and the origin answers
// them: segment n with the clip is unclipped segment n cut to the clip, a number outside the clip
// is 404 unknown-time (errors.ts), and under suppression the clip's URLs are the whole
// presentation's, answering its bytes. Writer-level numbering: test/origin/manifests/hls-clips.test.ts.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { boxes } from '../../helpers/box-walk';
import { Fetched, get, startTestOrigin, TestOrigin } from './server-helpers';

const FILES = ['video_baseline_400k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];

let origin: TestOrigin;
/** `<trackName>=<bitrate>` of each file, from the .ism the packager wrote. */
const keys = new Map<string, string>();

beforeAll(async () => {
  origin = await startTestOrigin({ p: FILES });
  const text = await fs.readFile(path.join(origin.root, 'p.ism'), 'utf8');
  for (const m of text.matchAll(/<(video|audio|textstream)\b([^>]*)>([\s\S]*?)<\/\1>/g)) {
    const file = path.basename(/\bsrc="([^"]+)"/.exec(m[2]!)![1]!);
    keys.set(
      file,
      `${/<param name="trackName" value="([^"]+)"/.exec(m[3]!)![1]!}=${/\bsystemBitrate="(\d+)"/.exec(m[2]!)![1]!}`,
    );
  }
}, 60_000);

afterAll(async () => {
  await origin.server.close();
});

const V = (): string => keys.get('video_baseline_400k.ismv')!;
const A = (): string => keys.get('audio_eng_64k.isma')!;
const T = (): string => keys.get('text_eng.ismt')!;

async function ok(url: string): Promise<Fetched> {
  const r = await get(origin.url, url);
  expect([url, r.status, r.status === 200 ? '' : r.text]).toEqual([url, 200, '']);
  return r;
}

/** The segment URIs of a media playlist, resolved against it (path + query). */
async function segmentUrls(playlist: string): Promise<string[]> {
  const text = (await ok(playlist)).text;
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((u) => {
      const r = new URL(u, `http://x${playlist}`);
      return r.pathname + r.search;
    });
}

/** Top-level moof count and first tfdt (v1) of an fMP4 media segment. */
function moofs(segment: Buffer): bigint[] {
  return boxes(segment)
    .filter((b) => b.type === 'moof')
    .map((moof) => {
      const traf = boxes(moof.body).find((b) => b.type === 'traf')!;
      const tfdt = boxes(traf.body).find((b) => b.type === 'tfdt')!;
      return tfdt.body[0] === 1 ? tfdt.body.readBigUInt64BE(4) : BigInt(tfdt.body.readUInt32BE(4));
    });
}

describe('the numbers a clipped playlist writes are the ones the origin answers', () => {
  const playlists = (): Array<[string, string]> => [
    ['TS video', `/p.ism/p-${V()}.m3u8`],
    ['TS multiplexed', `/p.ism/p-${A()}-${V()}.m3u8`],
    ['packed audio', `/p.ism/p-${A()}.m3u8`],
    ['WebVTT', `/p.ism/p-${T()}.m3u8`],
    ['fMP4', `/p.ism/p-${V()}.m3u8?hls_fmp4=true`],
    ['I-frames TS', `/p.ism/keyframes/p-${V()}.m3u8?hls_client_manifest_version=4`],
    ['I-frames fMP4', `/p.ism/keyframes/p-${V()}.m3u8?hls_client_manifest_version=4&hls_fmp4=true`],
  ];

  test.each(['t=0-0:00:06', 'vbegin=0:00:04', 't=2-8'])(
    '%s, with and without suppress_query_parameters: every URI answers',
    async (clip) => {
      for (const [what, base] of playlists()) {
        const join = base.includes('?') ? '&' : '?';
        const exact = await segmentUrls(`${base}${join}${clip}`);
        const suppressed = await segmentUrls(`${base}${join}${clip}&suppress_query_parameters`);
        expect([what, exact.length > 0, exact.every((u) => u.includes(clip))]).toEqual([what, true, true]);
        expect([what, suppressed.filter((u) => u.includes('t=') || u.includes('vbegin='))]).toEqual([what, []]);
        for (const u of [...exact, ...suppressed]) await ok(u);
      }
    },
  );

  test("vbegin=0:00:04 starts at segment 2 (EXT-X-MEDIA-SEQUENCE:2); with suppression it lists the whole presentation's URLs", async () => {
    const base = `/p.ism/p-${A()}-${V()}.m3u8`;
    const text = (await ok(`${base}?vbegin=0:00:04&suppress_query_parameters`)).text;
    expect(text).toContain('\n#EXT-X-MEDIA-SEQUENCE:2\n');
    const clip = await segmentUrls(`${base}?vbegin=0:00:04&suppress_query_parameters`);
    const whole = await segmentUrls(`${base}?suppress_query_parameters`);
    expect(clip).toEqual(whole.slice(1));
    expect(clip.map((u) => u.replace(/.*-/, ''))).toEqual(['2.ts', '3.ts']);
  });
});

describe('segment n of a clip is the unclipped segment n cut to the clip', () => {
  test('fMP4: a clip that keeps a whole segment answers its bytes; t=0-0:00:06 keeps fragment 2 of segment 2', async () => {
    const seg = (n: number, q = ''): string => `/p.ism/hls/p-${V()}-${n}.m4s${q}`;
    const whole2 = (await ok(seg(2))).body;
    expect((await ok(seg(2, '?vbegin=0:00:04'))).body.equals(whole2)).toBe(true);
    expect((await ok(seg(1, '?t=0-0:00:06'))).body.equals((await ok(seg(1))).body)).toBe(true);
    const cut = (await ok(seg(2, '?t=0-0:00:06'))).body;
    expect(moofs(whole2).length).toBe(2);
    expect(moofs(cut)).toEqual(moofs(whole2).slice(0, 1));
  });

  test('TS and packed audio: the cut segment is shorter than the whole one', async () => {
    for (const url of [`/p.ism/p-${A()}-${V()}-2.ts`, `/p.ism/p-${A()}-2.aac`]) {
      const whole = (await ok(url)).body;
      const cut = (await ok(`${url}?t=0-0:00:06`)).body;
      expect([url, cut.length > 0 && cut.length < whole.length]).toEqual([url, true]);
    }
  });
});

describe('numbers outside the clip', () => {
  test('404 unknown-time, naming the numbers the request has; a clip past the end stays empty-clip', async () => {
    const cases = (): Array<[string, number, string]> => [
      [`/p.ism/p-${V()}-1.ts?vbegin=0:00:04`, 404, 'unknown-time'],
      [`/p.ism/p-${V()}-1.ts?vbegin=0:00:04&suppress_query_parameters`, 404, 'unknown-time'],
      [`/p.ism/p-${V()}-4.ts?vbegin=0:00:04`, 404, 'unknown-time'],
      [`/p.ism/p-${A()}-${V()}-3.ts?t=0-0:00:06`, 404, 'unknown-time'],
      [`/p.ism/p-${A()}-1.aac?t=4-10`, 404, 'unknown-time'],
      [`/p.ism/p-${T()}-3.webvtt?t=0-0:00:06`, 404, 'unknown-time'],
      [`/p.ism/hls/p-${V()}-1.m4s?t=8`, 404, 'unknown-time'],
      [`/p.ism/hls/p-${V()}-0.m4s?t=0-0:00:06`, 404, 'unknown-time'],
      [`/p.ism/keyframes/p-${V()}-2.ts?vbegin=0:00:04`, 404, 'unknown-time'],
      [`/p.ism/keyframes/p-${V()}-6.m4s`, 404, 'unknown-time'],
      [`/p.ism/p-${V()}-1.ts?t=50`, 404, 'empty-clip'],
      [`/p.ism/hls/p-${V()}-3.m4s?t=8`, 200, ''],
      [`/p.ism/keyframes/p-${V()}-3.ts?vbegin=0:00:04`, 200, ''],
    ];
    for (const [url, status, code] of cases()) {
      const r = await get(origin.url, url);
      expect([url, r.status, r.headers['x-origin-error'] ?? '']).toEqual([url, status, code]);
    }
    const r = await get(origin.url, `/p.ism/p-${V()}-1.ts?vbegin=0:00:04`);
    expect(r.text).toContain('no segment 1 for');
    expect(r.text).toContain('this request has 2 to 3');
  });
});
