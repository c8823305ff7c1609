// Remote storage over HTTP (`proxy_pass`, origin/io/remote/) against a real storage: Debian's
// nginx serving a fixture directory. The same directory is the root of a local origin, so every
// answer through proxy_pass can be compared byte for byte with the local one. Faults, slow storage
// and replaced sources: storage-faults.test.ts.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RunningServer, startServer } from '../../../origin/server/server';
import { tempDir } from '../../helpers/fixtures';
import { haveNginx, Nginx, startNginx } from '../../helpers/nginx';
import { PLAYABLE } from '../../helpers/presentations';
import { get, testServerOptions } from '../server/server-helpers';
import { crawl } from './crawl';
import { firstVideoFragment, location, storagePresentation } from './remote-setup';

const describeNginx = haveNginx ? describe : describe.skip;

describeNginx('proxy_pass to nginx', () => {
  let storage: string;
  let nginx: Nginx;
  let local: RunningServer;
  let remote: RunningServer;

  beforeAll(async () => {
    storage = tempDir('origin-storage-');
    await storagePresentation(path.join(storage, 'a'), 'p', PLAYABLE);
    await storagePresentation(path.join(storage, 'b'), 'q', ['video_baseline_400k.ismv', 'audio_eng_64k.isma']);
    const keys = ['--iss.key=00112233445566778899aabbccddeeff:3a2a1b68dd2bd9b2eeb25e84c4776668'];
    await storagePresentation(path.join(storage, 'k'), 'k', ['video_baseline_400k.ismv'], keys);
    // A server manifest whose source climbs out of its location (to a file the origin's disk has).
    await fs.mkdir(path.join(storage, 'x'));
    const climbing = (await fs.readFile(path.join(storage, 'b', 'q.ism'), 'utf8')).replace(
      /src="video_baseline_400k\.ismv"/g,
      'src="../../../../../../../../../../etc/passwd"',
    );
    await fs.writeFile(path.join(storage, 'x', 'x.ism'), climbing);
    nginx = await startNginx(storage);
    const logs: string[] = [];
    // statTtlMs 0: the local origin sees a replaced file at once (the reference for replacements).
    local = await startServer({ ...testServerOptions(storage, logs), statTtlMs: 0 });
    remote = await startServer({
      ...testServerOptions(tempDir('origin-empty-root-'), logs),
      locations: [
        location('/remote/', nginx.url, { segmentCacheControl: 'private, max-age=5' }),
        location('/remote/k/', nginx.url + 'k/'),
        location('/insecure-keys/', nginx.url, { proxyInsecureKeys: true }),
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await remote?.close();
    await local?.close();
    await nginx?.stop();
  });

  test('every URL of every format answers the bytes the local origin answers', async () => {
    const tails = await crawl(local.url, '/a/p.ism');
    // Smooth, DASH, HLS (TS and fMP4), HDS: manifests and segments of each.
    for (const want of ['Manifest', '.mpd', '.m3u8', '.f4m', '.ts', '.m4s', '.dash', 'QualityLevels(', 'Seg1-Frag'])
      expect(tails.some((t) => t.includes(want))).toBe(true);
    let compared = 0;
    for (const tail of tails) {
      const [l, r] = await Promise.all([
        get(local.url, `/a/p.ism/${tail}`),
        get(remote.url, `/remote/a/p.ism/${tail}`),
      ]);
      expect([tail, r.status]).toEqual([tail, l.status]);
      if (!r.body.equals(l.body))
        throw new Error(`${tail}: ${r.body.byteLength} bytes remote, ${l.body.byteLength} local`);
      compared++;
    }
    expect(compared).toBeGreaterThan(100);
  }, 120_000);

  test("Cache-Control of the location; validators derived from the storage's", async () => {
    const r = await get(remote.url, '/remote/b/q.ism/Manifest');
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('public, max-age=60');
    const stat = await fs.stat(path.join(storage, 'b', 'q.ism'));
    // nginx's Last-Modified: the file's mtime to the second.
    expect(r.headers['last-modified']).toBe(new Date(Math.floor(stat.mtimeMs / 1000) * 1000).toUTCString());
    const fragment = `/remote/b/q.ism/${firstVideoFragment(r.text)}`;
    const seg = await get(remote.url, fragment);
    expect([seg.status, seg.headers['cache-control']]).toEqual([200, 'private, max-age=5']);
    const again = await get(remote.url, fragment, {
      'If-None-Match': seg.headers.etag!,
    });
    expect(again.status).toBe(304);
  });

  test('no such presentation on storage: 404 unknown-presentation', async () => {
    const r = await get(remote.url, '/remote/nowhere/z.ism/.mpd');
    expect([r.status, r.headers['x-origin-error']]).toEqual([404, 'unknown-presentation']);
  });

  test('a remote server manifest naming a source outside its location is refused, nothing local read', async () => {
    const r = await get(remote.url, '/remote/x/x.ism/.mpd');
    expect([r.status, r.headers['x-origin-error']]).toEqual([403, 'forbidden']);
    expect(r.text).not.toContain('root:');
  });

  test('keys on plain http:// storage: 502 storage-insecure, unless the location allows it', async () => {
    const r = await get(remote.url, '/remote/k/k.ism/Manifest');
    expect([r.status, r.headers['x-origin-error']]).toEqual([502, 'storage-insecure']);
    expect(r.text).not.toMatch(/3a2a1b68|00112233/);
    const allowed = await get(remote.url, '/insecure-keys/k/k.ism/Manifest');
    expect(allowed.status).toBe(200);
    expect(allowed.body.equals((await get(local.url, '/k/k.ism/Manifest')).body)).toBe(true);
  });

  test('storage down: 502 storage-unavailable; answers again once it is back', async () => {
    const tail = `/b/q.ism/${firstVideoFragment((await get(local.url, '/b/q.ism/Manifest')).text)}`;
    const port = nginx.port;
    await nginx.stop();
    // Its index is known; its bytes are read from storage for each request.
    const down = await get(remote.url, `/remote${tail}`);
    expect([down.status, down.headers['x-origin-error']]).toEqual([502, 'storage-unavailable']);
    expect(down.text).not.toContain('127.0.0.1');
    nginx = await startNginx(storage, port);
    const up = await get(remote.url, `/remote${tail}`);
    expect(up.status).toBe(200);
    expect(up.body.equals((await get(local.url, tail)).body)).toBe(true);
  });

  test('a reload moves a prefix to another storage directory: the next request reads there', async () => {
    const controls = { manifestCacheControl: 'public, max-age=60', segmentCacheControl: 'public, max-age=86400' };
    remote.reconfigure({ ...controls, locations: [location('/remote/', `${nginx.url}b/`)] });
    try {
      const moved = await get(remote.url, '/remote/q.ism/Manifest');
      expect(moved.status).toBe(200);
      expect(moved.body.equals((await get(local.url, '/b/q.ism/Manifest')).body)).toBe(true);
      expect((await get(remote.url, '/remote/b/q.ism/Manifest')).status).toBe(404);
      // A location dropped by the reload: its prefix is the local root's again (empty here).
      expect((await get(remote.url, '/insecure-keys/k/k.ism/Manifest')).status).toBe(404);
    } finally {
      remote.reconfigure({
        ...controls,
        locations: [
          location('/remote/', nginx.url, { segmentCacheControl: 'private, max-age=5' }),
          location('/remote/k/', nginx.url + 'k/'),
          location('/insecure-keys/', nginx.url, { proxyInsecureKeys: true }),
        ],
      });
    }
    expect((await get(remote.url, '/remote/b/q.ism/Manifest')).status).toBe(200);
  });
});
