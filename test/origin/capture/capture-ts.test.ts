// origin capture of HLS MPEG-TS (the demuxer of origin/media/mpegts/ through capture/ts-segments.ts):
// ffmpeg cuts a fixture (H.264 with B-frames, AAC) into TS segments; the capture, packaged, decodes
// to ffmpeg's own decode of the TS segments of the range (frame checksums), its audio packets are
// the TS's own, unchanged and contiguous; a stream whose 33-bit PTS wraps mid-range captures the
// same frames on a monotonic timeline. Bad input (a cut packet, a lost sync byte, a continuity
// break, an encrypted stream type, no PAT/PMT, no SPS, packed audio) is an exit 1 naming it.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { crc32Mpeg2 } from '../../../origin/media/mpegts/crc32-mpeg';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { haveNginx, Nginx, startNginx } from '../../helpers/nginx';
import { run } from '../../helpers/process';
import { streamCodecs, videoFrames } from './capture-helpers';

jest.setTimeout(180_000);

let dir: string;
let nginx: Nginx | undefined;
let sourceHashes: string[];
/** 2^33 / 90 000 s less 1.4 s (ffmpeg's TS mux delay) less 3 s: the PTS wraps 3 s into the stream. */
const WRAP_OFFSET = (2 ** 33 / 90000 - 1.4 - 3).toFixed(3);

async function ffmpeg(args: string[]): Promise<void> {
  const r = await run('ffmpeg', ['-v', 'error', '-y', ...args]);
  if (r.code !== 0) throw new Error(`ffmpeg ${args.join(' ')}: ${r.stderr}`);
}

/** ffmpeg's hashes of a stream: decoded video frames, or (`copy`) the audio packets as they are. */
async function hashes(input: string, what: 'video' | 'audio-packets'): Promise<Array<{ pts: number; md5: string }>> {
  // ADTS headers off (aac_adtstoasc; MP4 packets pass through): the raw AAC frames of both sides.
  const map = what === 'video' ? ['-map', '0:v:0'] : ['-map', '0:a:0', '-c', 'copy', '-bsf:a', 'aac_adtstoasc'];
  const r = await run('ffmpeg', ['-v', 'error', '-i', input, ...map, '-f', 'framemd5', '-']);
  if (r.code !== 0) throw new Error(`ffmpeg framemd5 ${input}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => l.split(',').map((f) => f.trim()))
    .map((f) => ({ pts: Number(f[2]), md5: f[5]! })); // stream, dts, pts, duration, size, hash[, side data]
}

beforeAll(async () => {
  dir = tempDir('capture-ts-');
  const src = path.join(dir, 'src.mp4');
  // The fixture: 10 s of 640x360 H.264 at 24 fps with B-frames, a keyframe every 2 s; AAC 48 kHz.
  await ffmpeg(['-i', media('video_main_900k.ismv'), '-i', media('audio_eng_64k.isma'), '-c', 'copy', src]);
  sourceHashes = (await hashes(src, 'video')).map((h) => h.md5);
  const hls = ['-i', src, '-c', 'copy', '-f', 'hls', '-hls_time', '2', '-hls_playlist_type', 'vod'];
  for (const d of ['ts', 'wrap']) await fs.mkdir(path.join(dir, d));
  await ffmpeg([...hls, '-hls_segment_type', 'mpegts', path.join(dir, 'ts', 'x.m3u8')]);
  const wrap = [...hls.slice(0, 4), '-output_ts_offset', WRAP_OFFSET, ...hls.slice(4)];
  await ffmpeg([...wrap, '-hls_segment_type', 'mpegts', path.join(dir, 'wrap', 'x.m3u8')]);
  // An audio-only TS rendition beside the muxed one, in a multivariant playlist.
  await fs.mkdir(path.join(dir, 'ts-audio'));
  await ffmpeg([...hls.slice(0, 2), '-map', '0:a', ...hls.slice(2), path.join(dir, 'ts-audio', 'a.m3u8')]);
  await fs.writeFile(
    path.join(dir, 'main.m3u8'),
    [
      '#EXTM3U',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000000,CODECS="avc1.4d401e,mp4a.40.2",RESOLUTION=640x360',
      'ts/x.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=70000,CODECS="mp4a.40.2"',
      'ts-audio/a.m3u8',
      '',
    ].join('\n'),
  );
  if (haveNginx) nginx = await startNginx(dir);
});
afterAll(async () => {
  await nginx?.stop();
});

async function captured(url: string, extra: string[] = []): Promise<string> {
  const file = path.join(tempDir('capture-ts-out-'), 'c.ismv');
  const r = await runOrigin(['capture', url, '-o', file, ...extra]);
  expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('wrote ')]);
  const pkg = await runOrigin(['package', '-q', '-o', file.replace(/\.ismv$/, '.ism'), file]);
  expect([pkg.code, pkg.stderr]).toEqual([0, '']);
  return file;
}

const fileUrl = (p: string): string => pathToFileURL(path.join(dir, p)).href;

test('t=2-5 (over HTTP when nginx is here): the frames of segment 1 as ffmpeg decodes it, its audio packets', async () => {
  const base = nginx !== undefined ? `${nginx.url}ts/x.m3u8` : fileUrl('ts/x.m3u8');
  const file = await captured(`${base}?t=2-5`);
  // 2..5 snaps to the segment 2..4 (the next, 4..6, would run past 5).
  const segment = path.join(dir, 'ts', 'x1.ts');
  expect((await hashes(file, 'video')).map((h) => h.md5)).toEqual((await hashes(segment, 'video')).map((h) => h.md5));
  const frames = await videoFrames(file);
  expect(frames[0]!.key).toBe(true);
  expect(await streamCodecs(file)).toEqual(['h264', 'aac']);
  // The audio: the segment's own AAC frames, a contiguous run of them, from the video's first
  // decode time (the capture cuts other streams to the reference's times) to the segment's end.
  const ours = (await hashes(file, 'audio-packets')).map((h) => h.md5);
  const theirs = (await hashes(segment, 'audio-packets')).map((h) => h.md5);
  const at = theirs.indexOf(ours[0]!);
  expect(at).toBeGreaterThanOrEqual(0);
  expect(ours).toEqual(theirs.slice(at, at + ours.length));
  expect(Math.abs(ours.length - (2 * 48000) / 1024)).toBeLessThanOrEqual(2);
});

test('file://, the whole presentation: every frame of the fixture; --copy_ts keeps the TS times', async () => {
  const file = await captured(fileUrl('ts/x.m3u8'));
  expect((await hashes(file, 'video')).map((h) => h.md5)).toEqual(sourceHashes);
  const kept = await captured(`${fileUrl('ts/x.m3u8')}?t=4-6`, ['--copy_ts']);
  // ffmpeg's TS starts at 1.4 s (its mux delay): segment 2 starts with a keyframe 4 s later.
  const first = (await videoFrames(kept))[0]!;
  expect(first.key).toBe(true);
  expect(first.pts).toBeGreaterThan(5.4);
  expect(first.pts).toBeLessThan(5.6);
});

test('a 33-bit PTS wrap 3 s in: the same frames, times that keep counting up', async () => {
  const whole = await captured(fileUrl('wrap/x.m3u8'));
  expect((await hashes(whole, 'video')).map((h) => h.md5)).toEqual(sourceHashes);
  const file = await captured(`${fileUrl('wrap/x.m3u8')}?t=2-6`, ['--copy_ts']);
  const segments = ['x1.ts', 'x2.ts'].map((s) => path.join(dir, 'wrap', s)).join('|');
  expect((await hashes(file, 'video')).map((h) => h.md5)).toEqual(
    (await hashes(`concat:${segments}`, 'video')).map((h) => h.md5),
  );
  // Kept times: past 2^33 ticks of 90 kHz after the wrap, in decode order never going back.
  const r = await run('ffprobe', [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=dts_time', '-of', 'csv=p=0', file],
  ]);
  const dts = r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(Number);
  expect(dts.length).toBe(96);
  for (let i = 1; i < dts.length; i++) expect(dts[i]!).toBeGreaterThan(dts[i - 1]!);
  expect(dts[0]!).toBeLessThan(2 ** 33 / 90000);
  expect(dts[dts.length - 1]!).toBeGreaterThan(2 ** 33 / 90000);
});

test('a multivariant playlist with a filter: the audio-only TS variant alone', async () => {
  const file = await captured(`${fileUrl('main.m3u8')}?filter=${encodeURIComponent('type=="audio"')}&t=2-5`);
  expect(await streamCodecs(file)).toEqual(['aac']);
  const ours = (await hashes(file, 'audio-packets')).map((h) => h.md5);
  // Its segments last 2.005 s: 2..5 snaps to a0 (0..2.005, it holds 2.0) and a1 (2.005..4.011).
  const segments = ['a0.ts', 'a1.ts'].map((a) => path.join(dir, 'ts-audio', a)).join('|');
  expect(ours).toEqual((await hashes(`concat:${segments}`, 'audio-packets')).map((h) => h.md5));
});

/** A copy of the TS rendition with segment 1 changed by `edit`. */
async function broken(name: string, edit: (b: Buffer) => Buffer): Promise<string> {
  const to = path.join(dir, name);
  await fs.mkdir(to);
  for (const f of await fs.readdir(path.join(dir, 'ts'))) await fs.copyFile(path.join(dir, 'ts', f), path.join(to, f));
  const seg = path.join(to, 'x1.ts');
  await fs.writeFile(seg, edit(await fs.readFile(seg)));
  return `${pathToFileURL(path.join(to, 'x.m3u8')).href}?t=2-5`;
}

/** The packets of a segment and their PIDs. */
function packets(b: Buffer): Array<{ at: number; pid: number; start: boolean }> {
  const out = [];
  for (let at = 0; at + 188 <= b.byteLength; at += 188)
    out.push({ at, pid: ((b[at + 1]! & 0x1f) << 8) | b[at + 2]!, start: (b[at + 1]! & 0x40) !== 0 });
  return out;
}

/** The PMT packet's stream_type of its first stream set to `type`, its CRC made right again. */
function retype(b: Buffer, type: number): Buffer {
  const pmt = packets(b).find((p) => p.pid === 0x1000)!.at; // ffmpeg's PMT PID
  const s = pmt + 5; // after the header and pointer_field
  const length = 3 + (((b[s + 1]! & 0x0f) << 8) | b[s + 2]!);
  const programInfo = ((b[s + 10]! & 0x0f) << 8) | b[s + 11]!;
  b[s + 12 + programInfo] = type;
  b.writeUInt32BE(crc32Mpeg2(b.subarray(s, s + length - 4)), s + length - 4);
  return b;
}

test('bad TS is refused with exit 1, naming what and where; no file is left', async () => {
  const cases: Array<[string, RegExp]> = [
    [await broken('cut', (b) => b.subarray(0, b.byteLength - 100)), /x1\.ts: byte \d+: a truncated packet: 88 bytes/],
    [
      await broken('sync', (b) => {
        b[188 * 7] = 0x46;
        return b;
      }),
      /x1\.ts: byte 1316: lost sync: 0x46 where the sync byte 0x47 is due/,
    ],
    [
      await broken('cc', (b) => {
        // A video packet in the middle of a PES lost: the counter skips.
        const p = packets(b).filter((x) => x.pid === 0x100 && !x.start)[20]!;
        return Buffer.concat([b.subarray(0, p.at), b.subarray(p.at + 188)]);
      }),
      /x1\.ts: PID 0x0100, byte \d+: continuity counter \d+ after \d+: the PES in progress is dropped/,
    ],
    [await broken('sample-aes', (b) => retype(b, 0xdb)), /encryption \(SAMPLE-AES H\.264\) \(stream_type 0xDB\)/],
    [await broken('hevc', (b) => retype(b, 0x24)), /HEVC \(stream_type 0x24\) is not supported/],
    [
      await broken('no-psi', (b) =>
        Buffer.concat(
          packets(b)
            .filter((p) => p.pid !== 0 && p.pid !== 0x1000)
            .map((p) => b.subarray(p.at, p.at + 188)),
        ),
      ),
      /x1\.ts: no PAT and PMT/,
    ],
    [
      await broken('no-sps', (b) => {
        // Every SPS NAL unit (00 00 01 67) made an SEI's header (0x66): the PPS alone is left.
        for (let at = b.indexOf('00000167', 0, 'hex'); at >= 0; at = b.indexOf('00000167', at, 'hex')) b[at + 3] = 0x66;
        return b;
      }),
      /x1\.ts: PID 0x0100: no SPS and PPS in the first segment/,
    ],
    [
      await broken('packed', () => Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00rest', 'latin1')),
      /packed-audio segments/,
    ],
  ];
  for (const [url, message] of cases) {
    const out = path.join(tempDir('capture-ts-bad-'), 'c.ismv');
    const r = await runOrigin(['capture', url, '-o', out]);
    expect([url, r.code]).toEqual([url, 1]);
    expect(r.stderr).toMatch(message);
    await expect(fs.stat(out)).rejects.toThrow(/ENOENT/);
  }
});
