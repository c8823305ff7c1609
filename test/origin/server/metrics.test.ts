// /metrics of one origin process (origin/ops/metrics.ts): after a scripted run of requests on a
// real server on loopback, the exact counts by route kind and status, the bytes, the latency
// histograms, the caches', pools' and handles' figures; labels from bounded sets only, whatever
// the URLs; the reserved paths; --no-metrics. Read with an independent parser of the text format
// (test/helpers/prometheus.ts). Summing over workers: cluster-metrics.test.ts.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RunningServer, startServer } from '../../../origin/server/server';
import { ROUTES } from '../../../origin/server/routes';
import { OTHER_KINDS } from '../../../origin/ops/metrics';
import { Exposition, parseExposition, seriesOf, valueOf } from '../../helpers/prometheus';
import { get, startTestOrigin, testServerOptions, TestOrigin } from './server-helpers';

const mpdParser = require('mpd-parser') as {
  parse(text: string, o: { manifestUri: string }): { playlists: Array<{ segments: Array<{ resolvedUri: string }> }> };
};

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin({
    p: ['video_baseline_400k.ismv', 'audio_eng_64k.isma'],
    'metrics/q': ['video_baseline_400k.ismv'],
  });
  await fs.writeFile(path.join(origin.root, 'notes.txt'), 'hello\n');
  // Files named like the reserved paths: never served (ops-endpoints.ts).
  await fs.writeFile(path.join(origin.root, 'healthz'), 'a file\n');
  await fs.writeFile(path.join(origin.root, 'metrics.txt'), 'a file\n');
}, 60_000);

afterAll(() => origin?.server.close());

/** A server of its own over the same root: its counts start at zero. */
async function fresh(
  extra: Partial<Parameters<typeof startServer>[0]> = {},
): Promise<{ server: RunningServer; logs: string[] }> {
  const logs: string[] = [];
  const server = await startServer({ ...testServerOptions(origin.root, logs), ...extra });
  return { server, logs };
}

async function scrape(url: string): Promise<Exposition> {
  const r = await get(url, '/metrics');
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(r.headers['cache-control']).toBe('no-store');
  return parseExposition(r.text);
}

/** Polls /metrics until `ready` holds: a response is noted when it has closed, which can be just after the client has it. */
async function scrapeUntil(url: string, ready: (e: Exposition) => boolean): Promise<Exposition> {
  const until = Date.now() + 5000;
  for (;;) {
    const e = await scrape(url);
    if (ready(e) || Date.now() > until) return e;
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a scripted run of requests: exact counts by kind and status, bytes, latency, caches', async () => {
  const { server } = await fresh();
  try {
    const u = server.url;
    const mpd = await get(u, '/p.ism/.mpd'); // rendered
    expect(mpd.status).toBe(200);
    expect((await get(u, '/p.ism/.mpd')).status).toBe(200); // the hot path
    expect((await get(u, '/p.ism/.mpd', {}, 'HEAD')).status).toBe(200);
    expect((await get(u, '/p.ism/.mpd', { 'if-none-match': String(mpd.headers.etag) })).status).toBe(304);
    const m3u8 = await get(u, '/p.ism/.m3u8');
    expect(m3u8.status).toBe(200);
    const segments = mpdParser.parse(mpd.text, { manifestUri: `${u}/p.ism/.mpd` }).playlists[0]!.segments;
    const segment = new URL(segments[1]!.resolvedUri);
    const seg = await get(u, segment.pathname);
    expect(seg.status).toBe(200);
    expect((await get(u, segment.pathname, { range: 'bytes=0-99' })).status).toBe(206);
    expect((await get(u, '/nothing.ism/.mpd')).status).toBe(404);
    expect((await get(u, '/p.ism/nonsense')).status).toBe(404);
    expect((await get(u, '/notes.txt')).status).toBe(200);
    expect((await get(u, '/absent.txt')).status).toBe(404);
    expect((await get(u, '/p.ism/.mpd', {}, 'POST')).status).toBe(405);
    expect((await get(u, '/')).status).toBe(200);

    const e = await scrapeUntil(
      u,
      (x) => valueOf(x, 'origin_http_requests_total', { kind: 'player', status: '200' }) === 1,
    );
    expect(seriesOf(e, 'origin_http_requests_total')).toEqual({
      'kind=dash-mpd,status=200': 3,
      'kind=dash-mpd,status=304': 1,
      'kind=dash-mpd,status=404': 1,
      'kind=hls-playlist,status=200': 1,
      'kind=dash-init-or-media,status=200': 1,
      'kind=dash-init-or-media,status=206': 1,
      'kind=other,status=404': 1,
      'kind=other,status=405': 1,
      'kind=static,status=200': 1,
      'kind=static,status=404': 1,
      'kind=player,status=200': 1,
    });
    // Body bytes: two GETs of the MPD (HEAD and 304 send none), the playlist, the segment and its
    // first 100 bytes; an error's body counts too.
    const bytes = seriesOf(e, 'origin_http_response_bytes_total');
    expect(bytes['kind=dash-mpd']).toBe(2 * mpd.body.byteLength + (await errorBodyLength(u, '/nothing.ism/.mpd')));
    expect(bytes['kind=hls-playlist']).toBe(m3u8.body.byteLength);
    expect(bytes['kind=dash-init-or-media']).toBe(seg.body.byteLength + 100);
    expect(bytes['kind=static']).toBe('hello\n'.length + (await errorBodyLength(u, '/absent.txt')));
    // One histogram per kind seen: cumulative buckets ending in +Inf = _count = the requests.
    for (const [kind, n] of [
      ['dash-mpd', 5],
      ['hls-playlist', 1],
      ['dash-init-or-media', 2],
      ['other', 2],
    ] as const) {
      const buckets = e.samples.filter(
        (s) => s.name === 'origin_http_request_duration_seconds_bucket' && s.labels.kind === kind,
      );
      expect(buckets.map((b) => b.labels.le).slice(-1)).toEqual(['+Inf']);
      expect(buckets.every((b, i) => i === 0 || b.value >= buckets[i - 1]!.value)).toBe(true);
      expect(buckets.at(-1)!.value).toBe(n);
      expect(valueOf(e, 'origin_http_request_duration_seconds_count', { kind })).toBe(n);
      expect(valueOf(e, 'origin_http_request_duration_seconds_sum', { kind })).toBeGreaterThan(0);
    }
    expect(e.types.get('origin_http_request_duration_seconds')).toBe('histogram');
    // The rendered-manifest cache: two renders (MPD, playlist); then the hot path, the HEAD and the
    // conditional GET found the MPD by its request line.
    expect(valueOf(e, 'origin_cache_misses_total', { cache: 'manifest' })).toBe(2);
    expect(valueOf(e, 'origin_cache_hits_total', { cache: 'manifest' })).toBe(3);
    expect(valueOf(e, 'origin_cache_entries', { cache: 'manifest' })).toBe(2);
    expect(valueOf(e, 'origin_cache_bytes', { cache: 'manifest' })).toBeGreaterThan(
      mpd.body.byteLength + m3u8.body.byteLength,
    );
    // One presentation built, its two sources indexed once each.
    expect(valueOf(e, 'origin_cache_misses_total', { cache: 'presentation' })).toBe(1);
    expect(valueOf(e, 'origin_cache_misses_total', { cache: 'media-index' })).toBe(2);
    expect(valueOf(e, 'origin_cache_bytes', { cache: 'presentation' })).toBeUndefined(); // bounded by entries
    // The segment read through one kept handle of the video source; the stream pool's buffers are back.
    expect(valueOf(e, 'origin_source_handles_open')).toBe(1);
    expect(valueOf(e, 'origin_buffer_pool_bytes', { pool: 'stream', state: 'lent' })).toBe(0);
    expect(valueOf(e, 'origin_coalesced_requests_total')).toBe(0);
    expect(valueOf(e, 'origin_build_info', { version: '0.1.0' })).toBe(1);
    expect(e.samples.filter((s) => s.name === 'origin_event_loop_delay_seconds').map((s) => s.labels.quantile)).toEqual(
      ['0.5', '0.99', '1'],
    );
    // The scrape itself shows in the next one.
    const again = await scrapeUntil(
      u,
      (x) => valueOf(x, 'origin_http_requests_total', { kind: 'ops', status: '200' }) !== undefined,
    );
    expect(valueOf(again, 'origin_http_requests_total', { kind: 'ops', status: '200' })).toBeGreaterThanOrEqual(1);
  } finally {
    await server.close();
  }
});

/** The length of the error body a request gets (it is counted as bytes out too). */
async function errorBodyLength(u: string, p: string): Promise<number> {
  return (await get(u, p)).body.byteLength;
}

test('concurrent identical requests are coalesced and counted; lent TS buffers all come back', async () => {
  const { server } = await fresh();
  try {
    const u = server.url;
    const playlist = (await get(u, '/p.ism/.m3u8')).text;
    const media = playlist.split('\n').find((l) => l !== '' && !l.startsWith('#'))!;
    const list = (await get(u, `/p.ism/${media}`)).text;
    const ts = list.split('\n').find((l) => l.endsWith('.ts'))!;
    const answers = await Promise.all(Array.from({ length: 6 }, () => get(u, `/p.ism/${ts}`)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const e = await scrapeUntil(
      u,
      (x) => valueOf(x, 'origin_http_requests_total', { kind: 'hls-ts', status: '200' }) === 6,
    );
    expect(valueOf(e, 'origin_http_requests_total', { kind: 'hls-ts', status: '200' })).toBe(6);
    // Six sockets read in one or two turns of the event loop: most join the first.
    const joined = valueOf(e, 'origin_coalesced_requests_total')!;
    expect(joined).toBeGreaterThanOrEqual(1);
    expect(joined).toBeLessThanOrEqual(5);
    expect(valueOf(e, 'origin_buffer_pool_bytes', { pool: 'segment', state: 'lent' })).toBe(0);
    expect(valueOf(e, 'origin_buffer_pool_bytes', { pool: 'segment', state: 'idle' })).toBeGreaterThan(0);
  } finally {
    await server.close();
  }
});

test('labels come from bounded sets, whatever the URL asked', async () => {
  const { server } = await fresh();
  try {
    const u = server.url;
    const odd = ['/x%2Fy', '/a/b/c.ism/zzz', '/p.ism/QualityLevels(1)/Fragments(v=0)', '/%ff', `/${'a'.repeat(300)}`];
    for (const p of odd) await get(u, `${p}?token=secret-value&kind=evil`);
    const e = await scrapeUntil(
      u,
      (x) => valueOf(x, 'origin_http_requests_total', { kind: 'other', status: '400' }) !== undefined,
    );
    const kinds = new Set([...ROUTES.map((r) => r.kind), ...OTHER_KINDS]);
    for (const s of e.samples) {
      if (s.labels.kind !== undefined) expect(kinds.has(s.labels.kind as never)).toBe(true);
      if (s.labels.status !== undefined) expect(s.labels.status).toMatch(/^[1-5]\d\d$/);
      for (const v of Object.values(s.labels)) expect(v).not.toMatch(/secret|evil|\/|aaaa/);
    }
  } finally {
    await server.close();
  }
});

test('/metrics, /healthz and /readyz are reserved exact paths; a folder named metrics is not', async () => {
  const u = origin.url;
  expect((await get(u, '/healthz')).text).toBe('ok\n'); // not the file of that name
  expect((await get(u, '/metrics')).text).toContain('# TYPE origin_http_requests_total counter');
  expect((await get(u, '/metrics?x=1')).text).toContain('origin_http_requests_total');
  const q = await get(u, '/metrics/q.ism/.mpd');
  expect([q.status, q.headers['content-type']]).toEqual([200, 'application/dash+xml']);
  expect((await get(u, '/metrics.txt')).text).toBe('a file\n');
  expect((await get(u, '/metrics/')).status).toBe(404);
  const post = await get(u, '/metrics', {}, 'POST');
  expect([post.status, post.headers['x-origin-error']]).toEqual([405, 'method-not-allowed']);
  const ready = await get(u, '/readyz');
  expect([ready.status, ready.headers['content-type'], JSON.parse(ready.text)]).toEqual([
    200,
    'application/json',
    { ready: true, warmUp: 'done', draining: false, storage: 'ok' },
  ]);
  const head = await get(u, '/readyz', {}, 'HEAD');
  expect([head.status, head.body.byteLength, head.headers['content-length']]).toEqual([
    200,
    0,
    String(ready.body.byteLength),
  ]);
});

test('metrics off: /metrics is 404 and nothing is counted', async () => {
  const { server } = await fresh({ metrics: false });
  try {
    expect(server.metrics).toBeUndefined();
    const r = await get(server.url, '/metrics');
    expect([r.status, r.headers['x-origin-error']]).toEqual([404, 'unknown-url']);
    expect(r.text).toContain('--no-metrics');
    expect((await get(server.url, '/p.ism/.mpd')).status).toBe(200);
    expect((await get(server.url, '/healthz')).status).toBe(200);
  } finally {
    await server.close();
  }
});
