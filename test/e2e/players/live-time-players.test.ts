// Real players on a channel's time controls (docs/guide/live.md#time-controls): ffmpeg pushes CMAF
// ingest epoch-locked on the 1.92 s grid (as live-players.test.ts); hls.js, dash.js and shaka 5
// play `time_shift=12` and must play, further behind the wall clock than at the edge by about the
// shift (the date each player says it is playing: hls.js playingDate, dash.js timeAsUTC, shaka
// getPlayheadTimeAsDate);
// dash.js and hls.js play a closed `t=<ISO>-<ISO>` range (static MPD, ENDLIST) to its end.

import { ChildProcess, spawn } from 'node:child_process';
import type { Page } from 'playwright-core';
import { PlayerName } from '../../../origin/player/player-page';
import { RunningIngest, startIngestServer } from '../../../origin/server/ingest-server';
import { RunningServer, startServer } from '../../../origin/server/server';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { tempDir } from '../../helpers/fixtures';
import { createChannel, eventually, liveServerOptions } from '../../helpers/live';
import { httpGet } from '../../helpers/test-encoder';

const T0 = Math.floor(Date.now() / 1920) * 1.92;
const CMAF = '+cmaf+empty_moov+separate_moof+default_base_moof+frag_discont+skip_trailer';
const RUN_SECONDS = '200';
const SHIFT = 12;

function ffmpegArgs(ingest: string): string[] {
  const v = ['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-b:v', '300k'];
  const gop = ['-g', '48', '-keyint_min', '48', '-sc_threshold', '0'];
  const offset = ['-output_ts_offset', T0.toFixed(2)];
  return [
    ...['-hide_banner', '-loglevel', 'error', '-re'],
    ...[
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=320x180:rate=25',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=1000:sample_rate=48000',
    ],
    ...['-map', '0:v', ...v, ...gop, '-t', RUN_SECONDS, '-video_track_timescale', '25', ...offset],
    ...['-movflags', `${CMAF}+frag_keyframe`, '-f', 'mp4', `${ingest}/Streams(video-320x180-300k.cmfv)`],
    ...['-map', '1:a', '-c:a', 'aac', '-b:a', '64k', '-ar', '48000', '-t', RUN_SECONDS],
    ...['-frag_duration', '1920000', '-min_frag_duration', '1920000', ...offset],
    ...['-movflags', CMAF, '-f', 'mp4', `${ingest}/Streams(audio-64k.cmfa)`],
  ];
}

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
  let ingest: RunningIngest;
  let serving: RunningServer;
  let ffmpeg: ChildProcess | undefined;
  let ffmpegErrors = '';
  const play = (player: PlayerName, manifest: string): string =>
    `${serving.url}/play?player=${player}&url=${encodeURIComponent(`${serving.url}/live/ch.isml/${manifest}`)}`;

  beforeAll(async () => {
    const root = tempDir('origin-live-time-players-');
    await createChannel(root, 'ch', ['--dvr_window_length=30', '--archiving']);
    ingest = await startIngestServer({ root, host: '127.0.0.1', port: 0, sync: false });
    serving = await startServer({ ...liveServerOptions(root), playerPage: true });
    ffmpeg = spawn('ffmpeg', ffmpegArgs(`${ingest.url}/live/ch.isml`), { stdio: ['ignore', 'ignore', 'pipe'] });
    ffmpeg.stderr!.on('data', (c: Buffer) => (ffmpegErrors += c.toString()));
    // The shift plus a window to play: 12 s behind an edge 30 s in.
    await eventually(
      async () =>
        JSON.parse((await httpGet(`${serving.url}/live/ch.isml/state?format=json`)).body) as {
          tracks: Array<{ lastTimeUtc: string | null }>;
        },
      (s) =>
        s.tracks.length === 2 &&
        s.tracks.every((t) => t.lastTimeUtc !== null && Date.parse(t.lastTimeUtc) >= T0 * 1000 + 30_000),
      60_000,
    );
  }, 80_000);

  afterAll(async () => {
    ffmpeg?.kill('SIGKILL');
    await closeBrowser();
    await ingest?.close();
    await serving?.close();
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
    expect(ffmpegErrors).toBe('');
  });
});
