// Live output (DASH, HLS with MPEG-TS and with fMP4) of a channel fed by the test encoder on a
// fixed clock (IngestServerOptions.now and the serving port's `now`): manifests byte-compared with
// golden files, every listed segment read back, the per-format refusals of segments outside the
// window, caching headers, and the switch to static/ENDLIST at the end of stream.

import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { media, tempDir } from '../../helpers/fixtures';
import { expectGolden } from '../../helpers/golden';
import { boxes } from '../../helpers/box-walk';
import { archivedTo, avEncoders, createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { getBytes, setTimes } from '../../helpers/live-catalogue';
import { run } from '../../helpers/process';
import { httpGet, loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { validateMpd } from '../manifests/format-support';

const JAN_2020 = 1577836800;
// Two seconds past a multiple of 4 s: 4-s HLS segments then hold fragments of two archive files
// (the files rotate every two 2-s fragments from the first), and a segment read crosses files.
const ANCHOR = JAN_2020 + 2;
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));

let origin: LiveOrigin;
let url: string;

/** Pushes fragments [from, to) of the video and the audio encoder and waits until both are archived. */
async function push(v: TestEncoder, a: TestEncoder, from: number, to: number): Promise<void> {
  await v.send(from, to);
  await a.send(from, to);
  // The archive keeps the DVR window only (no --archiving): wait on the last time, not the count.
  await archivedTo(origin, 'ch', ANCHOR + 2 * (to - 1));
}

let v: TestEncoder;
let a: TestEncoder;

beforeAll(async () => {
  const clock = (): number => (ANCHOR + 60) * 1000;
  origin = await startLiveOrigin({ now: clock });
  await createChannel(origin.root, 'ch', ['--dvr_window_length=10', '--archive_segment_length=3']);
  await createChannel(origin.root, 'idle');
  url = `${origin.serving.url}/live/ch.isml`;
  [v, a] = avEncoders(origin.channelUrl('ch'), { video, audio }, ANCHOR);
  await v.open();
  await a.open();
  await push(v, a, 0, 12);
});
afterAll(() => origin.close());

test('live manifests on a fixed clock: golden, dynamic, sliding, valid against the MPD schema', async () => {
  const mpd = await httpGet(`${url}/.mpd`);
  expect(mpd.status).toBe(200);
  expect(validateMpd(mpd.body)).toEqual({ ok: true, output: expect.any(String) });
  expectGolden('live/ch.mpd', mpd.body);
  expect(mpd.body).toContain('type="dynamic"');
  expect(mpd.body).toContain('availabilityStartTime="1970-01-01T00:00:00Z"');
  expect(mpd.body).toContain('<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="/.time" />');
  const master = await httpGet(`${url}/.m3u8`);
  expectGolden('live/ch.m3u8', master.body);
  const ts = await httpGet(`${url}/ch-audio=64000-video=400000.m3u8`);
  expectGolden('live/ch-audio=64000-video=400000.m3u8', ts.body);
  const fmp4 = await httpGet(`${url}/ch-video=400000.m3u8?hls_fmp4=true`);
  expectGolden('live/ch-video=400000.fmp4.m3u8', fmp4.body);
  for (const playlist of [ts.body, fmp4.body]) {
    expect(playlist).not.toContain('#EXT-X-ENDLIST');
    expect(playlist).not.toContain('#EXT-X-PLAYLIST-TYPE');
    expect(playlist).toContain('#EXT-X-PROGRAM-DATE-TIME:');
  }
});

test('every DASH segment of the window is served, its tfdt its $Time$, times on the anchor (Unix epoch)', async () => {
  const times = setTimes((await httpGet(`${url}/.mpd`)).body);
  // The 10-s window of 2-s fragments at the edge 24 s after the anchor.
  expect(times.length).toBeGreaterThanOrEqual(5);
  expect(times[times.length - 1]).toBe(BigInt(ANCHOR + 22) * 10_000_000n);
  const init = await getBytes(`${url}/dash/ch-video=400000.dash`);
  expect([init.status, boxes(init.body).map((b) => b.type)]).toEqual([200, ['ftyp', 'moov']]);
  for (const t of times) {
    const seg = await getBytes(`${url}/dash/ch-video=400000-${t}.dash`);
    expect(seg.status).toBe(200);
    const moof = boxes(seg.body).find((b) => b.type === 'moof')!;
    const traf = boxes(moof.body).find((b) => b.type === 'traf')!;
    const tfdt = boxes(traf.body).find((b) => b.type === 'tfdt')!;
    expect(tfdt.body.readBigUInt64BE(4)).toBe(t);
  }
});

test('HLS TS segments spanning two archive files play in ffprobe, numbered on the epoch grid', async () => {
  const playlist = (await httpGet(`${url}/ch-audio=64000-video=400000.m3u8`)).body;
  const seq = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)![1]);
  const pdt = Date.parse(/#EXT-X-PROGRAM-DATE-TIME:(.*)/.exec(playlist)![1]!);
  // MSN = floor((t − anchor) / 4 s): the PDT of the first segment is its number × 4 s.
  expect(pdt).toBe(seq * 4000);
  const uris = playlist.split('\n').filter((l) => l.endsWith('.ts'));
  expect(uris[0]).toBe(`ch-audio=64000-video=400000-${seq}.ts`);
  const dir = tempDir('origin-live-ts-');
  for (const uri of uris) {
    const seg = await getBytes(`${url}/${uri}`);
    expect([uri, seg.status]).toEqual([uri, 200]);
    const file = path.join(dir, uri);
    writeFileSync(file, seg.body);
    const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
    expect([uri, probe.code, probe.stderr]).toEqual([uri, 0, '']);
    expect(Number(probe.stdout)).toBeGreaterThan(3.5);
  }
});

test('segments outside the window: the reference statuses per format', async () => {
  const times = setTimes((await httpGet(`${url}/.mpd`)).body);
  const expect404 = async (u: string, status: number, code: string): Promise<void> => {
    const r = await httpGet(u);
    expect([u, r.status, r.headers['x-origin-error']]).toEqual([u, status, code]);
  };
  await expect404(`${url}/dash/ch-video=400000-${BigInt(ANCHOR) * 10_000_000n}.dash`, 410, 'fragment-expired');
  await expect404(
    `${url}/dash/ch-video=400000-${times[times.length - 1]! + 20_000_000n}.dash`,
    404,
    'fragment-not-yet',
  );
  await expect404(`${url}/dash/ch-video=400000-${times[1]! + 1n}.dash`, 404, 'fragment-missing');
  const playlist = (await httpGet(`${url}/ch-audio=64000-video=400000.m3u8`)).body;
  const seq = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)![1]);
  await expect404(`${url}/ch-audio=64000-video=400000-${seq - 2}.ts`, 404, 'fragment-expired');
  await expect404(`${url}/ch-audio=64000-video=400000-${seq + 40}.ts`, 404, 'fragment-not-yet');
  // A channel with no media yet.
  await expect404(`${origin.serving.url}/live/idle.isml/.mpd`, 404, 'fragment-not-yet');
});

test('/.time is the clock; live manifests cache for half a segment; a segment ETag survives appends', async () => {
  const time = await httpGet(`${origin.serving.url}/.time`);
  expect(time.body).toBe(new Date((ANCHOR + 60) * 1000).toISOString());
  const mpd = await httpGet(`${url}/.mpd`);
  expect(mpd.headers['cache-control']).toBe('max-age=1');
  const hls = await httpGet(`${url}/ch-audio=64000-video=400000.m3u8`);
  expect(hls.headers['cache-control']).toBe('max-age=2');
  const times = setTimes(mpd.body);
  const segment = `${url}/dash/ch-video=400000-${times[times.length - 1]}.dash`;
  const seq = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(hls.body)![1]);
  // The edge segment, and the first TS segment (whose place in the window changes next).
  const urls = [
    segment,
    `${url}/ch-audio=64000-video=400000-${seq + 1}.ts`,
    `${url}/hls/ch-video=400000-${seq + 1}.m4s?hls_fmp4=true`,
  ];
  const before = await Promise.all(urls.map(getBytes));
  await push(v, a, 12, 14);
  const after = await Promise.all(urls.map(getBytes));
  for (let i = 0; i < urls.length; i++) {
    expect([urls[i], after[i]!.status, after[i]!.body.equals(before[i]!.body)]).toEqual([urls[i], 200, true]);
    expect(after[i]!.headers.etag).toBe(before[i]!.headers.etag);
  }
  const seqOf = async (): Promise<number> =>
    Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec((await httpGet(`${url}/ch-audio=64000-video=400000.m3u8`)).body)![1]);
  // Two more 2-s fragments: one more 4-s HLS segment, two more DASH segments; the window slides.
  expect(await seqOf()).toBe(seq + 1);
  expect(setTimes((await httpGet(`${url}/.mpd`)).body)[0]).toBe(times[2]);
});

test('after the end of stream: a static MPD and ENDLIST playlists', async () => {
  await v.close(true);
  await a.close(true);
  await eventually(
    () => origin.state('ch'),
    (s) => s.state === 'stopped',
  );
  const mpd = await httpGet(`${url}/.mpd`);
  expect(mpd.body).toContain('type="static"');
  expect(mpd.body).not.toContain('UTCTiming');
  expect(validateMpd(mpd.body).ok).toBe(true);
  const hls = await httpGet(`${url}/ch-audio=64000-video=400000.m3u8`);
  expect(hls.body).toMatch(/#EXT-X-ENDLIST\n$/);
});
