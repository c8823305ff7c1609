// The origin's HTTP behaviour through real requests on loopback (set-up in http-origin.ts):
// Content-Type, Content-Length, Last-Modified (the .ism's mtime), ETag/304, HEAD, CORS,
// Cache-Control, Range (RFC 9110 §14), static files.

import { readFileSync } from 'node:fs';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { startServer } from '../../../origin/server/server';
import { wasmTrackSelector } from '../../../origin/server/select';
import { media } from '../../helpers/fixtures';
import { Fetched, get } from './server-helpers';
import { boxes } from '../../helpers/box-walk';
import {
  AUDIO,
  MANIFEST_CACHE,
  ok,
  origin,
  P_MTIME,
  request,
  SEGMENT_CACHE,
  setUpHttpOrigin,
  timeOf,
  track,
  VIDEO,
} from './http-origin';

setUpHttpOrigin();

// ---------------------------------------------------------------------------------------------
// Headers

/** One URL of each output (built from the .ism's bitrates and the fixture facts). */
function outputs(): Array<{ what: string; url: string; type: string; cacheControl: string }> {
  const v = track(VIDEO);
  const a = track(AUDIO);
  return [
    { what: 'Smooth manifest', url: '/p.ism/Manifest', type: 'text/xml; charset=utf-8', cacheControl: MANIFEST_CACHE },
    { what: 'MPD', url: '/p.ism/.mpd', type: 'application/dash+xml', cacheControl: MANIFEST_CACHE },
    {
      what: 'HLS master',
      url: '/p.ism/.m3u8?hls_fmp4=true',
      type: 'application/vnd.apple.mpegurl',
      cacheControl: MANIFEST_CACHE,
    },
    {
      what: 'HLS media playlist',
      url: `/p.ism/p-${a.key}.m3u8?hls_fmp4=true`,
      type: 'application/vnd.apple.mpegurl',
      cacheControl: MANIFEST_CACHE,
    },
    {
      what: 'Smooth fragment',
      url: `/p.ism/QualityLevels(${v.bitrate})/Fragments(${v.trackName}=${timeOf(VIDEO, 1)})`,
      type: 'video/mp4',
      cacheControl: SEGMENT_CACHE,
    },
    { what: 'DASH init', url: `/p.ism/dash/p-${v.key}.dash`, type: 'video/mp4', cacheControl: SEGMENT_CACHE },
    {
      what: 'DASH media',
      url: `/p.ism/dash/p-${a.key}-${timeOf(AUDIO, 2)}.dash`,
      type: 'video/mp4',
      cacheControl: SEGMENT_CACHE,
    },
    {
      what: 'HLS init',
      url: `/p.ism/hls/p-${v.key}.m4s?hls_fmp4=true`,
      type: 'video/mp4',
      cacheControl: SEGMENT_CACHE,
    },
    {
      what: 'HLS segment',
      url: `/p.ism/hls/p-${v.key}-1.m4s?hls_fmp4=true`,
      type: 'video/mp4',
      cacheControl: SEGMENT_CACHE,
    },
  ];
}

describe('headers', () => {
  test('Content-Type, Content-Length, Last-Modified (the .ism mtime), ETag, CORS and Cache-Control of each output', async () => {
    const lastModified = P_MTIME.toUTCString();
    expect(lastModified).toBe('Thu, 15 Jun 2023 12:30:45 GMT');
    const seen = [];
    for (const o of outputs()) {
      const r = await ok(o.url);
      const h = r.headers;
      seen.push([
        o.what,
        h['content-type'],
        Number(h['content-length']) === r.body.length,
        h['last-modified'],
        /^"[^"]+"$/.test(String(h.etag)),
        h['access-control-allow-origin'],
        h['cache-control'],
      ]);
    }
    expect(seen).toEqual(outputs().map((o) => [o.what, o.type, true, lastModified, true, '*', o.cacheControl]));
  });

  test('ETags are equal exactly when the bodies are, and repeat for the same output', async () => {
    const answers: Fetched[] = [];
    for (const o of outputs()) answers.push(await ok(o.url));
    const pairs: Array<[string, string, boolean, boolean]> = [];
    answers.forEach((a, i) =>
      answers.forEach(
        (b, j) =>
          j > i &&
          pairs.push([
            outputs()[i]!.what,
            outputs()[j]!.what,
            a.headers.etag === b.headers.etag,
            a.body.equals(b.body),
          ]),
      ),
    );
    expect(pairs.filter(([, , sameTag, sameBody]) => sameTag !== sameBody)).toEqual([]);
    // The DASH and HLS init segments of one track are the same bytes; nothing else is.
    expect(pairs.filter(([, , sameTag]) => sameTag).map(([a, b]) => `${a} = ${b}`)).toEqual(['DASH init = HLS init']);
    for (const [i, o] of outputs().entries()) expect((await ok(o.url)).headers.etag).toBe(answers[i]!.headers.etag);
  });

  test('If-None-Match with the ETag → 304 without a body, for manifests, segments and static files', async () => {
    for (const u of [...outputs().map((o) => o.url), '/static/a.bin']) {
      const full = await ok(u);
      const etag = String(full.headers.etag);
      for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const r = await request(u, { 'If-None-Match': inm });
        expect([u, inm, r.status, r.body.length, r.headers.etag, r.headers['last-modified']]).toEqual([
          u,
          inm,
          304,
          0,
          etag,
          full.headers['last-modified'],
        ]);
      }
      const miss = await request(u, { 'If-None-Match': '"not-this-one"' });
      expect([u, miss.status, miss.body.equals(full.body)]).toEqual([u, 200, true]);
    }
  });

  test('If-Modified-Since → 304 when nothing changed since, 200 otherwise; If-None-Match takes precedence', async () => {
    for (const u of [...outputs().map((o) => o.url), '/static/a.bin']) {
      const full = await ok(u);
      const lm = String(full.headers['last-modified']);
      const before = new Date(Date.parse(lm) - 1000).toUTCString();
      expect([u, (await request(u, { 'If-Modified-Since': lm })).status]).toEqual([u, 304]);
      expect([u, (await request(u, { 'If-Modified-Since': before })).status]).toEqual([u, 200]);
      expect([u, (await request(u, { 'If-Modified-Since': 'not a date' })).status]).toEqual([u, 200]);
      expect([u, (await request(u, { 'If-Modified-Since': lm, 'If-None-Match': '"other"' })).status]).toEqual([u, 200]);
    }
  });

  test('HEAD has the headers of GET and no body', async () => {
    const volatile = new Set(['date', 'connection', 'keep-alive']);
    const headersOf = (r: Fetched): Record<string, unknown> =>
      Object.fromEntries(Object.entries(r.headers).filter(([k]) => !volatile.has(k)));
    for (const u of [...outputs().map((o) => o.url), '/static/a.bin']) {
      const g = await ok(u);
      const h = await request(u, {}, 'HEAD');
      expect([u, h.status, h.body.length]).toEqual([u, 200, 0]);
      expect(headersOf(h)).toEqual(headersOf(g));
    }
  });

  test('CORS: every answer allows any origin; OPTIONS is a preflight answer', async () => {
    const error = await request('/nope.ism/.mpd', { Origin: 'https://player.example' });
    expect([error.status, error.headers['access-control-allow-origin']]).toEqual([404, '*']);
    const seg = outputs().find((o) => o.what === 'HLS segment')!.url;
    const r = await request(
      seg,
      {
        Origin: 'https://player.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'range',
      },
      'OPTIONS',
    );
    expect(r.status).toBe(204);
    expect(r.body.length).toBe(0);
    expect(r.headers['access-control-allow-origin']).toBe('*');
    const methods = String(r.headers['access-control-allow-methods']).split(/,\s*/);
    expect(methods).toEqual(expect.arrayContaining(['GET', 'HEAD']));
    expect(String(r.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toContain('range');
    // What a player reads from a cross-origin answer must be exposed.
    const exposed = String((await ok(seg)).headers['access-control-expose-headers'])
      .toLowerCase()
      .split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['content-length', 'content-range', 'etag', 'last-modified']));
  });

  test('Cache-Control: the CLI defaults are what the server sends by class; errors are no-store; "" sends none', async () => {
    const defaults = parseServeArgs(['--root', origin.root]);
    expect([defaults.manifestCacheControl, defaults.segmentCacheControl]).toEqual([MANIFEST_CACHE, SEGMENT_CACHE]);
    expect((await request('/p.ism/QualityLevels(1)/Fragments(video_eng=0)')).headers['cache-control']).toBe('no-store');
    // The same root served with other settings.
    const other = await startServer({
      root: origin.root,
      host: '127.0.0.1',
      port: 0,
      manifestCacheControl: '',
      segmentCacheControl: 'private, max-age=5',
      select: wasmTrackSelector,
      playerPage: false,
    });
    try {
      const m = await get(other.url, '/p.ism/.mpd');
      const s = await get(other.url, outputs().find((o) => o.what === 'DASH media')!.url);
      expect([m.status, m.headers['cache-control'], s.status, s.headers['cache-control']]).toEqual([
        200,
        undefined,
        200,
        'private, max-age=5',
      ]);
    } finally {
      await other.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Range

describe('Range (RFC 9110 §14)', () => {
  /** Ranges of a body: both ends, inside, across every top-level box boundary, open, suffix. */
  function rangesOf(body: Buffer): Array<[string, number, number]> {
    const n = body.length;
    const out: Array<[string, number, number]> = [
      ['bytes=0-0', 0, 0],
      ['bytes=0-99', 0, 99],
      [`bytes=100-${n - 101}`, 100, n - 101],
      [`bytes=${n - 1}-${n - 1}`, n - 1, n - 1],
      [`bytes=${n - 10}-${n + 1000}`, n - 10, n - 1],
      [`bytes=${Math.floor(n / 3)}-`, Math.floor(n / 3), n - 1],
      ['bytes=-500', n - 500, n - 1],
      [`bytes=-${n + 10}`, 0, n - 1],
    ];
    let at = 0;
    for (const b of boxes(body)) {
      if (at > 16) out.push([`bytes=${at - 16}-${at + 15}`, at - 16, at + 15]);
      at += b.size;
    }
    return out;
  }

  async function checkRanges(u: string, minBoxes: number): Promise<void> {
    const full = await ok(u);
    const n = full.body.length;
    expect(full.headers['accept-ranges']).toBe('bytes');
    expect(boxes(full.body).length).toBeGreaterThanOrEqual(minBoxes);
    for (const [header, start, end] of rangesOf(full.body)) {
      const r = await request(u, { Range: header });
      expect([u, header, r.status, r.headers['content-range'], Number(r.headers['content-length'])]).toEqual([
        u,
        header,
        206,
        `bytes ${start}-${end}/${n}`,
        end - start + 1,
      ]);
      expect(r.body.equals(full.body.subarray(start, end + 1))).toBe(true);
    }
    for (const header of [`bytes=${n}-`, `bytes=${n + 5}-${n + 9}`, 'bytes=-0']) {
      const r = await request(u, { Range: header });
      expect([header, r.status, r.headers['content-range'], r.body.length]).toEqual([header, 416, `bytes */${n}`, 0]);
    }
    // RFC 9110 §14.2 lets a server ignore a Range it does not support: the whole body, 200.
    for (const header of ['bytes=0-1,5-6', 'bytes=abc', 'items=0-1', 'bytes=9-2']) {
      const r = await request(u, { Range: header });
      expect([header, r.status, r.body.equals(full.body)]).toEqual([header, 200, true]);
    }
  }

  test('an HLS segment of two fragments (styp, moof, mdat, moof, mdat: rewritten boxes and file ranges)', async () => {
    await checkRanges(outputs().find((o) => o.what === 'HLS segment')!.url, 5);
  });

  test('a Smooth fragment and a DASH init segment', async () => {
    await checkRanges(outputs().find((o) => o.what === 'Smooth fragment')!.url, 2);
    await checkRanges(outputs().find((o) => o.what === 'DASH init')!.url, 2);
  });

  test('a static file under the root: type, Last-Modified, the file bytes, ranges of them', async () => {
    const source = readFileSync(media('audio_eng_64k.isma'));
    const r = await ok('/static/a.bin');
    expect([r.headers['content-type'], r.headers['last-modified'], Number(r.headers['content-length'])]).toEqual([
      'application/octet-stream',
      'Thu, 03 Feb 2022 04:05:06 GMT',
      source.length,
    ]);
    expect(r.body.equals(source)).toBe(true);
    await checkRanges('/static/a.bin', 5);
  });
});
