// The edge filter in the origin's process (`origin serve --edge-config`, host-glue/envoy/edge-inline.ts):
// with the real build/edge.wasm it answers every URL exactly as the separate `origin edge` proxy
// does in front of the same origin (status, headers, bytes), aliases included. A filter written
// in the test: edge-inline-protocol.test.ts.

import * as http from 'node:http';
import { loadEdgeFilter } from '../../../origin/cli/edge-command';
import { HttpFilterFactory } from '../../../host-glue/proxy-wasm/http-filter';
import { ROOT } from '../../helpers/fixtures';
import { PLAYABLE } from '../../helpers/presentations';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { AliasSetup, startAliasEdge } from '../../assembly/edge/alias-edge';
import { EdgeUnderTest, ENVOY_YAML, request, startTestEdge } from './edge-helpers';
import { dashUrls, hlsUrls, pathOf, smoothUrls } from './format-urls';
import { Inline, startInline, seen } from './edge-inline-support';

async function compare(
  a: string,
  b: string,
  paths: readonly string[],
  o: { method?: string; headers?: Record<string, string> } = {},
): Promise<string[]> {
  const mismatches: string[] = [];
  for (const p of new Set(paths)) {
    const [x, y] = await Promise.all([request(a, p, o), request(b, p, o)]);
    if (JSON.stringify(seen(x)) !== JSON.stringify(seen(y)))
      mismatches.push(`${p}: ${JSON.stringify(seen(x))} vs ${JSON.stringify(seen(y))}`);
    if (!x.body.equals(y.body)) mismatches.push(`${p}: ${x.body.length} bytes vs ${y.body.length}`);
    if (
      (x.headers['x-envoy-upstream-service-time'] === undefined) !==
      (y.headers['x-envoy-upstream-service-time'] === undefined)
    )
      mismatches.push(`${p}: x-envoy-upstream-service-time on one side only`);
  }
  return mismatches;
}

describe('the real edge.wasm in the origin process answers like `origin edge` in front of it', () => {
  let origin: TestOrigin;
  let proxy: EdgeUnderTest;
  let inline: Inline;
  let factory: HttpFilterFactory;

  beforeAll(async () => {
    origin = await startTestOrigin({ p: PLAYABLE });
    proxy = await startTestEdge(origin.url);
    ({ factory } = await loadEdgeFilter(ENVOY_YAML, { cwd: ROOT, logLevel: 'info', pluginLog: () => undefined }));
    inline = await startInline(origin.root, factory);
  }, 60_000);

  afterAll(async () => {
    await inline?.server.close();
    await factory?.shutdown();
    await proxy?.close();
    await origin?.server.close();
  });

  test('Smooth, DASH and HLS (fMP4 and TS): every URL their manifests name', async () => {
    const smooth = '/p.ism/Manifest';
    const mpd = '/p.ism/.mpd';
    const paths = [
      smooth,
      ...smoothUrls((await request(origin.url, smooth)).body.toString(), origin.url + smooth).map(pathOf),
    ];
    paths.push(mpd, ...dashUrls((await request(origin.url, mpd)).body.toString(), origin.url + mpd).map(pathOf));
    for (const master of ['/p.ism/.m3u8?hls_fmp4=true', '/p.ism/.m3u8'])
      paths.push(
        master,
        ...(await hlsUrls((await request(origin.url, master)).body.toString(), origin.url + master, origin.url)).map(
          pathOf,
        ),
      );
    expect(paths.length).toBeGreaterThan(120);
    expect(await compare(proxy.url, inline.url, paths)).toEqual([]);
    // And the bytes are the origin's own.
    const direct = await request(origin.url, mpd);
    const viaInline = await request(inline.url, mpd);
    expect(viaInline.body.equals(direct.body)).toBe(true);
    expect([viaInline.headers.server, viaInline.headers.etag]).toEqual(['envoy', direct.headers.etag]);
    expect(Number(viaInline.headers['x-envoy-upstream-service-time'])).toBeGreaterThanOrEqual(0);
  });

  test('HEAD, Range, If-None-Match, a static file, errors and a refused method', async () => {
    const fragment = pathOf(
      smoothUrls((await request(origin.url, '/p.ism/Manifest')).body.toString(), `${origin.url}/p.ism/Manifest`)[3]!,
    );
    const etag = (await request(origin.url, fragment)).headers.etag!;
    const paths = ['/p.ism/Manifest', fragment, '/p.ism/.mpd', '/p.ism'];
    const variants: Array<{ method?: string; headers?: Record<string, string> }> = [
      { method: 'HEAD' },
      { headers: { range: 'bytes=100-5000' } },
      { headers: { range: 'bytes=-10' } },
      { headers: { range: 'bytes=999999999-' } },
      { headers: { 'if-none-match': etag } },
    ];
    for (const o of variants) {
      expect(await compare(proxy.url, inline.url, paths, o)).toEqual([]);
    }
    expect(
      await compare(proxy.url, inline.url, [
        '/p.ism/.mpd?filter=type%3D%3D',
        '/nope.ism/Manifest',
        '/p.ism/QualityLevels(1)/Fragments(video_eng=0)',
        '/a/%2e%2e/p.ism/.mpd',
        '/p.ism/%2Fx',
      ]),
    ).toEqual([]);
    expect(await compare(proxy.url, inline.url, ['/p.ism/.mpd'], { method: 'DELETE' })).toEqual([]);
    expect(
      await compare(proxy.url, inline.url, ['/p.ism/.mpd'], {
        method: 'OPTIONS',
        headers: { origin: 'http://x', 'access-control-request-method': 'GET' },
      }),
    ).toEqual([]);
    const ranged = await request(inline.url, fragment, { headers: { range: 'bytes=100-5000' } });
    expect([ranged.status, ranged.body.length]).toEqual([206, 4901]);
  });

  test('a cached manifest asked many times over keep-alive answers the same bytes each time', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    try {
      const first = await request(inline.url, '/p.ism/.mpd', { agent });
      const all = await Promise.all(Array.from({ length: 40 }, () => request(inline.url, '/p.ism/.mpd', { agent })));
      expect(all.every((r) => r.status === 200 && r.body.equals(first.body) && r.headers.server === 'envoy')).toBe(
        true,
      );
    } finally {
      agent.destroy();
    }
  });
});

describe('aliases (the demo maps) in the origin process', () => {
  let s: AliasSetup;
  let inline: Inline;
  let factory: HttpFilterFactory;

  beforeAll(async () => {
    s = await startAliasEdge();
    ({ factory } = await loadEdgeFilter(s.yaml, { cwd: ROOT, logLevel: 'info', pluginLog: () => undefined }));
    inline = await startInline(s.origin.root, factory);
  }, 60_000);

  afterAll(async () => {
    await inline?.server.close();
    await factory?.shutdown();
    await s?.close();
  });

  test('aliased masters, media playlists and segments: the same as through `origin edge`', async () => {
    const masters = [
      '/vod/tos.ism/fmp4/avc.m3u8',
      '/vod/tos.ism/ts/sd@intro.m3u8',
      '/vod/tos.ism/avc/Manifest',
      '/vod/tos.ism/ts/keyframes/tos-video_eng=410594-3.ts',
      '/vod/tos.ism/other/avc.m3u8',
    ];
    const paths = [...masters];
    const master = await request(s.edge.url, masters[0]!);
    expect(master.status).toBe(200);
    paths.push(...(await hlsUrls(master.body.toString(), s.edge.url + masters[0]!, s.edge.url)).map(pathOf));
    expect(paths.length).toBeGreaterThan(10);
    expect(await compare(s.edge.url, inline.url, paths)).toEqual([]);
  });
});
