// The demo ClearKey license server (origin/drm/clearkey-server.ts): the W3C EME ClearKey request
// and license formats, CORS for a player page on another origin, and clear refusals.

import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { ClearKeyServer, startClearKeyServer } from '../../../origin/drm/clearkey-server';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const b64url = (hex: string): string => Buffer.from(hex, 'hex').toString('base64url');

let server: ClearKeyServer;
const logs: string[] = [];

beforeAll(async () => {
  server = await startClearKeyServer({ keys: new Map([[KID, KEY]]), log: (l) => logs.push(l) });
});
afterAll(() => server.close());

const post = (body: string): Promise<Response> =>
  fetch(server.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

test('a license request gets the keys it names (base64url, no padding), type temporary', async () => {
  const r = await post(JSON.stringify({ kids: [b64url(KID), b64url('ff'.repeat(16))], type: 'temporary' }));
  expect(r.status).toBe(200);
  expect(r.headers.get('access-control-allow-origin')).toBe('*');
  expect(await r.json()).toEqual({ keys: [{ kty: 'oct', kid: b64url(KID), k: b64url(KEY) }], type: 'temporary' });
  expect(server.answered()).toBe(1);
});

test('a KID with base64 padding is the same KID', async () => {
  const r = await post(JSON.stringify({ kids: [`${b64url(KID)}==`] }));
  expect((await r.json()).keys).toHaveLength(1);
});

test('CORS preflight', async () => {
  const r = await fetch(server.url, { method: 'OPTIONS' });
  expect([r.status, r.headers.get('access-control-allow-methods')]).toEqual([204, 'POST, OPTIONS']);
});

test.each([
  ['not JSON', 400, 'kids'],
  ['{"kids": []}', 400, 'non-empty'],
  ['{"kids": [1]}', 400, 'non-empty'],
])('%s → %d, saying "%s"', async (body, status, message) => {
  const r = await post(body);
  expect(r.status).toBe(status);
  expect(await r.text()).toContain(message);
});

test('GET is 405, a body over 16 KiB is 413', async () => {
  expect((await fetch(server.url)).status).toBe(405);
  expect((await post(JSON.stringify({ kids: ['x'.repeat(20_000)] }))).status).toBe(413);
});

test('keys never reach the log', () => {
  expect(logs.length).toBeGreaterThan(0);
  expect(logs.join('\n')).not.toContain(KEY);
  expect(logs.join('\n')).not.toContain(b64url(KEY));
});

// Off unless the demo runs it: `origin demo` is the only code that starts it (issue 20, point 5).
test('only origin demo starts the ClearKey license server', () => {
  const root = path.resolve(__dirname, '..', '..', '..');
  const importers = execFileSync(
    'git',
    ['grep', '-l', '-E', "from '[./]+(drm/)?clearkey-server'", '--', 'origin', 'bin', 'host-glue', 'bench'],
    {
      cwd: root,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter((l) => l !== '');
  expect(importers).toEqual(['origin/cli/demo-command.ts']);
});
