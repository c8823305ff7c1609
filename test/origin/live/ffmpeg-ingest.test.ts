// ffmpeg as the encoder (stock 5.1, recipes of the live notes): Smooth ingest (`-f ismv`, one
// chunked POST with video and audio, 10 MHz tfxd on UTC through -output_ts_offset, the Live
// Server Manifest Box, an empty mfra at the end) and CMAF ingest (`-f mp4`, one chunked POST per
// track, tfdt on UTC with +frag_discont, prft, no trailer). ffmpeg cannot post one segment per
// request to Streams() URLs (its dash muxer names segments itself): the test encoder covers that
// form (ingest.test.ts). Every archived file is then read back by ffprobe: all the frames are there.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { TEST_SOURCES } from '../../helpers/live-players';
import { run } from '../../helpers/process';

/** A start on the 1.92 s grid (48 frames at 25 fps = 90 AAC frames at 48 kHz), as epoch-locked encoders use. */
const T0_CENTISECONDS = Math.floor(Date.now() / 1920) * 192;
const T0 = (T0_CENTISECONDS / 100).toFixed(2);
const VIDEO = [
  '-c:v',
  'libx264',
  '-preset',
  'veryfast',
  '-tune',
  'zerolatency',
  '-b:v',
  '300k',
  '-g',
  '48',
  '-keyint_min',
  '48',
  '-sc_threshold',
  '0',
];
const AUDIO = ['-c:a', 'aac', '-b:a', '64k', '-ar', '48000'];

let origin: LiveOrigin;
beforeAll(async () => {
  origin = await startLiveOrigin();
  await createChannel(origin.root, 'smooth', ['--archiving']);
  await createChannel(origin.root, 'cmaf', ['--archiving']);
});
afterAll(() => origin.close());

/** Frames of the first stream of `type` in an archive file, as ffprobe decodes them. */
async function framesIn(file: string, type: 'v' | 'a'): Promise<number> {
  const r = await run('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    `${type}:0`,
    '-count_frames',
    '-show_entries',
    'stream=nb_read_frames',
    '-of',
    'csv=p=0',
    file,
  ]);
  expect(r.stderr).toBe('');
  return Number(r.stdout.trim());
}

function archiveFiles(channel: string, track: string): string[] {
  const dir = path.join(origin.root, 'live', `${channel}.isml.archive`, track);
  return fs
    .readdirSync(dir)
    .filter((n) => !n.endsWith('.idx'))
    .map((n) => path.join(dir, n));
}

test('ffmpeg -f ismv: Smooth ingest of video and audio in one POST, stopped by its empty mfra', async () => {
  const url = `${origin.channelUrl('smooth')}/Streams(ffmpeg)`;
  const r = await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    ...TEST_SOURCES,
    '-map',
    '0:v',
    '-map',
    '1:a',
    ...VIDEO,
    ...AUDIO,
    '-t',
    '4',
    '-output_ts_offset',
    T0,
    '-movflags',
    'isml+frag_keyframe',
    '-f',
    'ismv',
    url,
  ]);
  expect([r.code, r.stderr]).toEqual([0, '']);
  const s = await eventually(
    () => origin.state('smooth'),
    (x) => x.state === 'stopped',
  );
  expect([s.state, s.encoders]).toEqual(['stopped', 0]);
  expect(s.tracks.map((t) => [t.track, t.trackName, t.gaps, t.duplicatesDropped])).toEqual([
    ['ffmpeg-1', 'video', 0, 0],
    ['ffmpeg-2', 'audio', 0, 0],
  ]);
  expect(s.tracks[0]!.systemBitrate).toBe(300000);
  const { json } = await origin.archive('smooth');
  const video = json.tracks.find((t) => t.track === 'ffmpeg-1')!;
  // 10 MHz on UTC: T0 exactly, past 2^53.
  expect(video.ranges).toEqual([expect.objectContaining({ start: String(BigInt(T0_CENTISECONDS) * 100_000n) })]);
  expect(BigInt(video.ranges[0]!.end) - BigInt(video.ranges[0]!.start)).toBe(40_000_000n);
  // The archive files are fragmented MP4 that ffprobe reads: 4 s of 25 fps video, every frame.
  const frames = await Promise.all(archiveFiles('smooth', 'ffmpeg-1').map((f) => framesIn(f, 'v')));
  expect(frames.reduce((a, b) => a + b, 0)).toBe(100);
});

test('ffmpeg -f mp4 -movflags +cmaf: CMAF ingest, one POST per track, stopped when both end', async () => {
  const cmaf = '+cmaf+empty_moov+separate_moof+default_base_moof+frag_discont+skip_trailer';
  const r = await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    ...TEST_SOURCES,
    '-map',
    '0:v',
    ...VIDEO,
    '-t',
    '4',
    '-video_track_timescale',
    '25',
    '-output_ts_offset',
    T0,
    '-write_prft',
    'wallclock',
    '-movflags',
    `${cmaf}+frag_keyframe`,
    '-f',
    'mp4',
    `${origin.channelUrl('cmaf')}/Streams(video-320x180-300k.cmfv)`,
    '-map',
    '1:a',
    ...AUDIO,
    '-t',
    '4',
    '-frag_duration',
    '1920000',
    '-min_frag_duration',
    '1920000',
    '-output_ts_offset',
    T0,
    '-write_prft',
    'wallclock',
    '-movflags',
    cmaf,
    '-f',
    'mp4',
    `${origin.channelUrl('cmaf')}/Streams(audio-64k.cmfa)`,
  ]);
  expect([r.code, r.stderr]).toEqual([0, '']);
  // ffmpeg's CMAF output sends neither mfra nor lmsg: the graceful end of both POSTs stops it.
  const s = await eventually(
    () => origin.state('cmaf'),
    (x) => x.state === 'stopped',
  );
  expect([s.state, s.encoders]).toEqual(['stopped', 0]);
  expect(s.tracks.map((t) => [t.track, t.systemBitrate, t.gaps])).toEqual([
    ['video-320x180-300k.cmfv-1', 300000, 0],
    ['audio-64k.cmfa-1', 64000, 0],
  ]);
  const { json } = await origin.archive('cmaf');
  const [video, audio] = json.tracks;
  expect(video!.timescale).toBe(25);
  expect(video!.ranges).toEqual([
    expect.objectContaining({ start: String(T0_CENTISECONDS / 4), end: String(T0_CENTISECONDS / 4 + 100) }),
  ]);
  // AAC priming: ffmpeg's audio starts 1024 samples before the grid.
  expect(audio!.ranges[0]!.start).toBe(String(BigInt(T0_CENTISECONDS) * 480n - 1024n));
  const frames = await Promise.all(archiveFiles('cmaf', 'video-320x180-300k.cmfv-1').map((f) => framesIn(f, 'v')));
  expect(frames.reduce((a, b) => a + b, 0)).toBe(100);
});
