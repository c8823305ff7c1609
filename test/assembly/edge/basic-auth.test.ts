// auth_basic through build/edge.wasm and the real host: 401 with the challenge, then the request
// passes with credentials of an {SHA} or $apr1$ entry; wrong ones get the same 401; only the
// configured location is protected. The $apr1$ entries were made by `openssl passwd -apr1` (the
// algorithm itself is pinned down in crypto.test.ts), the {SHA} ones here with Node's SHA-1.

import { createHash } from 'node:crypto';
import type { ProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';
import { basicHeader, closeAll, loadEdge, nowSeconds, send, signed } from './plugin-helpers';

const sha = (password: string): string => `{SHA}${createHash('sha1').update(password, 'utf8').digest('base64')}`;

const USERS = [
  `alice:${sha('wonderland')}`,
  'bob:$apr1$saltsalt$yAAkm4libquA.ZWLHbSBq/', // "password"
  'chloé:$apr1$s$/KuNgW0uqd2rn.Rw0X7rH.', // "pässwörd"
  `dora:${sha('pa:ss')}`, // a colon in the password
];

const CONFIG = {
  locations: [
    { prefix: '/secure/', auth_basic: { realm: 'Origin', users: USERS } },
    { prefix: '/secure/public/' },
    {
      prefix: '/both/',
      skip_rewrite: false,
      auth_basic: { realm: 'Say "hi" \\ here', users: USERS.slice(0, 2) },
      auth_token: { secret: 'k', prefix: 'both' },
    },
  ],
};

let plugin: ProxyWasmPlugin;
beforeAll(async () => {
  plugin = (await loadEdge(CONFIG)).plugin;
});
afterAll(closeAll);

const PATH = '/secure/vod/tears.ism/.mpd';

async function expect401(headers: Array<[string, string]>, details: string, target = PATH): Promise<void> {
  const r = await send(plugin, target, headers);
  expect({
    status: r.status,
    details: r.details,
    code: r.headers['x-origin-error'],
    challenge: r.headers['www-authenticate'],
  }).toEqual({ status: 401, details, code: 'unauthorized', challenge: 'Basic realm="Origin"' });
  expect(r.headers['cache-control']).toBe('no-store');
}

test('no credentials: 401 with the challenge, then the same request with credentials passes', async () => {
  await expect401([], 'edge_basic_auth_missing');
  const r = await send(plugin, PATH, [basicHeader('alice', 'wonderland')]);
  expect(r).toMatchObject({ status: 0, forwarded: PATH });
});

test.each([
  ['{SHA}', 'alice', 'wonderland'],
  ['$apr1$', 'bob', 'password'],
  ['$apr1$, UTF-8 user and password', 'chloé', 'pässwörd'],
  ['{SHA}, a colon in the password (split at the first one)', 'dora', 'pa:ss'],
])('%s: the right password passes, twice', async (_what, user, password) => {
  expect((await send(plugin, PATH, [basicHeader(user, password)])).status).toBe(0);
  expect((await send(plugin, PATH, [basicHeader(user, password)])).status).toBe(0);
});

test.each([
  ['a wrong {SHA} password', basicHeader('alice', 'Wonderland')],
  ['a wrong $apr1$ password', basicHeader('bob', 'passworD')],
  ['an unknown user', basicHeader('mallory', 'password')],
  ['the user name in another case', basicHeader('Alice', 'wonderland')],
  ['an empty password', basicHeader('bob', '')],
  ['bad base64', ['authorization', 'Basic !!!!'] as [string, string]],
  ['base64 with non-zero padding bits', ['authorization', 'Basic YWxpY2U6d29uZGVybGFuZB=='] as [string, string]],
  ['no colon', ['authorization', `Basic ${Buffer.from('alicewonderland').toString('base64')}`] as [string, string]],
  ['an overlong header', ['authorization', `Basic ${'A'.repeat(5000)}`] as [string, string]],
  [
    'non-ASCII bytes after the credentials',
    ['authorization', 'Basic YWxpY2U6d29uZGVybGFuZA==\u00c3'] as [string, string],
  ],
])('%s: 401 (edge_basic_auth_failed)', async (_what, header) => {
  await expect401([header], 'edge_basic_auth_failed');
});

test.each([
  ['another scheme', ['authorization', 'Bearer abc.def.ghi'] as [string, string]],
  ['a scheme without credentials', ['authorization', 'Basic'] as [string, string]],
  ['two tokens', ['authorization', 'Basic YWxpY2U6d29uZGVybGFuZA== x'] as [string, string]],
])('%s: 401 (edge_basic_auth_missing)', async (_what, header) => {
  await expect401([header], 'edge_basic_auth_missing');
});

test('the scheme is case-insensitive and surrounded by any spaces (RFC 7235 §2.1)', async () => {
  const token = Buffer.from('alice:wonderland').toString('base64');
  for (const value of [`basic ${token}`, `BASIC  ${token}`, ` Basic\t${token} `]) {
    expect((await send(plugin, PATH, [['authorization', value]])).status).toBe(0);
  }
});

test('a remembered $apr1$ success does not let another password in', async () => {
  expect((await send(plugin, PATH, [basicHeader('bob', 'password')])).status).toBe(0);
  await expect401([basicHeader('bob', 'password ')], 'edge_basic_auth_failed');
  await expect401([basicHeader('bob', 'Password')], 'edge_basic_auth_failed');
});

test('only the location is protected: a longer open prefix inside it, and other paths', async () => {
  expect((await send(plugin, '/secure/public/tears.ism/.mpd')).status).toBe(0);
  expect((await send(plugin, '/vod/tears.ism/.mpd')).status).toBe(0);
  expect((await send(plugin, '/securesomething/tears.ism/.mpd')).status).toBe(0);
  await expect401([], 'edge_basic_auth_missing', '/secure');
});

test('basic auth comes before the token; the realm is quoted', async () => {
  const url = signed('k', 'both', '/vod/a.ism/.m3u8', nowSeconds());
  const noCredentials = await send(plugin, url);
  expect(noCredentials.status).toBe(401);
  expect(noCredentials.headers['www-authenticate']).toBe('Basic realm="Say \\"hi\\" \\\\ here"');
  expect((await send(plugin, url, [basicHeader('bob', 'password')])).forwarded).toBe('/both/vod/a.ism/.m3u8');
  const badToken = await send(plugin, url.replace(/\/both\/[0-9a-f]/, '/both/x'), [basicHeader('bob', 'password')]);
  expect(badToken.status).toBe(401);
  expect(badToken.details).toBe('edge_token_malformed');
});
