// The blocking way of live HLS playlist requests (origin/server/blocking-reload.ts) against the
// long way: two serving ports over one channel, fed by the same publish messages, one with the
// blocking way and one without (`blockingReloadWay: false`). Every request below is sent to both,
// and the answers must be equal: status, every header in order (but Date) and the body, for
// playlists at once and after a wait, plain reloads, HEAD, delta updates, other spellings, bad
// directives and conditional requests (which take the long way on both). Then what only the blocking way does: waiters of one
// request line share one reply, and a group whose clients have all gone is not joined by the
// next request for the same part.

import * as http from 'node:http';
import { tempDir } from '../../helpers/fixtures';
import { createChannel, fragmentsAtLeast, LiveOrigin, liveServerOptions, startLiveOrigin } from '../../helpers/live';
import { LL_CHANNEL_OPTIONS, makeLlFixtures, PARTS_PER_SEGMENT } from '../../helpers/ll-hls';
import { RawAnswer, rawRequest } from '../../helpers/raw-request';
import { TestEncoder } from '../../helpers/test-encoder';
import { RunningServer, startServer } from '../../../origin/server/server';
import type { LivePublished } from '../../../origin/live/fragment-table';

const ANCHOR = 1577836800;
const FIRST = Math.round(ANCHOR / 1.92);

let origin: LiveOrigin;
let plain: RunningServer;
let v: TestEncoder;
let a: TestEncoder;
let pushed = 0;

async function push(n: number): Promise<void> {
  await v.send(pushed, pushed + n);
  await a.send(pushed, pushed + n);
  pushed += n;
  await fragmentsAtLeast(origin, 'll', pushed);
}

/** Status, headers in order without Date, body. */
function shape(r: RawAnswer): { status: number; headers: string[]; body: string } {
  const headers: string[] = [];
  for (let i = 0; i < r.rawHeaders.length; i += 2)
    if (r.rawHeaders[i]!.toLowerCase() !== 'date') headers.push(`${r.rawHeaders[i]}: ${r.rawHeaders[i + 1]}`);
  return { status: r.status, headers, body: r.body.toString('latin1') };
}

/** The same request to both ports, at the same time. */
async function both(
  rawPath: string,
  o: { method?: string; headers?: Record<string, string> } = {},
): Promise<[ReturnType<typeof shape>, ReturnType<typeof shape>]> {
  const [fast, slow] = await Promise.all([
    rawRequest(origin.serving.url, rawPath, { ...o, timeoutMs: 10_000 }),
    rawRequest(plain.url, rawPath, { ...o, timeoutMs: 10_000 }),
  ]);
  return [shape(fast), shape(slow)];
}

const playlist = (q: string, dir = ''): string => `/live/ll.isml/${dir}ll-video=300000.m3u8${q}`;

/** The newest part a playlist lists, and the request for the one after it. */
async function nextPart(): Promise<{ msn: number; part: number; query: string }> {
  const r = await rawRequest(plain.url, playlist(''));
  const last = [...r.body.toString().matchAll(/-(\d+)\.part(\d+)\.m4s",/g)].at(-1)!;
  const msn = Number(last[1]);
  const part = Number(last[2]) + 1;
  return { msn, part, query: `?_HLS_msn=${msn}&_HLS_part=${part}` };
}

beforeAll(async () => {
  const dir = tempDir('origin-ll-blocking-');
  const fx = await makeLlFixtures(dir);
  const now = (): number => (ANCHOR + 60) * 1000;
  const root = tempDir('origin-ll-blocking-root-');
  plain = await startServer({ ...liveServerOptions(root, now), blockingReloadWay: false });
  // Both ports get every publish message, as the workers of `origin serve` do.
  const onPublish = (m: LivePublished): void => {
    origin.serving.live.apply(m);
    plain.live.apply(m);
  };
  origin = await startLiveOrigin({ now, onPublish }, root);
  await createChannel(root, 'll', LL_CHANNEL_OPTIONS);
  const common = { channelUrl: origin.channelUrl('ll'), anchorSeconds: ANCHOR };
  v = new TestEncoder({ ...common, stream: 'video-300k.cmfv', fixture: fx.video });
  a = new TestEncoder({ ...common, stream: 'audio-64k.cmfa', fixture: fx.audio });
  await v.open();
  await a.open();
  await push(2 * PARTS_PER_SEGMENT + 2);
}, 60_000);

afterAll(async () => {
  await origin.close();
  await plain.close();
});

test('a part already there: the same answer as the long way, GET and HEAD, every spelling', async () => {
  const cases: Array<[string, { method?: string; headers?: Record<string, string> }]> = [
    [playlist(`?_HLS_msn=${FIRST}&_HLS_part=0`), {}],
    [playlist(`?_HLS_msn=${FIRST + 1}`), {}],
    [playlist(`?_HLS_msn=${FIRST}&_HLS_part=0`), { method: 'HEAD' }],
    [playlist(`?_HLS_msn=${FIRST + 1}&_HLS_part=2&_HLS_skip=YES`), {}],
    [playlist(`?_HLS_skip=v2&_HLS_msn=${FIRST + 1}`), {}],
    [playlist(`?_HLS_msn=${FIRST}&_HLS_part=1`, 'vdir/'), {}],
    [`/live/ll.isml/ll-audio=64000.m3u8?_HLS_msn=${FIRST}&_HLS_part=3`, {}],
    // Plain reloads (no _HLS_msn) take the same way.
    [playlist(''), {}],
    [playlist(''), { method: 'HEAD' }],
    [playlist('', 'vdir/'), {}],
    [playlist('?_HLS_skip=YES'), {}],
    ['/live/ll.isml/ll-audio=64000.m3u8', {}],
    // Conditional: the long way on both ports.
    [playlist(`?_HLS_msn=${FIRST}&_HLS_part=0`), { headers: { 'If-None-Match': '"nothing"' } }],
  ];
  for (const [rawPath, o] of cases) {
    const [fast, slow] = await both(rawPath, o);
    expect([rawPath, fast]).toEqual([rawPath, slow]);
    expect(fast.status).toBe(200);
    expect(fast.body).not.toContain('_HLS_');
    if (o.method !== 'HEAD') expect(fast.body).toContain('#EXT-X-PART:');
  }
  // The master playlist is an hls-playlist route too.
  const [masterFast, masterSlow] = await both('/live/ll.isml/ll.m3u8');
  expect(masterFast).toEqual(masterSlow);
  expect(masterFast.body).toContain('#EXT-X-STREAM-INF:');
  // The validators answer 304 the same way too.
  const etag = (await rawRequest(origin.serving.url, playlist(`?_HLS_msn=${FIRST}`))).headers.etag!;
  const [fast, slow] = await both(playlist(`?_HLS_msn=${FIRST}`), { headers: { 'If-None-Match': etag } });
  expect(fast).toEqual(slow);
  expect(fast.status).toBe(304);
});

test('a part that is not there yet: both ways wait, and answer the same bytes once it is', async () => {
  const next = await nextPart();
  const waiting = both(playlist(next.query));
  const head = both(playlist(next.query), { method: 'HEAD' });
  await new Promise((r) => setTimeout(r, 300));
  await push(1);
  for (const [fast, slow] of [await waiting, await head]) {
    expect(fast).toEqual(slow);
    expect(fast.status).toBe(200);
  }
  expect((await waiting)[0].body).toContain(`-${next.msn}.part${next.part}.m4s"`);
  expect((await waiting)[0].headers.some((h) => /^Cache-Control: max-age=\d+$/.test(h))).toBe(true);
  expect((await waiting)[0].headers.some((h) => /^ETag: /.test(h))).toBe(true);
});

test('refusals: the same status, code and line as the long way', async () => {
  const cases = [
    playlist(`?_HLS_msn=${FIRST}&_HLS_msn=${FIRST}`),
    playlist('?_HLS_msn=abc'),
    playlist(`?_HLS_msn=${FIRST}&_HLS_skip=NO`),
    playlist(`?_HLS_msn=${FIRST + 40}`),
    playlist(`?_HLS_msn=${FIRST + 3}&_HLS_part=40`),
    `/live/nope.isml/ll-video=300000.m3u8?_HLS_msn=${FIRST}`,
    `/live/ll.isml/%zz/ll-video=300000.m3u8?_HLS_msn=${FIRST}`,
    '/live/nope.isml/ll-video=300000.m3u8',
    '/live/ll.isml/ll-video=300000.m3u8?filter=nonsense(',
  ];
  for (const rawPath of cases) {
    const [fast, slow] = await both(rawPath);
    expect([rawPath, fast]).toEqual([rawPath, slow]);
    expect([rawPath, fast.status >= 400]).toEqual([rawPath, true]);
    expect(fast.headers.some((h) => h.startsWith('X-Origin-Error: '))).toBe(true);
  }
});

test('waiters of one request line share one reply; a group whose clients all left ends', async () => {
  const next = await nextPart();
  const waiting = Array.from({ length: 5 }, () => rawRequest(origin.serving.url, playlist(next.query)));
  await new Promise((r) => setTimeout(r, 300));
  await push(1);
  const answers = await Promise.all(waiting);
  for (const r of answers) {
    expect(r.status).toBe(200);
    expect(r.body.equals(answers[0]!.body)).toBe(true);
  }

  // Clients that go away: their group ends (no 503 later, nothing left waiting).
  const gone = await nextPart();
  const reqs = Array.from({ length: 3 }, () =>
    http.get(`${origin.serving.url}${playlist(gone.query)}`, { agent: false }).on('error', () => undefined),
  );
  await new Promise((r) => setTimeout(r, 200));
  for (const r of reqs) r.destroy();
  await new Promise((r) => setTimeout(r, 200));
  // A new request for the same part starts a group of its own, and is answered when it comes.
  const again = rawRequest(origin.serving.url, playlist(gone.query), { timeoutMs: 10_000 });
  await new Promise((r) => setTimeout(r, 200));
  await push(1);
  expect((await again).status).toBe(200);
});
