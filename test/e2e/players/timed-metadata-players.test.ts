// The players read the origin's timed metadata (issue 27): hls.js and shaka 5 the ID3 of HLS (the
// ID3 PES stream of MPEG-TS segments, the emsg boxes of fMP4 segments), each tag at its media
// time within a frame; dash.js and shaka 5 the MPD's events. A page of our own per player (a
// static file of the test root) runs it from /_players/ and keeps what it reports.

import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { RunningServer, startServer } from '../../../origin/server/server';
import { CHROMIUM, CHROMIUM_ARGS, playerTestsEnabled } from '../../helpers/browser';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { EVENTS, ID3_SCHEME, META_URIM, SCTE35_SCHEME } from '../../helpers/timed-metadata';
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
let server: RunningServer;
let base: string;
if (enabled) {
  // One presentation (video, audio and the urim metadata track) and every player's page.
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
    writeFileSync(path.join(root, 'dash.html'), DASH_PAGE);
    writeFileSync(path.join(root, 'shaka.html'), SHAKA_PAGE);
    server = await startServer(testServerOptions(root, []));
    base = server.url.replace(/\/$/, '');
  });
  afterAll(async () => {
    await server.close();
  });
}

/**
 * Opens `page` (a file of the test root) on `src` in headless Chromium and polls the page's
 * `window[key]` and `window.__errors` every 200 ms until `enough` holds, an error shows, or
 * `polls` have passed; returns what the page saw.
 */
async function watch<T>(
  pageName: string,
  src: string,
  key: string,
  enough: (seen: T[]) => boolean,
  polls = 150,
): Promise<{ seen: T[]; errors: string[] }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/${pageName}?src=${encodeURIComponent(base + src)}`);
    let out: { seen: T[]; errors: string[] } = { seen: [], errors: [] };
    for (let i = 0; i < polls && !enough(out.seen) && out.errors.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      out = await page.evaluate((k) => {
        const w = window as unknown as Record<string, unknown[]>;
        return { seen: [...(w[k] as T[])], errors: [...(w['__errors'] as string[])] };
      }, key);
    }
    return out;
  } finally {
    await browser.close();
  }
}

/** The scheme a player reports for a fixture event: SCTE-35 is written as the MPD's XML+bin form. */
const mpdScheme = (s: string): string => (s === ID3_SCHEME ? s : 'urn:scte:scte35:2014:xml+bin');
const byTimeThenId =
  <E extends { id: number }>(time: (e: E) => number) =>
  (a: E, b: E): number =>
    time(a) - time(b) || a.id - b.id;

(enabled ? describe : describe.skip)('hls.js exposes the timed ID3', () => {
  it.each([
    ['MPEG-TS', '/meta/p.ism/.m3u8'],
    ['fMP4', '/meta/p.ism/.m3u8?hls_fmp4=true'],
  ])('%s: every ID3 tag, byte for byte, within a frame of its time', async (_kind, src) => {
    const expected = EVENTS.filter((e) => e.scheme === ID3_SCHEME);
    const { seen, errors } = await watch<{ pts: number; hex: string }>(
      'id3.html',
      src,
      '__id3',
      (id3) => id3.length >= expected.length,
    );
    expect(errors).toEqual([]);
    const tags = [...seen].sort((a, b) => a.pts - b.pts);
    expect(tags.map((t) => t.hex)).toEqual(expected.map((e) => e.data));
    tags.forEach((t, i) => expect(Math.abs(t.pts - outputSeconds(expected[i]!.time))).toBeLessThanOrEqual(FRAME));
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
  it('on receive and on start, with the scheme, id and presentation time of each', async () => {
    type Seen = { mode: string; scheme: string; id: number; time: number };
    const { seen, errors } = await watch<Seen>(
      'dash.html',
      '/meta/p.ism/.mpd',
      '__events',
      (events) => events.filter((e) => e.mode === 'start').length >= EVENTS.length,
    );
    expect(errors).toEqual([]);
    const want = [...EVENTS].sort(byTimeThenId((e) => e.time));
    for (const mode of ['receive', 'start']) {
      const got = seen.filter((e) => e.mode === mode).sort(byTimeThenId((e) => e.time));
      expect(got.map((e) => [e.scheme, e.id])).toEqual(want.map((e) => [mpdScheme(e.scheme), e.id]));
      got.forEach((e, i) => expect(Math.abs(e.time - outputSeconds(want[i]!.time))).toBeLessThanOrEqual(FRAME));
    }
  });
});

const SHAKA_PAGE = `<!doctype html><html><body><video id="video" muted playsinline></video>
<script src="/_players/shaka-player.compiled.js"></script>
<script>
  window.__events = [];
  window.__metadata = [];
  window.__errors = [];
  (async () => {
    shaka.polyfill.installAll();
    const player = new shaka.Player();
    await player.attach(document.getElementById('video'));
    player.addEventListener('timelineregionadded', (e) => {
      const d = e.detail;
      window.__events.push({ scheme: d.schemeIdUri, id: Number(d.id), time: d.startTime });
    });
    const text = (v) => typeof v === 'string' ? v : Array.from(new Uint8Array(v), (b) => b.toString(16).padStart(2, '0')).join('');
    // HLS has no emsg signalling: shaka reads the emsg boxes of fMP4 segments only when told to.
    player.configure({ mediaSource: { dispatchAllEmsgBoxes: true } });
    player.addEventListener('metadataadded', (e) => {
      window.__metadata.push({ type: e.metadataType, time: e.startTime, key: e.payload.key,
        description: e.payload.description, data: text(e.payload.data) });
    });
    player.addEventListener('error', (e) => window.__errors.push(String(e.detail && e.detail.code)));
    try { await player.load(new URLSearchParams(location.search).get('src')); }
    catch (e) { window.__errors.push(String(e.code || e)); }
  })();
</script></body></html>`;

(enabled ? describe : describe.skip)('shaka 5 reports the MPD events', () => {
  it('as timeline regions, with the scheme, id and start time of each', async () => {
    type Seen = { scheme: string; id: number; time: number };
    const { seen, errors } = await watch<Seen>(
      'shaka.html',
      '/meta/p.ism/.mpd',
      '__events',
      (events) => events.length >= EVENTS.length,
      100,
    );
    expect(errors).toEqual([]);
    const got = [...seen].sort(byTimeThenId((e) => e.time));
    const want = [...EVENTS].sort(byTimeThenId((e) => e.time));
    expect(got.map((e) => [e.scheme, e.id])).toEqual(want.map((e) => [mpdScheme(e.scheme), e.id]));
    got.forEach((e, i) => expect(Math.abs(e.time - outputSeconds(want[i]!.time))).toBeLessThanOrEqual(FRAME));
  });
});

/** The ID3 frames of the fixture's tags (fixtures/make-timed-metadata.cjs), as shaka reports them. */
const ID3_FRAMES = [
  { id: 1, key: 'TXXX', description: 'title', data: 'Intro' },
  { id: 2, key: 'PRIV', description: 'com.example.origin', data: Buffer.from('ad-break:start').toString('hex') },
  { id: 3, key: 'TXXX', description: 'title', data: 'Outro' },
];

(enabled ? describe : describe.skip)('shaka 5 reports the HLS timed ID3', () => {
  it('the fixture tags are what the frames say', () => {
    // The expected frames above, checked against the tags' bytes so that they cannot drift apart.
    for (const f of ID3_FRAMES) {
      const tag = Buffer.from(EVENTS.find((e) => e.id === f.id)!.data, 'hex');
      expect(tag.subarray(10, 14).toString('latin1')).toBe(f.key);
      expect(tag.includes(Buffer.from(f.description))).toBe(true);
      expect(tag.includes(f.key === 'PRIV' ? Buffer.from(f.data, 'hex') : Buffer.from(f.data))).toBe(true);
    }
  });

  // shaka splits a TS that carries audio and video into its two source buffers and reads the
  // ID3 stream once for each: every tag comes twice for the muxed variant, once for video alone.
  it.each([
    ['MPEG-TS (video)', `/meta/p.ism/.m3u8?filter=${encodeURIComponent('type!="audio"')}`, false],
    ['MPEG-TS (audio and video muxed)', '/meta/p.ism/.m3u8', true],
    ['fMP4', '/meta/p.ism/.m3u8?hls_fmp4=true', false],
  ])(
    '%s: every ID3 frame as a metadata region within a frame of its time, the cues as DATERANGE',
    async (_kind, src, twice) => {
      type Seen = { type: string; time: number; key: string; description: string; data: string };
      const id3 = (m: Seen[]): Seen[] => m.filter((x) => x.type === 'org.id3');
      const count = ID3_FRAMES.length * (twice ? 2 : 1);
      const { seen, errors } = await watch<Seen>('shaka.html', src, '__metadata', (m) => id3(m).length >= count);
      expect(errors).toEqual([]);
      expect(id3(seen)).toHaveLength(count);
      // Each frame (key, owner or description, data) as often as the variant says, every copy at its time.
      const content = (m: { key: string; description: string; data: string }): string =>
        JSON.stringify([m.key, m.description, m.data]);
      const got = id3(seen);
      const frames = [...new Map(got.map((m) => [content(m), m])).values()].sort((a, b) => a.time - b.time);
      expect(frames.map(content)).toEqual(ID3_FRAMES.map(content));
      for (const f of ID3_FRAMES) {
        const copies = got.filter((m) => content(m) === content(f));
        expect(copies).toHaveLength(twice ? 2 : 1);
        const at = outputSeconds(EVENTS.find((e) => e.id === f.id)!.time);
        for (const m of copies) expect(Math.abs(m.time - at)).toBeLessThanOrEqual(FRAME);
      }
      // The SCTE-35 cues reach shaka as the playlist's EXT-X-DATERANGE attributes, each section whole.
      const sections = seen.filter((m) => m.type === 'com.apple.quicktime.HLS' && m.key.startsWith('SCTE35-'));
      const want = EVENTS.filter((e) => e.scheme === SCTE35_SCHEME).map((e) => `0x${e.data.toUpperCase()}`);
      expect(sections.map((m) => m.data).sort()).toEqual(want.sort());
    },
  );
});
