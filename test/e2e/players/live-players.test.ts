// Real players on live channels (issue 21, acceptance 1): ffmpeg pushes CMAF ingest (one chunked
// POST per track, -re, epoch-locked on the 1.92 s grid, live-notes §4.1) to one channel and Smooth
// ingest (one POST of both tracks, the demo's feeder, origin/cli/demo-live.ts) to another, both to
// the origin's ingest listener; hls.js (MPEG-TS and fMP4), dash.js and shaka 5 in headless Chromium
// play each channel at the live edge for more than 10 s, then seek back into the DVR window and
// play from there.
// The players find the origin's clock through the MPD's UTCTiming (/.time): nothing here sets one.

import { ChildProcess, spawn } from 'node:child_process';
import * as http from 'node:http';
import type { Page } from 'playwright-core';
import { feederArgs } from '../../../origin/cli/demo-live';
import { PlayerName } from '../../../origin/player/player-page';
import { RunningIngest, startIngestServer } from '../../../origin/server/ingest-server';
import { RunningServer, startServer } from '../../../origin/server/server';
import { closeBrowser, newPage, playerTestsEnabled, screenshotAndClose } from '../../helpers/browser';
import { tempDir } from '../../helpers/fixtures';
import { createChannel, eventually, liveServerOptions } from '../../helpers/live';
import { httpGet } from '../../helpers/test-encoder';

const T0 = ((Math.floor(Date.now() / 1920) * 192) / 100).toFixed(2);
const CMAF = '+cmaf+empty_moov+separate_moof+default_base_moof+frag_discont+skip_trailer';
/** Long enough for every player below; ffmpeg is stopped in afterAll. */
const RUN_SECONDS = '240';

function ffmpegArgs(ingest: string): string[] {
  const v = ['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-b:v', '300k'];
  const gop = ['-g', '48', '-keyint_min', '48', '-sc_threshold', '0'];
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
    ...['-map', '0:v', ...v, ...gop, '-t', RUN_SECONDS, '-video_track_timescale', '25', '-output_ts_offset', T0],
    ...['-movflags', `${CMAF}+frag_keyframe`, '-f', 'mp4', `${ingest}/Streams(video-320x180-300k.cmfv)`],
    ...['-map', '1:a', '-c:a', 'aac', '-b:a', '64k', '-ar', '48000', '-t', RUN_SECONDS],
    ...['-frag_duration', '1920000', '-min_frag_duration', '1920000', '-output_ts_offset', T0],
    ...['-movflags', CMAF, '-f', 'mp4', `${ingest}/Streams(audio-64k.cmfa)`],
  ];
}

const PAIRS: Array<[PlayerName, string]> = [
  ['hlsjs', '.m3u8'],
  ['hlsjs', '.m3u8?hls_fmp4=true'],
  ['dashjs', '.mpd'],
  ['shaka', '.mpd'],
];
/** The channels: `ch` takes CMAF ingest, `sm` Smooth ingest. */
const CHANNELS = ['ch', 'sm'] as const;
const CASES = CHANNELS.flatMap((ch) => PAIRS.map(([player, manifest]) => [ch, player, manifest] as const));

interface Playhead {
  currentTime: number;
  paused: boolean;
  start: number;
  end: number;
  errors: string[];
}

async function playhead(page: Page): Promise<Playhead> {
  return page.evaluate(() => {
    const video = document.getElementById('video') as HTMLVideoElement;
    const s = video.seekable;
    const t = (window as unknown as { __test?: { errors: string[] } }).__test;
    return {
      currentTime: video.currentTime,
      paused: video.paused,
      start: s.length > 0 ? s.start(0) : NaN,
      end: s.length > 0 ? s.end(s.length - 1) : NaN,
      errors: t === undefined ? ['no window.__test'] : [...t.errors],
    };
  });
}

/** Polls until `ok` holds (the playhead then) or `ms` passes (the last playhead, failing the caller's check). */
async function until(page: Page, ok: (p: Playhead) => boolean, ms: number): Promise<Playhead> {
  const deadline = Date.now() + ms;
  for (;;) {
    const p = await playhead(page);
    if (ok(p) || p.errors.length > 0 || Date.now() > deadline) return p;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('real players on a live channel fed by ffmpeg', () => {
  let ingest: RunningIngest;
  let serving: RunningServer;
  const ffmpegs: ChildProcess[] = [];
  let ffmpegErrors = '';

  beforeAll(async () => {
    const root = tempDir('origin-live-players-');
    for (const ch of CHANNELS) await createChannel(root, ch, ['--dvr_window_length=30']);
    ingest = await startIngestServer({ root, host: '127.0.0.1', port: 0, sync: false });
    serving = await startServer({ ...liveServerOptions(root), playerPage: true });
    const cmaf = ffmpegArgs(`${ingest.url}/live/ch.isml`);
    const smooth = feederArgs(`${ingest.url}/live/sm.isml`, Number(T0) * 1000);
    for (const args of [cmaf, smooth]) {
      const ffmpeg = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      ffmpeg.stderr!.on('data', (c: Buffer) => (ffmpegErrors += c.toString()));
      ffmpegs.push(ffmpeg);
    }
    // 16 s of media: the first player starts with a window to seek back into.
    for (const ch of CHANNELS)
      await eventually(
        async () =>
          JSON.parse((await httpGet(`${serving.url}/live/${ch}.isml/state?format=json`)).body) as {
            tracks: Array<{ lastTimeUtc: string | null }>;
          },
        (s) =>
          s.tracks.length === 2 &&
          s.tracks.every((t) => t.lastTimeUtc !== null && Date.parse(t.lastTimeUtc) >= Number(T0) * 1000 + 16_000),
        40_000,
      );
  }, 90_000);

  afterAll(async () => {
    for (const ffmpeg of ffmpegs) ffmpeg.kill('SIGKILL');
    await closeBrowser();
    await ingest?.close();
    await serving?.close();
  });

  test.each(CASES)(
    'channel %s: %s plays %s at the live edge past 10 s, then from the DVR window',
    async (ch, player, manifest) => {
      const page = await newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
      const url = `${serving.url}/play?player=${player}&url=${encodeURIComponent(`${serving.url}/live/${ch}.isml/${manifest}`)}`;
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
    expect(ffmpegErrors).toBe('');
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
