// origin capture of a live, sliding HLS fMP4 playlist: ffmpeg streams a source in real time (-re)
// into a 3-segment window that deletes old segments, nginx serves it, and the capture, given a
// wall-clock range (ISO 8601 without zone against EXT-X-PROGRAM-DATE-TIME) that ends in the
// future, polls the playlist until the end and keeps every segment before it slides away. The
// origin's own live output is not built yet: its live test comes with it.

import { promises as fs } from 'node:fs';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { runOrigin, tempDir } from '../../helpers/fixtures';
import { haveNginx, startNginx } from '../../helpers/nginx';
import { frameHashes, makeSource } from './capture-helpers';

jest.setTimeout(120_000);

const FPS = 25;

(haveNginx ? test : test.skip)('a sliding live playlist, a wall-clock range ending in the future', async () => {
  const dir = tempDir('capture-live-');
  const src = path.join(dir, 'src.mp4');
  expect(await makeSource(src, { fps: FPS, seconds: 9, extra: [] })).toBe('');
  const sourceHashes = await frameHashes(src);
  await fs.mkdir(path.join(dir, 'live'));
  const nginx = await startNginx(dir);
  const encoder = spawn('ffmpeg', [
    ...['-v', 'error', '-re', '-i', src, '-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '3'],
    ...['-hls_flags', 'delete_segments+program_date_time', '-hls_segment_type', 'fmp4'],
    path.join(dir, 'live', 'x.m3u8'),
  ]);
  try {
    const playlist = path.join(dir, 'live', 'x.m3u8');
    let text = '';
    for (let i = 0; i < 100 && !/#EXTINF/.test(text); i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await fs.readFile(playlist, 'utf8').catch(() => '');
    }
    const pdt = /#EXT-X-PROGRAM-DATE-TIME:(.*)/.exec(text)![1]!.trim();
    const zero = Date.parse(pdt.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
    const iso = (ms: number): string => new Date(ms).toISOString().slice(0, -1);
    // 1.5 .. 6 s of the source: snapped to the segments 1..6, frames 25..149.
    const out = path.join(dir, 'c.ismv');
    const r = await runOrigin([
      'capture',
      `${nginx.url}live/x.m3u8?t=${iso(zero + 1500)}-${iso(zero + 6000)}`,
      '-o',
      out,
    ]);
    expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('wrote ')]);
    expect(await frameHashes(out)).toEqual(sourceHashes.slice(1 * FPS, 6 * FPS));
    const pkg = await runOrigin(['package', '-q', '-o', path.join(dir, 'c.ism'), out]);
    expect([pkg.code, pkg.stderr]).toEqual([0, '']);
  } finally {
    encoder.kill('SIGKILL');
    await nginx.stop();
  }
});
