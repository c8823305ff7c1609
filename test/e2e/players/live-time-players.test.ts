// Real players on a channel's time controls (docs/guide/live.md#time-controls): ffmpeg pushes CMAF
// ingest epoch-locked on the 1.92 s grid (as live-players.test.ts); hls.js, dash.js and shaka 5
// play `time_shift=12` and must play, further behind the wall clock than at the edge by about the
// shift (the date each player says it is playing: hls.js playingDate, dash.js timeAsUTC, shaka
// getPlayheadTimeAsDate);
// dash.js and hls.js play a closed `t=<ISO>-<ISO>` range (static MPD, ENDLIST) to its end.

import type { Page } from 'playwright-core';
import { PlayerName } from '../../../origin/player/player-page';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { cmafIngestArgs, Encoders, mediaPast, PlayerOrigin, startPlayerOrigin } from '../../helpers/live-players';

const T0 = Math.floor(Date.now() / 1920) * 1.92;
const RUN_SECONDS = 200;
const SHIFT = 12;

interface Seen {
  currentTime: number;
  paused: boolean;
  ended: boolean;
  /** Wall-clock ms minus the date the player says it plays (NaN: it says none). */
  lagMs: number;
  errors: string[];
}

async function seen(page: Page, player: PlayerName): Promise<Seen> {
  return page.evaluate((name) => {
    const video = document.getElementById('video') as HTMLVideoElement;
    const w = window as unknown as { __test?: { errors: string[] }; __player?: Record<string, () => unknown> };
    const p = w.__player as unknown as {
      playingDate?: Date | null;
      timeAsUTC?: () => number;
      getPlayheadTimeAsDate?: () => Date | null;
    };
    let date = NaN;
    if (p !== undefined) {
      if (name === 'hlsjs') date = p.playingDate?.getTime() ?? NaN;
      else if (name === 'dashjs') date = (p.timeAsUTC?.() ?? NaN) * 1000;
      else date = p.getPlayheadTimeAsDate?.()?.getTime() ?? NaN;
    }
    return {
      currentTime: video.currentTime,
      paused: video.paused,
      ended: video.ended,
      lagMs: Date.now() - date,
      errors: w.__test === undefined ? ['no window.__test'] : [...w.__test.errors],
    };
  }, player);
}

async function until(page: Page, player: PlayerName, ok: (s: Seen) => boolean, ms: number): Promise<Seen> {
  const deadline = Date.now() + ms;
  for (;;) {
    const s = await seen(page, player);
    if (ok(s) || s.errors.length > 0 || Date.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('real players on time controls of a live channel fed by ffmpeg', () => {
  let origin: PlayerOrigin;
  const encoders = new Encoders();
  const play = (player: PlayerName, manifest: string): string => {
    const serving = origin.serving.url;
    return `${serving}/play?player=${player}&url=${encodeURIComponent(`${serving}/live/ch.isml/${manifest}`)}`;
  };

  beforeAll(async () => {
    origin = await startPlayerOrigin('origin-live-time-players-', ['ch'], ['--dvr_window_length=30', '--archiving']);
    encoders.start(cmafIngestArgs(`${origin.ingest.url}/live/ch.isml`, T0.toFixed(2), RUN_SECONDS));
    // The shift plus a window to play: 12 s behind an edge 30 s in.
    await mediaPast(origin.serving.url, 'ch', T0 * 1000 + 30_000, 60_000);
  }, 80_000);

  afterAll(async () => {
    encoders.killAll();
    await closeBrowser();
    await origin?.close();
  });

  /** Plays `manifest` for 6 s; how far behind the wall clock the player then says it is, ms. */
  async function lagOf(player: PlayerName, manifest: string): Promise<number> {
    const page = await newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
    try {
      await page.goto(play(player, manifest), { waitUntil: 'load', timeout: 20_000 });
      const started = await until(page, player, (s) => s.currentTime > 0 && !s.paused, 25_000);
      expect({ manifest, started: started.currentTime > 0, errors: started.errors }).toEqual({
        manifest,
        started: true,
        errors: [],
      });
      const later = await until(page, player, (s) => s.currentTime > started.currentTime + 6, 25_000);
      expect({ manifest, played: later.currentTime > started.currentTime + 6, errors: later.errors }).toEqual({
        manifest,
        played: true,
        errors: [],
      });
      expect(errors).toEqual([]);
      return later.lagMs;
    } finally {
      await screenshotAndClose(page, `live-time-${player}-${manifest.replace(/[^a-z0-9]+/gi, '-')}`, errors);
    }
  }

  test.each([
    ['hlsjs', '.m3u8'],
    ['dashjs', '.mpd'],
    ['shaka', '.mpd'],
  ] as Array<[PlayerName, string]>)(
    '%s plays %s?time_shift=12 behind the clock by the shift',
    async (player, manifest) => {
      // Against the same player's own delay at the edge, measured in the same run.
      const edge = await lagOf(player, manifest);
      const shifted = await lagOf(player, `${manifest}?time_shift=${SHIFT}`);
      // Each player starts on a segment boundary, in each of the two runs: HLS segments are 3.84 s
      // (two 1.92-s fragments), so the two lags differ from the shift by up to two segments.
      expect(shifted - edge).toBeGreaterThan((SHIFT - 7.68) * 1000);
      expect(shifted - edge).toBeLessThan((SHIFT + 6) * 1000);
    },
    120_000,
  );

  test.each([
    ['hlsjs', '.m3u8'],
    ['dashjs', '.mpd'],
  ] as Array<[PlayerName, string]>)(
    '%s plays a closed range of %s to its end',
    async (player, manifest) => {
      const iso = (s: number): string => new Date(Math.round(s * 1000)).toISOString().replace(/Z$/, '');
      // 9.6 s of the archive, 5 fragments on the grid, wholly in the past.
      const range = `t=${iso(T0 + 3.84)}-${iso(T0 + 13.44)}`;
      const page = await newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      try {
        await page.goto(play(player, `${manifest}?${range}`), { waitUntil: 'load', timeout: 20_000 });
        const done = await until(page, player, (s) => s.ended, 40_000);
        expect({ ended: done.ended, errors: done.errors }).toEqual({ ended: true, errors: [] });
        expect(errors).toEqual([]);
      } finally {
        await screenshotAndClose(page, `live-time-range-${player}`, errors);
      }
    },
    60_000,
  );

  test('ffmpeg pushed without an error', () => {
    expect(encoders.errors).toBe('');
  });
});
