// End to end: `origin edge` (host-glue/envoy/edge-proxy.ts with the real proxy-wasm host and
// build/edge.wasm), started from the shipped envoy-config/envoy.yaml with only the plugin's
// configuration replaced, in front of the real origin. A player's view: a signed manifest URL
// for each format, then every playlist, init segment and media segment the origin's manifests
// name, resolved relative to the signed URL (the origin writes relative URLs, so the token
// travels into each of them), each checked by the edge and answered by the origin; expired and
// forged tokens, bad filters and missing credentials never reach the origin (its request log
// says so); `origin sign-url` makes URLs the edge accepts.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import { main as originCli } from '../../../origin/cli/main';
import { parseM3u8 } from '../../origin/manifests/format-support';
import { PLAYABLE } from '../../helpers/presentations';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { EdgeUnderTest, request, startTestEdge } from '../../host-glue/envoy/edge-helpers';
import { ROOT, basicHeader, hex8, nowSeconds, signed } from './plugin-helpers';

const SECRET = 'e2e secret';
const CONFIG = {
  locations: [
    {
      prefix: '/token/',
      skip_rewrite: false,
      auth_token: { secret: SECRET, prefix: 'token', timeout: 600, skew: 30 },
      validate_filter: true,
    },
    {
      prefix: '/secure/',
      auth_basic: {
        realm: 'Origin',
        users: [`alice:{SHA}${createHash('sha1').update('wonderland').digest('base64')}`],
      },
    },
    { prefix: '/', validate_filter: true },
  ],
};

let origin: TestOrigin;
let edge: EdgeUnderTest;
let work: string;

/** envoy-config/envoy.yaml with the plugin configuration replaced (a StringValue, as shipped). */
function bootstrap(): string {
  const doc = YAML.parseDocument(readFileSync(path.join(ROOT, 'envoy-config', 'envoy.yaml'), 'utf8'));
  const filters = doc.getIn([
    'static_resources',
    'listeners',
    0,
    'filter_chains',
    0,
    'filters',
    0,
    'typed_config',
    'http_filters',
  ]) as YAML.YAMLSeq;
  const wasm = filters.items.findIndex((f) => (f as YAML.YAMLMap).get('name') === 'envoy.filters.http.wasm');
  if (wasm < 0) throw new Error('envoy-config/envoy.yaml has no envoy.filters.http.wasm filter');
  doc.setIn(
    [
      'static_resources',
      'listeners',
      0,
      'filter_chains',
      0,
      'filters',
      0,
      'typed_config',
      'http_filters',
      wasm,
      'typed_config',
      'config',
      'configuration',
      'value',
    ],
    JSON.stringify(CONFIG),
  );
  const file = path.join(work, 'envoy.yaml');
  writeFileSync(file, doc.toString());
  return file;
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'edge-plugin-e2e-'));
  // Stripping the token leaves /token/<path>: the presentation lives there, as under Apache.
  origin = await startTestOrigin({
    'token/vod/p': PLAYABLE,
    'secure/p': PLAYABLE.slice(0, 2),
    p: PLAYABLE.slice(0, 4),
  });
  edge = await startTestEdge(origin.url, { config: bootstrap() });
}, 120_000);

afterAll(async () => {
  await edge?.close();
  await origin?.server.close();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

const pathOf = (u: string): string => new URL(u).pathname + new URL(u).search;
// The origin's request log keeps query parameter names, not their values (origin/ops/redact.ts):
// the requests below are told apart by their names.
const originSaw = (fragment: string): boolean => origin.logs.some((l) => l.includes(fragment));

/** Fetches through the edge; fails the test with the edge's answer unless it is 200. */
async function ok(p: string): Promise<string> {
  const r = await request(edge.url, p);
  if (r.status !== 200)
    throw new Error(`${p}: ${r.status} ${r.headers['x-origin-error'] ?? ''} ${r.body.toString().slice(0, 200)}`);
  return r.body.toString('latin1');
}

/** A few of each: every playlist and init segment, the first and last media segments. */
const sample = <T>(list: T[]): T[] => (list.length <= 3 ? list : [list[0]!, list[1]!, list[list.length - 1]!]);

describe('a signed manifest URL and every URL under it, through the edge', () => {
  const manifest = (tail: string): string => signed(SECRET, 'token', `/vod/p.ism/${tail}`, nowSeconds());

  test.each(['.m3u8', '.m3u8?hls_fmp4=true'])(
    'HLS %s: master, media playlists, init and media segments',
    async (tail) => {
      const master = manifest(tail);
      const base = edge.url + master;
      const m = parseM3u8(await ok(master)).manifest;
      const lists = (m.playlists ?? []).map((p) => p.uri);
      for (const group of Object.values(m.mediaGroups.AUDIO))
        for (const r of Object.values(group)) if (r.uri !== undefined) lists.push(r.uri);
      expect(lists.length).toBeGreaterThan(3);
      let segments = 0;
      for (const uri of lists) {
        const listUrl = new URL(uri, base).href;
        expect(pathOf(listUrl).startsWith(master.slice(0, master.indexOf('/vod/')))).toBe(true); // the token is carried
        const list = parseM3u8(await ok(pathOf(listUrl))).manifest;
        const init = list.segments[0]?.map?.uri;
        if (init !== undefined) await ok(pathOf(new URL(init, listUrl).href));
        for (const s of sample(list.segments)) {
          await ok(pathOf(new URL(s.uri, listUrl).href));
          segments++;
        }
      }
      expect(segments).toBeGreaterThan(6);
    },
  );

  test('DASH: the MPD, init and media segments', async () => {
    const mpdPath = manifest('.mpd');
    const mpd = await ok(mpdPath);
    const mpdParser = require('mpd-parser') as {
      parse(
        text: string,
        o: { manifestUri: string },
      ): { playlists: Array<{ segments: Array<{ resolvedUri: string; map: { resolvedUri: string } }> }> };
    };
    const playlists = mpdParser.parse(mpd, { manifestUri: edge.url + mpdPath }).playlists;
    expect(playlists.length).toBeGreaterThan(0);
    for (const p of playlists) {
      await ok(pathOf(p.segments[0]!.map.resolvedUri));
      for (const s of sample(p.segments)) await ok(pathOf(s.resolvedUri));
    }
  });

  test('Smooth: the manifest and fragments of every quality level', async () => {
    const manifestPath = manifest('Manifest');
    const xml = await ok(manifestPath);
    const base = edge.url + manifestPath;
    let fragments = 0;
    for (const m of xml.matchAll(/<StreamIndex\b([^>]*)>([\s\S]*?)<\/StreamIndex>/g)) {
      const template = /\bUrl="([^"]*)"/.exec(m[1]!)![1]!.replace(/&amp;/g, '&');
      const first = /<c\b[^>]*\bt="(\d+)"/.exec(m[2]!)?.[1] ?? '0';
      for (const q of m[2]!.matchAll(/<QualityLevel\b[^>]*\bBitrate="(\d+)"/g)) {
        await ok(pathOf(new URL(template.replace('{bitrate}', q[1]!).replace('{start time}', first), base).href));
        fragments++;
      }
    }
    expect(fragments).toBeGreaterThan(3);
  });

  test('HDS: the manifest and a fragment of each media', async () => {
    const f4mPath = manifest('p.f4m');
    const f4m = await ok(f4mPath);
    const media = [...f4m.matchAll(/<media\b[^>]*\burl="([^"]+)"/g)].map((m) => m[1]!);
    expect(media.length).toBeGreaterThan(0);
    for (const url of media) await ok(pathOf(new URL(`${url}Seg1-Frag1`, edge.url + f4mPath).href));
  });

  test('the origin only ever saw the stripped paths', () => {
    const tokenRequests = origin.logs.filter((l) => l.includes(' /token/'));
    expect(tokenRequests.length).toBeGreaterThan(20);
    for (const line of tokenRequests) expect(line).toMatch(/^GET \/token\/vod\/p\.ism\/\S* 200 /);
  });
});

describe('refused at the edge, never seen by the origin', () => {
  test('an expired token: 410; a forged one: 403; none: 401', async () => {
    const expired = signed(SECRET, 'token', '/vod/p.ism/.mpd?expired=1', nowSeconds() - 700);
    expect((await request(edge.url, expired)).status).toBe(410);
    const ts = hex8(nowSeconds());
    expect((await request(edge.url, `/token/${'f'.repeat(32)}/${ts}/vod/p.ism/.mpd?forged=1`)).status).toBe(403);
    expect((await request(edge.url, '/token/vod/p.ism/.mpd?bare=1')).status).toBe(401);
    for (const q of ['expired=', 'forged=', 'bare=']) expect(originSaw(q)).toBe(false);
  });

  test("an invalid filter: 400 from the edge with the origin's text; a valid one arrives canonical", async () => {
    const r = await request(edge.url, '/p.ism/.mpd?filter=type%3D%22audio%22&bad_marker=1');
    expect([r.status, r.headers['x-origin-error'], r.body.toString()]).toEqual([
      400,
      'bad-filter',
      'filter: unexpected "=" at 4: did you mean "=="?\n',
    ]);
    expect(originSaw('bad_marker=')).toBe(false);
    const direct = await request(origin.url, '/p.ism/.mpd?filter=type%3D%22audio%22');
    expect(direct.body.toString()).toBe(r.body.toString()); // the same words the origin would have said
    const good = await request(edge.url, '/p.ism/.mpd?filter=(type%20==%20"audio")&good_marker=1');
    expect(good.status).toBe(200);
    expect(
      origin.logs.some((l) => l.startsWith('GET /p.ism/.mpd?filter=type%3D%3D%22audio%22&good_marker=[redacted] 200')),
    ).toBe(true);
  });

  test('a path trick: 400 at the edge', async () => {
    expect((await request(edge.url, '/p.ism/%2e%2e/secure/p.ism/.mpd?trick=1')).status).toBe(400);
    expect(originSaw('trick=')).toBe(false);
  });

  test('basic auth: 401 with the challenge, then 200 with credentials; other paths open', async () => {
    const none = await request(edge.url, '/secure/p.ism/.mpd?who=nobody');
    expect([none.status, none.headers['www-authenticate']]).toEqual([401, 'Basic realm="Origin"']);
    expect(originSaw('who=')).toBe(false);
    const [name, value] = basicHeader('alice', 'wonderland');
    expect((await request(edge.url, '/secure/p.ism/.mpd?who=alice', { headers: { [name]: value } })).status).toBe(200);
    expect((await request(edge.url, '/p.ism/.mpd')).status).toBe(200);
  });
});

test('origin sign-url prints a URL the edge accepts', async () => {
  let out = '';
  let err = '';
  const sink = (write: (s: string) => void): NodeJS.WritableStream =>
    ({ write: (s: string) => (write(s), true) }) as unknown as NodeJS.WritableStream;
  const code = await originCli(
    ['sign-url', '--secret', SECRET, '--prefix', 'token', '--timeout', '600', '--base', edge.url, '/vod/p.ism/.mpd'],
    sink((s) => (out += s)),
    sink((s) => (err += s)),
  );
  expect(code).toBe(0);
  expect(err).toMatch(/^valid until \d{4}-/);
  const url = out.trim();
  expect(url.startsWith(`${edge.url}/token/`)).toBe(true);
  expect((await request(edge.url, pathOf(url))).status).toBe(200);
});
