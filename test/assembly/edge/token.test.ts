// auth_token through build/edge.wasm and the real host: mod_auth_token's URLs scoped to the
// server manifest (mod_auth_token, docs/specs.md reference §4), 401 malformed, 410 expired, 403 wrong hash or a
// timestamp too far ahead, the token segments removed on success, and the path tricks refused
// before any of it. Hashes are computed here with Node's MD5 (helpers.ts), not by the plugin.
// The plugin reads the real clock (proxy_get_current_time_nanoseconds); every boundary is
// tested with a margin of 30 s or more.

import { closeAll, hex8, loadEdge, nowSeconds, send, signed, tokenHash } from './plugin-helpers';
import type { ProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';

const SECRET = 's3cret';
const TIMEOUT = 3600;
const SKEW = 60;
const CONFIG = {
  locations: [
    {
      prefix: '/token/',
      skip_rewrite: false,
      auth_token: { secret: SECRET, prefix: 'token', timeout: TIMEOUT, skew: SKEW },
    },
    {
      prefix: '/secure/',
      skip_rewrite: false,
      auth_token: { secret: 'other secret', prefix: '/secure/vod/', timeout: 60, skew: 0 },
    },
    { prefix: '/open/' },
  ],
};

let plugin: ProxyWasmPlugin;
beforeAll(async () => {
  plugin = (await loadEdge(CONFIG)).plugin;
});
afterAll(closeAll);

describe('a valid token', () => {
  test.each([
    ['HLS master', '/vod/tears.ism/.m3u8'],
    ['HLS media playlist', '/vod/tears.ism/tears-audio_eng=64000.m3u8'],
    ['HLS segment', '/vod/tears.ism/tears-audio_eng=64000-video_eng=400000-3.ts'],
    ['HLS fMP4 segment', '/vod/tears.ism/hls/tears-video_eng=400000-1.m4s'],
    ['DASH MPD', '/vod/tears.ism/.mpd'],
    ['DASH segment', '/vod/tears.ism/dash/tears-video_eng=400000-40000.dash'],
    ['Smooth manifest', '/vod/tears.ism/Manifest'],
    ['Smooth fragment', '/vod/tears.ism/QualityLevels(400000)/Fragments(video_eng=20000000)'],
    ['HDS manifest', '/vod/tears.ism/tears.f4m'],
    ['deeper directory', '/a/b/c/tears.ism/.mpd'],
  ])('%s: passes with the hash and timestamp removed', async (_what, rel) => {
    const r = await send(plugin, signed(SECRET, 'token', rel, nowSeconds()));
    expect(r.status).toBe(0);
    expect(r.forwarded).toBe(`/token${rel}`);
  });

  test('one signature covers the manifest and every URL under the same .ism', async () => {
    const ts = nowSeconds();
    const hash = tokenHash(SECRET, '/vod/tears.ism', hex8(ts));
    for (const tail of [
      '.m3u8',
      'tears-video_eng=400000.m3u8',
      'tears-video_eng=400000-1.ts',
      'keyframes/tears-video_eng=400000.m3u8',
    ]) {
      const r = await send(plugin, `/token/${hash}/${hex8(ts)}/vod/tears.ism/${tail}`);
      expect(r.forwarded).toBe(`/token/vod/tears.ism/${tail}`);
    }
  });

  test('the query is kept and not signed', async () => {
    const r = await send(
      plugin,
      `${signed(SECRET, 'token', '/vod/tears.ism/.mpd', nowSeconds())}?filter=type%3D%3D%22video%22&t=0-10`,
    );
    expect(r.forwarded).toBe('/token/vod/tears.ism/.mpd?filter=type%3D%3D%22video%22&t=0-10');
  });

  test('hex digits in either case; the digest covers the timestamp as written', async () => {
    const ts = hex8(nowSeconds());
    const hash = tokenHash(SECRET, '/vod/tears.ism', ts);
    expect((await send(plugin, `/token/${hash.toUpperCase()}/${ts}/vod/tears.ism/.m3u8`)).status).toBe(0);
    const upper = ts.toUpperCase();
    expect(
      (await send(plugin, `/token/${tokenHash(SECRET, '/vod/tears.ism', upper)}/${upper}/vod/tears.ism/.m3u8`)).status,
    ).toBe(0);
    if (upper !== ts) expect((await send(plugin, `/token/${hash}/${upper}/vod/tears.ism/.m3u8`)).status).toBe(403);
  });

  test('.isml is a server manifest too; a path without one is signed whole', async () => {
    expect((await send(plugin, signed(SECRET, 'token', '/live/channel1.isml/.m3u8', nowSeconds()))).status).toBe(0);
    expect(
      (await send(plugin, signed(SECRET, 'token', '/files/movie.mp4', nowSeconds(), '/files/movie.mp4'))).forwarded,
    ).toBe('/token/files/movie.mp4');
  });

  test('the digest covers the decoded path; the URL may encode it', async () => {
    const ts = hex8(nowSeconds());
    const hash = tokenHash(SECRET, '/vod/my movie é.ism', ts);
    const r = await send(plugin, `/token/${hash}/${ts}/vod/my%20movie%20%C3%A9.ism/.m3u8`);
    expect(r.forwarded).toBe('/token/vod/my%20movie%20%C3%A9.ism/.m3u8');
    const spelled = await send(plugin, `/token/${hash}/${ts}/vod/my%20m%6Fvie%20%c3%a9.ism/.m3u8`);
    expect(spelled.forwarded).toBe('/token/vod/my%20movie%20%C3%A9.ism/.m3u8');
  });

  test('a multi-segment prefix, and timestamps up to the timeout and the skew', async () => {
    const now = nowSeconds();
    expect((await send(plugin, signed('other secret', 'secure/vod', '/x.ism/.mpd', now - 30))).forwarded).toBe(
      '/secure/vod/x.ism/.mpd',
    );
    expect((await send(plugin, signed(SECRET, 'token', '/vod/a.ism/.mpd', now - TIMEOUT + 30))).status).toBe(0);
    expect((await send(plugin, signed(SECRET, 'token', '/vod/a.ism/.mpd', now + SKEW - 30))).status).toBe(0);
  });
});

describe('refusals', () => {
  const expectRefusal = async (target: string, status: number, details: string, code: string): Promise<void> => {
    const r = await send(plugin, target);
    expect({ status: r.status, details: r.details, code: r.headers['x-origin-error'] }).toEqual({
      status,
      details,
      code,
    });
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
  };

  test('expired: 410', async () => {
    await expectRefusal(
      signed(SECRET, 'token', '/vod/tears.ism/.m3u8', nowSeconds() - TIMEOUT - 30),
      410,
      'edge_token_expired',
      'token-expired',
    );
    const r = await send(plugin, signed(SECRET, 'token', '/vod/tears.ism/.m3u8', nowSeconds() - TIMEOUT - 30));
    expect(r.body).toBe('token expired\n');
  });

  test('an expired forged token is still 410 (mod_auth_token checks the time first)', async () => {
    await expectRefusal(
      `/token/${'0'.repeat(32)}/${hex8(nowSeconds() - TIMEOUT - 30)}/vod/tears.ism/.m3u8`,
      410,
      'edge_token_expired',
      'token-expired',
    );
  });

  test('wrong hash: 403', async () => {
    const good = signed(SECRET, 'token', '/vod/tears.ism/.m3u8', nowSeconds());
    const at = '/token/'.length + 5;
    const flipped = good.slice(0, at) + (good[at] === 'a' ? 'b' : 'a') + good.slice(at + 1);
    await expectRefusal(flipped, 403, 'edge_token_mismatch', 'token-invalid');
    await expectRefusal(
      signed('wrong secret', 'token', '/vod/tears.ism/.m3u8', nowSeconds()),
      403,
      'edge_token_mismatch',
      'token-invalid',
    );
  });

  test('the token of another presentation: 403', async () => {
    const ts = hex8(nowSeconds());
    const hash = tokenHash(SECRET, '/vod/a.ism', ts);
    await expectRefusal(`/token/${hash}/${ts}/vod/b.ism/.m3u8`, 403, 'edge_token_mismatch', 'token-invalid');
    await expectRefusal(`/token/${hash}/${ts}/other/a.ism/.m3u8`, 403, 'edge_token_mismatch', 'token-invalid');
  });

  test('a hash over the whole path (the stock module) does not sign a presentation', async () => {
    const ts = hex8(nowSeconds());
    const hash = tokenHash(SECRET, '/vod/a.ism/.m3u8', ts);
    await expectRefusal(`/token/${hash}/${ts}/vod/a.ism/.m3u8`, 403, 'edge_token_mismatch', 'token-invalid');
  });

  test('a timestamp further ahead than the skew: 403', async () => {
    await expectRefusal(
      signed(SECRET, 'token', '/vod/a.ism/.m3u8', nowSeconds() + SKEW + 60),
      403,
      'edge_token_future',
      'token-not-yet-valid',
    );
    // skew 0 on /secure/: a minute ahead is refused, a valid hash notwithstanding.
    await expectRefusal(
      signed('other secret', 'secure/vod', '/x.ism/.mpd', nowSeconds() + 60),
      403,
      'edge_token_future',
      'token-not-yet-valid',
    );
  });

  const ts = (): string => hex8(nowSeconds());
  const h = '0123456789abcdef0123456789abcdef';
  test.each([
    ['no token at all', (): string => '/token/vod/tears.ism/.m3u8'],
    ['only the prefix', (): string => '/token/'],
    ['the prefix without its slash', (): string => '/token'],
    ['a 31-digit hash', (): string => `/token/${h.slice(1)}/${ts()}/vod/a.ism/.m3u8`],
    ['a 33-digit hash', (): string => `/token/${h}0/${ts()}/vod/a.ism/.m3u8`],
    ['a non-hex hash', (): string => `/token/${h.slice(0, 31)}g/${ts()}/vod/a.ism/.m3u8`],
    ['a 7-digit timestamp', (): string => `/token/${h}/${ts().slice(1)}/vod/a.ism/.m3u8`],
    ['a 9-digit timestamp', (): string => `/token/${h}/0${ts()}/vod/a.ism/.m3u8`],
    ['a non-hex timestamp', (): string => `/token/${h}/6x000000/vod/a.ism/.m3u8`],
    ['nothing after the timestamp', (): string => `/token/${h}/${ts()}`],
    ['a token outside the prefix of /secure/', (): string => `/secure/${h}/${ts()}/vod/x.ism/.mpd`],
  ])('malformed (%s): 401', async (_what, target) => {
    await expectRefusal(target(), 401, 'edge_token_malformed', 'token-malformed');
  });

  test('locations without auth_token stay open', async () => {
    expect(await send(plugin, '/open/vod/tears.ism/.m3u8')).toMatchObject({
      status: 0,
      forwarded: '/open/vod/tears.ism/.m3u8',
    });
    expect(await send(plugin, '/elsewhere/tears.ism/.m3u8')).toMatchObject({ status: 0 });
  });
});

describe('path tricks are refused before the token is looked at', () => {
  const token = (rel: string): string => signed(SECRET, 'token', rel, nowSeconds());
  test.each([
    ['.. out of the signed presentation', (): string => token('/a/b.ism/../c.ism/.m3u8')],
    ['.. before the presentation', (): string => token('/a/../b.ism/.m3u8')],
    ['. segment', (): string => token('/a/./b.ism/.m3u8')],
    ['encoded dots', (): string => token('/a/b.ism/%2e%2e/c.ism/.m3u8')],
    ['encoded dots, upper case', (): string => token('/a/b.ism/%2E%2E/c.ism/.m3u8')],
    ['half-encoded dots', (): string => token('/a/b.ism/.%2e/c.ism/.m3u8')],
    ['an encoded slash', (): string => token('/a/b.ism%2f..%2fc.ism/.m3u8')],
    ['double encoding', (): string => token('/a/b.ism/%252e%252e/c.ism/.m3u8')],
    ['a raw backslash', (): string => token('/a/b.ism/..\\c.ism/.m3u8')],
    ['an encoded backslash', (): string => token('/a/b.ism/..%5cc.ism/.m3u8')],
    ['an encoded NUL', (): string => token('/a/b.ism%00.mp4/.m3u8')],
    ['an empty segment', (): string => token('/a//b.ism/.m3u8')],
    ['invalid percent-encoding', (): string => token('/a/b%zz.ism/.m3u8')],
    ['a truncated escape', (): string => token('/a/b.ism/x%4')],
    ['overlong UTF-8 for "/"', (): string => token('/a/b%c0%afc.ism/.m3u8')],
  ])('%s: 400', async (_what, target) => {
    const r = await send(plugin, target());
    expect({ status: r.status, code: r.headers['x-origin-error'], details: r.details }).toEqual({
      status: 400,
      code: 'bad-path',
      details: 'edge_bad_path',
    });
  });

  test('signing the normalised path does not make a dot-segment URL pass', async () => {
    const ts = hex8(nowSeconds());
    const forC = tokenHash(SECRET, '/a/c.ism', ts);
    expect((await send(plugin, `/token/${forC}/${ts}/a/b.ism/../c.ism/.m3u8`)).status).toBe(400);
    const forB = tokenHash(SECRET, '/a/b.ism', ts);
    expect((await send(plugin, `/token/${forB}/${ts}/a/b.ism/../c.ism/.m3u8`)).status).toBe(400);
  });
});

test('a rewrite rule of the same location can drop the prefix too (content need not live under /token/)', async () => {
  const { plugin: recipe } = await loadEdge({
    locations: [
      {
        prefix: '/token/',
        skip_rewrite: false,
        auth_token: { secret: SECRET, prefix: 'token' },
        rewrite: { rules: [{ match: '/token/<rest:path>', to: '/<rest>', query: ['$query'] }] },
      },
    ],
  });
  const r = await send(recipe, `${signed(SECRET, 'token', '/vod/tears.ism/.m3u8', nowSeconds())}?hls_fmp4=true`);
  expect(r.forwarded).toBe('/vod/tears.ism/.m3u8?hls_fmp4=true');
  expect((await send(recipe, '/token/vod/tears.ism/.m3u8')).status).toBe(401); // the rule never sees an unsigned URL
});
