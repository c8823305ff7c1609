// The player page of `npm start -- --live` (origin demo --live: origin/cli/demo-live.ts) plays the
// demo's live channel in headless Chromium, through the demo's edge: ffmpeg feeds the channel
// (Smooth ingest of a test pattern, times on UTC), hls.js plays its MPEG-TS HLS and dash.js MSS
// its live Smooth manifest, each for 8 s past where it started, with no error.

import type { Page } from 'playwright-core';
import { PlayerName } from '../../../origin/player/player-page';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { Capture, RunningDemo, startDemo } from '../../helpers/demo';
import { eventually } from '../../helpers/live';
import { httpGet } from '../../helpers/test-encoder';

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

async function playhead(page: Page): Promise<{ currentTime: number; paused: boolean; errors: string[] }> {
  return page.evaluate(() => {
    const video = document.getElementById('video') as HTMLVideoElement;
    const t = (window as unknown as { __test?: { errors: string[] } }).__test;
    return {
      currentTime: video.currentTime,
      paused: video.paused,
      errors: t === undefined ? ['no window.__test'] : [...t.errors],
    };
  });
}

describePlayers('the player page plays the demo live channel', () => {
  let demo: RunningDemo;

  beforeAll(async () => {
    const out = new Capture();
    const err = new Capture();
    const started = Date.now();
    demo = await startDemo(out, err, ['--live', '--ingest-port', '0']);
    expect(out.text).toContain('fed by ffmpeg');
    // 10 s of media archived, so that a player starts with segments behind the edge.
    await eventually(
      async () =>
        JSON.parse((await httpGet(`${demo.edge}/live/demo.isml/state?format=json`)).body) as {
          tracks: Array<{ lastTimeUtc: string | null }>;
        },
      (s) =>
        s.tracks.length === 2 &&
        s.tracks.every((t) => t.lastTimeUtc !== null && Date.parse(t.lastTimeUtc) >= started + 10_000),
      45_000,
    );
  }, 90_000);

  afterAll(async () => {
    // The browser first: playwright exits the process on a SIGINT while it has one open.
    await closeBrowser();
    process.emit('SIGINT');
    expect(await demo?.running).toBe(0);
  }, 30_000);

  test.each<[PlayerName, string]>([
    ['hlsjs', '.m3u8'],
    ['dashjs-mss', 'Manifest'],
  ])(
    '%s plays %s for 8 s',
    async (player, manifest) => {
      const page = await newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (e) => pageErrors.push(`uncaught: ${e.message}`));
      try {
        const url = encodeURIComponent(`${demo.edge}/live/demo.isml/${manifest}`);
        await page.goto(`${demo.edge}/play?player=${player}&url=${url}`, { waitUntil: 'load', timeout: 20_000 });
        let first = await playhead(page);
        for (let i = 0; i < 100 && first.errors.length === 0 && !(first.currentTime > 0 && !first.paused); i++) {
          await new Promise((r) => setTimeout(r, 250));
          first = await playhead(page);
        }
        expect({ playing: first.currentTime > 0, errors: first.errors }).toEqual({ playing: true, errors: [] });
        let now = first;
        for (let i = 0; i < 120 && now.errors.length === 0 && now.currentTime < first.currentTime + 8; i++) {
          await new Promise((r) => setTimeout(r, 250));
          now = await playhead(page);
        }
        expect({ played: now.currentTime >= first.currentTime + 8, errors: now.errors }).toEqual({
          played: true,
          errors: [],
        });
        expect(pageErrors).toEqual([]);
      } finally {
        await screenshotAndClose(page, `demo-live-${player}`, pageErrors);
      }
    },
    60_000,
  );
});
