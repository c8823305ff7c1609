// No clear copy by the back door: the media sources and server manifests under the root are not
// static files (an encrypted presentation's clear sources, or the keys in its .ism, would be one
// GET away), unless `--serve-sources` asks for them, and even then never a server manifest with
// DRM options, nor a live publishing point (`.isml`, issue 21). Keys never appear in an error.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { startServer } from '../../../origin/server/server';
import { media } from '../../helpers/fixtures';
import { get, startTestOrigin, testServerOptions, TestOrigin } from '../server/server-helpers';

const KEY = 'aa00112233445566778899aabbccddee';
let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin(
    { clear: ['video_baseline_400k.ismv'], secret: ['video_baseline_400k.ismv', 'audio_eng_64k.isma'] },
    { secret: [`--drm_a.key=00112233445566778899aabbccddeeff:${KEY}`] },
  );
  await fs.copyFile(media('audio_eng_64k.isma'), path.join(origin.root, 'a.isma'));
  await fs.copyFile(media('video_baseline_400k.ismv'), path.join(origin.root, 'v.ismv'));
  await fs.writeFile(path.join(origin.root, 'notes.txt'), 'hello\n');
  // Every other media source extension (issue 20: .ismt .mp4 .cmf?), the bytes of a real source.
  for (const ext of OTHER_EXTENSIONS)
    await fs.copyFile(media('video_baseline_400k.ismv'), path.join(origin.root, `v${ext}`));
  // .isml files are publishing points (origin/live/live-routes.ts): never static files.
  await fs.copyFile(path.join(origin.root, 'clear.ism'), path.join(origin.root, 'clear.isml'));
  await fs.copyFile(path.join(origin.root, 'secret.ism'), path.join(origin.root, 'secret.isml'));
}, 30_000);

afterAll(() => origin?.server.close());

const OTHER_EXTENSIONS = ['.ismt', '.mp4', '.m4v', '.m4a', '.cmfv', '.cmfa', '.cmft', '.cmfm'];
const SOURCES = ['/a.isma', '/v.ismv', '/A.ISMA', ...OTHER_EXTENSIONS.map((e) => `/v${e}`), '/V.CMFV'];

test.each([
  ['HEAD', {}],
  ['GET', { range: 'bytes=0-99' }],
] as Array<[string, Record<string, string>]>)('a %s %j of a source is 404 too', async (method, headers) => {
  for (const url of ['/v.ismv', '/v.mp4', '/secret.ism']) {
    const r = await get(origin.url, url, headers, method);
    expect([url, r.status]).toEqual([url, 404]);
  }
});

test.each(SOURCES)('%s is not served by default (404 unknown-url)', async (url) => {
  const r = await get(origin.url, url);
  expect([r.status, r.headers['x-origin-error']]).toEqual([404, 'unknown-url']);
  expect(r.text).toContain('--serve-sources');
  expect(r.text).not.toContain(KEY);
});

test.each(['/clear.isml', '/secret.isml'])('%s, a publishing point, is never a file (404 unknown-url)', async (url) => {
  const r = await get(origin.url, url);
  expect([r.status, r.headers['x-origin-error']]).toEqual([404, 'unknown-url']);
  expect(r.text).toContain('never served as a file');
  expect(r.text).not.toContain(KEY);
});

test.each(['/clear.ism', '/secret.ism'])('%s is a presentation path, never a file', async (url) => {
  const r = await get(origin.url, url);
  expect(r.status).toBe(404);
  expect(r.text).not.toContain(KEY);
});

test('other files stay static files', async () => {
  const r = await get(origin.url, '/notes.txt');
  expect([r.status, r.text]).toEqual([200, 'hello\n']);
});

test('--serve-sources serves sources, never a server manifest with DRM options nor a .isml', async () => {
  const logs: string[] = [];
  const server = await startServer({ ...testServerOptions(origin.root, logs), serveSources: true });
  try {
    for (const url of ['/a.isma', '/v.ismv']) {
      expect([url, (await get(server.url, url)).status]).toEqual([url, 200]);
    }
    expect((await get(server.url, '/secret.ism')).status).toBe(404);
    for (const url of ['/clear.isml', '/secret.isml']) {
      const r = await get(server.url, url);
      expect([url, r.status, r.headers['x-origin-error']]).toEqual([url, 404, 'unknown-url']);
      expect(r.text).not.toContain(KEY);
    }
  } finally {
    await server.close();
  }
  expect(logs.join('\n')).not.toContain(KEY);
});
