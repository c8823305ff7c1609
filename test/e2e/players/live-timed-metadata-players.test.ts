// Players read a live channel's timed metadata (issue 27, live part): the test encoder pushes the
// fixture's video with its emsg boxes (ID3 as version 0, SCTE-35 as version 1) and the audio in
// real time, a fresh channel per player; hls.js reports the ID3 of MPEG-TS and fMP4 segments at
// their media time (checked through the segment's PROGRAM-DATE-TIME: a tag's UTC within a frame
// of the event's), dash.js raises the inband events on receive and on start with the emsg's
// scheme, id and presentation time (UTC seconds: Period start 0 at the Unix epoch). Kept short:
// the structure is checked in test/origin/live/live-events.test.ts.

import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { RunningIngest, startIngestServer } from '../../../origin/server/ingest-server';
import { RunningServer, startServer } from '../../../origin/server/server';
import { CHROMIUM, CHROMIUM_ARGS, playerTestsEnabled } from '../../helpers/browser';
import { media, tempDir } from '../../helpers/fixtures';
import { createChannel, eventually, liveServerOptions } from '../../helpers/live';
import { httpGet, loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { EVENTS, ID3_SCHEME, inbandVideo, SCTE35_SCHEME } from '../../helpers/timed-metadata';

const HLS_PAGE = `<!doctype html><html><body><video id="video" muted playsinline></video>
<script src="/_players/hls.min.js"></script>
<script>
  window.__seen = [];
  window.__errors = [];
  const video = document.getElementById('video');
  const hls = new Hls();
  hls.on(Hls.Events.FRAG_PARSING_METADATA, (_e, d) => {
    for (const s of d.samples) window.__seen.push({ pts: s.pts, frag: d.frag,
      hex: Array.from(s.data, (b) => b.toString(16).padStart(2, '0')).join('') });
  });
  hls.on(Hls.Events.ERROR, (_e, d) => { if (d.fatal) window.__errors.push(d.details); });
  hls.loadSource(new URLSearchParams(location.search).get('src'));
  hls.attachMedia(video);
  video.play().catch(() => {});
</script></body></html>`;

const DASH_PAGE = `<!doctype html><html><body><video id="video" muted playsinline></video>
<script src="/_players/dash.all.min.js"></script>
<script>
  window.__seen = [];
  window.__errors = [];
  const player = dashjs.MediaPlayer().create();
  // Far enough behind the edge to start at the channel's first segment, before the first event.
  player.updateSettings({ streaming: { delay: { liveDelay: 14 } } });
  const keep = (mode) => (e) => {
    const ev = e.event;
    window.__seen.push({ mode, scheme: ev.eventStream.schemeIdUri, id: ev.id, time: ev.calculatedPresentationTime });
  };
  for (const scheme of ['${ID3_SCHEME}', '${SCTE35_SCHEME}']) {
    player.on(scheme, keep('receive'), null, { mode: dashjs.MediaPlayer.events.EVENT_MODE_ON_RECEIVE });
    player.on(scheme, keep('start'), null, { mode: dashjs.MediaPlayer.events.EVENT_MODE_ON_START });
  }
  player.on(dashjs.MediaPlayer.events.ERROR, (e) => window.__errors.push(JSON.stringify(e.error)));
  player.initialize(document.getElementById('video'), new URLSearchParams(location.search).get('src'), true);
</script></body></html>`;

const FRAME = 1 / 24;
const enabled = playerTestsEnabled();
let root: string;
let ingest: RunningIngest;
let serving: RunningServer;
const video = enabled ? loadFixture(inbandVideo()) : undefined;
const audio = enabled ? loadFixture(media('audio_eng_64k.isma')) : undefined;

if (enabled) {
  beforeAll(async () => {
    root = tempDir('origin-live-tm-players-');
    writeFileSync(path.join(root, 'hls.html'), HLS_PAGE);
    writeFileSync(path.join(root, 'dash.html'), DASH_PAGE);
    ingest = await startIngestServer({ root, host: '127.0.0.1', port: 0, sync: false });
    serving = await startServer({ ...liveServerOptions(root), playerPage: true });
  });
  afterAll(async () => {
    await ingest.close();
    await serving.close();
  });
}

/**
 * A channel of its own (`--archiving`, so a replayed fragment's events, whose ids repeat, stay
 * repeats of the first): 8 s of media at once, anchored on the 4-s grid, then one 2-s fragment of
 * video (and audio) as each falls due, until `stop()`. Answers the anchor (UTC seconds).
 */
async function liveChannel(name: string, withAudio = true): Promise<{ anchor: number; stop: () => Promise<void> }> {
  mkdirSync(path.join(root, 'live'), { recursive: true });
  await createChannel(root, name, ['--timed_metadata', '--archiving']);
  const anchor = Math.floor(Date.now() / 4000) * 4 - 8;
  const channelUrl = `${ingest.url}/live/${name}.isml`;
  const encoders = [
    new TestEncoder({ channelUrl, stream: 'video-400k.cmfv', fixture: video!, anchorSeconds: anchor }),
    new TestEncoder({ channelUrl, stream: 'audio-64k.cmfa', fixture: audio!, anchorSeconds: anchor }),
  ].slice(0, withAudio ? 2 : 1);
  for (const e of encoders) {
    await e.open();
    await e.send(0, 4);
  }
  let next = 4;
  let stopped = false;
  const pacing = (async () => {
    while (!stopped) {
      if (Date.now() >= (anchor + 2 * (next + 1)) * 1000) {
        for (const e of encoders) await e.send(next);
        next++;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await eventually(
    async () => JSON.parse((await httpGet(`${serving.url}/live/${name}.isml/state?format=json`)).body),
    (s: { tracks: Array<{ fragments: number }> }) =>
      s.tracks.length === encoders.length && s.tracks.every((t) => t.fragments >= 4),
  );
  return {
    anchor,
    stop: async () => {
      stopped = true;
      await pacing;
      for (const e of encoders) await e.close();
    },
  };
}

/** Opens `page` on `src` and polls `window.__seen` until `enough` holds, an error shows, or 30 s pass. */
async function watch<T>(
  page: string,
  src: string,
  enough: (seen: T[]) => boolean,
): Promise<{ seen: T[]; errors: string[] }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const p = await browser.newPage();
    await p.goto(`${serving.url}/${page}?src=${encodeURIComponent(serving.url + src)}`);
    let out: { seen: T[]; errors: string[] } = { seen: [], errors: [] };
    for (let i = 0; i < 150 && !enough(out.seen) && out.errors.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      out = await p.evaluate(() => {
        const w = window as unknown as { __seen: Array<Record<string, unknown>>; __errors: string[] };
        // hls.js fragments are read when polled: their start is set once they are parsed.
        const seen = w.__seen.map((s) => {
          const frag = s.frag as { start: number; programDateTime: number } | undefined;
          return frag === undefined ? s : { ...s, frag: undefined, start: frag.start, pdt: frag.programDateTime };
        });
        return { seen: seen as unknown as T[], errors: [...w.__errors] };
      });
    }
    return out;
  } finally {
    await browser.close();
  }
}

(enabled ? describe : describe.skip)('players on a live channel with timed metadata', () => {
  it.each([
    ['MPEG-TS', 'ts', '.m3u8'],
    ['fMP4', 'fmp4', '.m3u8?hls_fmp4=true'],
  ])('hls.js %s: every ID3 tag, byte for byte, at its UTC time within a frame', async (_kind, name, manifest) => {
    const ch = await liveChannel(name);
    try {
      const id3 = EVENTS.filter((e) => e.scheme === ID3_SCHEME);
      type Seen = { pts: number; hex: string; start: number; pdt: number };
      const { seen, errors } = await watch<Seen>(
        'hls.html',
        `/live/${name}.isml/${manifest}`,
        (s) => s.length >= id3.length,
      );
      expect(errors).toEqual([]);
      const tags = [...seen].sort((a, b) => a.pts - b.pts);
      expect(tags.map((t) => t.hex)).toEqual(id3.map((e) => e.data));
      // The tag's media time, dated by its segment's PROGRAM-DATE-TIME, is the event's UTC time.
      tags.forEach((t, i) => {
        const utc = t.pdt / 1000 + (t.pts - t.start);
        expect(Math.abs(utc - (ch.anchor + id3[i]!.time / 1000))).toBeLessThanOrEqual(FRAME);
      });
    } finally {
      await ch.stop();
    }
  });

  it('dash.js: the inband events on receive and on start, with the emsg scheme, id and UTC time', async () => {
    // Video only: the audio fixture's fragments, replayed, do not keep dash.js's 2-s grid.
    const ch = await liveChannel('dash', false);
    try {
      type Seen = { mode: string; scheme: string; id: number; time: number };
      const { seen, errors } = await watch<Seen>(
        'dash.html',
        '/live/dash.isml/.mpd',
        (s) => s.filter((e) => e.mode === 'start').length >= EVENTS.length,
      );
      expect(errors).toEqual([]);
      for (const mode of ['receive', 'start']) {
        const got = seen.filter((e) => e.mode === mode);
        expect(EVENTS.filter((e) => !got.some((g) => g.id === e.id)).map((e) => e.id)).toEqual([]);
        for (const g of got) {
          const e = EVENTS.find((x) => x.id === g.id)!;
          expect(g.scheme).toBe(e.scheme);
          expect(Math.abs(g.time - (ch.anchor + e.time / 1000))).toBeLessThanOrEqual(FRAME);
        }
      }
    } finally {
      await ch.stop();
    }
  });
});
