// The rendered-manifest cache: which requests share a document, and that sharing never changes
// a byte of the answer. Observed through the server's counters (no timing).

import { promises as fs } from 'node:fs';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { RunningServer, startServer } from '../../../origin/server/server';
import { DEFAULT_LIMITS, PresentationStore } from '../../../origin/cache/presentation-store';
import { plainServerOptions } from '../../helpers/server-options';
import { get, startTestOrigin, TestOrigin } from './server-helpers';
import { request } from '../../host-glue/envoy/edge-helpers';

const FILES = ['video_baseline_400k.ismv', 'video_main_900k.ismv', 'audio_eng_64k.isma', 'audio_eng_128k.isma'];
// One filter, three spellings: the canonical view (the selected tracks) is the same.
const SPELLINGS = [
  'filter=type%3D%3D%22video%22',
  'filter=%28type%3D%3D%22video%22%29',
  'filter=type+%3D%3D+%22video%22'.replace(/\+/g, '%20'),
];
const SUPPRESS = 'suppress_query_parameters=true';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin({ p: FILES });
});

afterAll(async () => {
  await origin.server.close();
});

function delta(before: ReturnType<TestOrigin['server']['manifestCacheStats']>): {
  renders: number;
  canonicalHits: number;
  requestHits: number;
} {
  const now = origin.server.manifestCacheStats();
  return {
    renders: now.renders - before.renders,
    canonicalHits: now.canonicalHits - before.canonicalHits,
    requestHits: now.requestHits - before.requestHits,
  };
}

test.each(['/p.ism/.mpd', '/p.ism/Manifest', '/p.ism/.m3u8'])(
  'with suppress_query_parameters, spellings of one filter share one document (%s)',
  async (manifest) => {
    const before = origin.server.manifestCacheStats();
    const answers = [];
    for (const q of SPELLINGS) answers.push(await get(origin.url, `${manifest}?${q}&${SUPPRESS}`));
    for (const a of answers) expect(a.status).toBe(200);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(1);
    expect(delta(before)).toEqual({ renders: 1, canonicalHits: SPELLINGS.length - 1, requestHits: 0 });
    // Asked again: answered by the request line alone.
    const again = await get(origin.url, `${manifest}?${SPELLINGS[1]}&${SUPPRESS}`);
    expect(again.text).toBe(answers[0]!.text);
    expect(delta(before).requestHits).toBe(1);
  },
);

test('without suppress_query_parameters each spelling is its own document (the query is carried verbatim)', async () => {
  const before = origin.server.manifestCacheStats();
  const answers = [];
  for (const q of SPELLINGS) answers.push(await get(origin.url, `/p.ism/.mpd?${q}`));
  expect(delta(before)).toEqual({ renders: SPELLINGS.length, canonicalHits: 0, requestHits: 0 });
  answers.forEach((a, i) => expect(a.text).toContain(SPELLINGS[i]!.replace(/&/g, '&amp;')));
});

test('a cached document is never served for another selection, and options in another order share one', async () => {
  const video = await get(origin.url, `/p.ism/.mpd?${SPELLINGS[0]}&${SUPPRESS}`);
  const audio = await get(origin.url, `/p.ism/.mpd?filter=type%3D%3D%22audio%22&${SUPPRESS}`);
  expect(video.text).not.toBe(audio.text);
  expect(audio.text).not.toContain('contentType="video"');
  const before = origin.server.manifestCacheStats();
  const a = await get(origin.url, `/p.ism/.mpd?${SUPPRESS}&mpd_segment_template=number`);
  const b = await get(origin.url, `/p.ism/.mpd?mpd_segment_template=number&${SUPPRESS}`);
  expect(b.text).toBe(a.text);
  expect(delta(before)).toEqual({ renders: 1, canonicalHits: 1, requestHits: 0 });
});

describe('a changed .ism', () => {
  async function change(ism: string, text: string): Promise<void> {
    // Same tracks, another presentation_name stored in the head: the URLs the manifest writes change.
    await fs.writeFile(ism, text.replace('<head>', '<head>\n    <meta name="presentation_name" content="renamed" />'));
    await fs.utimes(ism, new Date(Date.UTC(2025, 0, 1)), new Date(Date.UTC(2025, 0, 1)));
  }
  const serve = (statTtlMs: number): Promise<RunningServer> =>
    startServer({ ...plainServerOptions(origin.root), statTtlMs });

  test('with --stat-ttl-ms 0 is rendered again by the next request, not answered from the cache', async () => {
    const ism = path.join(origin.root, 'p.ism');
    const server = await serve(0);
    const text = await fs.readFile(ism, 'utf8');
    try {
      const first = await get(server.url, '/p.ism/.m3u8');
      expect(first.text).not.toContain('renamed');
      await change(ism, text);
      const second = await get(server.url, '/p.ism/.m3u8');
      expect(second.status).toBe(200);
      expect(second.text).toContain('renamed');
    } finally {
      await fs.writeFile(ism, text);
      await server.close();
    }
  });

  test('within the stat TTL is not looked at; once it has passed, it is', async () => {
    const ism = path.join(origin.root, 'p.ism');
    const ttl = 1500;
    const server = await serve(ttl);
    const text = await fs.readFile(ism, 'utf8');
    try {
      // The stat is taken during the first request: trusted from some instant in [t0, t1] on.
      const t0 = performance.now();
      const first = await get(server.url, '/p.ism/.m3u8');
      const t1 = performance.now();
      await change(ism, text);
      const within = await get(server.url, '/p.ism/.m3u8');
      // Only meaningful if the request ran inside the window (a stalled machine could pass it).
      if (performance.now() < t0 + ttl) expect(within.text).toBe(first.text);
      await new Promise((r) => setTimeout(r, Math.max(0, t1 + ttl - performance.now()) + 50));
      const after = await get(server.url, '/p.ism/.m3u8');
      expect(after.text).toContain('renamed');
    } finally {
      await fs.writeFile(ism, text);
      await server.close();
    }
  });
});

test('the default stat TTL is one second (DEFAULT_LIMITS, used by startServer and origin serve)', () => {
  expect(DEFAULT_LIMITS.statTtlMs).toBe(1000);
});

test('--manifest-cache-bytes 0 (manifestCacheBytes: 0) renders every request', async () => {
  const server = await startServer({ ...plainServerOptions(origin.root), manifestCacheBytes: 0 });
  try {
    const a = await get(server.url, '/p.ism/.mpd');
    const b = await get(server.url, '/p.ism/.mpd');
    expect(b.text).toBe(a.text);
    expect(b.headers.etag).toBe(a.headers.etag);
    expect(server.manifestCacheStats()).toMatchObject({ renders: 2, requestHits: 0, canonicalHits: 0, documents: 0 });
    // The ETag is the hash of the text sent, for every manifest and rendition, each time (it is
    // hashed once per view and kept: a wrong key would show here as another text's ETag).
    const sha1 = (body: Buffer): string => `"${createHash('sha1').update(body).digest('base64url').slice(0, 22)}"`;
    const master = await get(server.url, '/p.ism/.m3u8');
    const media = master.text.split('\n').filter((l) => l.endsWith('.m3u8') || l.includes('.m3u8?'));
    expect(media.length).toBeGreaterThan(1);
    const paths = [
      '/p.ism/.mpd',
      '/p.ism/Manifest',
      '/p.ism/.m3u8',
      '/p.ism/.m3u8?filter=type%3D%3D%22audio%22',
      ...media.map((m) => `/p.ism/${m}`),
    ];
    for (let round = 0; round < 2; round++) {
      for (const p of paths) {
        const r = await get(server.url, p);
        expect([p, r.status, r.headers.etag]).toEqual([p, 200, sha1(r.body)]);
      }
    }
    expect(new Set(await Promise.all(paths.map(async (p) => (await get(server.url, p)).headers.etag))).size).toBe(
      paths.length,
    );
  } finally {
    await server.close();
  }
});

describe('PresentationStore.peek (the synchronous hot path)', () => {
  test('answers what presentation() answers, only while every stat is trusted', async () => {
    const ism = path.join(origin.root, 'p.ism');
    const untrusting = new PresentationStore({ ...DEFAULT_LIMITS, statTtlMs: 0 });
    await untrusting.presentation(ism);
    expect(untrusting.peek(ism)).toBeUndefined();
    const store = new PresentationStore({ ...DEFAULT_LIMITS, statTtlMs: 300 });
    expect(store.peek(ism)).toBeUndefined(); // nothing loaded yet
    const p = await store.presentation(ism);
    expect(store.peek(ism)).toBe(p);
    await new Promise((r) => setTimeout(r, 350));
    expect(store.peek(ism)).toBeUndefined(); // the stats are no longer trusted: presentation() looks again
    expect(await store.presentation(ism)).toBe(p); // unchanged files: the same presentation
    expect(store.peek(ism)).toBe(p);
  });
});

describe('a manifest answered from the cache (the synchronous hot path, hot-path.ts)', () => {
  /** Status, every header in order (Date aside: it is the clock's) and the bytes, as sent. */
  async function raw(
    base: string,
    p: string,
    method = 'GET',
  ): Promise<{ status: number; head: string[]; body: Buffer }> {
    const r = await request(base, p, { method });
    const head: string[] = [];
    for (let i = 0; i < r.rawHeaders.length; i += 2)
      if (r.rawHeaders[i]!.toLowerCase() !== 'date') head.push(`${r.rawHeaders[i]}: ${r.rawHeaders[i + 1]}`);
    return { status: r.status, head, body: r.body };
  }

  test.each([
    '/p.ism/.mpd?hot=1',
    '/p.ism/Manifest?hot=1',
    '/p.ism/.m3u8?hot=1',
    '/p.ism/.m3u8?hot=1&filter=type%3D%3D%22audio%22',
  ])('sends what the rendering path sent, header for header (%s)', async (p) => {
    const before = origin.server.manifestCacheStats();
    const first = await raw(origin.url, p); // rendered (a miss)
    const again = await raw(origin.url, p); // the same request line: the hot path
    const head = await raw(origin.url, p, 'HEAD');
    expect(delta(before)).toEqual({ renders: 1, canonicalHits: 0, requestHits: 2 });
    expect(first.status).toBe(200);
    expect(again).toEqual(first);
    expect([head.status, head.head, head.body.length]).toEqual([200, first.head, 0]);
  });

  test('conditional requests still get 304 (they take the full path)', async () => {
    const first = await get(origin.url, '/p.ism/.mpd?hot=2');
    const hit = await get(origin.url, '/p.ism/.mpd?hot=2', { 'if-none-match': first.headers.etag! });
    const since = await get(origin.url, '/p.ism/.mpd?hot=2', { 'if-modified-since': first.headers['last-modified']! });
    const stale = await get(origin.url, '/p.ism/.mpd?hot=2', { 'if-none-match': '"other"' });
    expect([hit.status, since.status, stale.status]).toEqual([304, 304, 200]);
    expect(stale.body.equals(first.body)).toBe(true);
  });
});
