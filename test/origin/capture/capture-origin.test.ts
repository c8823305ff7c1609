// origin capture against this origin, in-process on loopback: its Smooth, DASH and HLS URLs with
// `t` and `filter`, the captured file packaged by `origin package`, served again, and judged by
// ffmpeg's frame checksums against the same frames of the source.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { startTestOrigin, TestOrigin } from '../server/server-helpers';
import { frameHashes, streamCodecs, videoFrames } from './capture-helpers';

jest.setTimeout(120_000);

let origin: TestOrigin;
let sourceHashes: string[];
const FPS = 24;

beforeAll(async () => {
  origin = await startTestOrigin({ p: ['video_main_900k.ismv', 'audio_eng_128k.isma'] });
  sourceHashes = await frameHashes(media('video_main_900k.ismv'));
});
afterAll(() => origin.server.close());

async function captureAndServe(url: string, extra: string[] = []): Promise<{ dir: string; ismv: string; out: string }> {
  const dir = tempDir('capture-');
  const ismv = path.join(dir, 'c.ismv');
  const r = await runOrigin(['capture', url, '-o', ismv, ...extra]);
  expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('wrote ')]);
  const pkg = await runOrigin(['package', '-q', '-o', path.join(origin.root, `${path.basename(dir)}.ism`), ismv]);
  expect([pkg.code, pkg.stderr]).toEqual([0, '']);
  return { dir, ismv, out: `${origin.url}/${path.basename(dir)}.ism` };
}

test.each(['Manifest', '.mpd', '.m3u8'])(
  't=3-7 from the %s URL: the GOP-snapped frames of the source',
  async (kind) => {
    const { ismv, out } = await captureAndServe(`${origin.url}/p.ism/${kind}?t=3-7`);
    // The fixture has a keyframe every 2 s: 3..7 snaps to 2..6, frames 48..143.
    const frames = await videoFrames(ismv);
    expect(frames.length).toBe(4 * FPS);
    expect(frames[0]!.key).toBe(true);
    expect(await streamCodecs(ismv)).toEqual(expect.arrayContaining(['h264', 'aac']));
    // The round trip: packaged, served as DASH, decoded: the source's own frames.
    const served = await frameHashes(`${out}/.mpd`);
    expect(served).toEqual(sourceHashes.slice(2 * FPS, 6 * FPS));
    expect(await frameHashes(ismv)).toEqual(served);
  },
);

test('the default starts at 0; --copy_ts keeps the snapped start as the first <c t>', async () => {
  const source = await runOrigin(['package', '-o', 'stdout:', path.join(origin.root, 'p.ism'), 'Manifest?t=3-7']);
  const firstC = (manifest: string, type: string): string =>
    new RegExp(`Type="${type}"[\\s\\S]*?<c t="(\\d+)"`).exec(manifest)![1]!;
  const rebased = await captureAndServe(`${origin.url}/p.ism/.mpd?t=3-7`);
  const copied = await captureAndServe(`${origin.url}/p.ism/.mpd?t=3-7`, ['--copy_ts']);
  const smooth = async (out: string): Promise<string> => (await fetch(`${out}/Manifest`)).text();
  expect(firstC(await smooth(copied.out), 'video')).toBe(firstC(source.stdout, 'video'));
  expect(firstC(await smooth(rebased.out), 'video')).toBe('0');
  expect(await frameHashes(`${copied.out}/.mpd`)).toEqual(await frameHashes(`${rebased.out}/.mpd`));
});

test('a filtered URL captures only the tracks it selects', async () => {
  const audio = await captureAndServe(`${origin.url}/p.ism/.m3u8?filter=${encodeURIComponent('type=="audio"')}`);
  expect(await streamCodecs(audio.ismv)).toEqual(['aac']);
  const video = await captureAndServe(
    `${origin.url}/p.ism/Manifest?filter=${encodeURIComponent('type!="audio"')}&t=0-4`,
  );
  expect(await streamCodecs(video.ismv)).toEqual(['h264']);
  expect(await frameHashes(video.ismv)).toEqual(sourceHashes.slice(0, 4 * FPS));
});

test('bad input: exit codes and messages like origin package', async () => {
  const dir = tempDir('capture-bad-');
  const out = path.join(dir, 'x.ismv');
  const cases: Array<[string[], number, RegExp]> = [
    [['capture', `${origin.url}/p.ism/.mpd`], 2, /no output/],
    [['capture', '-o', out], 2, /no URL/],
    [['capture', `${origin.url}/p.ism/.mpd`, '-o', path.join(dir, 'x.ism')], 2, /\.ismv/],
    [['capture', `${origin.url}/p.ism/.mpd`, '-o', out, '--copyts'], 2, /unknown option --copyts/],
    [['capture', `${origin.url}/p.ism/.f4m`, '-o', out], 1, /HDS/],
    [['capture', `${origin.url}/nothing.ism/.mpd`, '-o', out], 1, /HTTP 404/],
    [['capture', `${origin.url}/p.ism/.mpd?t=9-3`, '-o', out], 1, /HTTP 400/],
    [['capture', 'ftp://example.invalid/x.mpd', '-o', out], 1, /scheme ftp:/],
    [['capture', 'not a url', '-o', out], 1, /not a URL/],
  ];
  for (const [args, code, message] of cases) {
    const r = await runOrigin(args);
    expect([args.join(' '), r.code]).toEqual([args.join(' '), code]);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^origin capture: /);
    await expect(fs.stat(out)).rejects.toThrow(/ENOENT/);
  }
});
