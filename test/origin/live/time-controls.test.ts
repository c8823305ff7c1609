// Time controls on a live channel and its archive (docs/guide/live.md#time-controls), in every
// format: the test encoder pushes 40 s of 2-s fragments on UTC times to a channel that archives
// everything and has a 12-s DVR window; the serving port's clock is fixed. For each query, the
// DASH MPD, the HLS playlists (MPEG-TS and fMP4), the Smooth manifest and the HDS bootstrap must
// list the same window (the video's first start, last end) and be live or closed alike; listed
// segments are served with the query and refused past a shifted edge; every bad value is a 400.

import * as http from 'node:http';
import { media } from '../../helpers/fixtures';
import { avEncoders, createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture } from '../../helpers/test-encoder';
import { validateMpd } from '../manifests/format-support';
import { LIVE_FORMATS, LiveFormat, listedWindow, manifestPath } from './live-windows';

// A multiple of 4 s, so that 4-s HLS segments and 2-s fragments share boundaries.
const ANCHOR = 1577836800;
const FRAGMENTS = 20;
const EDGE = ANCHOR + 2 * FRAGMENTS;
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));
/** The Smooth manifest lists a chunk once its two successors exist (lookahead_fragments 2). */
const LOOKAHEAD_SECONDS = 4;
/** HDS writes times modulo 2^22 s (model/hds-media.ts liveHdsBase). */
const HDS_PERIOD = 2 ** 22;

let origin: LiveOrigin;
let base: string;

function get(path: string): Promise<{ status: number; body: string; error?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}/${path}`, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('latin1'),
            error: res.headers['x-origin-error'] as string | undefined,
          }),
        );
      })
      .on('error', reject);
  });
}

/** UTC second `s` after the anchor as ISO 8601 without a zone (the reference's capture form). */
function iso(s: number): string {
  return new Date((ANCHOR + s) * 1000).toISOString().replace(/\.000Z$/, '');
}

beforeAll(async () => {
  const clock = (): number => (EDGE + 1) * 1000;
  origin = await startLiveOrigin({ now: clock });
  await createChannel(origin.root, 'ch', ['--archiving', '--dvr_window_length=12']);
  base = `${origin.serving.url}/live/ch.isml`;
  const encoders = avEncoders(origin.channelUrl('ch'), { video, audio }, ANCHOR);
  for (const e of encoders) await e.open();
  for (const e of encoders) await e.send(0, FRAGMENTS);
  await eventually(
    () => origin.state('ch'),
    (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments === FRAGMENTS),
  );
});
afterAll(() => origin.close());

/** [query, first start, last end (seconds after the anchor), live]. */
const WINDOWS: Array<[string, string, number, number, boolean]> = [
  ['the channel window', '', 28, 40, true],
  ['a query window shrinks it', 'dvr_window_length=8', 32, 40, true],
  ['a query window never grows it', 'dvr_window_length=100', 28, 40, true],
  ['time_shift moves the edge back', 'time_shift=8', 20, 32, true],
  ['time_shift with a query window', 'time_shift=8&dvr_window_length=8', 24, 32, true],
  ['t=<ISO>-<ISO> in the past: static', `t=${iso(8)}-${iso(20)}`, 8, 20, false],
  ['t=<ISO>Z-<ISO>Z', `t=${iso(8)}Z-${iso(20)}Z`, 8, 20, false],
  ['t=<ISO>, open: to the edge, live', `t=${iso(32)}`, 32, 40, true],
  ['t spanning now: live to the edge', `t=${iso(28)}-${iso(60)}`, 28, 40, true],
  ['t in seconds since 1970', `t=${ANCHOR + 8}-${ANCHOR + 20}`, 8, 20, false],
  ['t starting before the archive', `t=${iso(-100)}-${iso(12)}`, 0, 12, false],
  ['t ending after the live edge', `t=${iso(16)}-${iso(400)}`, 16, 40, true],
  ['t open with a query window', `t=${iso(8)}&dvr_window_length=8`, 32, 40, true],
  ['t closed before a shifted edge', `t=${iso(8)}-${iso(20)}&time_shift=8`, 8, 20, false],
  ['t spanning a shifted edge', `t=${iso(8)}-${iso(36)}&time_shift=8`, 8, 32, true],
  ['vbegin/vend as ISO dates', `vbegin=${iso(8)}&vend=${iso(20)}`, 8, 20, false],
  ['vbegin alone, seconds since 1970', `vbegin=${ANCHOR + 24}`, 24, 40, true],
  ['vend alone: from the archive start', `vend=${iso(12)}`, 0, 12, false],
];

describe.each(WINDOWS)('%s', (_name, query, start, end, live) => {
  test.each(LIVE_FORMATS.map((f) => [f]))('%s', async (format: LiveFormat) => {
    const r = await get(manifestPath(format, query));
    expect([r.status, r.error]).toEqual([200, undefined]);
    const w = listedWindow(format, r.body);
    // Smooth holds back the chunks whose lookahead is not archived yet; HDS writes wrapped times.
    const last = format === 'smooth' && live ? end - LOOKAHEAD_SECONDS : end;
    const wrap = (s: number): number => (format === 'hds' ? (ANCHOR + s) % HDS_PERIOD : ANCHOR + s);
    expect({ start: w.start, end: w.end, live: w.live }).toEqual({ start: wrap(start), end: wrap(last), live });
    if (format === 'dash') expect(validateMpd(r.body)).toEqual({ ok: true, output: expect.any(String) });
    // Every URL carries the time controls: without them a segment outside the DVR window is refused.
    if (query !== '') for (const u of w.urls) expect(u).toContain(query.split('&')[0]!.split('=')[0]!);
  });
});

test('DASH: a static range keeps its times; a dynamic view deepens timeShiftBufferDepth by the shift', async () => {
  const closed = (await get(`.mpd?t=${iso(8)}-${iso(20)}`)).body;
  expect(closed).toContain('type="static"');
  // 12 s of video; the audio's last frame reaches a little further.
  expect(closed).toMatch(/mediaPresentationDuration="PT12(\.\d{1,3})?S"/);
  expect(closed).toContain('presentationTimeOffset="15778368080000000"');
  expect(closed).not.toContain('minimumUpdatePeriod');
  expect(closed).not.toContain('UTCTiming');
  const shifted = (await get('.mpd?time_shift=8')).body;
  // The client counts the buffer back from its clock (the live edge): window + shift.
  expect(shifted).toContain('timeShiftBufferDepth="PT20S"');
  expect((await get('.mpd?dvr_window_length=8')).body).toContain('timeShiftBufferDepth="PT8S"');
  expect((await get('.mpd?dvr_window_length=100')).body).toContain('timeShiftBufferDepth="PT12S"');
  // From the range's start to the live edge (the audio's, 85 ms past the video's).
  expect((await get(`.mpd?t=${iso(16)}`)).body).toMatch(/timeShiftBufferDepth="PT24(\.\d{1,3})?S"/);
});

test('HLS: sequence numbers and dates on the epoch grid under every control; ENDLIST when closed', async () => {
  for (const query of ['', 'time_shift=8', `t=${iso(8)}-${iso(20)}`, `vbegin=${ANCHOR + 24}`]) {
    const body = (await get(manifestPath('hls-ts', query))).body;
    const msn = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(body)![1]);
    const pdt = Date.parse(/#EXT-X-PROGRAM-DATE-TIME:(.*)/.exec(body)![1]!);
    expect([query, pdt]).toEqual([query, msn * 4000]);
    expect(body).not.toContain('#EXT-X-PLAYLIST-TYPE');
  }
  expect((await get(`ch-video=400000.m3u8?hls_fmp4=true&t=${iso(8)}-${iso(20)}`)).body).toMatch(/#EXT-X-ENDLIST\n$/);
});

describe('listed segments are served with the query; past a shifted edge they are not yet', () => {
  test.each(LIVE_FORMATS.map((f) => [f]))('%s', async (format: LiveFormat) => {
    // A range older than the DVR window: served with the query, expired without it.
    const past = listedWindow(format, (await get(manifestPath(format, `t=${iso(8)}-${iso(20)}`))).body);
    expect(past.urls.length).toBeGreaterThan(0);
    for (const u of past.urls) {
      const r = await get(u);
      expect([u, r.status, r.error]).toEqual([u, 200, undefined]);
    }
    const bare = await get(past.urls[0]!.split('?')[0]!);
    expect(bare.error).toBe('fragment-expired');
    // The whole channel window, asked with time_shift=8: its last segments lie past the shifted edge.
    const now = listedWindow(format, (await get(manifestPath(format, ''))).body);
    const newest = now.urls[now.urls.length - 1]!;
    const shifted = await get(`${newest}${newest.includes('?') ? '&' : '?'}time_shift=8`);
    const status = { dash: 404, 'hls-ts': 404, 'hls-fmp4': 404, smooth: 412, hds: 503 }[format];
    expect([shifted.status, shifted.error]).toEqual([status, 'fragment-not-yet']);
    expect((await get(newest)).status).toBe(200);
  });
});

const BAD: Array<[string, string, string]> = [
  ['t garbage', 't=yesterday', 'bad-time'],
  ['t negative', 't=-5', 'bad-time'],
  ['t end before start', `t=${iso(20)}-${iso(8)}`, 'bad-time'],
  ['t end equal to start', `t=${ANCHOR + 8}-${ANCHOR + 8}`, 'bad-time'],
  ['t with a date that does not exist', 't=2020-02-30T00:00:00', 'bad-time'],
  ['t with a 61st minute', 't=2020-01-01T00:61:00', 'bad-time'],
  ['t with a zone offset', 't=2020-01-01T00:00:08+01:00', 'bad-time'],
  ['t before 1970', 't=1969-12-31T23:59:59', 'bad-time'],
  ['t and vbegin together', `t=${iso(8)}&vbegin=${iso(8)}`, 'bad-time'],
  ['vbegin negative', 'vbegin=-8', 'bad-time'],
  ['vbegin garbage', 'vbegin=soon', 'bad-time'],
  ['vend before vbegin', `vbegin=${iso(20)}&vend=${iso(8)}`, 'bad-time'],
  ['time_shift negative', 'time_shift=-8', 'bad-option'],
  ['time_shift garbage', 'time_shift=8s', 'bad-option'],
  ['dvr_window_length negative', 'dvr_window_length=-1', 'bad-option'],
  ['dvr_window_length garbage', 'dvr_window_length=long', 'bad-option'],
];

describe.each(BAD)('%s is a 400', (_name, query, code) => {
  test.each(LIVE_FORMATS.map((f) => [f]))('%s', async (format: LiveFormat) => {
    const r = await get(manifestPath(format, query));
    expect([r.status, r.error]).toEqual([400, code]);
  });
});

test('a range wholly after the edge is not yet; wholly before the archive, an empty clip', async () => {
  for (const format of LIVE_FORMATS) {
    const future = await get(manifestPath(format, `t=${iso(100)}`));
    expect([format, future.status, future.error]).toEqual([format, 404, 'fragment-not-yet']);
    expect(future.body).toContain('after the live point');
    const before = await get(manifestPath(format, `t=${iso(-100)}-${iso(-50)}`));
    expect([format, before.status, before.error]).toEqual([format, 404, 'empty-clip']);
    expect(before.body).toContain("the channel's archive holds 2020-01-01T00:00:00.000Z to 2020-01-01T00:00:40");
  }
});
