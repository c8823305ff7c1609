// I-frame and WebVTT segments from a real origin on loopback (set-up in hls-support.ts), and the
// HTTP side of generated segments: HEAD, Range, bad URLs with the right status and
// X-Origin-Error code, corrupt media.

import { promises as fs, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { media } from '../../helpers/fixtures';
import { Fetched, get, startTestOrigin } from '../server/server-helpers';
import { checkTs } from './mpegts/ts-check';
import {
  dir,
  fact,
  fetchOk,
  keyOf,
  origin,
  probeFrames,
  Rendition,
  renditionSegments,
  setUpHlsOrigin,
  tsUrl,
} from './hls-support';

setUpHlsOrigin();

// ---------------------------------------------------------------------------------------------
// I-frame segments

describe('I-frame segments', () => {
  test.each(['video_baseline_400k.ismv', 'video_main_900k.ismv', 'video_high_1600k.ismv'])(
    '%s: each keyframe alone, as TS and as fMP4',
    async (video) => {
      const key = keyOf('p', video, 'video');
      const v4 = '?hls_client_manifest_version=4';
      const fragments = fact(video).box.fragments.length;
      // Every URI the I-frame playlists write (relative to keyframes/) answers, TS and fMP4.
      for (const query of [v4, `${v4}&hls_fmp4=true`]) {
        const playlist = await get(origin.url, `/p.ism/keyframes/p-${key}.m3u8${query}`);
        expect([query, playlist.status]).toEqual([query, 200]);
        const uris = [...playlist.text.matchAll(/^([^#\n].*)$/gm), ...playlist.text.matchAll(/URI="([^"]+)"/g)].map(
          (m) => m[1]!,
        );
        expect(uris.length).toBe(fragments + (query.includes('fmp4') ? 1 : 0));
        for (const uri of uris) {
          const url = new URL(uri, `${origin.url}/p.ism/keyframes/`);
          const r = await get(origin.url, url.pathname + url.search);
          expect([uri, r.status, r.headers['content-type']]).toEqual([
            uri,
            200,
            uri.includes('.ts') ? 'video/mp2t' : 'video/mp4',
          ]);
        }
      }
      // The video-only rendition's PTS values: each keyframe must be one of them.
      const stream = checkTs(await renditionSegments({ pres: 'p', video }));
      const ptsOf = new Set(stream.pes.map((p) => p.pts));
      const init = await fetchOk(`/p.ism/hls/p-${key}.m4s`, 'video/mp4');
      for (let n = 1; n <= fragments; n++) {
        const ts = await fetchOk(`/p.ism/keyframes/p-${key}-${n}.ts${v4}`, 'video/mp2t');
        const check = checkTs([ts]);
        expect(check.problems).toEqual([]);
        expect(check.pes.length).toBe(1);
        expect(ptsOf.has(check.pes[0]!.pts)).toBe(true);
        const tsFile = path.join(dir, `key-${n}.ts`);
        writeFileSync(tsFile, ts);
        const probedTs = await probeFrames(tsFile);
        expect([n, probedTs.stderr, probedTs.frames]).toEqual([n, '', { video: 1 }]);
        const m4s = await fetchOk(`/p.ism/keyframes/p-${key}-${n}.m4s${v4}`, 'video/mp4');
        const mp4File = path.join(dir, `key-${n}.mp4`);
        writeFileSync(mp4File, Buffer.concat([init, m4s]));
        const probedMp4 = await probeFrames(mp4File);
        expect([n, probedMp4.stderr, probedMp4.frames]).toEqual([n, '', { video: 1 }]);
      }
      for (const n of [0, fragments + 1]) {
        const r = await get(origin.url, `/p.ism/keyframes/p-${key}-${n}.ts${v4}`);
        expect([n, r.status, r.headers['x-origin-error']]).toEqual([n, 404, 'unknown-time']);
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------
// WebVTT and the HTTP side

describe('WebVTT segments', () => {
  test('text/vtt with the TS time map, or 0 with fMP4 segments', async () => {
    const key = keyOf('p', 'text_eng.ismt', 'textstream');
    const ts = await fetchOk(`/p.ism/p-${key}-1.webvtt`, 'text/vtt');
    expect(ts.toString('utf8')).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n/);
    const fmp4 = await fetchOk(`/p.ism/p-${key}-1.webvtt?hls_fmp4=true`, 'text/vtt');
    expect(fmp4.toString('utf8')).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n/);
    const cues = ts
      .toString('utf8')
      .split('\n')
      .filter((l) => l.includes('-->'));
    expect(cues.length).toBeGreaterThan(0);
  });
});

describe('HTTP', () => {
  test('HEAD and Range on a generated segment', async () => {
    const r: Rendition = { pres: 'p', video: 'video_baseline_400k.ismv', audio: 'audio_eng_64k.isma' };
    const full = await fetchOk(tsUrl(r, 2), 'video/mp2t');
    const head = await get(origin.url, tsUrl(r, 2), {}, 'HEAD');
    expect([head.status, head.headers['content-length'], head.body.byteLength]).toEqual([
      200,
      String(full.byteLength),
      0,
    ]);
    expect(head.headers['cache-control']).toBe('public, max-age=86400');
    const part = await get(origin.url, tsUrl(r, 2), { range: 'bytes=188-375' });
    expect(part.status).toBe(206);
    expect(part.body.equals(full.subarray(188, 376))).toBe(true);
    const again = await get(origin.url, tsUrl(r, 2), { 'if-none-match': String(head.headers['etag']) });
    expect(again.status).toBe(304);
  });

  test('bad URLs: status and X-Origin-Error', async () => {
    const v = keyOf('p', 'video_baseline_400k.ismv', 'video');
    const a = keyOf('p', 'audio_eng_64k.isma', 'audio');
    const t = keyOf('p', 'text_eng.ismt', 'textstream');
    const ac3 = keyOf('d', 'audio_ac3_384k.isma', 'audio');
    const cases: Array<[string, number, string]> = [
      [`/p.ism/p-${a}-1.ts`, 404, 'unknown-url'], // audio alone is packed audio
      [`/p.ism/p-${v}-1.aac`, 404, 'unknown-url'], // video is TS
      [`/p.ism/p-${a}-${v}-1.aac`, 404, 'unknown-url'],
      [`/d.ism/d-${ac3}-1.aac`, 404, 'unknown-url'], // AC-3 is .ac3
      [`/d.ism/d-${ac3}-1.ec3`, 404, 'unknown-url'],
      [`/p.ism/p-${t}-1.ts`, 404, 'unknown-url'],
      [`/p.ism/p-${a}-1.webvtt`, 404, 'unknown-url'],
      [`/p.ism/p-${a}-${v}-1.ts?hls_fmp4=true`, 404, 'unknown-track'], // fMP4 does not multiplex
      [`/p.ism/p-${v}-1.ts?hls_fmp4=true`, 404, 'unknown-url'], // fMP4 segments are hls/…m4s
      [`/p.ism/p-${a}-${v}-0.ts`, 404, 'unknown-time'],
      [`/p.ism/p-${a}-${v}-4.ts`, 404, 'unknown-time'],
      [`/p.ism/p-${a}-99.aac`, 404, 'unknown-time'],
      [`/p.ism/p-${t}-0.webvtt`, 404, 'unknown-time'],
      [`/p.ism/p-${a}-${v}-12345678901.ts`, 404, 'unknown-url'], // more digits than a segment number has
      [`/p.ism/p-video_eng=1-1.ts`, 404, 'unknown-track'],
      [`/p.ism/garbage-1.ts`, 404, 'unknown-track'],
      [`/p.ism/-1.ts`, 404, 'unknown-url'],
      [`/p.ism/p-${v}.ts`, 404, 'unknown-url'],
      [`/p.ism/p-${v}-1.ts?t=50`, 404, 'empty-clip'],
      [`/p.ism/p-${v}-1.ts?hls_minimum_fragment_length=x`, 400, 'bad-option'],
      [`/nope.ism/nope-${v}-1.ts`, 404, 'unknown-presentation'],
      [`/p.ism/keyframes/p-${a}.m3u8?hls_client_manifest_version=4`, 404, 'unknown-track'],
      [`/p.ism/keyframes/p-${a}-${v}.m3u8?hls_client_manifest_version=4`, 404, 'unknown-track'],
      [`/p.ism/keyframes/p-${v}.m3u8`, 404, 'unknown-url'], // version 1 has no I-frame playlists
      [`/p.ism/keyframes/p-${a}-1.ts`, 404, 'unknown-track'],
      [`/p.ism/keyframes/p-${a}-${v}-1.ts`, 404, 'unknown-track'],
      [`/p.ism/keyframes/nothing-1.m4s`, 404, 'unknown-track'],
    ];
    for (const [url, status, code] of cases) {
      const r: Fetched = await get(origin.url, url);
      expect([url, r.status, r.headers['x-origin-error']]).toEqual([url, status, code]);
      expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
  });
});

describe('corrupt media', () => {
  test('a broken NAL length is a 500 corrupt-media whose log names the file and offset', async () => {
    const damaged = await startTestOrigin({ x: ['video_baseline_400k.ismv'] });
    try {
      // Point the .ism at a copy whose first sample's NAL length runs past the sample.
      const copy = path.join(damaged.root, 'broken.ismv');
      const bytes = readFileSync(media('video_baseline_400k.ismv'));
      const mdat = bytes.indexOf(Buffer.from('mdat'));
      bytes.writeUInt32BE(0x7fffffff, mdat + 4);
      writeFileSync(copy, bytes);
      const ism = path.join(damaged.root, 'x.ism');
      await fs.writeFile(ism, (await fs.readFile(ism, 'utf8')).replace(/src="[^"]+"/, 'src="broken.ismv"'));
      const key = /trackName" value="([^"]+)"/.exec(await fs.readFile(ism, 'utf8'))![1]!;
      const bitrate = /systemBitrate="(\d+)"/.exec(await fs.readFile(ism, 'utf8'))![1]!;
      const r = await get(damaged.url, `/x.ism/x-${key}=${bitrate}-1.ts`);
      expect([r.status, r.headers['x-origin-error']]).toEqual([500, 'corrupt-media']);
      expect(r.text).not.toContain('broken.ismv');
      const logged = damaged.logs.join('\n');
      expect(logged).toContain('broken.ismv');
      expect(logged).toMatch(new RegExp(`at file offset ${mdat + 4}\\b`));
      // Segment 2 does not need the damaged sample.
      expect((await get(damaged.url, `/x.ism/x-${key}=${bitrate}-2.ts`)).status).toBe(200);
    } finally {
      await damaged.server.close();
    }
  });
});
