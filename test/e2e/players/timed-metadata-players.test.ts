// hls.js reads the origin's timed ID3 (issue 27): from the ID3 PES stream of MPEG-TS segments and
// from the emsg boxes of fMP4 segments, each tag at its media time within a frame. A page of
// our own (a static file of the test root) runs hls.js from /_players/ and keeps every
// FRAG_PARSING_METADATA sample; the test plays to the end of the fixture.

import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { RunningServer, startServer } from '../../../origin/server/server';
import { CHROMIUM, CHROMIUM_ARGS, playerTestsEnabled } from '../../helpers/browser';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { EVENTS, ID3_SCHEME, META_URIM } from '../../helpers/timed-metadata';
import { testServerOptions } from '../../origin/server/server-helpers';

const PAGE = `<!doctype html><html><body><video id="video" muted playsinline></video>
<script src="/_players/hls.min.js"></script>
<script>
  window.__id3 = [];
  window.__errors = [];
  const video = document.getElementById('video');
  const hls = new Hls();
  hls.on(Hls.Events.FRAG_PARSING_METADATA, (_e, d) => {
    for (const s of d.samples) window.__id3.push({ pts: s.pts, hex: Array.from(s.data, (b) => b.toString(16).padStart(2, '0')).join('') });
  });
  hls.on(Hls.Events.ERROR, (_e, d) => { if (d.fatal) window.__errors.push(d.details); });
  hls.loadSource(new URLSearchParams(location.search).get('src'));
  hls.attachMedia(video);
  video.play().catch(() => {});
</script></body></html>`;

const FRAME = 1 / 24;
/** Output seconds of a fixture event (the presentation starts with the audio's priming, 21.3 ms before the video). */
const outputSeconds = (ms: number): number => ms / 1000 + 213333 / 1e7;

const enabled = playerTestsEnabled();
(enabled ? describe : describe.skip)('hls.js exposes the timed ID3', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const root = tempDir('origin-tm-players-');
    mkdirSync(path.join(root, 'meta'));
    const r = await runOrigin([
      'package',
      '-q',
      '--timed_metadata',
      '-o',
      path.join(root, 'meta', 'p.ism'),
      media('video_baseline_400k.ismv'),
      media('audio_eng_64k.isma'),
      META_URIM,
    ]);
    expect(r.code).toBe(0);
    writeFileSync(path.join(root, 'id3.html'), PAGE);
    server = await startServer(testServerOptions(root, []));
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ['MPEG-TS', '/meta/p.ism/.m3u8'],
    ['fMP4', '/meta/p.ism/.m3u8?hls_fmp4=true'],
  ])('%s: every ID3 tag, byte for byte, within a frame of its time', async (_kind, src) => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      const base = server.url.replace(/\/$/, '');
      await page.goto(`${base}/id3.html?src=${encodeURIComponent(base + src)}`);
      const expected = EVENTS.filter((e) => e.scheme === ID3_SCHEME);
      let seen: { id3: Array<{ pts: number; hex: string }>; errors: string[] } = { id3: [], errors: [] };
      for (let i = 0; i < 150 && seen.id3.length < expected.length && seen.errors.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 200));
        seen = await page.evaluate(() => {
          const w = window as unknown as { __id3: Array<{ pts: number; hex: string }>; __errors: string[] };
          return { id3: [...w.__id3], errors: [...w.__errors] };
        });
      }
      expect(seen.errors).toEqual([]);
      const tags = [...seen.id3].sort((a, b) => a.pts - b.pts);
      expect(tags.map((t) => t.hex)).toEqual(expected.map((e) => e.data));
      tags.forEach((t, i) => expect(Math.abs(t.pts - outputSeconds(expected[i]!.time))).toBeLessThanOrEqual(FRAME));
    } finally {
      await browser.close();
    }
  });
});

const DASH_PAGE = `<!doctype html><html><body><video id="video" muted playsinline></video>
<script src="/_players/dash.all.min.js"></script>
<script>
  window.__events = [];
  window.__errors = [];
  const player = dashjs.MediaPlayer().create();
  const keep = (mode) => (e) => {
    const ev = e.event;
    window.__events.push({ mode, scheme: ev.eventStream.schemeIdUri, id: ev.id,
      time: ev.calculatedPresentationTime ?? ev.presentationTime / ev.eventStream.timescale });
  };
  for (const scheme of ['https://aomedia.org/emsg/ID3', 'urn:scte:scte35:2014:xml+bin']) {
    player.on(scheme, keep('receive'), null, { mode: dashjs.MediaPlayer.events.EVENT_MODE_ON_RECEIVE });
    player.on(scheme, keep('start'), null, { mode: dashjs.MediaPlayer.events.EVENT_MODE_ON_START });
  }
  player.on(dashjs.MediaPlayer.events.ERROR, (e) => window.__errors.push(JSON.stringify(e.error)));
  player.initialize(document.getElementById('video'), new URLSearchParams(location.search).get('src'), true);
</script></body></html>`;

(enabled ? describe : describe.skip)('dash.js raises the MPD events', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const root = tempDir('origin-tm-dash-');
    mkdirSync(path.join(root, 'meta'));
    const r = await runOrigin([
      'package',
      '-q',
      '--timed_metadata',
      '-o',
      path.join(root, 'meta', 'p.ism'),
      media('video_baseline_400k.ismv'),
      media('audio_eng_64k.isma'),
      META_URIM,
    ]);
    expect(r.code).toBe(0);
    writeFileSync(path.join(root, 'dash.html'), DASH_PAGE);
    server = await startServer(testServerOptions(root, []));
  });
  afterAll(async () => {
    await server.close();
  });

  it('on receive and on start, with the scheme, id and presentation time of each', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    type Seen = { mode: string; scheme: string; id: number; time: number };
    try {
      const page = await browser.newPage();
      const base = server.url.replace(/\/$/, '');
      await page.goto(`${base}/dash.html?src=${encodeURIComponent(`${base}/meta/p.ism/.mpd`)}`);
      let seen: { events: Seen[]; errors: string[] } = { events: [], errors: [] };
      const started = (): number => seen.events.filter((e) => e.mode === 'start').length;
      for (let i = 0; i < 150 && started() < EVENTS.length && seen.errors.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 200));
        seen = await page.evaluate(() => {
          const w = window as unknown as { __events: Seen[]; __errors: string[] };
          return { events: [...w.__events], errors: [...w.__errors] };
        });
      }
      expect(seen.errors).toEqual([]);
      const scheme = (s: string): string => (s === ID3_SCHEME ? s : 'urn:scte:scte35:2014:xml+bin');
      for (const mode of ['receive', 'start']) {
        const got = seen.events.filter((e) => e.mode === mode).sort((a, b) => a.time - b.time || a.id - b.id);
        const want = [...EVENTS].sort((a, b) => a.time - b.time || a.id - b.id);
        expect(got.map((e) => [e.scheme, e.id])).toEqual(want.map((e) => [scheme(e.scheme), e.id]));
        got.forEach((e, i) => expect(Math.abs(e.time - outputSeconds(want[i]!.time))).toBeLessThanOrEqual(FRAME));
      }
    } finally {
      await browser.close();
    }
  });
});

const SHAKA_PAGE = `<!doctype html><html><body><video id="video" muted playsinline></video>
<script src="/_players/shaka-player.compiled.js"></script>
<script>
  window.__events = [];
  window.__errors = [];
  (async () => {
    shaka.polyfill.installAll();
    const player = new shaka.Player();
    await player.attach(document.getElementById('video'));
    player.addEventListener('timelineregionadded', (e) => {
      const d = e.detail;
      window.__events.push({ scheme: d.schemeIdUri, id: Number(d.id), time: d.startTime });
    });
    player.addEventListener('error', (e) => window.__errors.push(String(e.detail && e.detail.code)));
    try { await player.load(new URLSearchParams(location.search).get('src')); }
    catch (e) { window.__errors.push(String(e.code || e)); }
  })();
</script></body></html>`;

(enabled ? describe : describe.skip)('shaka 5 reports the MPD events', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const root = tempDir('origin-tm-shaka-');
    mkdirSync(path.join(root, 'meta'));
    const r = await runOrigin([
      'package',
      '-q',
      '--timed_metadata',
      '-o',
      path.join(root, 'meta', 'p.ism'),
      media('video_baseline_400k.ismv'),
      media('audio_eng_64k.isma'),
      META_URIM,
    ]);
    expect(r.code).toBe(0);
    writeFileSync(path.join(root, 'shaka.html'), SHAKA_PAGE);
    server = await startServer(testServerOptions(root, []));
  });
  afterAll(async () => {
    await server.close();
  });

  it('as timeline regions, with the scheme, id and start time of each', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    type Seen = { scheme: string; id: number; time: number };
    try {
      const page = await browser.newPage();
      const base = server.url.replace(/\/$/, '');
      await page.goto(`${base}/shaka.html?src=${encodeURIComponent(`${base}/meta/p.ism/.mpd`)}`);
      let seen: { events: Seen[]; errors: string[] } = { events: [], errors: [] };
      for (let i = 0; i < 100 && seen.events.length < EVENTS.length && seen.errors.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 200));
        seen = await page.evaluate(() => {
          const w = window as unknown as { __events: Seen[]; __errors: string[] };
          return { events: [...w.__events], errors: [...w.__errors] };
        });
      }
      expect(seen.errors).toEqual([]);
      const scheme = (s: string): string => (s === ID3_SCHEME ? s : 'urn:scte:scte35:2014:xml+bin');
      const got = [...seen.events].sort((a, b) => a.time - b.time || a.id - b.id);
      const want = [...EVENTS].sort((a, b) => a.time - b.time || a.id - b.id);
      expect(got.map((e) => [e.scheme, e.id])).toEqual(want.map((e) => [scheme(e.scheme), e.id]));
      got.forEach((e, i) => expect(Math.abs(e.time - outputSeconds(want[i]!.time))).toBeLessThanOrEqual(FRAME));
    } finally {
      await browser.close();
    }
  });
});
