// Remote storage over the S3 API (`proxy_pass: s3://bucket/prefix/`) against a real S3-compatible
// server on loopback (npm s3rver, test/helpers/s3rver.ts), which checks every SigV4 signature. The
// presentations are packaged in a local directory, uploaded with signed PUTs and served by a local
// origin too, so every answer through S3 is compared byte for byte with the local one.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LocationConfig } from '../../../origin/config/config-file';
import { HttpStorage } from '../../../origin/io/remote/http-storage';
import { RunningServer, startServer } from '../../../origin/server/server';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { FaultProxy, startFaultProxy } from '../../helpers/fault-proxy';
import { freePort } from '../../helpers/nginx';
import { PLAYABLE } from '../../helpers/presentations';
import { putTree, S3Store, startS3rver } from '../../helpers/s3rver';
import { SignatureGate, startSignatureGate } from '../../helpers/signature-gate';
import { parseExposition, seriesOf, valueOf } from '../../helpers/prometheus';
import { get, testServerOptions } from '../server/server-helpers';
import { crawl } from './crawl';
import { firstVideoFragment, location, storagePresentation } from './remote-setup';
import { rejectedOriginError } from '../../helpers/errors';

let dir: string;
let s3: S3Store;
let proxy: FaultProxy;
let gate: SignatureGate;
const ranges: string[] = [];
let local: RunningServer;
let remote: RunningServer;
const logs: string[] = [];
const WRONG_SECRET = 'wrong-secret-must-not-leak-0123456789';

const s3loc = (prefix: string, url: string, extra: Partial<LocationConfig>): LocationConfig =>
  location(prefix, url, { s3UrlStyle: 'path', s3Endpoint: s3.endpoint, s3Profile: 'good', ...extra });

beforeAll(async () => {
  dir = tempDir('origin-s3-local-');
  await storagePresentation(path.join(dir, 'a'), 'p', PLAYABLE);
  await storagePresentation(path.join(dir, 'b'), 'q', ['video_baseline_400k.ismv', 'audio_eng_64k.isma']);
  s3 = await startS3rver(['media']);
  await putTree(s3, 'media', 'store/', dir);
  // A counting pass-through in front of s3rver (path style to an IP: s3rver takes it as such).
  proxy = await startFaultProxy(`http://127.0.0.1:${s3.port}/`, (req) => {
    if (req.headers.range !== undefined) ranges.push(req.headers.range);
    return 'pass';
  });
  gate = await startSignatureGate(`http://127.0.0.1:${s3.port}`, { S3RVER: 'S3RVER' });
  const credentials = path.join(tempDir('origin-aws-'), 'credentials');
  await fs.writeFile(
    credentials,
    [
      '[good]',
      'aws_access_key_id = S3RVER',
      'aws_secret_access_key = S3RVER',
      '[bad]',
      'aws_access_key_id = S3RVER',
      `aws_secret_access_key = ${WRONG_SECRET}`,
      '[unknown]',
      'aws_access_key_id = NOBODY',
      `aws_secret_access_key = ${WRONG_SECRET}`,
      '',
    ].join('\n'),
  );
  process.env.AWS_SHARED_CREDENTIALS_FILE = credentials;
  const down = `http://127.0.0.1:${await freePort()}`;
  local = await startServer({ ...testServerOptions(dir, logs), statTtlMs: 0 });
  remote = await startServer({
    ...testServerOptions(tempDir('origin-empty-root-'), logs),
    locations: [
      s3loc('/s3/', 's3://media/store/', {}),
      s3loc('/vhost/', 's3://media/store/', { s3UrlStyle: 'virtual-host' }),
      s3loc('/counted/', 's3://media/store/', { s3Endpoint: proxy.url }),
      s3loc('/gated/', 's3://media/store/', { s3Endpoint: gate.url }),
      s3loc('/bad-secret/', 's3://media/store/', { s3Endpoint: gate.url, s3Profile: 'bad' }),
      s3loc('/unknown-key/', 's3://media/store/', { s3Profile: 'unknown' }),
      s3loc('/no-profile/', 's3://media/store/', { s3Profile: 'absent' }),
      s3loc('/no-bucket/', 's3://nothing/store/', {}),
      s3loc('/down/', 's3://media/store/', { s3Endpoint: down, proxyTimeoutMs: 2000 }),
    ],
  });
}, 120_000);

afterAll(async () => {
  await remote?.close();
  await local?.close();
  await proxy?.close();
  await gate?.close();
  await s3?.close();
});

test('every URL of every format through s3:// (path style) answers the local bytes', async () => {
  const tails = await crawl(local.url, '/a/p.ism');
  let compared = 0;
  for (const tail of tails) {
    const [l, r] = await Promise.all([get(local.url, `/a/p.ism/${tail}`), get(remote.url, `/s3/a/p.ism/${tail}`)]);
    expect([tail, r.status]).toEqual([tail, l.status]);
    if (!r.body.equals(l.body))
      throw new Error(`${tail}: ${r.body.byteLength} bytes over S3, ${l.body.byteLength} local`);
    compared++;
  }
  expect(compared).toBeGreaterThan(100);
}, 180_000);

test('virtual-host style (<bucket>.s3.localhost) answers the same bytes', async () => {
  const manifest = await get(local.url, '/b/q.ism/Manifest');
  const fragment = firstVideoFragment(manifest.text, 3);
  for (const tail of ['Manifest', '.mpd', fragment]) {
    const [l, r] = await Promise.all([get(local.url, `/b/q.ism/${tail}`), get(remote.url, `/vhost/b/q.ism/${tail}`)]);
    expect([tail, r.status]).toEqual([tail, 200]);
    expect(r.body.equals(l.body)).toBe(true);
  }
});

test('sources are read with range requests, never whole', async () => {
  const manifest = await get(remote.url, '/counted/b/q.ism/Manifest');
  expect(manifest.status).toBe(200);
  const fragment = await get(remote.url, `/counted/b/q.ism/${firstVideoFragment(manifest.text, 2)}`);
  expect(fragment.status).toBe(200);
  const size = (await fs.stat(path.join(dir, 'b', 'video_baseline_400k.ismv'))).size;
  expect(ranges.length).toBeGreaterThan(1);
  for (const r of ranges) {
    const [, from, to] = /^bytes=(\d+)-(\d+)$/.exec(r)!.map(Number) as [number, number, number];
    expect(to - from + 1).toBeLessThan(size);
  }
});

test('a missing object is 404, a missing bucket too', async () => {
  for (const url of ['/s3/a/none.ism/Manifest', '/no-bucket/a/p.ism/Manifest']) {
    const r = await get(remote.url, url);
    expect([url, r.status]).toEqual([url, 404]);
  }
});

test('behind a gate that checks SigV4: the right secret reads, a wrong one is 502 storage-denied', async () => {
  const good = await get(remote.url, '/gated/b/q.ism/Manifest');
  expect(good.status).toBe(200);
  const fragment = await get(remote.url, `/gated/b/q.ism/${firstVideoFragment(good.text, 1)}`);
  expect(fragment.status).toBe(200);
  expect(gate.refused).toBe(0);
  const bad = await get(remote.url, '/bad-secret/b/q.ism/Manifest');
  expect([bad.status, bad.headers['x-origin-error']]).toEqual([502, 'storage-denied']);
  expect(Number(bad.headers['content-length'])).toBe(bad.body.byteLength);
  expect(bad.text).not.toContain(WRONG_SECRET);
  expect(gate.refused).toBeGreaterThan(0);
});

// s3rver itself checks the access key (not a V4 signature's secret: the gate above does).
test('an unknown access key or no credentials: 502 storage-denied, whole, the secret nowhere', async () => {
  for (const prefix of ['/unknown-key/', '/no-profile/']) {
    const r = await get(remote.url, `${prefix}a/p.ism/.mpd`);
    expect([prefix, r.status, r.headers['x-origin-error']]).toEqual([prefix, 502, 'storage-denied']);
    expect(Number(r.headers['content-length'])).toBe(r.body.byteLength);
    expect(r.text).not.toContain(WRONG_SECRET);
  }
  expect(logs.join('\n')).not.toContain(WRONG_SECRET);
  expect(logs.join('\n')).not.toContain('aws_secret_access_key');
});

test('storage down: 502 storage-unavailable, a whole error answer', async () => {
  const r = await get(remote.url, '/down/a/p.ism/Manifest');
  expect([r.status, r.headers['x-origin-error']]).toEqual([502, 'storage-unavailable']);
  expect(Number(r.headers['content-length'])).toBe(r.body.byteLength);
});

test('an object overwritten under an open source: storage-changed, never the new bytes', async () => {
  const storage = new HttpStorage({
    dir: '/x/',
    base: new URL('media/', s3.endpoint + '/').href,
    connections: 2,
    timeoutMs: 5000,
    revalidateMs: 60_000,
    s3: { region: 'us-east-1', profile: 'good' },
  });
  try {
    const first = Buffer.alloc(300_000, 1);
    await s3.put('media', 'changing.ismv', first);
    const stat = await storage.stat('/x/changing.ismv');
    expect(stat.version).toMatch(/^"/);
    const source = await storage.open('/x/changing.ismv', stat.version);
    expect(await source.read(0, 16)).toEqual(first.subarray(0, 16));
    await s3.put('media', 'changing.ismv', Buffer.alloc(300_000, 2));
    // Past the read-ahead span: a new range read, which must not return the new object's bytes.
    expect((await rejectedOriginError(source.read(200_000, 16))).code).toBe('storage-changed');
    // Forgotten: the next stat asks storage and sees the new object.
    const again = await storage.stat('/x/changing.ismv');
    expect(again.version).not.toBe(stat.version);
    const fresh = await storage.open('/x/changing.ismv', again.version);
    expect(await fresh.read(200_000, 4)).toEqual(Buffer.alloc(4, 2));
  } finally {
    storage.close();
  }
});

/** `r/v.ism` over `media(source)` copied as `r/v.ismv`: the same names, other bytes. */
async function packageAs(source: string): Promise<void> {
  const r = path.join(dir, 'r');
  await fs.mkdir(r, { recursive: true });
  await fs.copyFile(media(source), path.join(r, 'v.ismv'));
  const done = await runOrigin(['package', '-q', '-o', path.join(r, 'v.ism'), path.join(r, 'v.ismv')]);
  if (done.code !== 0) throw new Error(done.stderr);
  await putTree(s3, 'media', 'store/r/', r);
}

test('a presentation replaced on storage is served from its new files, as the local origin does', async () => {
  await packageAs('video_baseline_400k.ismv');
  const before = await get(remote.url, '/s3/r/v.ism/Manifest');
  expect(before.status).toBe(200);
  const early = firstVideoFragment(before.text, 1);
  expect((await get(remote.url, `/s3/r/v.ism/${early}`)).status).toBe(200);
  await packageAs('video_main_900k.ismv');
  await new Promise((r) => setTimeout(r, 5200)); // proxy_revalidate_ms: the old validators expire
  const l = await get(local.url, '/r/v.ism/Manifest');
  const r = await get(remote.url, '/s3/r/v.ism/Manifest');
  expect(r.status).toBe(200);
  expect(r.body.equals(l.body)).toBe(true);
  expect(r.body.equals(before.body)).toBe(false);
  for (let n = 0; n < 3; n++) {
    const tail = firstVideoFragment(l.text, n);
    const [lf, rf] = await Promise.all([get(local.url, `/r/v.ism/${tail}`), get(remote.url, `/s3/r/v.ism/${tail}`)]);
    expect([tail, rf.status]).toEqual([tail, 200]);
    expect(rf.body.equals(lf.body)).toBe(true);
  }
}, 60_000);

test('a miss is remembered for proxy_negative_ttl_ms: one HEAD, then the upload shows', async () => {
  const seen = proxy.seen;
  for (let i = 0; i < 5; i++) expect((await get(remote.url, '/counted/late/l.ism/Manifest')).status).toBe(404);
  expect(proxy.seen - seen).toBe(1);
  const l = path.join(dir, 'late');
  await storagePresentation(l, 'l', ['video_baseline_400k.ismv']);
  await putTree(s3, 'media', 'store/late/', l);
  // Still the remembered miss within the TTL (1 s by default), the presentation after it.
  expect((await get(remote.url, '/counted/late/l.ism/Manifest')).status).toBe(404);
  await new Promise((r) => setTimeout(r, 1100));
  expect((await get(remote.url, '/counted/late/l.ism/Manifest')).status).toBe(200);
});

test('/metrics: storage requests, bytes, retries, errors and latency of the s3 backend', async () => {
  const e = parseExposition((await get(remote.url, '/metrics')).text);
  const s3series = (name: string): Record<string, number> =>
    Object.fromEntries(Object.entries(seriesOf(e, name)).filter(([k]) => k.includes('backend=s3')));
  expect(e.types.get('origin_storage_requests_total')).toBe('counter');
  expect(e.types.get('origin_storage_request_duration_seconds')).toBe('histogram');
  expect(s3series('origin_storage_requests_total')['backend=s3,outcome=2xx']).toBeGreaterThan(100);
  expect(s3series('origin_storage_requests_total')['backend=s3,outcome=4xx']).toBeGreaterThan(0);
  expect(s3series('origin_storage_requests_total')['backend=s3,outcome=failed']).toBeGreaterThanOrEqual(3);
  expect(valueOf(e, 'origin_storage_response_bytes_total', { backend: 's3' })).toBeGreaterThan(100_000);
  // The /down/ location: refused connections, each tried three times.
  expect(valueOf(e, 'origin_storage_retries_total', { backend: 's3' })).toBeGreaterThanOrEqual(2);
  const errors = s3series('origin_storage_errors_total');
  for (const code of ['storage-denied', 'storage-unavailable', 'not-found'])
    expect([code, errors[`backend=s3,code=${code}`]! > 0]).toEqual([code, true]);
  expect(valueOf(e, 'origin_storage_negative_hits_total', { backend: 's3' })).toBeGreaterThanOrEqual(4);
  const count = valueOf(e, 'origin_storage_request_duration_seconds_count', { backend: 's3' })!;
  expect(valueOf(e, 'origin_storage_request_duration_seconds_bucket', { backend: 's3', le: '+Inf' })).toBe(count);
  expect(count).toBe(Object.values(s3series('origin_storage_requests_total')).reduce((a, b) => a + b, 0));
  // No http:// location here: its series are there, at 0.
  expect(valueOf(e, 'origin_storage_requests_total', { backend: 'http', outcome: '2xx' })).toBe(0);
  expect(valueOf(e, 'origin_storage_request_duration_seconds_count', { backend: 'http' })).toBe(0);
});
