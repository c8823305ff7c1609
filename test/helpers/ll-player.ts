// Low-latency player test set-up shared by the LL-HLS (hls.js) and LL-DASH (dash.js) player
// tests: a channel fed live by ffmpeg CMAF ingest, UTC-anchored (issue 23 acceptance). Video
// and audio are cut into 0.32 s chunks (`-frag_duration 320000`, GOP 48 at 25 fps = 1.92 s
// segments) and ffmpeg starts on a 1.92 s boundary of the wall clock, so that media time is
// when a frame was made. Each test keeps its own player probe and its own thresholds.

import { ChildProcess, spawn } from 'node:child_process';
import type { Page } from 'playwright-core';
import { RunningIngest, startIngestServer } from '../../origin/server/ingest-server';
import { RunningServer, startServer } from '../../origin/server/server';
import { tempDir } from './fixtures';
import { createChannel, eventually, liveServerOptions } from './live';
import { httpGet } from './test-encoder';

/** Seconds of latency sampling: 20 in CI, 60 with ORIGIN_LL_LONG=1 (the acceptance run). */
export const SAMPLE_SECONDS = process.env.ORIGIN_LL_LONG === '1' ? 60 : 20;
const CMAF = '+cmaf+empty_moov+separate_moof+default_base_moof+frag_discont+skip_trailer';
/** One segment (48 frames at 25 fps), in ms: ffmpeg starts on a multiple of it. */
const SEGMENT_MS = 1920;

function ffmpegArgs(ingest: string, t0: string, perTrack: string[]): string[] {
  const seconds = String(SAMPLE_SECONDS + 60);
  const v = ['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-b:v', '300k'];
  const gop = ['-g', '48', '-keyint_min', '48', '-sc_threshold', '0'];
  const parts = ['-frag_duration', '320000', ...perTrack];
  return [
    ...['-hide_banner', '-loglevel', 'error', '-re'],
    ...['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000'],
    ...['-map', '0:v', ...v, ...gop, ...parts, '-t', seconds, '-video_track_timescale', '25'],
    ...['-output_ts_offset', t0, '-movflags', `${CMAF}+frag_keyframe`, '-f', 'mp4'],
    `${ingest}/Streams(video-320x180-300k.cmfv)`,
    ...['-map', '1:a', '-c:a', 'aac', '-b:a', '64k', '-ar', '48000', ...parts, '-t', seconds],
    ...['-output_ts_offset', t0, '-movflags', CMAF, '-f', 'mp4', `${ingest}/Streams(audio-64k.cmfa)`],
  ];
}

/** Nearest-rank percentile `p` (0–100) of `values`. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export interface LlChannel {
  serving: RunningServer;
  ingest: RunningIngest;
  /** What ffmpeg wrote on stderr (with `-loglevel error`: its errors). */
  ffmpegErrors(): string;
  /** Kills ffmpeg, closes the ingest server and the origin. */
  close(): Promise<void>;
}

/**
 * Channel `ll` (made with `channelOptions`) served with the player page, fed by ffmpeg from the
 * next 1.92 s boundary; resolves once `manifest` (e.g. `.m3u8`, `.mpd`) answers 200.
 * `ffmpegTrackArgs` are added to each track's output options (e.g. `-write_prft wallclock`).
 */
export async function startLlChannel(
  prefix: string,
  channelOptions: string[],
  manifest: string,
  ffmpegTrackArgs: string[] = [],
): Promise<LlChannel> {
  const root = tempDir(prefix);
  await createChannel(root, 'll', channelOptions);
  const serving = await startServer({ ...liveServerOptions(root), playerPage: true });
  let ingest: RunningIngest | undefined;
  let ffmpeg: ChildProcess | undefined;
  let errors = '';
  const close = async (): Promise<void> => {
    ffmpeg?.kill('SIGKILL');
    await ingest?.close();
    await serving.close();
  };
  try {
    const started = await startIngestServer({
      root,
      host: '127.0.0.1',
      port: 0,
      sync: false,
      onPublish: (m) => serving.live.apply(m),
    });
    ingest = started;
    // Start on the next 1.92 s boundary: media time 0 is then the wall clock's T0.
    const t0Ms = Math.ceil(Date.now() / SEGMENT_MS) * SEGMENT_MS;
    await new Promise((r) => setTimeout(r, t0Ms - Date.now()));
    const t0 = (t0Ms / 1000).toFixed(2);
    ffmpeg = spawn('ffmpeg', ffmpegArgs(`${started.url}/live/ll.isml`, t0, ffmpegTrackArgs), {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    ffmpeg.stderr!.on('data', (c: Buffer) => (errors += c.toString()));
    await eventually(
      async () => (await httpGet(`${serving.url}/live/ll.isml/${manifest}`)).status,
      (s) => s === 200,
      20_000,
    );
    return { serving, ingest: started, ffmpegErrors: () => errors, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** What a player probe reports: the errors the player page collected. */
export interface ProbeSample {
  errors: string[];
}

/**
 * Opens `player` (a `/play?player=` name) on `manifest` and waits up to 30 s until `playing`
 * holds for a probe sample or the page reports an error; expects it to be playing without
 * errors, then lets the player settle 4 s on its target latency.
 */
export async function openPlaying<S extends ProbeSample>(
  page: Page,
  url: { player: string; origin: string; manifest: string },
  probe: (page: Page) => Promise<S>,
  playing: (s: S) => boolean,
): Promise<void> {
  await page.goto(`${url.origin}/play?player=${url.player}&url=${encodeURIComponent(url.manifest)}`, {
    waitUntil: 'load',
    timeout: 20_000,
  });
  const deadline = Date.now() + 30_000;
  let s = await probe(page);
  while (!playing(s) && s.errors.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    s = await probe(page);
  }
  expect({ playing: playing(s), errors: s.errors }).toEqual({ playing: true, errors: [] });
  await new Promise((r) => setTimeout(r, 4000));
}

/** Probe samples twice a second for SAMPLE_SECONDS. */
export async function sampleTwiceASecond<S>(page: Page, probe: (page: Page) => Promise<S>): Promise<S[]> {
  const samples: S[] = [];
  const end = Date.now() + SAMPLE_SECONDS * 1000;
  while (Date.now() < end) {
    samples.push(await probe(page));
    await new Promise((r) => setTimeout(r, 500));
  }
  return samples;
}
