// The embedded edge in front of the real origin, started from envoy-config/envoy.yaml with the
// real build/edge.wasm in the proxy-wasm host: every URL each format's manifest writes (Smooth
// manifest and fragments; DASH MPD, init and media segments; HLS master, media playlists, init
// and media segments) answers through the edge exactly as it answers directly — status, the
// headers a cache or player reads, and every byte. Also HEAD, Range, If-None-Match and errors,
// and the keep-alive pool under a player-like load.

import * as http from 'node:http';
import { PLAYABLE } from '../../helpers/presentations';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { EdgeUnderTest, eventually, request, Response, startTestEdge } from './edge-helpers';
import { dashUrls, hlsUrls, pathOf, smoothUrls } from './format-urls';

let origin: TestOrigin;
let edge: EdgeUnderTest;

beforeAll(async () => {
  origin = await startTestOrigin({ p: PLAYABLE });
  edge = await startTestEdge(origin.url); // the real host (host-glue/proxy-wasm/host.ts) with build/edge.wasm
}, 60_000);

afterAll(async () => {
  await edge?.close();
  await origin?.server.close();
});

/** The headers a player or a cache acts on. */
const HEADERS = [
  'content-type',
  'content-length',
  'etag',
  'last-modified',
  'cache-control',
  'accept-ranges',
  'content-range',
  'access-control-allow-origin',
  'x-origin-error',
];
const seen = (r: Response): Record<string, unknown> => ({
  status: r.status,
  ...Object.fromEntries(HEADERS.map((h) => [h, r.headers[h]])),
});

/** Direct and through the edge, a few at a time; returns the mismatches (none expected). */
async function compare(
  paths: readonly string[],
  o: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ compared: number; bytes: number; mismatches: string[] }> {
  const unique = [...new Set(paths)];
  const mismatches: string[] = [];
  let bytes = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < unique.length) {
      const p = unique[next++]!;
      const [direct, viaEdge] = await Promise.all([request(origin.url, p, o), request(edge.url, p, o)]);
      bytes += viaEdge.body.length;
      if (direct.status >= 300 && o.headers === undefined) mismatches.push(`${p}: direct ${direct.status}`);
      if (JSON.stringify(seen(direct)) !== JSON.stringify(seen(viaEdge)))
        mismatches.push(`${p}: headers ${JSON.stringify(seen(direct))} vs ${JSON.stringify(seen(viaEdge))}`);
      if (!direct.body.equals(viaEdge.body))
        mismatches.push(`${p}: body of ${direct.body.length} bytes differs from the edge's ${viaEdge.body.length}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { compared: unique.length, bytes, mismatches };
}

describe('every URL of every format, direct and through the edge: the same status, headers and bytes', () => {
  test('Smooth Streaming: the manifest and every fragment it names', async () => {
    const manifest = '/p.ism/Manifest';
    const urls = smoothUrls((await request(origin.url, manifest)).body.toString(), origin.url + manifest);
    expect(urls.length).toBe(8 * 5); // 8 tracks × 5 fragments
    const r = await compare([manifest, ...urls.map(pathOf)]);
    expect(r.mismatches).toEqual([]);
    expect(r.compared).toBe(41);
  });

  test('DASH: the MPD, every init segment and every media segment', async () => {
    const mpd = '/p.ism/.mpd';
    const urls = dashUrls((await request(origin.url, mpd)).body.toString(), origin.url + mpd);
    expect(urls.length).toBe(6 * 6); // audio and video: init + 5 media each (mpd-parser skips stpp)
    const r = await compare([mpd, ...urls.map(pathOf)]);
    expect(r.mismatches).toEqual([]);
  });

  test.each(['/p.ism/.m3u8?hls_fmp4=true', '/p.ism/.m3u8'])(
    'HLS %s: the master, every media playlist, init and media segment',
    async (master) => {
      const urls = await hlsUrls((await request(origin.url, master)).body.toString(), origin.url + master, origin.url);
      expect(urls.length).toBeGreaterThan(8 * 2);
      const r = await compare([master, ...urls.map(pathOf)]);
      expect(r.mismatches).toEqual([]);
    },
  );

  test('HEAD, Range, If-None-Match and an error answer the same through the edge', async () => {
    const fragment = smoothUrls(
      (await request(origin.url, '/p.ism/Manifest')).body.toString(),
      `${origin.url}/p.ism/Manifest`,
    )[3]!;
    const etag = (await request(origin.url, pathOf(fragment))).headers.etag!;
    const paths = ['/p.ism/Manifest', pathOf(fragment), '/p.ism/.mpd'];
    const variants: Array<{ method?: string; headers?: Record<string, string> }> = [
      { method: 'HEAD' },
      { headers: { range: 'bytes=100-5000' } },
      { headers: { range: 'bytes=-10' } },
      { headers: { 'if-none-match': etag } },
    ];
    for (const o of variants) {
      expect((await compare(paths, o)).mismatches).toEqual([]);
    }
    const ranged = await request(edge.url, pathOf(fragment), { headers: { range: 'bytes=100-5000' } });
    expect([ranged.status, ranged.body.length]).toEqual([206, 4901]);
    expect((await request(edge.url, pathOf(fragment), { headers: { 'if-none-match': etag } })).status).toBe(304);
    const bad = await compare(
      ['/p.ism/.mpd?filter=type%3D%3D', '/nope.ism/Manifest', '/p.ism/QualityLevels(1)/Fragments(video_eng=0)'],
      { headers: {} },
    );
    expect(bad.mismatches).toEqual([]);
    const error = await request(edge.url, '/p.ism/.mpd?filter=type%3D%3D');
    expect([error.status, error.headers['x-origin-error'], error.headers.server]).toEqual([400, 'bad-filter', 'envoy']);
  });
});

test("the edge adds what Envoy adds (server, x-envoy-upstream-service-time) and keeps the origin's date", async () => {
  const r = await request(edge.url, '/p.ism/Manifest');
  expect(r.headers.server).toBe('envoy');
  expect(Number(r.headers['x-envoy-upstream-service-time'])).toBeGreaterThanOrEqual(0);
  expect(r.headers.date).toBeDefined();
});

test('a player-like load (keep-alive client, 4 parallel) reuses upstream connections: at most one per parallel request', async () => {
  const client = new http.Agent({ keepAlive: true, maxSockets: 4 });
  try {
    const before = edge.edge.stats.upstreamConnections;
    const mpd = (await request(edge.url, '/p.ism/.mpd', { agent: client })).body.toString();
    const urls = dashUrls(mpd, `${edge.url}/p.ism/.mpd`).map(pathOf);
    const all = await Promise.all(urls.map((p) => request(edge.url, p, { agent: client })));
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(edge.edge.stats.upstreamConnections - before).toBeLessThanOrEqual(4);
  } finally {
    client.destroy();
  }
});

test('the edge log has one line per request naming the origin it went to', async () => {
  await request(edge.url, '/p.ism/Manifest?log=1');
  await eventually(() => edge.logs.some((l) => l.startsWith('GET /p.ism/Manifest?log=1 200 ')));
  expect(edge.logs.find((l) => l.startsWith('GET /p.ism/Manifest?log=1 200 '))).toMatch(
    new RegExp(`ms 127\\.0\\.0\\.1:${new URL(origin.url).port}$`),
  );
});
