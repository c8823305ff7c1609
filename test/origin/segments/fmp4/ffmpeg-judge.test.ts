// The judge: init + every media segment of a track, concatenated into one file, must be a
// stream ffmpeg reads without a single complaint, with the source's frame count and, frame for
// frame, the source's decoded checksums (framemd5). The same for the demuxed packets (-c copy),
// which proves the mdat bytes are the source's samples in the source's order.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { media, tempDir } from '../../../helpers/fixtures';
import { openFixture, segmentsOf } from './fixture-segments';
import { runSync } from '../../../helpers/process';

interface Facts {
  file: string;
  kind: string;
  packets: number;
}
const FACTS = JSON.parse(readFileSync(media('facts.json'), 'utf8')) as Facts[];

const dir = tempDir('fmp4-judge-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** framemd5 rows: `stream, dts, pts, duration, size, hash`, and the header lines that describe the stream. */
function framemd5(file: string, map: string, copy: boolean): { header: string[]; rows: string[][] } {
  const args = ['-v', 'error', '-i', file, '-map', map, ...(copy ? ['-c', 'copy'] : []), '-f', 'framemd5', '-'];
  const r = runSync('ffmpeg', args);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split('\n');
  // #software names the libavformat build, the same on both sides but not about the stream.
  const header = lines.filter((l) => l.startsWith('#') && !l.startsWith('#software'));
  const rows = lines.filter((l) => !l.startsWith('#')).map((l) => l.split(',').map((c) => c.trim()));
  return { header, rows };
}

function probeFrames(file: string): { frames: number; codec: string } {
  const r = runSync('ffprobe', ['-v', 'error', '-count_frames', '-show_streams', file]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const field = (name: string): string => new RegExp(`^${name}=(.*)$`, 'm').exec(r.stdout)?.[1] ?? '';
  expect(r.stdout.match(/^\[STREAM\]$/gm)?.length).toBe(1);
  return { frames: Number(field('nb_read_frames')), codec: field('codec_name') };
}

async function judge(
  file: string,
  trackId: number,
  streamIndex: number,
  expectedFrames: number,
  opts: { perSegment?: number; outputTrackId?: number; sameTimes: boolean },
) {
  const f = await openFixture(file);
  try {
    const { init, segments } = await segmentsOf(f, trackId, opts);
    const out = path.join(dir, `${file}.track${trackId}.per${opts.perSegment ?? 1}.mp4`);
    writeFileSync(out, Buffer.concat([init, ...segments]));
    expect(probeFrames(out).frames).toBe(expectedFrames);
    for (const copy of [false, true]) {
      const mine = framemd5(out, '0:0', copy);
      const source = framemd5(media(file), `0:${streamIndex}`, copy);
      expect(mine.header).toEqual(source.header);
      expect(mine.rows.length).toBe(expectedFrames);
      // Sizes and checksums always; timestamps too when the segment times are the source's
      // (audio starts at 0 instead of the negative priming time, shifting every timestamp).
      const columns = (rows: string[][]) => rows.map((r) => (opts.sameTimes ? r.slice(1) : r.slice(4)).join(' '));
      expect(columns(mine.rows)).toEqual(columns(source.rows));
    }
  } finally {
    await f.source.close();
  }
}

const judged = FACTS.filter((x) => x.kind === 'video' || x.kind === 'audio');

describe('ffmpeg reads init + segments exactly like the source (framemd5 per frame)', () => {
  test('facts cover the video and audio fixtures', () => {
    expect(judged.map((x) => x.file).sort()).toEqual(
      FACTS.filter((x) => !x.file.startsWith('text_'))
        .map((x) => x.file)
        .sort(),
    );
    expect(judged.length).toBe(11);
  });

  test.each(judged.map((x) => [x.file, x.packets, x.kind] as const))(
    '%s: %i frames, one fragment per segment',
    async (file, packets, kind) => {
      await judge(file, 1, 0, packets, { sameTimes: kind === 'video' });
    },
  );

  test.each([
    ['video_2997_600k.ismv', 300, true],
    ['audio_ac3_384k.isma', 313, false],
  ] as const)('%s: %i frames, two fragments per segment', async (file, packets, sameTimes) => {
    await judge(file, 1, 0, packets, { perSegment: 2, sameTimes });
  });

  test('muxed_av.ismv: each track on its own (renumbered to track 1)', async () => {
    // The muxed fixture's AAC starts at 0, so both tracks keep the source's timestamps.
    await judge('muxed_av.ismv', 1, 0, 96, { sameTimes: true });
    await judge('muxed_av.ismv', 2, 1, 188, { sameTimes: true, outputTrackId: 1 });
  });

  test('muxed_av.ismv: the audio track keeping its source track id 2', async () => {
    await judge('muxed_av.ismv', 2, 1, 188, { sameTimes: true, perSegment: 4 });
  });
});
