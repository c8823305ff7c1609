// The failure drills with a real player (issue 21): hls.js in headless Chromium keeps playing a
// live channel fed by ffmpeg (CMAF ingest, epoch-locked on the 1.92 s grid, live-notes §4.1)
// - when one of two redundant ffmpeg encoders is killed (the other goes on feeding the channel);
// - when the origin itself (the built CLI, `origin serve`) is killed with SIGKILL mid-stream and
//   started again on the same ports, and the harness restarts ffmpeg where the archive ends (the
//   same timeline, no gap): playback resumes.
// The manifests and segments of these drills are checked in test/origin/live/*-drill.test.ts.

import { ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../helpers/nginx';
import type { Page } from 'playwright-core';
import { RunningIngest, startIngestServer } from '../../../origin/server/ingest-server';
import { RunningServer, startServer } from '../../../origin/server/server';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { tempDir } from '../../helpers/fixtures';
import { createChannel, liveServerOptions, LiveState } from '../../helpers/live';
import { ServedCli, serveCli, stopCli } from '../../helpers/live-cli';
import { cmafIngestArgs, GRID, mediaPast, Playhead, playhead, until } from '../../helpers/live-players';
import { httpGet } from '../../helpers/test-encoder';

/** ffmpeg pushing a test pattern's video and audio for 120 s, times from `t0` (seconds since 1970, on the grid). */
function ffmpeg(channelUrl: string, t0: string): ChildProcess {
  return spawn('ffmpeg', cmafIngestArgs(channelUrl, t0, 120), { stdio: ['ignore', 'ignore', 'ignore'] });
}

function kill(p: ChildProcess | undefined): Promise<void> {
  if (p === undefined || p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.once('exit', () => resolve());
    p.kill('SIGKILL');
  });
}

async function state(url: string): Promise<LiveState> {
  return JSON.parse((await httpGet(`${url}/live/ch.isml/state?format=json`)).body) as LiveState;
}

/** Polls until `ok` holds, a fatal error is reported, or `ms` passes; the last playhead. */
function untilOrFatal(page: Page, ok: (p: Playhead) => boolean, ms: number): Promise<Playhead> {
  return until(page, ok, ms, undefined, (p) => fatal(p).length > 0);
}

/** Errors that stop playback (hls.js reports the refused playlist reloads of an outage as non-fatal). */
function fatal(p: Playhead): string[] {
  return p.errors.filter((e) => !e.startsWith('hls.js non-fatal'));
}

/** Opens hls.js on the channel's fMP4 playlist and waits until it plays. */
async function startPlaying(page: Page, url: string): Promise<Playhead> {
  const manifest = encodeURIComponent(`${url}/live/ch.isml/.m3u8?hls_fmp4=true`);
  await page.goto(`${url}/play?player=hlsjs&url=${manifest}`, { waitUntil: 'load', timeout: 20_000 });
  return untilOrFatal(page, (p) => p.currentTime > 0 && !p.paused, 25_000);
}

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('failure drills with hls.js', () => {
  afterAll(() => closeBrowser());

  test('two redundant ffmpeg encoders, one killed: hls.js plays on', async () => {
    const root = tempDir('origin-drill-redundant-');
    await createChannel(root, 'ch', ['--dvr_window_length=30']);
    let ingest: RunningIngest | undefined;
    let serving: RunningServer | undefined;
    const encoders: ChildProcess[] = [];
    const page = await newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(`uncaught: ${e.message}`));
    try {
      serving = await startServer({ ...liveServerOptions(root), playerPage: true });
      const table = serving.live;
      ingest = await startIngestServer({
        root,
        host: '127.0.0.1',
        port: 0,
        sync: false,
        onPublish: (m) => table.apply(m),
      });
      const t0 = Math.floor(Date.now() / 1000 / GRID) * GRID;
      const channel = `${ingest.url}/live/ch.isml`;
      encoders.push(ffmpeg(channel, t0.toFixed(2)), ffmpeg(channel, t0.toFixed(2)));
      await mediaPast(serving.url, 'ch', (t0 + 8) * 1000);
      const started = await startPlaying(page, serving.url);
      expect({ playing: started.currentTime > 0, errors: started.errors }).toEqual({ playing: true, errors: [] });
      await kill(encoders[0]);
      const after = await untilOrFatal(page, (p) => p.currentTime > started.currentTime + 10, 30_000);
      expect({ played: after.currentTime - started.currentTime > 10, errors: after.errors }).toEqual({
        played: true,
        errors: [],
      });
      const s = await state(serving.url);
      expect(s.tracks.map((t) => [t.gaps, t.lateDropped])).toEqual([
        [0, 0],
        [0, 0],
      ]);
      expect(s.tracks.every((t) => t.duplicatesDropped > 0)).toBe(true);
      expect(pageErrors).toEqual([]);
    } finally {
      for (const e of encoders) await kill(e);
      await screenshotAndClose(page, 'live-drill-redundant-hlsjs', pageErrors);
      await ingest?.close();
      await serving?.close();
    }
  }, 120_000);

  test('the origin killed with SIGKILL and restarted, ffmpeg restarted where the archive ends: hls.js resumes', async () => {
    const root = tempDir('origin-drill-kill-');
    await createChannel(root, 'ch', ['--archiving', '--dvr_window_length=30']);
    const ports = ['--workers', '1', '--port', String(await freePort()), '--ingest-port', String(await freePort())];
    let origin: ServedCli | undefined;
    let encoder: ChildProcess | undefined;
    const page = await newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(`uncaught: ${e.message}`));
    try {
      origin = await serveCli(root, ports);
      const t0 = Math.floor(Date.now() / 1000 / GRID) * GRID;
      encoder = ffmpeg(`${origin.ingest}/live/ch.isml`, t0.toFixed(2));
      await mediaPast(origin.url, 'ch', (t0 + 8) * 1000);
      const started = await startPlaying(page, origin.url);
      expect({ playing: started.currentTime > 0, errors: started.errors }).toEqual({ playing: true, errors: [] });

      await stopCli(origin, 'SIGKILL');
      await kill(encoder); // its POSTs broke with the origin
      origin = await serveCli(root, ports);
      // Where the archive ends: the next grid slot after the older track's newest fragment.
      const s = await state(origin.url);
      const slots = s.tracks.map((t) => Math.round((Date.parse(t.lastTimeUtc!) / 1000 - t0) / GRID));
      const resume = t0 + (Math.min(...slots) + 1) * GRID;
      encoder = ffmpeg(`${origin.ingest}/live/ch.isml`, resume.toFixed(2));
      const killedAt = (await playhead(page)).currentTime;
      const after = await untilOrFatal(page, (p) => p.currentTime > killedAt + 10, 45_000);
      expect({ resumed: after.currentTime > killedAt + 10, fatal: fatal(after) }).toEqual({ resumed: true, fatal: [] });
      const end = await state(origin.url);
      expect(end.tracks.map((t) => [t.gaps, t.lateDropped])).toEqual([
        [0, 0],
        [0, 0],
      ]);
      expect(pageErrors).toEqual([]);
    } finally {
      await kill(encoder);
      await screenshotAndClose(page, 'live-drill-origin-kill-hlsjs', pageErrors);
      if (origin !== undefined) await stopCli(origin, 'SIGTERM');
    }
  }, 150_000);
});
