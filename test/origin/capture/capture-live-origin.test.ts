// origin capture of this origin's live channel and of its archive. The test encoder pushes 40 s of
// the fixture (2-s fragments, a keyframe each, 24 fps) on UTC times ending now, then keeps pushing
// in real time; the channel archives everything with a 12-s DVR window. The capture's frames are
// the fixture's own (decoded-frame checksums, the fixture looping every 10 s), its first a
// keyframe at the GOP-snapped start; with --copy_ts the packaged Smooth manifest starts there.

import * as path from 'node:path';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { avEncoders, createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture } from '../../helpers/test-encoder';
import { frameHashes, streamCodecs, videoFrames } from './capture-helpers';

jest.setTimeout(120_000);

const FPS = 24;
/** Fixture fragments pushed at once: 40 s of archive behind the live edge. */
const BACKLOG = 20;
/** A multiple of 2 s, 40 s ago: the backlog ends now. */
const ANCHOR = Math.floor(Date.now() / 2000) * 2 - 2 * BACKLOG;
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));

let origin: LiveOrigin;
let base: string;
let fixtureHashes: string[];
let pushing = true;
let pusher: Promise<void>;

/** UTC second `s` after the anchor as ISO 8601 without a zone. */
const iso = (s: number): string => new Date((ANCHOR + s) * 1000).toISOString().replace(/\.000Z$/, '');

/** The fixture's frames for [from, to) seconds after the anchor (the encoder loops it every 10 s). */
const expected = (from: number, to: number): string[] =>
  Array.from({ length: (to - from) * FPS }, (_, i) => fixtureHashes[(from * FPS + i) % fixtureHashes.length]!);

beforeAll(async () => {
  fixtureHashes = await frameHashes(media('video_baseline_400k.ismv'));
  origin = await startLiveOrigin();
  await createChannel(origin.root, 'ch', ['--archiving', '--dvr_window_length=12']);
  base = `${origin.serving.url}/live/ch.isml`;
  const encoders = avEncoders(origin.channelUrl('ch'), { video, audio }, ANCHOR);
  for (const e of encoders) await e.open();
  for (const e of encoders) await e.send(0, BACKLOG);
  await eventually(
    () => origin.state('ch'),
    (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments === BACKLOG),
  );
  // Real time from here: fragment g (2 s) is pushed once it is over, at ANCHOR + 2 (g + 1).
  pusher = (async () => {
    for (let g = BACKLOG; pushing; g++) {
      const due = (ANCHOR + 2 * (g + 1)) * 1000 - Date.now();
      if (due > 0) await new Promise((r) => setTimeout(r, due));
      for (const e of encoders) await e.send(g);
    }
    for (const e of encoders) await e.close(true);
  })();
});
afterAll(async () => {
  pushing = false;
  await pusher;
  await origin.close();
});

async function capture(url: string, extra: string[] = []): Promise<{ file: string; stderr: string }> {
  const file = path.join(tempDir('capture-live-'), 'c.ismv');
  const r = await runOrigin(['capture', url, '-o', file, ...extra]);
  expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('wrote ')]);
  return { file, stderr: r.stderr };
}

test('the archive, t=<ISO>-<ISO> from the Smooth URL: snapped to the GOP, the source frames', async () => {
  // 9..20 s lies behind the 12-s window: the origin answers a static MPD from its archive.
  const { file } = await capture(`${base}/Manifest?t=${iso(9)}-${iso(20)}`);
  const frames = await videoFrames(file);
  expect(frames.length).toBe(12 * FPS);
  expect(frames[0]).toEqual({ key: true, pts: 0 });
  expect(await frameHashes(file)).toEqual(expected(8, 20));
  expect((await streamCodecs(file)).sort()).toEqual(['aac', 'h264']);
});

test('--copy_ts: the first frame at the snapped UTC start, the packaged Smooth manifest starts there', async () => {
  const { file } = await capture(`${base}/.mpd?t=${iso(9)}-${iso(20)}`, ['--copy_ts']);
  const frames = await videoFrames(file);
  expect(frames.length).toBe(12 * FPS);
  expect(frames[0]).toEqual({ key: true, pts: ANCHOR + 8 });
  const ism = file.replace(/\.ismv$/, '.ism');
  const pkg = await runOrigin(['package', '-q', '-o', ism, file]);
  expect([pkg.code, pkg.stderr]).toEqual([0, '']);
  const smooth = await runOrigin(['package', '-o', 'stdout:', ism, 'Manifest']);
  const firstC = (type: string): string => new RegExp(`Type="${type}"[\\s\\S]*?<c t="(\\d+)"`).exec(smooth.stdout)![1]!;
  // 10 MHz, the fixture's timescale: the snapped start exactly, video and audio.
  expect(firstC('video')).toBe(`${BigInt(ANCHOR + 8) * 10_000_000n}`);
  expect(BigInt(firstC('audio')) - BigInt(ANCHOR + 8) * 10_000_000n).toBeGreaterThanOrEqual(0n);
  expect(BigInt(firstC('audio')) - BigInt(ANCHOR + 8) * 10_000_000n).toBeLessThan(213_334n); // one AAC frame
});

test('a filtered HLS URL: only the selected track', async () => {
  const filter = encodeURIComponent('type=="video"');
  const { file } = await capture(`${base}/.m3u8?filter=${filter}&t=${iso(12)}-${iso(16)}`);
  expect(await streamCodecs(file)).toEqual(['h264']);
  expect(await frameHashes(file)).toEqual(expected(12, 16));
});

test('live, t=<ISO> with only a start: until the time the capture began', async () => {
  const started = Date.now() / 1000 - ANCHOR;
  const { file } = await capture(`${base}/.mpd?t=${iso(31)}`);
  const ended = Date.now() / 1000 - ANCHOR;
  const frames = await videoFrames(file);
  const end = 30 + frames.length / FPS;
  // Whole segments from 30 s up to the capture's clock when it began (between the two readings).
  expect(frames.length % (2 * FPS)).toBe(0);
  expect(end).toBeLessThanOrEqual(ended);
  expect(end).toBeGreaterThan(started - 2);
  expect(await frameHashes(file)).toEqual(expected(30, end));
});

test('live, a range ending in the future: the dynamic MPD is re-read until its end is available', async () => {
  const now = Math.floor(Date.now() / 1000) - ANCHOR;
  const [from, to] = [now - 3, now + 5];
  const snapped = from - (from % 2);
  const { file, stderr } = await capture(`${base}/.mpd?t=${iso(from)}-${iso(to)}`);
  // The end snaps back to the last boundary at or before it.
  expect(await frameHashes(file)).toEqual(expected(snapped, to - (to % 2)));
  expect((await videoFrames(file))[0]!.key).toBe(true);
  expect(stderr).toMatch(/captured [\d.]+ s/);
});
