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
import { httpGet } from '../../helpers/test-encoder';

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
  await createChannel(origin.root, 'lld', ['--mpd.minimum_fragment_length=48/25', '--mpd.low_latency']);
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

test('ffmpeg -write_prft wallclock on the UTC grid: the LL-DASH PRFT is its prft, under a segment after the anchor’s', async () => {
  // Started on a 1.92 s boundary of the wall clock, in real time: media time t is made at T + t,
  // and ffmpeg stamps each moof when it writes it (a 0.32 s chunk after its first frame).
  const t0Ms = Math.ceil(Date.now() / 1920) * 1920;
  await new Promise((r) => setTimeout(r, t0Ms - Date.now()));
  const t0 = (t0Ms / 1000).toFixed(2);
  const cmaf = '+cmaf+empty_moov+separate_moof+default_base_moof+frag_discont+skip_trailer';
  const out = (stream: string): string[] => [
    ...['-frag_duration', '320000', '-t', '4', '-output_ts_offset', t0, '-write_prft', 'wallclock', '-f', 'mp4'],
    `${origin.channelUrl('lld')}/Streams(${stream})`,
  ];
  const ffmpeg = run('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-re', ...TEST_SOURCES],
    ...['-map', '0:v', ...VIDEO, '-video_track_timescale', '25', '-movflags', `${cmaf}+frag_keyframe`],
    ...out('video-320x180-300k.cmfv'),
    ...['-map', '1:a', ...AUDIO, '-movflags', cmaf, ...out('audio-64k.cmfa')],
  ]);
  // While it pushes (after the end the MPD is static, without PRFT): a segment and a chunk.
  await eventually(
    () => origin.state('lld'),
    (x) => x.tracks.length === 2 && x.tracks.every((t) => t.fragments >= 7),
    10_000,
  );
  const mpd = await httpGet(`${origin.serving.url}/live/lld.isml/.mpd`);
  expect([await ffmpeg.then((r) => [r.code, r.stderr])]).toEqual([[0, '']]);
  const lateness = ['video', 'audio'].map((type) => {
    const set = new RegExp(`<AdaptationSet[^>]*contentType="${type}"[\\s\\S]*?</AdaptationSet>`).exec(mpd.body)![0];
    const prft = /<ProducerReferenceTime ([^>]*)>/.exec(set)![1]!;
    expect(prft).toContain('type="captured"'); // ffmpeg's flags: 24
    const wall = Date.parse(/wallClockTime="([^"]+)"/.exec(prft)![1]!);
    const time = BigInt(/presentationTime="(\d+)"/.exec(prft)![1]!);
    const timescale = BigInt(/<SegmentTemplate[^>]* timescale="(\d+)"/.exec(set)![1]!);
    // The anchor derivation (the channel anchor is the epoch): media time t was made at t / timescale.
    return (wall - Number((time * 1000n) / timescale)) / 1000;
  });
  console.log(`ffmpeg wallclock prft − (anchor + media time), s (video, audio): ${JSON.stringify(lateness)}`);
  // At least 0 (a frame is not made before its time), below one segment (1.92 s): startup, a chunk, encoding.
  for (const d of lateness) expect(d).toBeGreaterThanOrEqual(-0.05);
  for (const d of lateness) expect(d).toBeLessThan(1.92);
}, 30_000);
