// LL-HLS output of a channel fed by the test encoder with ffmpeg's 0.32 s CMAF fragments
// (test/helpers/ll-hls.ts), real HTTP on loopback: every tag and attribute rule of the playlist,
// parts against segments (a segment's bytes are its parts' bytes), blocking reload and the
// preload-hinted part waiting for the encoder, delta updates, rendition reports, and every bad
// `_HLS_*` value. The channel's clock is fixed; the encoder pushes when the test says.

import { tempDir } from '../../helpers/fixtures';
import { boxes } from '../../helpers/box-walk';
import { avEncoders, createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { getBytes } from '../../helpers/live-catalogue';
import { LL_CHANNEL_OPTIONS, makeLlFixtures, PARTS_PER_SEGMENT } from '../../helpers/ll-hls';
import { httpGet, TestEncoder } from '../../helpers/test-encoder';
import { readPlaylist } from '../manifests/hls-support';

// A multiple of 48 s since the epoch: on the 1.92 s grid (48 frames at 25 fps), as encoders anchor.
const ANCHOR = 1577836800;
const GRID = 1.92;

let origin: LiveOrigin;
let base: string;
let v: TestEncoder;
let a: TestEncoder;
/** Fragments pushed so far, per track. */
let pushed = 0;

/** Pushes `n` more fragments of the video (and the audio unless `videoOnly`), waits until archived. */
async function push(n: number, videoOnly = false): Promise<void> {
  await v.send(pushed, pushed + n);
  if (!videoOnly) await a.send(pushed, pushed + n);
  pushed += n;
  const want = pushed;
  await eventually(
    () => origin.state('ll'),
    (s) => s.tracks.length === 2 && s.tracks.some((t) => t.track.startsWith('video') && t.fragments >= want),
  );
}

const video = (q = ''): string => `${base}/ll-video=300000.m3u8${q}`;

beforeAll(async () => {
  const dir = tempDir('origin-ll-');
  const fx = await makeLlFixtures(dir);
  origin = await startLiveOrigin({ now: () => (ANCHOR + 60) * 1000 });
  await createChannel(origin.root, 'll', LL_CHANNEL_OPTIONS);
  base = `${origin.serving.url}/live/ll.isml`;
  [v, a] = avEncoders(origin.channelUrl('ll'), fx, ANCHOR, 'video-300k.cmfv');
  await v.open();
  await a.open();
  // Two whole segments and two parts of the third.
  await push(2 * PARTS_PER_SEGMENT + 2);
}, 60_000);
afterAll(() => origin.close());

test('the LL playlist: every tag, attributes, parts of the last segments and the growing one', async () => {
  const r = await httpGet(video());
  expect(r.status).toBe(200);
  const text = r.body;
  const lines = text.split('\n');
  const first = Math.round(ANCHOR / GRID);
  expect(lines.slice(0, 9)).toEqual([
    '#EXTM3U',
    '#EXT-X-VERSION:6',
    '## Created with Streaming Origin',
    '#EXT-X-TARGETDURATION:2',
    '#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=0.960',
    '#EXT-X-PART-INF:PART-TARGET=0.320',
    `#EXT-X-MEDIA-SEQUENCE:${first}`,
    '#EXT-X-INDEPENDENT-SEGMENTS',
    '#EXT-X-MAP:URI="hls/ll-video=300000.m4s"',
  ]);
  expect(lines[9]).toBe('#EXT-X-PROGRAM-DATE-TIME:2020-01-01T00:00:00.000Z');
  const parts = lines.filter((l) => l.startsWith('#EXT-X-PART:'));
  // Both whole segments end within three target durations: 6 + 6 parts, and 2 of the growing one.
  expect(parts).toHaveLength(14);
  for (const [i, p] of parts.entries()) {
    const n = first + Math.floor(i / 6);
    const k = i % 6;
    expect(p).toBe(
      `#EXT-X-PART:DURATION=0.320,URI="hls/ll-video=300000-${n}.part${k}.m4s"${k === 0 ? ',INDEPENDENT=YES' : ''}`,
    );
  }
  expect(lines.filter((l) => l.startsWith('#EXTINF:'))).toEqual(['#EXTINF:1.920,', '#EXTINF:1.920,']);
  expect(lines).toContain(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="hls/ll-video=300000-${first + 2}.part2.m4s"`);
  expect(lines).toContain(`#EXT-X-RENDITION-REPORT:URI="ll-audio=64000.m3u8",LAST-MSN=${first + 2},LAST-PART=1`);
  expect(text).not.toContain('ENDLIST');
  // Parts come before their segment's EXTINF; the growing segment's after the last one.
  const lastInf = lines.lastIndexOf('#EXTINF:1.920,');
  expect(lines.slice(lastInf + 2, lastInf + 4).every((l) => l.startsWith('#EXT-X-PART:'))).toBe(true);
  const parsed = readPlaylist(text);
  expect(parsed.warnings).toEqual([]);
  expect(parsed.manifest.segments).toHaveLength(2);
});

test('the audio playlist is LL too, and the master lists both; TS playlists stay as they were', async () => {
  const audio = await httpGet(`${base}/ll-audio=64000.m3u8`);
  expect(audio.body).toContain('#EXT-X-PART-INF:PART-TARGET=0.320');
  expect(audio.body).toContain('#EXT-X-RENDITION-REPORT:URI="ll-video=300000.m3u8"');
  expect(readPlaylist(audio.body).warnings).toEqual([]);
  const master = await httpGet(`${base}/.m3u8`);
  expect(master.status).toBe(200);
  expect(readPlaylist(master.body).warnings).toEqual([]);
  // Without hls_fmp4 (the query turns it off) the playlists are the normal live ones.
  const ts = await httpGet(`${base}/ll-audio=64000-video=300000.m3u8?hls_fmp4=false`);
  expect(ts.status).toBe(200);
  expect(ts.body).not.toMatch(/EXT-X-PART|SERVER-CONTROL|PRELOAD-HINT/);
  const off = await httpGet(video('?hls_low_latency=false'));
  expect(off.body).not.toMatch(/EXT-X-PART|SERVER-CONTROL|PRELOAD-HINT|RENDITION-REPORT/);
});

test('a whole segment is its parts end to end; each part is styp + one moof+mdat', async () => {
  const first = Math.round(ANCHOR / GRID);
  const segment = await getBytes(`${base}/hls/ll-video=300000-${first}.m4s`);
  expect(segment.status).toBe(200);
  const parts: Buffer[] = [];
  for (let i = 0; i < PARTS_PER_SEGMENT; i++) {
    const p = await getBytes(`${base}/hls/ll-video=300000-${first}.part${i}.m4s`);
    expect(p.status).toBe(200);
    const top = boxes(p.body);
    expect(top.map((b) => b.type)).toEqual(['styp', 'moof', 'mdat']);
    parts.push(i === 0 ? p.body : p.body.subarray(top[0]!.size));
  }
  // The segment's styp, then every fragment: the parts' bytes after their own styp.
  expect(Buffer.concat(parts).equals(segment.body)).toBe(true);
  const growing = await getBytes(`${base}/hls/ll-video=300000-${first + 2}.part1.m4s`);
  expect(growing.status).toBe(200);
  // A part past the newest one but beyond the hint: not there.
  const old = await getBytes(`${base}/hls/ll-video=300000-${first}.part6.m4s`);
  expect(old.status).toBe(404);
});

test('blocking reload: the request waits for its part and answers once the encoder sends it', async () => {
  const first = Math.round(ANCHOR / GRID);
  const msn = first + 2;
  const playlist = await httpGet(video());
  const next = Number(/LAST-PART=(\d+)/.exec(playlist.body)?.[1] ?? -1) + 1;
  let answered = false;
  const blocked = httpGet(video(`?_HLS_msn=${msn}&_HLS_part=${next}`)).then((r) => {
    answered = true;
    return r;
  });
  const hinted = getBytes(`${base}/hls/ll-video=300000-${msn}.part${next}.m4s`);
  await new Promise((r) => setTimeout(r, 300));
  expect(answered).toBe(false);
  await push(1);
  const r = await blocked;
  expect(r.status).toBe(200);
  expect(r.body).toContain(`URI="hls/ll-video=300000-${msn}.part${next}.m4s"`);
  expect(r.body).not.toContain('_HLS_');
  expect((await hinted).status).toBe(200);
  // Already there: at once.
  const now = await httpGet(video(`?_HLS_msn=${first}&_HLS_part=0`));
  expect(now.status).toBe(200);
  const whole = await httpGet(video(`?_HLS_msn=${first + 1}`));
  expect(whole.status).toBe(200);
});

test('a part index past the last part of a segment means the next segment', async () => {
  const first = Math.round(ANCHOR / GRID);
  // Complete the third segment; its part 6 does not exist: the request waits for the fourth's part 0.
  const left = PARTS_PER_SEGMENT - ((pushed - 0) % PARTS_PER_SEGMENT);
  await push(left);
  let answered = false;
  const blocked = httpGet(video(`?_HLS_msn=${first + 2}&_HLS_part=${PARTS_PER_SEGMENT}`)).then((r) => {
    answered = true;
    return r;
  });
  await new Promise((r) => setTimeout(r, 300));
  expect(answered).toBe(false);
  await push(1);
  const r = await blocked;
  expect(r.status).toBe(200);
  expect(r.body).toContain(`URI="hls/ll-video=300000-${first + 3}.part0.m4s",INDEPENDENT=YES`);
});

test('one rendering per version for every spelling of a playlist, and waiters share its bytes', async () => {
  const first = Math.round(ANCHOR / GRID);
  // The same playlist under other virtual directories (the routes ignore them): other request
  // lines, so the coalescer does not fold them; the rendered-manifest cache must.
  const spelled = (d: string, q = ''): string => `${base}/${d}/ll-video=300000.m3u8${q}`;
  const playlist = await httpGet(video());
  const msn = Number(/LAST-MSN=(\d+)/.exec(playlist.body)?.[1] ?? -1);
  const last = [...playlist.body.matchAll(/-(\d+)\.part(\d+)\.m4s",/g)].at(-1)!;
  const target = `?_HLS_msn=${last[1]}&_HLS_part=${Number(last[2]) + 1}`;
  expect(msn).toBeGreaterThanOrEqual(first);
  const waiting = ['d0', 'd1', 'd2', 'd0', 'd1', 'd2'].map((d) => getBytes(spelled(d, target)));
  await new Promise((r) => setTimeout(r, 200));
  await push(1);
  const woken = await Promise.all(waiting);
  const byEtag = new Map<string, Buffer>();
  for (const r of woken) {
    expect(r.status).toBe(200);
    const etag = String(r.headers.etag);
    // One ETag, one text: what a version rendered is what every waiter of it got.
    if (byEtag.has(etag)) expect(r.body.equals(byEtag.get(etag)!)).toBe(true);
    byEtag.set(etag, r.body);
  }
  // Now quiet: the plain GET and every spelling, blocking or not, answer the same bytes from at
  // most one rendering (one per spelling before).
  const renders = origin.serving.manifestCacheStats().renders;
  const plain = await getBytes(video());
  const others = [
    await getBytes(video(target)),
    await getBytes(spelled('d3')),
    await getBytes(spelled('d4', target)),
    await getBytes(spelled('d5', target)),
  ];
  for (const r of others) {
    expect(r.status).toBe(200);
    expect(r.body.equals(plain.body)).toBe(true);
    expect(r.headers.etag).toBe(plain.headers.etag);
  }
  expect(origin.serving.manifestCacheStats().renders - renders).toBeLessThanOrEqual(1);
});

test('bad delivery directives: 400 with the code, and a part that never comes: 503', async () => {
  const first = Math.round(ANCHOR / GRID);
  const cases = [
    '?_HLS_part=1',
    '?_HLS_msn=abc',
    '?_HLS_msn=-1',
    '?_HLS_msn=1.5',
    '?_HLS_msn=99999999999999999999',
    `?_HLS_msn=${first}&_HLS_msn=${first}`,
    `?_HLS_msn=${first}&_HLS_part=x`,
    '?_HLS_skip=NO',
    `?_HLS_msn=${first + 10}`,
    `?_HLS_msn=${first + 3}&_HLS_part=40`,
    `?_HLS_msn=${first + 5}&_HLS_part=0`,
  ];
  for (const q of cases) {
    const r = await httpGet(video(q));
    expect([q, r.status, r.headers['x-origin-error']]).toEqual([q, 400, 'bad-delivery-directive']);
  }
  // The next-but-one segment's part 0 is within the limits, and the encoder sends nothing.
  const started = Date.now();
  const r = await httpGet(video(`?_HLS_msn=${first + 4}&_HLS_part=0`));
  expect([r.status, r.headers['x-origin-error']]).toEqual([503, 'reload-timeout']);
  expect(Date.now() - started).toBeGreaterThanOrEqual(5_900);
}, 20_000);

test('delta updates at version 9: EXT-X-SKIP for the segments past the skip boundary', async () => {
  // Eight whole segments in the window: 15.36 s, past the 12 s skip boundary.
  await push(5 * PARTS_PER_SEGMENT);
  const full = await httpGet(video('?hls_client_manifest_version=9'));
  expect(full.body).toContain('#EXT-X-VERSION:9');
  expect(full.body).toContain('CAN-SKIP-UNTIL=12');
  const delta = await httpGet(video('?hls_client_manifest_version=9&_HLS_skip=YES'));
  const v2 = await httpGet(video('?hls_client_manifest_version=9&_HLS_skip=v2'));
  expect(v2.body).toBe(delta.body);
  const skipped = Number(/#EXT-X-SKIP:SKIPPED-SEGMENTS=(\d+)/.exec(delta.body)?.[1]);
  const fullInf = full.body.split('\n').filter((l) => l.startsWith('#EXTINF'));
  const deltaInf = delta.body.split('\n').filter((l) => l.startsWith('#EXTINF'));
  expect(skipped).toBeGreaterThan(0);
  expect(deltaInf.length + skipped).toBe(fullInf.length);
  // The same media sequence; the delta's first segment URI is the full one's (skipped + 1)-th.
  const uris = (t: string): string[] => t.split('\n').filter((l) => l.startsWith('hls/'));
  expect(uris(delta.body)).toEqual(uris(full.body).slice(skipped));
  expect(/MEDIA-SEQUENCE:(\d+)/.exec(delta.body)?.[1]).toBe(/MEDIA-SEQUENCE:(\d+)/.exec(full.body)?.[1]);
  // Below version 9 a skip request gets the whole playlist, with no CAN-SKIP-UNTIL.
  const old = await httpGet(video('?_HLS_skip=YES'));
  expect(old.body).not.toMatch(/EXT-X-SKIP|CAN-SKIP-UNTIL/);
  expect(readPlaylist(full.body).warnings).toEqual([]);
});
