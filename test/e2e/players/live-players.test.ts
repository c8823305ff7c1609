// Real players on live channels (issue 21, acceptance 1): ffmpeg pushes CMAF ingest (one chunked
// POST per track, -re, epoch-locked on the 1.92 s grid, live-notes §4.1) to one channel and Smooth
// ingest (one POST of both tracks, the demo's feeder, origin/cli/demo-live.ts) to another, both to
// the origin's ingest listener; hls.js (MPEG-TS and fMP4), dash.js and shaka 5 in headless Chromium
// play each channel at the live edge for more than 10 s, then seek back into the DVR window and
// play from there.
// The players find the origin's clock through the MPD's UTCTiming (/.time): nothing here sets one.

import * as http from 'node:http';
import { feederArgs } from '../../../origin/cli/demo-live';
import { PlayerName } from '../../../origin/player/player-page';
import { startServer } from '../../../origin/server/server';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { tempDir } from '../../helpers/fixtures';
import { liveServerOptions } from '../../helpers/live';
import {
  cmafIngestArgs,
  Encoders,
  mediaPast,
  PlayerOrigin,
  startPlayerOrigin,
  until,
} from '../../helpers/live-players';

const T0 = ((Math.floor(Date.now() / 1920) * 192) / 100).toFixed(2);
/** Long enough for every player below; ffmpeg is stopped in afterAll. */
const RUN_SECONDS = 240;

const PAIRS: Array<[PlayerName, string]> = [
  ['hlsjs', '.m3u8'],
  ['hlsjs', '.m3u8?hls_fmp4=true'],
  ['dashjs', '.mpd'],
  ['shaka', '.mpd'],
];
/** The channels: `ch` takes CMAF ingest, `sm` Smooth ingest. */
const CHANNELS = ['ch', 'sm'] as const;
const CASES = CHANNELS.flatMap((ch) => PAIRS.map(([player, manifest]) => [ch, player, manifest] as const));

const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('real players on a live channel fed by ffmpeg', () => {
  let origin: PlayerOrigin;
  const encoders = new Encoders();

  beforeAll(async () => {
    origin = await startPlayerOrigin('origin-live-players-', [...CHANNELS], ['--dvr_window_length=30']);
    const ingest = origin.ingest.url;
    encoders.start(cmafIngestArgs(`${ingest}/live/ch.isml`, T0, RUN_SECONDS));
    encoders.start(feederArgs(`${ingest}/live/sm.isml`, Number(T0) * 1000));
    // 16 s of media: the first player starts with a window to seek back into.
    for (const ch of CHANNELS) await mediaPast(origin.serving.url, ch, Number(T0) * 1000 + 16_000);
  }, 90_000);

  afterAll(async () => {
    encoders.killAll();
    await closeBrowser();
    await origin?.close();
  });

  test.each(CASES)(
    'channel %s: %s plays %s at the live edge past 10 s, then from the DVR window',
    async (ch, player, manifest) => {
      const page = await newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      const serving = origin.serving.url;
      const url = `${serving}/play?player=${player}&url=${encodeURIComponent(`${serving}/live/${ch}.isml/${manifest}`)}`;
      try {
        await page.goto(url, { waitUntil: 'load', timeout: 20_000 });
        const started = await until(page, (p) => p.currentTime > 0 && !p.paused, 20_000);
        expect({ started: started.currentTime > 0, errors: started.errors }).toEqual({ started: true, errors: [] });
        // Live: the playhead is near the edge of the seekable window (a few segments behind it).
        expect(started.end - started.currentTime).toBeLessThan(20);
        const edge = await until(page, (p) => p.currentTime > started.currentTime + 10, 25_000);
        expect({ played: edge.currentTime - started.currentTime > 10, errors: edge.errors }).toEqual({
          played: true,
          errors: [],
        });
        // DVR: 20 s behind the edge of the 30-s window, and playback goes on from there. (hls.js
        // keeps 0 as the start of video.seekable as its window slides: the end is what all agree on.)
        expect(edge.end - edge.start).toBeGreaterThan(15);
        const target = Math.max(edge.start, edge.end - 20);
        await page.evaluate((t) => {
          (document.getElementById('video') as HTMLVideoElement).currentTime = t;
        }, target);
        const back = await until(page, (p) => p.currentTime > target + 3 && !p.paused, 20_000);
        expect({ errors: back.errors, played: back.currentTime > target + 3 }).toEqual({ errors: [], played: true });
        expect(back.currentTime).toBeLessThan(target + 12);
        expect(errors).toEqual([]);
      } finally {
        await screenshotAndClose(page, `live-${ch}-${player}-${manifest.replace(/[^a-z0-9]+/gi, '-')}`, errors);
      }
    },
    90_000,
  );

  test('ffmpeg pushed without an error', () => {
    expect(encoders.errors).toBe('');
  });
});

// The origin's clock, as the MPD's UTCTiming names it.
test('/.time answers an xs:dateTime', async () => {
  const server = await startServer(
    liveServerOptions(tempDir('origin-time-'), () => Date.UTC(2030, 0, 2, 3, 4, 5, 678)),
  );
  try {
    const r = await new Promise<{ status: number; body: string; cc: string | undefined }>((resolve, reject) =>
      http
        .get(`${server.url}/.time`, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, cc: res.headers['cache-control'] }));
        })
        .on('error', reject),
    );
    expect(r).toEqual({ status: 200, body: '2030-01-02T03:04:05.678Z', cc: 'no-store' });
  } finally {
    await server.close();
  }
});
