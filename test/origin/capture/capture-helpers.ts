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
