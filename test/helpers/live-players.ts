// What the live player tests share (test/e2e/players/live-*.test.ts): ffmpeg as a CMAF ingest
// encoder (stock 5.1, the live notes' recipe §4.1: one chunked POST per track, tfdt on UTC through
// -output_ts_offset, 48-frame GOPs at 25 fps and 1.92-s AAC fragments, so both tracks share the
// 1.92 s grid), an origin whose serving port has the player page, and the playhead of the page.

import { ChildProcess, spawn } from 'node:child_process';
import type { Page } from 'playwright-core';
import { RunningIngest, startIngestServer } from '../../origin/server/ingest-server';
import { RunningServer, startServer } from '../../origin/server/server';
import { tempDir } from './fixtures';
import { createChannel, eventually, liveServerOptions, LiveState } from './live';
import { httpGet } from './test-encoder';

/** The fragment grid, s: 48 frames at 25 fps = 90 AAC frames at 48 kHz. */
export const GRID = 1.92;

const CMAF = '+cmaf+empty_moov+separate_moof+default_base_moof+frag_discont+skip_trailer';

/** A test pattern and a 1 kHz tone, both lavfi sources. */
export const TEST_SOURCES = [
  ...['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25'],
  ...['-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000'],
];

/**
 * ffmpeg's arguments for `seconds` of CMAF ingest (in real time, -re) to `channelUrl`, times from
 * `offset` (seconds since 1970 on the grid, as -output_ts_offset takes them).
 */
export function cmafIngestArgs(channelUrl: string, offset: string, seconds: number): string[] {
  const v = ['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-b:v', '300k'];
  const gop = ['-g', '48', '-keyint_min', '48', '-sc_threshold', '0'];
  const t = ['-t', String(seconds)];
  return [
    ...['-hide_banner', '-loglevel', 'error', '-re', ...TEST_SOURCES],
    ...['-map', '0:v', ...v, ...gop, ...t, '-video_track_timescale', '25', '-output_ts_offset', offset],
    ...['-movflags', `${CMAF}+frag_keyframe`, '-f', 'mp4', `${channelUrl}/Streams(video-320x180-300k.cmfv)`],
    ...['-map', '1:a', '-c:a', 'aac', '-b:a', '64k', '-ar', '48000', ...t],
    ...['-frag_duration', '1920000', '-min_frag_duration', '1920000', '-output_ts_offset', offset],
    ...['-movflags', CMAF, '-f', 'mp4', `${channelUrl}/Streams(audio-64k.cmfa)`],
  ];
}

/** The ffmpeg processes of a test, and what they wrote on stderr (with -loglevel error: errors only). */
export class Encoders {
  readonly running: ChildProcess[] = [];
  errors = '';

  start(args: string[]): ChildProcess {
    const p = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    p.stderr!.on('data', (c: Buffer) => (this.errors += c.toString()));
    this.running.push(p);
    return p;
  }

  /** SIGKILL to every one started since the last killAll. */
  killAll(): void {
    for (const p of this.running.splice(0)) p.kill('SIGKILL');
  }
}

export interface PlayerOrigin {
  ingest: RunningIngest;
  serving: RunningServer;
  close(): Promise<void>;
}

/**
 * The channels made by `origin package <options>` in a new root, its ingest listener and a serving
 * port with the player page. The serving port learns of new fragments from the status files, as a
 * second process would (no onPublish).
 */
export async function startPlayerOrigin(prefix: string, channels: string[], options: string[]): Promise<PlayerOrigin> {
  const root = tempDir(prefix);
  for (const ch of channels) await createChannel(root, ch, options);
  const ingest = await startIngestServer({ root, host: '127.0.0.1', port: 0, sync: false });
  const serving = await startServer({ ...liveServerOptions(root), playerPage: true }).catch(async (e: unknown) => {
    await ingest.close();
    throw e;
  });
  return {
    ingest,
    serving,
    close: async () => {
      await ingest.close();
      await serving.close();
    },
  };
}

/** Until every track of the channel (two: video and audio) has media starting at `utcMs` or later. */
export async function mediaPast(url: string, channel: string, utcMs: number, ms = 40_000): Promise<LiveState> {
  return eventually(
    async () => JSON.parse((await httpGet(`${url}/live/${channel}.isml/state?format=json`)).body) as LiveState,
    (s) => s.tracks.length === 2 && s.tracks.every((t) => t.lastTimeUtc !== null && Date.parse(t.lastTimeUtc) >= utcMs),
    ms,
  );
}

export interface Playhead {
  currentTime: number;
  paused: boolean;
  /** The seekable range, s (NaN while there is none). */
  start: number;
  end: number;
  /** The player's errors (window.__test) that `keep` keeps. */
  errors: string[];
}

const ALL = (): boolean => true;

export async function playhead(page: Page, keep: (error: string) => boolean = ALL): Promise<Playhead> {
  const p = await page.evaluate(() => {
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
  return { ...p, errors: p.errors.filter((e) => e === 'no window.__test' || keep(e)) };
}

/**
 * Polls until `ok` holds (the playhead then), `stop` does (by default: any error kept) or `ms`
 * passes (the last playhead, failing the caller's check).
 */
export async function until(
  page: Page,
  ok: (p: Playhead) => boolean,
  ms: number,
  keep: (error: string) => boolean = ALL,
  stop: (p: Playhead) => boolean = (p) => p.errors.length > 0,
): Promise<Playhead> {
  const deadline = Date.now() + ms;
  for (;;) {
    const p = await playhead(page, keep);
    if (ok(p) || stop(p) || Date.now() > deadline) return p;
    await new Promise((r) => setTimeout(r, 200));
  }
}
