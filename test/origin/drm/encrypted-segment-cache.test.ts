// The encrypted-segment cache (`origin serve --encrypted-segment-cache-bytes`, PlayoutContext
// encrypted): off by default, so every request encrypts; with a bound, a segment asked for again is
// answered from memory (its source not read) with the bytes an origin without the cache gives, the
// kept bytes stay within the bound, least recently used out; a rewritten .ism (another key) is
// never answered from the old entries; over HTTP, GET, HEAD and Range of a cached segment agree.

import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';
import { DEFAULT_LIMITS, PresentationStore } from '../../../origin/cache/presentation-store';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { SourceOpener } from '../../../origin/io/source';
import { handlePlayout, newPlayoutContext, PlayoutContext } from '../../../origin/server/handlers';
import { decodePath, matchPresentationRoute } from '../../../origin/server/routes';
import { startServer } from '../../../origin/server/server';
import { get, testServerOptions } from '../server/server-helpers';
import { dashWritten } from '../server/written-urls';
import { packageFixtures, selectAll } from '../../helpers/presentations';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const OTHER = 'aa2a1b68dd2bd9b2eeb25e84c47766bb';
const FILES = ['video_main_900k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];

let ism: string;
let paths: string[];

beforeAll(async () => {
  ism = await packageFixtures(FILES, 'p', [`--drm_a.key=${KID}:${KEY}`]);
  const mpd = await body(context(0), '/p.ism/.mpd');
  paths = dashWritten(mpd.toString('utf8'), 'http://x/p.ism/.mpd')
    .filter((w) => w.kind === 'media' && !w.key.includes('text'))
    .map((w) => new URL(w.url).pathname);
}, 60_000);

/** A context whose source reads are counted. */
function context(bound: number | undefined, reads = { n: 0 }): PlayoutContext {
  const store = new PresentationStore({ ...DEFAULT_LIMITS, statTtlMs: 0 });
  const ctx =
    bound === undefined ? newPlayoutContext(store, selectAll) : newPlayoutContext(store, selectAll, undefined, bound);
  const open: SourceOpener = ctx.open;
  ctx.open = async (path) => {
    const s = await open(path);
    return {
      name: s.name,
      size: s.size,
      read: (o, l) => {
        reads.n++;
        return s.read(o, l);
      },
      close: () => s.close(),
    };
  };
  return ctx;
}

async function body(ctx: PlayoutContext, path: string): Promise<Buffer> {
  const reply = await handlePlayout(ctx, matchPresentationRoute(decodePath(path))!, ism, '');
  const b = reply.body;
  if (b.type === 'text') return Buffer.from(b.text);
  if (b.type === 'bytes') return Buffer.from(b.bytes);
  expect(b.parts.every((p) => p.kind === 'bytes')).toBe(true);
  return Buffer.concat(b.parts.map((p) => (p.kind === 'bytes' ? p.bytes : new Uint8Array(0))));
}

test('off by default: nothing kept, every request reads and encrypts', async () => {
  const reads = { n: 0 };
  const ctx = context(undefined, reads);
  expect(ctx.encrypted.maxBytes).toBe(0);
  const a = await body(ctx, paths[0]!);
  const before = reads.n;
  expect(before).toBeGreaterThan(0);
  expect((await body(ctx, paths[0]!)).equals(a)).toBe(true);
  expect(reads.n).toBe(2 * before);
  expect(ctx.encrypted.size).toBe(0);
});

test('off: a segment asked again is made from its kept layout, one read, the same bytes', async () => {
  const reads = { n: 0 };
  const ctx = context(undefined, reads);
  const fresh = context(0);
  for (const p of paths) await body(ctx, p);
  expect(ctx.encryptedLayouts.counts()).toMatchObject({ misses: paths.length, hits: 0, entries: paths.length });
  reads.n = 0;
  for (const p of paths) expect([p, (await body(ctx, p)).equals(await body(fresh, p))]).toEqual([p, true]);
  expect(reads.n).toBe(paths.length);
  expect(ctx.encryptedLayouts.counts()).toMatchObject({ hits: paths.length });
});

test('with a bound: the second request of each segment reads nothing and gets the same bytes', async () => {
  const reads = { n: 0 };
  const ctx = context(256 << 20, reads);
  const plain = context(0);
  expect(paths.length).toBeGreaterThan(5);
  const first = [];
  for (const p of paths) first.push(await body(ctx, p));
  expect(reads.n).toBeGreaterThan(0);
  expect(ctx.encrypted.size).toBe(paths.length);
  reads.n = 0;
  for (const [i, p] of paths.entries()) {
    const again = await body(ctx, p);
    expect([p, again.equals(first[i]!)]).toEqual([p, true]);
    expect([p, again.equals(await body(plain, p))]).toEqual([p, true]);
  }
  expect(reads.n).toBe(0);
});

test('the kept bytes stay within the bound, least recently used out', async () => {
  const probe = context(256 << 20);
  for (const p of paths) await body(probe, p);
  // A bound that holds about three segments of the average size.
  const bound = Math.ceil((3 * probe.encrypted.cost) / paths.length);
  const reads = { n: 0 };
  const ctx = context(bound, reads);
  for (const p of paths) await body(ctx, p);
  expect(ctx.encrypted.cost).toBeLessThanOrEqual(bound);
  expect(ctx.encrypted.size).toBeLessThan(paths.length);
  expect(ctx.encrypted.size).toBeGreaterThan(0);
  reads.n = 0;
  await body(ctx, paths[paths.length - 1]!); // the most recent: kept
  expect(reads.n).toBe(0);
  await body(ctx, paths[0]!); // the oldest: evicted
  expect(reads.n).toBeGreaterThan(0);
});

test('a rewritten .ism (another key) is never answered from the old entries', async () => {
  const other = await packageFixtures(FILES, 'p', [`--drm_a.key=${KID}:${OTHER}`]);
  const saved = await fs.readFile(ism);
  const ctx = context(256 << 20);
  const old = await body(ctx, paths[0]!);
  try {
    await fs.copyFile(other, ism);
    const later = new Date(Date.now() + 5000);
    await fs.utimes(ism, later, later);
    const now = await body(ctx, paths[0]!);
    expect(now.equals(old)).toBe(false);
    expect(now.equals(await body(context(0), paths[0]!))).toBe(true);
  } finally {
    await fs.writeFile(ism, saved);
  }
});

test('over HTTP: GET twice, HEAD and a Range of a cached segment agree', async () => {
  const root = dirname(ism);
  const server = await startServer({ ...testServerOptions(root, []), encryptedSegmentCacheBytes: 64 << 20 });
  try {
    const path = paths[1]!;
    const a = await get(server.url, path);
    const b = await get(server.url, path);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.equals(a.body)).toBe(true);
    const head = await get(server.url, path, {}, 'HEAD');
    expect([head.status, head.headers['content-length'], head.headers.etag]).toEqual([
      200,
      String(a.body.length),
      a.headers.etag,
    ]);
    const range = await get(server.url, path, { range: 'bytes=100-4099' });
    expect(range.status).toBe(206);
    expect(range.body.equals(a.body.subarray(100, 4100))).toBe(true);
  } finally {
    await server.close();
  }
});

test('--encrypted-segment-cache-bytes parses; absent, the cache is off', () => {
  expect(
    parseServeArgs(['--root', 'x', '--encrypted-segment-cache-bytes', '268435456']).encryptedSegmentCacheBytes,
  ).toBe(268435456);
  expect(parseServeArgs(['--root', 'x']).encryptedSegmentCacheBytes).toBeUndefined();
  for (const bad of ['-1', 'lots', '1e9', ''])
    expect(() => parseServeArgs(['--root', 'x', '--encrypted-segment-cache-bytes', bad])).toThrow(
      /--encrypted-segment-cache-bytes/,
    );
});
