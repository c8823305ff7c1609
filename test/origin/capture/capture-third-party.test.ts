// origin capture of third-party manifests: DASH and HLS fMP4 that ffmpeg makes from one H.264/AAC
// source, served by nginx on loopback (or read through file://); the capture's frames are the
// source's own (decoded-frame checksums), its start a keyframe. (ffmpeg names its first $Time$
// audio segment by the primed tfdt, -1024, while its MPD says t="0": that one MPD cannot be
// read from its start by any client, so the $Time$ case captures from 2 s.) A restart of nginx in the middle
// of a capture costs retries, not the capture. What is not taken is refused with exit 1, by name.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startFaultProxy } from '../../helpers/fault-proxy';
import { runOrigin, tempDir } from '../../helpers/fixtures';
import { haveNginx, Nginx, startNginx } from '../../helpers/nginx';
import { run } from '../../helpers/process';
import { frameHashes, makeSource, streamCodecs, videoFrames } from './capture-helpers';

jest.setTimeout(180_000);

const FPS = 25;
let dir: string;
let nginx: Nginx;
let sourceHashes: string[];

async function ffmpeg(args: string[]): Promise<void> {
  const r = await run('ffmpeg', ['-v', 'error', '-y', ...args]);
  if (r.code !== 0) throw new Error(`ffmpeg ${args.join(' ')}: ${r.stderr}`);
}

beforeAll(async () => {
  dir = tempDir('capture-3p-');
  const src = path.join(dir, 'src.mp4');
  // 8 s, a keyframe every second exactly (no scene-cut keyframes), B-frames, AAC.
  const made = await makeSource(src, { fps: FPS, seconds: 8, extra: ['-bf', '2', '-b:a', '64k'] });
  if (made !== '') throw new Error(`ffmpeg (source): ${made}`);
  sourceHashes = await frameHashes(src);
  const dash = ['-i', src, '-map', '0:v', '-map', '0:a', '-c', 'copy', '-f', 'dash', '-seg_duration', '2'];
  for (const d of ['dash-number', 'dash-time', 'dash-duration', 'hls']) await fs.mkdir(path.join(dir, d));
  await ffmpeg([...dash, '-use_template', '1', '-use_timeline', '1', path.join(dir, 'dash-number', 'x.mpd')]);
  await ffmpeg([
    ...dash,
    ...['-use_template', '1', '-use_timeline', '1', '-media_seg_name', 'chunk-$RepresentationID$-$Time$.m4s'],
    path.join(dir, 'dash-time', 'x.mpd'),
  ]);
  await ffmpeg([...dash, '-use_template', '1', '-use_timeline', '0', path.join(dir, 'dash-duration', 'x.mpd')]);
  const hls = ['-i', src, '-c', 'copy', '-f', 'hls', '-hls_time', '2', '-hls_playlist_type', 'vod'];
  await ffmpeg([...hls, '-hls_segment_type', 'fmp4', path.join(dir, 'hls', 'x.m3u8')]);
  if (haveNginx) nginx = await startNginx(dir);
});
afterAll(async () => {
  await nginx?.stop();
});

async function captured(url: string, extra: string[] = []): Promise<{ file: string; stderr: string }> {
  const file = path.join(tempDir('capture-out-'), 'c.ismv');
  const r = await runOrigin(['capture', url, '-o', file, ...extra]);
  expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('wrote ')]);
  const pkg = await runOrigin(['package', '-q', '-o', file.replace(/\.ismv$/, '.ism'), file]);
  expect([pkg.code, pkg.stderr]).toEqual([0, '']);
  return { file, stderr: r.stderr };
}

const KINDS = ['dash-number/x.mpd', 'dash-time/x.mpd', 'dash-duration/x.mpd', 'hls/x.m3u8'];

(haveNginx ? test.each(KINDS) : test.skip.each(KINDS))('%s over HTTP, t=2-5: the frames of 2..4 s', async (kind) => {
  const before = nginx.accessLog().length;
  const { file, stderr } = await captured(`${nginx.url}${kind}?t=2-5`);
  // Each segment asked for once, also where one HLS segment carries both tracks.
  const asked = nginx
    .accessLog()
    .slice(before)
    .split('\n')
    .filter((l) => / \/media\/\S+\.m4s 200/.test(l));
  expect(new Set(asked.map((l) => l.split(' ')[1])).size).toBe(asked.length);
  // 2..5 snaps to the segments 2..4 (the last one, 4..6, would run past the end).
  expect(await frameHashes(file)).toEqual(sourceHashes.slice(2 * FPS, 4 * FPS));
  // The source's edit list carried (B-frames: composition starts two frames after decode): the
  // first keyframe is shown at 0, as the source shows its first; ffmpeg's HLS init adds an empty
  // edit of 80 ms before it (its playlist read by ffprobe shows the frame at 2 s at 2.08).
  expect((await videoFrames(file))[0]).toEqual({ key: true, pts: kind.startsWith('hls') ? 0.08 : 0 });
  expect(await streamCodecs(file)).toEqual(['h264', 'aac']);
  expect(stderr).toMatch(/captured 2\.0 s \/ 2\.0 s \(100%\), [\d.]+x real time/);
});

test('edit lists: the captured frames and audio are shown when the source shows them', async () => {
  const src = path.join(dir, 'src.mp4');
  const url = pathToFileURL(path.join(dir, 'dash-number', 'x.mpd')).href;
  const whole = await captured(url);
  // Video shown from 0 with decode times two frames earlier; the AAC priming frame before 0.
  expect(await firstPackets(whole.file)).toEqual(await firstPackets(src));
  expect((await firstPackets(whole.file)).audio.pts).toBeLessThan(0);
  const copied = await captured(`${url}?t=2-5`, ['--copy_ts']);
  const sourceFrames = await videoFrames(src);
  expect((await videoFrames(copied.file)).slice(0, 3)).toEqual(sourceFrames.slice(2 * FPS, 2 * FPS + 3));
});

/** The first video and audio packets' presentation and decode times (ffprobe). */
async function firstPackets(file: string): Promise<Record<'video' | 'audio', { pts: number; dts: number }>> {
  const first = async (stream: string): Promise<{ pts: number; dts: number }> => {
    const r = await run('ffprobe', [
      ...['-v', 'error', '-select_streams', stream, '-read_intervals', '%+#1'],
      ...['-show_entries', 'packet=pts_time,dts_time', '-of', 'csv=p=0', file],
    ]);
    const [pts, dts] = r.stdout.trim().split('\n')[0]!.split(',').map(Number);
    return { pts: pts!, dts: dts! };
  };
  return { video: await first('v:0'), audio: await first('a:0') };
}

test('file:// input, the whole presentation, a filter on the manifest properties', async () => {
  const url = pathToFileURL(path.join(dir, 'dash-number', 'x.mpd')).href;
  const whole = await captured(url);
  expect(await frameHashes(whole.file)).toEqual(sourceHashes);
  const audio = await captured(`${url}?filter=${encodeURIComponent('type=="audio"')}`);
  expect(await streamCodecs(audio.file)).toEqual(['aac']);
  const r = await runOrigin(['capture', `${url}?filter=${encodeURIComponent('type==')}`, '-o', audio.file]);
  expect([r.code, r.stderr]).toEqual([1, expect.stringMatching(/filter=type==/)]);
});

(haveNginx ? test : test.skip)('nginx killed and restarted mid-capture: retried, then the same frames', async () => {
  const port = nginx.port;
  let restarted: Promise<void> | undefined;
  const proxy = await startFaultProxy(nginx.url, (_req, n) => {
    if (n === 5 && restarted === undefined)
      restarted = (async () => {
        await nginx.kill();
        await new Promise((r) => setTimeout(r, 1500));
        nginx = await startNginx(dir, port);
      })();
    return n === 9 ? 'reset-mid-body' : { delayMs: 100 };
  });
  try {
    const { file, stderr } = await captured(`${proxy.url}dash-number/x.mpd`, ['--retries', '20']);
    expect(stderr).toMatch(/retrying .*: /);
    expect(await frameHashes(file)).toEqual(sourceHashes);
  } finally {
    await restarted;
    await proxy.close();
  }
});

(haveNginx ? test : test.skip)('a storage that stays broken: exit 1 after the retries, no file left', async () => {
  const proxy = await startFaultProxy(nginx.url, (_req, n) => (n < 6 ? 'pass' : 'status-500'));
  const out = path.join(tempDir('capture-broken-'), 'c.ismv');
  try {
    const r = await runOrigin(['capture', `${proxy.url}dash-number/x.mpd`, '-o', out, '--retries', '2']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/retrying .*HTTP 500 \(2\/2\)/);
    expect(r.stderr).toMatch(/origin capture: error: .*: HTTP 500, still after 2 retries/);
    await expect(fs.stat(out)).rejects.toThrow(/ENOENT/);
  } finally {
    await proxy.close();
  }
});

test('what is not taken is refused with exit 1, naming it', async () => {
  const ref = (p: string): string => pathToFileURL(path.join(dir, p)).href;
  const mpd = await fs.readFile(path.join(dir, 'dash-number', 'x.mpd'), 'utf8');
  const write = async (name: string, text: string): Promise<string> => {
    await fs.writeFile(path.join(dir, name), text);
    return ref(name);
  };
  const hls = await fs.readFile(path.join(dir, 'hls', 'x.m3u8'), 'utf8');
  const cases: Array<[string, RegExp]> = [
    [
      await write('hls/key.m3u8', hls.replace('#EXTINF', '#EXT-X-KEY:METHOD=AES-128,URI="k"\n#EXTINF')),
      /encryption \(EXT-X-KEY METHOD=AES-128\)/,
    ],
    [await write('hls/range.m3u8', hls.replace('#EXTINF', '#EXT-X-BYTERANGE:100@0\n#EXTINF')), /byte ranges/],
    [await write('dash-number/hevc.mpd', mpd.replace(/codecs="avc1[^"]*"/, 'codecs="hvc1.1.6.L93.B0"')), /HEVC/],
    [
      await write(
        'dash-number/prot.mpd',
        mpd.replace(
          '<Representation',
          '<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011"/><Representation',
        ),
      ),
      /encryption \(ContentProtection\)/,
    ],
    [
      await write(
        'dash-number/base.mpd',
        mpd.replace(/<SegmentTemplate[\s\S]*?<\/SegmentTemplate>/, '<SegmentBase indexRange="0-99"/>'),
      ),
      /SegmentBase/,
    ],
    [await write('dash-number/periods.mpd', mpd.replace(/(<Period[\s\S]*<\/Period>)/, '$1$1')), /2 Periods/],
    [await write('dash-number/bad.mpd', '<MPD><Period'), /not XML|no MPD|Period/],
    [await write('hls/empty.m3u8', 'hello'), /not an HLS playlist/],
    [ref('dash-number/missing.mpd'), /no such file|ENOENT/],
  ];
  for (const [url, message] of cases) {
    const r = await runOrigin(['capture', url, '-o', path.join(dir, 'refused.ismv')]);
    expect([url, r.code]).toEqual([url, 1]);
    expect(r.stderr).toMatch(message);
  }
});
