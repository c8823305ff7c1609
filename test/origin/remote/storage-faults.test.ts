// Remote storage that misbehaves: a source replaced while it is played (If-Match keeps the old
// index from meeting the new bytes), storage that answers slowly (other presentations go on), and
// faults dealt by a proxy of our own in front of nginx (resets mid-body, 500s, short bodies). The
// rule in every case: an answer is the right bytes or a clear 502/504, never a wrong byte.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RunningServer, startServer } from '../../../origin/server/server';
import { media, tempDir } from '../../helpers/fixtures';
import { haveNginx, Nginx, startNginx } from '../../helpers/nginx';
import { Fault, FaultProxy, startFaultProxy } from '../../helpers/fault-proxy';
import { Fetched, get, testServerOptions } from '../server/server-helpers';
import { crawl } from './crawl';
import { firstVideoFragment, location, storagePresentation } from './remote-setup';

const describeNginx = haveNginx ? describe : describe.skip;

const FILES = ['video_baseline_400k.ismv', 'audio_eng_64k.isma'];

describeNginx('remote storage under faults', () => {
  let storage: string;
  let nginx: Nginx;
  let local: RunningServer;
  let remote: RunningServer;
  let faulty: FaultProxy;
  let slow: FaultProxy;

  beforeAll(async () => {
    storage = tempDir('origin-storage-');
    for (const name of ['r', 's', 'f', 'g', 'n']) await storagePresentation(path.join(storage, name), 'p', FILES);
    nginx = await startNginx(storage);
    // Faults in a fixed pattern (never two in a row, so the retries can succeed): a reset in the
    // middle of a body, a 500, a body cut short with its Content-Length announcing more.
    const pattern: Fault[] = ['pass', 'reset-mid-body', 'pass', 'status-500', 'pass', 'short-body', 'pass'];
    faulty = await startFaultProxy(nginx.url, (_req, n) => pattern[n % pattern.length]!);
    slow = await startFaultProxy(nginx.url, () => ({ delayMs: 500 }));
    const logs: string[] = [];
    // statTtlMs 0: the local origin sees a replaced file at once (the reference for replacements).
    local = await startServer({ ...testServerOptions(storage, logs), statTtlMs: 0 });
    remote = await startServer({
      ...testServerOptions(tempDir('origin-empty-root-'), logs),
      locations: [
        location('/remote/', nginx.url),
        location('/faulty/', faulty.url, { proxyRevalidateMs: 0 }),
        location('/slow/', slow.url),
        location('/impatient/', slow.url, { proxyTimeoutMs: 200 }),
        location('/narrow/', nginx.url, { proxyConnections: 2 }),
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await remote?.close();
    await local?.close();
    await faulty?.close();
    await slow?.close();
    await nginx?.stop();
  });

  test("a source replaced on storage during playback: every answer is the new file's, no byte of a mix", async () => {
    const manifest = (await get(remote.url, '/remote/r/p.ism/Manifest')).text;
    const fragments = [0, 1, 2, 3, 4].map((n) => firstVideoFragment(manifest, n));
    const first = await get(remote.url, `/remote/r/p.ism/${fragments[0]}`);
    expect(first.body.equals((await get(local.url, `/r/p.ism/${fragments[0]}`)).body)).toBe(true);
    // Another encoding under the same name (another size, other offsets): read with the old
    // index, its bytes would be garbage. Renamed into place, as storage replaces objects.
    const src = path.join(storage, 'r', FILES[0]!);
    await fs.copyFile(media('video_main_900k.ismv'), `${src}.new`);
    await fs.rename(`${src}.new`, src);
    // Within the remote origin's revalidation window: its validators still name the old object.
    let changed = 0;
    for (const f of fragments) {
      const [r, l] = await Promise.all([get(remote.url, `/remote/r/p.ism/${f}`), get(local.url, `/r/p.ism/${f}`)]);
      expect([f, r.status]).toEqual([f, l.status]);
      if (!r.body.equals(l.body)) throw new Error(`${f}: the remote answer is not the new file's`);
      if (!r.body.equals(first.body)) changed++;
    }
    expect(changed).toBeGreaterThan(0);
    // Storage refused a read of the old version (412), and the request was made again.
    expect(nginx.accessLog()).toMatch(/^GET \/media\/r\/video_baseline_400k\.ismv 412 "bytes=\d+-\d+" "\S+"/m);
  }, 60_000);

  test('slow storage does not hold up other presentations', async () => {
    let slowDone = false;
    const pending = get(remote.url, '/slow/s/p.ism/.mpd').then((r) => {
      slowDone = true;
      return r;
    });
    // While the slow location's first request waits on its storage, another presentation (never
    // read before: its .ism and indexes come from storage) is answered.
    const fast = await get(remote.url, '/remote/s/p.ism/.mpd');
    expect(fast.status).toBe(200);
    expect(slowDone).toBe(false);
    const slowAnswer = await pending;
    expect(slowAnswer.status).toBe(200);
    expect(slowAnswer.body.equals(fast.body)).toBe(true);
  }, 30_000);

  test('resets mid-body, 500s and short bodies: the right bytes or a 502, never a wrong byte', async () => {
    const tails = await crawl(local.url, '/f/p.ism');
    const outcome = { same: 0, failed: 0 };
    const answers: Fetched[] = [];
    for (let i = 0; i < tails.length; i += 4) {
      const batch = tails.slice(i, i + 4);
      const got = await Promise.all(batch.map((t) => get(remote.url, `/faulty/f/p.ism/${t}`)));
      for (const [k, r] of got.entries()) {
        answers.push(r);
        if (r.status === 200) {
          const l = await get(local.url, `/f/p.ism/${batch[k]}`);
          if (!r.body.equals(l.body)) throw new Error(`${batch[k]}: a wrong byte through faults`);
          outcome.same++;
        } else {
          expect([batch[k], r.status, r.headers['x-origin-error']]).toEqual([
            batch[k],
            502,
            expect.stringMatching(/^storage-/),
          ]);
          outcome.failed++;
        }
      }
    }
    for (const r of answers) expect(r.body.byteLength).toBe(Number(r.headers['content-length']));
    // Every kind of fault was dealt, and the retries made most requests succeed.
    expect(faulty.dealt['reset-mid-body']).toBeGreaterThan(5);
    expect(faulty.dealt['status-500']).toBeGreaterThan(5);
    expect(faulty.dealt['short-body']).toBeGreaterThan(5);
    expect(outcome.same).toBeGreaterThan(tails.length / 2);
    process.stderr.write(
      `faults: ${JSON.stringify(faulty.dealt)}; ${outcome.same} right, ${outcome.failed} 502 of ${tails.length}\n`,
    );
  }, 120_000);

  test('storage slower than proxy_timeout_ms: 504 storage-timeout', async () => {
    const r = await get(remote.url, '/impatient/g/p.ism/.mpd');
    expect([r.status, r.headers['x-origin-error']]).toEqual([504, 'storage-timeout']);
  });

  test('connections to storage stay within proxy_connections under concurrent requests', async () => {
    const manifest = (await get(remote.url, '/narrow/n/p.ism/Manifest')).text;
    const fragments = [0, 1, 2, 3, 4].map((n) => firstVideoFragment(manifest, n));
    const before = new Set(connectionsOf(nginx.accessLog(), '/media/n/'));
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(remote.url, `/narrow/n/p.ism/${fragments[i % 5]}?i=${i}`)),
    );
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    const used = new Set(connectionsOf(nginx.accessLog(), '/media/n/'));
    expect(used.size).toBeLessThanOrEqual(2);
    expect(before.size).toBeLessThanOrEqual(2);
  });
});

/** nginx's connection serial numbers of the requests under `prefix` (the access log's last field). */
function connectionsOf(log: string, prefix: string): string[] {
  return log
    .split('\n')
    .filter((l) => l.split(' ')[1]?.startsWith(prefix))
    .map((l) => l.split(' ').at(-1)!);
}
