// Failure drills with real players (docs/guide/live.md, "Failure drills"): ffmpeg pushes CMAF
// ingest on the 1.92 s grid (live-notes §4.1) to two channels, is killed (SIGKILL: no trailer, the
// POSTs cut) after 16 s of media, and started again:
// - `same` 10 s later with the same anchor (its times on the old grid): a 10-s gap, EXT-X-GAP
//   segments in HLS, a hole in the DASH timeline, no discontinuity;
// - `fresh` 3 s later with a new anchor half a fragment off the grid: EXT-X-DISCONTINUITY in HLS,
//   a new Period in DASH.
// hls.js and dash.js join each at the live edge, seek back to 5 s before the break and must play
// across it, with no fatal error, to the far side.

import { PlayerName } from '../../../origin/player/player-page';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { eventually } from '../../helpers/live';
import {
  cmafIngestArgs,
  Encoders,
  GRID,
  playhead,
  PlayerOrigin,
  startPlayerOrigin,
  until,
} from '../../helpers/live-players';
import { httpGet } from '../../helpers/test-encoder';

/** hls.js reports each EXT-X-GAP segment it skips as a non-fatal fragGap: expected here. */
const notGapSkips = (e: string): boolean => !e.includes(' non-fatal ');
const RUN_SECONDS = 200;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('players across an encoder restart', () => {
  let origin: PlayerOrigin;
  const encoders = new Encoders();
  /** Per channel: the wall-clock end of the first run's media and the length of the hole after it, s. */
  const breaks = new Map<string, { at: number; hole: number }>();

  const start = (ch: string, offset: number): void => {
    encoders.start(cmafIngestArgs(`${origin.ingest.url}/live/${ch}.isml`, offset.toFixed(2), RUN_SECONDS));
  };
  const lastEnd = async (ch: string): Promise<number> => {
    const s = JSON.parse((await httpGet(`${origin.serving.url}/live/${ch}.isml/state?format=json`)).body) as {
      tracks: Array<{ type?: string; track: string; lastTimeUtc: string | null }>;
    };
    const video = s.tracks.find((t) => t.track.startsWith('video'));
    return video?.lastTimeUtc == null ? 0 : Date.parse(video.lastTimeUtc) / 1000 + GRID;
  };

  beforeAll(async () => {
    origin = await startPlayerOrigin('origin-live-restart-', ['same', 'fresh'], ['--dvr_window_length=60']);
    const t0 = Math.floor(Date.now() / 1000 / GRID) * GRID;
    start('same', t0);
    start('fresh', t0);
    await eventually(
      async () => Math.min(await lastEnd('same'), await lastEnd('fresh')),
      (end) => end >= t0 + 16,
      40_000,
    );
    encoders.killAll();
    await sleep(500);
    for (const ch of ['same', 'fresh']) breaks.set(ch, { at: await lastEnd(ch), hole: 0 });
    await sleep(2500);
    // A new anchor: now, half a fragment off the 1.92-s grid.
    const fresh = Math.floor(Date.now() / 1000 / GRID) * GRID + GRID / 2;
    start('fresh', fresh);
    breaks.get('fresh')!.hole = fresh - breaks.get('fresh')!.at;
    await sleep(7000);
    // The same anchor: the next slot of the old grid.
    const same = Math.ceil(Date.now() / 1000 / GRID) * GRID;
    start('same', same);
    breaks.get('same')!.hole = same - breaks.get('same')!.at;
    await eventually(
      async () => Math.min((await lastEnd('same')) - same, (await lastEnd('fresh')) - fresh),
      (after) => after >= 14,
      40_000,
    );
  }, 120_000);

  afterAll(async () => {
    encoders.killAll();
    await closeBrowser();
    await origin?.close();
  });

  test('the manifests: a gap on the grid after the same anchor, a discontinuity and a Period after a new one', async () => {
    const get = async (u: string): Promise<string> => (await httpGet(`${origin.serving.url}/live/${u}`)).body;
    // MPEG-TS multiplexes audio into the video's playlist; fMP4 has each track's own (hls.ts).
    for (const tail of ['audio=64000-video=300000.m3u8', 'video=300000.m3u8?hls_fmp4=true']) {
      const same = await get(`same.isml/same-${tail}`);
      expect(same).toContain('#EXT-X-GAP');
      expect(same).not.toContain('#EXT-X-DISCONTINUITY');
      const fresh = await get(`fresh.isml/fresh-${tail}`);
      expect(fresh.match(/#EXT-X-DISCONTINUITY\n/g)).toHaveLength(1);
    }
    expect((await get('same.isml/.mpd')).match(/<Period /g)).toHaveLength(1);
    expect((await get('fresh.isml/.mpd')).match(/<Period /g)).toHaveLength(2);
  });

  const CASES: Array<[PlayerName, string, string]> = [
    ['hlsjs', 'same', '.m3u8'],
    ['dashjs', 'same', '.mpd'],
    ['hlsjs', 'fresh', '.m3u8?hls_fmp4=true'],
    ['dashjs', 'fresh', '.mpd'],
  ];

  test.each(CASES)(
    '%s plays %s across the break (%s)',
    async (player, ch, manifest) => {
      const page = await newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      const serving = origin.serving.url;
      const target = `${serving}/live/${ch}.isml/${manifest}`;
      try {
        await page.goto(`${serving}/play?player=${player}&url=${encodeURIComponent(target)}`, {
          waitUntil: 'load',
          timeout: 20_000,
        });
        // Up to 40 s: in CI, hls.js once needed more than 20 s to start on the restarted fMP4 channel.
        const started = await until(page, (p) => p.currentTime > 0 && !p.paused, 40_000, notGapSkips);
        expect({ started: started.currentTime > 0, errors: started.errors }).toEqual({ started: true, errors: [] });
        // Back to 5 s before the break: the seekable end is the archive's edge, whose wall clock we know.
        const b = breaks.get(ch)!;
        const now = await playhead(page, notGapSkips);
        const behind = (await lastEnd(ch)) - b.at + 5;
        const from = now.end - behind;
        await page.evaluate((t) => {
          (document.getElementById('video') as HTMLVideoElement).currentTime = t;
        }, from);
        // Past the break and the hole, and 4 s into the second run.
        const across = from + 5 + b.hole + 4;
        const after = await until(page, (p) => p.currentTime > across && !p.paused, 45_000, notGapSkips);
        expect({ errors: after.errors, across: after.currentTime > across, from, hole: b.hole }).toEqual({
          errors: [],
          across: true,
          from,
          hole: b.hole,
        });
        expect(errors).toEqual([]);
      } finally {
        await screenshotAndClose(page, `live-restart-${player}-${ch}`, errors);
      }
    },
    90_000,
  );

  test('ffmpeg pushed without an error until it was killed', () => {
    expect(encoders.errors).toBe('');
  });
});
