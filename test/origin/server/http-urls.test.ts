// The URL space of the origin seen from the outside, through real requests on loopback (set-up in
// http-origin.ts): every URL each manifest writes answers (written-urls.ts expands them), with the
// query carried or suppressed, presentation_name, virtual paths, $Number$ templates, sub-clips, a
// changed .ism, concurrent requests.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { media, runOrigin } from '../../helpers/fixtures';
import { PLAYABLE } from '../../helpers/presentations';
import { facts, outputTimes, validateMpd } from '../manifests/format-support';
import { DEFAULT_LIMITS } from '../../../origin/cache/presentation-store';
import { boxes } from '../../helpers/box-walk';
import {
  C_AFTER,
  C_MTIME_AFTER,
  C_MTIME_BEFORE,
  fetchAll,
  FILTER_AVC_AAC,
  fragmentTimes,
  ismTracks,
  mpdsSeen,
  ok,
  origin,
  request,
  setUpHttpOrigin,
  track,
  tracks,
  VIDEO,
} from './http-origin';
import { hlsWritten, mpdParserUrls, tailOf, writtenBy } from './written-urls';

setUpHttpOrigin();

// ---------------------------------------------------------------------------------------------
// Every URL a manifest writes answers

describe('every URL each manifest writes answers 200', () => {
  test('Smooth: the Url template filled for every QualityLevel and chunk; each fragment carries its time', async () => {
    const written = await writtenBy('smooth', '/p.ism/Manifest');
    // One ladder per trackName, 5 chunks each, at the facts' times; every bitrate of the .ism.
    const expected = tracks.flatMap((t) =>
      outputTimes(PLAYABLE, t.file).map((time, i) => [`${t.trackName}=${t.bitrate}`, time, facts(t.file).durations[i]]),
    );
    expect(written.map((w) => [w.key, w.time, w.duration]).sort()).toEqual(expected.sort());
    const bodies = await fetchAll(written.map((w) => w.url));
    for (const w of written) {
      const body = bodies.get(w.url)!.body;
      expect(boxes(body).map((b) => b.type)).toEqual(['moof', 'mdat']);
      const [f] = fragmentTimes(body);
      // MS-SSTR §2.2.4.4: tfxd's fragment_absolute_time is the time the client asked for.
      if (!w.key.startsWith('textstream')) expect([w.url, f!.tfxd]).toEqual([w.url, w.time]);
    }
  });

  test('DASH: the SegmentTemplate expanded for every S of every Representation; tfdt = $Time$', async () => {
    const written = await writtenBy('dash', '/p.ism/.mpd');
    const expected = tracks.flatMap((t) => [
      [t.key, 'init', undefined],
      ...outputTimes(PLAYABLE, t.file).map((time) => [t.key, 'media', time]),
    ]);
    expect(written.map((w) => [w.key, w.kind, w.time])).toEqual(expect.arrayContaining(expected));
    expect(written.length).toBe(expected.length);
    // video.js's reader resolves the same URLs for the audio and video it understands.
    const theirs = mpdParserUrls(mpdsSeen.get('/p.ism/.mpd')!, `${origin.url}/p.ism/.mpd`);
    expect(theirs.length).toBe(6 * 6);
    expect(written.map((w) => w.url)).toEqual(expect.arrayContaining(theirs));
    const bodies = await fetchAll(written.map((w) => w.url));
    for (const w of written.filter((x) => x.kind === 'media')) {
      const body = bodies.get(w.url)!.body;
      expect(boxes(body).map((b) => b.type)).toEqual(['styp', 'moof', 'mdat']);
      expect([w.url, fragmentTimes(body)]).toEqual([w.url, [{ tfdt: w.time, tfxd: undefined }]]);
    }
  });

  test('HLS: every URI of the master and of each media playlist; 4 s segments of whole fragments', async () => {
    const { written, playlists } = await hlsWritten('/p.ism/.m3u8?hls_fmp4=true');
    // One media playlist per track: 3 variants (video), 3 audio and 2 subtitle renditions.
    expect([...playlists.keys()].sort()).toEqual(tracks.map((t) => `p-${t.key}.m3u8?hls_fmp4=true`).sort());
    const bodies = await fetchAll(written.map((w) => w.url));
    for (const t of tracks) {
      const uri = `p-${t.key}.m3u8?hls_fmp4=true`;
      const f = facts(t.file);
      const times = outputTimes(PLAYABLE, t.file);
      // 2 s source fragments joined to at least 4 s: fragments [0,1], [2,3], [4].
      const groups = [[0, 1], [2, 3], [4]];
      const list = playlists.get(uri)!;
      expect(list.segments.map((s) => s.duration)).toEqual(
        groups.map((g) => Number(g.reduce((s, i) => s + f.durations[i]!, 0n)) / f.timescale),
      );
      const segs = written.filter((w) => w.key === uri && w.kind === 'media');
      if (t.type === 'textstream') {
        // Subtitles are WebVTT in every HLS mode (no init section), one document per segment.
        expect(segs.every((w) => new URL(w.url).pathname.endsWith('.webvtt'))).toBe(true);
        expect(segs.map((w) => Buffer.from(bodies.get(w.url)!.body).toString('utf8').split('\n')[0])).toEqual(
          groups.map(() => 'WEBVTT'),
        );
        expect(written.some((w) => w.key === uri && w.kind === 'init')).toBe(false);
        continue;
      }
      expect(segs.map((w) => fragmentTimes(bodies.get(w.url)!.body).map((x) => x.tfdt))).toEqual(
        groups.map((g) => g.map((i) => times[i])),
      );
      const init = written.find((w) => w.key === uri && w.kind === 'init')!;
      expect(boxes(bodies.get(init.url)!.body).map((b) => b.type)).toEqual(['ftyp', 'moov']);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Query, names, paths

describe('URL options', () => {
  const MANIFESTS = [
    ['smooth', '/p.ism/Manifest'],
    ['dash', '/p.ism/.mpd'],
    ['hls', '/p.ism/.m3u8'],
  ] as const;

  test.each([
    ['percent-encoded', `${FILTER_AVC_AAC}&token=abc123`],
    // Raw `"` and `&` must come out escaped for XML and for HLS quoted-strings (RFC 8216 §4.2).
    ['raw quotes', 'filter=FourCC=="AVC1"||FourCC=="AACL"&token=a,b'],
  ])(
    'the query (%s) is carried into every URL and template; suppress_query_parameters removes it',
    async (_, query) => {
      // What a client resolving the written URL sends: the query as the URL standard encodes it.
      const search = new URL(`http://x/?${query}`).search;
      for (const [format, manifest] of MANIFESTS) {
        const carried = await writtenBy(format, `${manifest}?${query}`);
        const bad = carried.filter((w) => new URL(w.url).search !== search).map((w) => w.url);
        expect([format, bad]).toEqual([format, []]);
        // The filter kept H.264 and AAC only: no text track is named.
        expect(carried.some((w) => w.url.includes('textstream'))).toBe(false);
        expect(new Set(carried.map((w) => w.key)).size).toBe(6); // 3 video + 3 audio tracks
        await fetchAll(carried.map((w) => w.url));

        const suppressed = await writtenBy(format, `${manifest}?${query}&suppress_query_parameters=true`);
        expect([format, suppressed.filter((w) => w.url.includes('?')).map((w) => w.url)]).toEqual([format, []]);
        expect(suppressed.length).toBe(carried.length);
        await fetchAll(suppressed.map((w) => w.url));
      }
    },
  );

  test('suppress_query_parameters keeps what decides a segment: the clip, the segmentation, $Number$', async () => {
    const cases: Array<['smooth' | 'dash' | 'hls', string, string]> = [
      ['dash', '/p.ism/.mpd', 'mpd_segment_template=number'],
      ['dash', '/p.ism/.mpd', 't=4-8'],
      ['hls', '/p.ism/.m3u8', 'vbegin=0:00:04'],
      ['hls', '/p.ism/.m3u8', 'hls_minimum_fragment_length=6'],
      ['smooth', '/p.ism/Manifest', 't=2-6'],
    ];
    for (const [format, manifest, addressing] of cases) {
      const plain = await writtenBy(format, `${manifest}?${addressing}&${FILTER_AVC_AAC}`);
      const suppressed = await writtenBy(
        format,
        `${manifest}?${addressing}&${FILTER_AVC_AAC}&suppress_query_parameters=true`,
      );
      // Only the addressing parameter is written, and every URL answers the same bytes as the
      // URL the unsuppressed manifest wrote for the same segment.
      expect([
        addressing,
        suppressed.filter((w) => new URL(w.url).search !== `?${addressing}`).map((w) => w.url),
      ]).toEqual([addressing, []]);
      expect(suppressed.length).toBe(plain.length);
      const a = await fetchAll(plain.map((w) => w.url));
      const b = await fetchAll(suppressed.map((w) => w.url));
      let compared = 0;
      plain.forEach((w, i) => {
        // Media playlists differ by the URLs they write; the media they lead to must not.
        if (new URL(w.url).pathname.endsWith('.m3u8')) return;
        compared++;
        expect([addressing, w.url, Buffer.compare(a.get(w.url)!.body, b.get(suppressed[i]!.url)!.body)]).toEqual([
          addressing,
          w.url,
          0,
        ]);
      });
      expect(compared).toBeGreaterThan(5);
    }
  });

  test('presentation_name=foo replaces <name> in every URL written, and those URLs answer', async () => {
    const plainDash = await writtenBy('dash', '/p.ism/.mpd');
    const dash = await writtenBy('dash', '/p.ism/.mpd?presentation_name=foo');
    expect(dash.map((w) => tailOf(w.url, '/p.ism/'))).toEqual(
      plainDash.map((w) => tailOf(w.url, '/p.ism/').replace(/^dash\/p-/, 'dash/foo-') + '?presentation_name=foo'),
    );
    const hls = await writtenBy('hls', '/p.ism/.m3u8?presentation_name=foo');
    const names = hls.map((w) => tailOf(w.url, '/p.ism/').replace(/^hls\//, ''));
    expect(names.filter((n) => !n.startsWith('foo-')).length).toBe(0);
    // With fMP4 every track has its own playlist: playlist, init and 3 segments per track (no
    // init for the WebVTT subtitles).
    const fmp4 = await writtenBy('hls', '/p.ism/.m3u8?hls_fmp4=true&presentation_name=foo');
    expect(
      fmp4.filter(
        (w) =>
          !tailOf(w.url, '/p.ism/')
            .replace(/^hls\//, '')
            .startsWith('foo-'),
      ).length,
    ).toBe(0);
    expect(fmp4.length).toBe(tracks.length * 5 - tracks.filter((t) => t.type === 'textstream').length);
    // Smooth URLs carry no <name>: only the query changes.
    const smooth = await writtenBy('smooth', '/p.ism/Manifest?presentation_name=foo');
    expect(smooth.every((w) => w.url.endsWith('?presentation_name=foo') && !w.url.includes('foo-'))).toBe(true);
    const bodies = await fetchAll([...dash, ...hls, ...smooth].map((w) => w.url));
    // The renamed segment URLs answer the bytes of the plain ones.
    const plain = await fetchAll(plainDash.map((w) => w.url));
    dash.forEach((w, i) => expect(bodies.get(w.url)!.body.equals(plain.get(plainDash[i]!.url)!.body)).toBe(true));
    // With the query suppressed the renamed URLs stand on their own.
    await fetchAll(
      (await writtenBy('dash', '/p.ism/.mpd?presentation_name=foo&suppress_query_parameters=true')).map((w) => w.url),
    );
  });

  test('virtual paths: <pres>.ism/<virtual>/<name>.<suffix> and the URLs under it answer the same bytes', async () => {
    const cases = [
      ['smooth', '/p.ism/Manifest', '/p.ism/some/virtual/Manifest'],
      ['dash', '/p.ism/.mpd', '/p.ism/some/virtual/p.mpd'],
      ['hls', '/p.ism/.m3u8', '/p.ism/some/virtual/p.m3u8'],
    ] as const;
    for (const [format, plainPath, virtualPath] of cases) {
      expect((await ok(virtualPath)).body.equals((await ok(plainPath)).body)).toBe(true);
      const plain = await writtenBy(format, plainPath);
      const virtual = await writtenBy(format, virtualPath);
      expect(virtual.map((w) => tailOf(w.url, '/p.ism/some/virtual/'))).toEqual(
        plain.map((w) => tailOf(w.url, '/p.ism/')),
      );
      const a = await fetchAll(plain.map((w) => w.url));
      const b = await fetchAll(virtual.map((w) => w.url));
      const differ = virtual.filter((w, i) => !b.get(w.url)!.body.equals(a.get(plain[i]!.url)!.body)).map((w) => w.url);
      expect([format, differ]).toEqual([format, []]);
    }
  });

  test('mpd_segment_template=number: $Number$ URLs answer the bytes of the $Time$ URLs', async () => {
    const byTime = await writtenBy('dash', '/p.ism/.mpd');
    const byNumber = await writtenBy('dash', '/p.ism/.mpd?mpd_segment_template=number');
    expect(mpdsSeen.get('/p.ism/.mpd?mpd_segment_template=number')).toContain('$Number$');
    // Same timeline, numbered from 1 per representation.
    expect(byNumber.map((w) => [w.key, w.kind, w.time])).toEqual(byTime.map((w) => [w.key, w.kind, w.time]));
    for (const t of tracks) {
      const numbers = byNumber
        .filter((w) => w.key === t.key && w.kind === 'media')
        .map((w) => tailOf(w.url, '/p.ism/'));
      expect(numbers).toEqual([1, 2, 3, 4, 5].map((n) => `dash/p-${t.key}-${n}.dash?mpd_segment_template=number`));
    }
    const a = await fetchAll(byTime.map((w) => w.url));
    const b = await fetchAll(byNumber.map((w) => w.url));
    const differ = byNumber.filter((w, i) => !b.get(w.url)!.body.equals(a.get(byTime[i]!.url)!.body)).map((w) => w.url);
    expect(differ).toEqual([]);
  });

  test('a presentation in a subdirectory is served under its path, named after its basename', async () => {
    const written = await writtenBy('dash', '/a/b/q.ism/.mpd');
    expect(written.length).toBe(tracks.length * 6);
    expect(written.every((w) => new URL(w.url).pathname.startsWith('/a/b/q.ism/dash/q-'))).toBe(true);
    await fetchAll(written.map((w) => w.url));
    expect((await ok('/a/b/q.ism/Manifest')).text).toBe((await ok('/p.ism/Manifest')).text);
  });
});

// ---------------------------------------------------------------------------------------------
// Sub-clips

describe('sub-clip t=0-0:00:06: exactly 3 fragments (6 s) in every format', () => {
  const Q = 't=0-0:00:06';
  const firstThree = (file: string): bigint =>
    facts(file)
      .durations.slice(0, 3)
      .reduce((s, d) => s + d, 0n);

  test('Smooth: 3 chunks per stream at the full presentation times', async () => {
    const written = await writtenBy('smooth', `/p.ism/Manifest?${Q}`);
    const expected = tracks.flatMap((t) =>
      outputTimes(PLAYABLE, t.file)
        .slice(0, 3)
        .map((time) => [`${t.trackName}=${t.bitrate}`, time]),
    );
    expect(written.map((w) => [w.key, w.time]).sort()).toEqual(expected.sort());
    const video = written.filter((w) => w.key === `${track(VIDEO).trackName}=${track(VIDEO).bitrate}`);
    expect(video.reduce((s, w) => s + w.duration!, 0n)).toBe(60_000_000n); // 6 s at 10 MHz
    await fetchAll(written.map((w) => w.url));
  });

  test('DASH: 3 segments per representation', async () => {
    const written = await writtenBy('dash', `/p.ism/.mpd?${Q}`);
    for (const t of tracks) {
      const segments = written.filter((w) => w.key === t.key && w.kind === 'media');
      expect([t.key, segments.map((w) => w.time)]).toEqual([t.key, outputTimes(PLAYABLE, t.file).slice(0, 3)]);
      expect(segments.reduce((s, w) => s + w.duration!, 0n)).toBe(firstThree(t.file));
    }
    await fetchAll(written.map((w) => w.url));
  });

  test('HLS: the media playlists add up to the 3 fragments, and their segments hold exactly them', async () => {
    const { written, playlists } = await hlsWritten(`/p.ism/.m3u8?hls_fmp4=true&${Q}`);
    const bodies = await fetchAll(written.map((w) => w.url));
    for (const t of tracks) {
      const uri = `p-${t.key}.m3u8?hls_fmp4=true&${Q}`;
      const f = facts(t.file);
      const list = playlists.get(uri)!;
      expect(list.segments.map((s) => s.duration)).toEqual([
        Number(f.durations[0]! + f.durations[1]!) / f.timescale,
        Number(f.durations[2]!) / f.timescale,
      ]);
      if (t.type === 'textstream') continue; // WebVTT: its cues are checked in test/hls
      const tfdts = written
        .filter((w) => w.key === uri && w.kind === 'media')
        .flatMap((w) => fragmentTimes(bodies.get(w.url)!.body).map((x) => x.tfdt));
      expect(tfdts).toEqual(outputTimes(PLAYABLE, t.file).slice(0, 3));
    }
    expect(
      playlists.get(`p-${track(VIDEO).key}.m3u8?hls_fmp4=true&${Q}`)!.segments.reduce((s, x) => s + x.duration, 0),
    ).toBe(6);
  });
});

// ---------------------------------------------------------------------------------------------
// Changes and load

test('a rewritten .ism (another track set, new mtime) is picked up by every output once the stat TTL has passed', async () => {
  const before = ismTracks(await fs.readFile(path.join(origin.root, 'c.ism'), 'utf8'));
  const old = before.find((t) => t.type === 'video')!;
  const firsts = {
    smooth: await ok('/c.ism/Manifest'),
    dash: await ok('/c.ism/.mpd'),
    hls: await ok('/c.ism/.m3u8'),
  };
  expect(firsts.smooth.headers['last-modified']).toBe(C_MTIME_BEFORE.toUTCString());
  expect((await ok(`/c.ism/dash/c-${old.key}.dash`)).status).toBe(200);

  const cIsm = path.join(origin.root, 'c.ism');
  const r = await runOrigin(['package', '-q', '-o', cIsm, ...C_AFTER.map(media)]);
  expect(r.stderr).toBe('');
  await fs.utimes(cIsm, C_MTIME_AFTER, C_MTIME_AFTER);
  const after = ismTracks(await fs.readFile(cIsm, 'utf8'));
  expect(after.map((t) => t.file)).toEqual(C_AFTER);
  // The default server trusts a stat for DEFAULT_LIMITS.statTtlMs (test/origin/server/caches.test.ts
  // covers the window itself and --stat-ttl-ms 0).
  await new Promise((resolve) => setTimeout(resolve, DEFAULT_LIMITS.statTtlMs! + 100));

  const smooth = await ok('/c.ism/Manifest');
  expect([...smooth.text.matchAll(/<StreamIndex\b[^>]*\bName="([^"]+)"/g)].map((m) => m[1])).toEqual(
    after.map((t) => t.trackName),
  );
  const dash = await ok('/c.ism/.mpd');
  expect([...dash.text.matchAll(/<Representation\b[^>]*\bid="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(
    after.map((t) => t.key).sort(),
  );
  const hls = await ok('/c.ism/.m3u8');
  for (const t of after) expect(hls.text).toContain(t.key);
  expect(hls.text).not.toContain(old.key);
  for (const [format, r2] of Object.entries({ smooth, dash, hls })) {
    const r1 = firsts[format as keyof typeof firsts];
    expect([format, r2.headers['last-modified'], r2.headers.etag === r1.headers.etag]).toEqual([
      format,
      C_MTIME_AFTER.toUTCString(),
      false,
    ]);
  }
  const gone = await request(`/c.ism/dash/c-${old.key}.dash`);
  expect([gone.status, gone.headers['x-origin-error']]).toEqual([404, 'unknown-track']);
  const fresh = await ok(`/c.ism/dash/c-${after[0]!.key}.dash`);
  expect(fresh.headers['last-modified']).toBe(C_MTIME_AFTER.toUTCString());
});

test('concurrent identical requests on a cold presentation all succeed with identical answers', async () => {
  const v = track(VIDEO);
  const urls = [
    '/d.ism/.mpd',
    '/d.ism/Manifest',
    '/d.ism/.m3u8',
    `/d.ism/hls/d-${v.key}-2.m4s`,
    `/d.ism/dash/d-${v.key}.dash`,
  ];
  const answers = await Promise.all(urls.flatMap((u) => Array.from({ length: 12 }, () => request(u))));
  urls.forEach((u, i) => {
    const group = answers.slice(i * 12, (i + 1) * 12);
    expect([u, group.map((r) => r.status)]).toEqual([u, Array(12).fill(200)]);
    expect(group.every((r) => r.body.equals(group[0]!.body) && r.headers.etag === group[0]!.headers.etag)).toBe(true);
    expect(group[0]!.body.length).toBeGreaterThan(0);
  });
  // And they are what the warm presentation `p` answers, renamed.
  expect(answers[0]!.text).toBe((await ok('/p.ism/.mpd')).text.replace(/dash\/p-/g, 'dash/d-'));
});

test('every MPD fetched in this file validates against the DASH schema', () => {
  expect(mpdsSeen.size).toBeGreaterThanOrEqual(10);
  const invalid = [...mpdsSeen]
    .map(([u, text]) => [u, validateMpd(text)] as const)
    .filter(([, v]) => !v.ok)
    .map(([u, v]) => `${u}: ${v.output}`);
  expect(invalid).toEqual([]);
});
