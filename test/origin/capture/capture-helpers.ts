// What the capture tests judge with: ffmpeg's decoded-frame checksums and ffprobe's frame facts.

import { run } from '../../helpers/process';

/** The MD5 of every decoded video frame, in presentation order (ffmpeg's framemd5 muxer). */
export async function frameHashes(input: string): Promise<string[]> {
  const r = await run('ffmpeg', ['-v', 'error', '-i', input, '-map', '0:v:0', '-f', 'framemd5', '-']);
  if (r.code !== 0) throw new Error(`ffmpeg framemd5 ${input}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => l.split(',').pop()!.trim());
}

/** The video frames ffprobe reads from a file: key flags and presentation times, in decode order. */
export async function videoFrames(input: string): Promise<Array<{ key: boolean; pts: number }>> {
  const r = await run('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'packet=pts_time,flags',
    '-of',
    'csv=p=0',
    input,
  ]);
  if (r.code !== 0) throw new Error(`ffprobe ${input}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [pts, flags] = l.split(',');
      return { key: (flags ?? '').includes('K'), pts: Number(pts) };
    });
}

/** Codec names of the streams of a file, in order. */
export async function streamCodecs(input: string): Promise<string[]> {
  const r = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', input]);
  if (r.code !== 0) throw new Error(`ffprobe ${input}: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

/**
 * An H.264/AAC source of `seconds` made by ffmpeg in `file`: 320x180 test pattern at `fps`, a
 * keyframe every `fps` frames exactly (no scene-cut keyframes), a 440 Hz sine at 48 kHz;
 * `extra` output options go before the file. Resolves to ffmpeg's stderr (empty when it went well).
 */
export async function makeSource(file: string, o: { fps: number; seconds: number; extra: string[] }): Promise<string> {
  const gop = String(o.fps);
  const r = await run('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=${o.fps}`],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', String(o.seconds)],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', gop, '-keyint_min', gop, '-sc_threshold', '0'],
    ...['-pix_fmt', 'yuv420p', '-c:a', 'aac', ...o.extra, file],
  ]);
  return r.code === 0 ? r.stderr : `ffmpeg exited ${r.code}: ${r.stderr}`;
}
