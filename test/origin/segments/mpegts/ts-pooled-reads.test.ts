// The MPEG-TS writer reads each track's fragment span into a pooled buffer (io/buffers.ts,
// through io/file-handles.ts readInto) and keeps the parsed sample tables of fragments
// (media/samples.ts). What must hold:
// - the pool itself: size classes, reuse, nothing kept past its bound, a lease returns all;
// - pooled reads give the same bytes as plain reads, in any order and concurrently (a buffer
//   that held a bigger span before must not leak its stale bytes);
// - a segment handed out (to a socket still writing it) is never overwritten by later segments:
//   outside the server the output is a new buffer; the server lends it from the pool
//   (BufferLoan) and gets it back only when every response holding it has closed, whether it
//   finished, was a HEAD, a 304 or a range, shared by coalesced requests, or cut by the client;
// - when one read of a segment fails, the buffers go back only after the other read has
//   settled (a read still running must not land in a buffer another request holds);
// - readInto refuses reads past the end of the file.

import { createHash } from 'node:crypto';
import * as http from 'node:http';
import { ByteSource, canReadInto, openFile, SourceOpener } from '../../../../origin/io/source';
import { PlayoutView } from '../../../../origin/model/view';
import { Presentation } from '../../../../origin/model/presentation';
import { BufferLoan, BufferPool, ReadLease, segmentReadBuffers } from '../../../../origin/io/buffers';
import { audioOf, findRendition, Rendition, videoOf } from '../../../../origin/model/rendition';
import { readFragmentSamples, sampleTableBytes, setSampleTableBudget } from '../../../../origin/media/samples';
import { packedAudio, tsSegment } from '../../../../origin/segments/hls-segments';
import { FileHandles } from '../../../../origin/io/file-handles';
import { cutClients, loansBack } from '../../../helpers/pooled-replies';
import { loadPresentation, packageFixtures, viewOf } from '../../../helpers/presentations';
import { get, startTestOrigin, TestOrigin } from '../../server/server-helpers';

const FILES = ['video_high_1600k.ismv', 'video_baseline_400k.ismv', 'audio_eng_128k.isma'];

let p: Presentation;
let view: PlayoutView;
let muxed: Rendition;
let files: FileHandles;

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  p = await loadPresentation(await packageFixtures(FILES, 'pooled'));
  view = viewOf(p, 'hls');
  const video = view.tracks.find((t) => t.track.properties.type === 'video' && t.track.src.includes('1600k'))!;
  const audio = view.tracks.find((t) => t.track.properties.type === 'audio')!;
  const key = (t: typeof video): string => `${t.track.properties.trackName}=${t.track.properties.systemBitrate}`;
  muxed = findRendition(view, `${key(audio)}-${key(video)}`)!;
  expect(videoOf(muxed)).toBeDefined();
  expect(audioOf(muxed)).toBeDefined();
  files = new FileHandles(60_000);
});

afterAll(() => files.close());

/** Every segment through plain reads (openFile: no readInto, nothing pooled). */
async function reference(): Promise<string[]> {
  const n = videoOf(muxed)!.segments.count;
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(sha(await tsSegment(view, muxed, i, openFile)));
  return out;
}

describe('BufferPool and ReadLease', () => {
  test('size classes, reuse and bounds', () => {
    const pool = new BufferPool();
    const a = pool.take(1000);
    expect(a.byteLength).toBe(1 << 16);
    const b = pool.take((1 << 16) + 1);
    expect(b.byteLength).toBe(1 << 17);
    expect(pool.outstanding).toBe(2);
    pool.give(a);
    pool.give(b);
    expect(pool.outstanding).toBe(0);
    expect(pool.available).toBe(2);
    expect(pool.take(5)).toBe(a);
    expect(pool.take(1 << 17)).toBe(b);
    // Past the largest class: a buffer of its own, never kept.
    const big = pool.take((1 << 24) + 1);
    expect(big.byteLength).toBe((1 << 24) + 1);
    pool.give(big);
    expect(pool.available).toBe(0);
  });

  test('idle buffers are bounded per class and in bytes', () => {
    const pool = new BufferPool(4, 3 << 16);
    const many = Array.from({ length: 6 }, () => pool.take(10));
    many.forEach((x) => pool.give(x));
    expect(pool.available).toBe(3); // 3 × 64 KiB: the byte bound first
    const wide = new BufferPool(4, 1 << 30);
    const more = Array.from({ length: 6 }, () => wide.take(10));
    more.forEach((x) => wide.give(x));
    expect(wide.available).toBe(4); // the per-class bound
  });

  test('a lease returns everything once, and refuses use after release', () => {
    const pool = new BufferPool();
    const lease = new ReadLease(pool);
    lease.take(10);
    lease.take(100_000);
    expect(pool.outstanding).toBe(2);
    lease.release();
    lease.release();
    expect(pool.outstanding).toBe(0);
    expect(pool.available).toBe(2);
    expect(() => lease.take(1)).toThrow(/after release/);
  });

  test('a loan goes back with its last holder, once, and never before it is shared', () => {
    const pool = new BufferPool();
    const loan = BufferLoan.take(pool, 70_000);
    expect(loan.bytes.byteLength).toBe(70_000);
    expect(loan.bytes.buffer.byteLength).toBe(1 << 17);
    loan.letGo(); // not shared yet: nothing
    expect(pool.outstanding).toBe(1);
    loan.share(3);
    expect(() => loan.share(1)).toThrow(/twice/);
    loan.letGo();
    loan.letGo();
    expect(pool.outstanding).toBe(1);
    expect(loan.remaining).toBe(1);
    loan.letGo();
    expect(pool.outstanding).toBe(0);
    expect(pool.available).toBe(1);
    loan.letGo(); // past the last holder: nothing more goes back
    expect(pool.outstanding).toBe(0);
    expect(pool.available).toBe(1);
    // The whole class buffer went back, and is what the next take gets.
    expect(pool.take(1 << 17).buffer).toBe(loan.bytes.buffer);
    // Shared with no holder (every request gone before the reply was made): back at once.
    const none = BufferLoan.take(pool, 10);
    none.share(0);
    expect(pool.outstanding).toBe(1);
  });
});

test('the kept-handle sources read into a buffer, and refuse reads past the end', async () => {
  const src = videoOf(muxed)!.track.src;
  const source = await files.opener(src);
  try {
    expect(canReadInto(source)).toBe(true);
    if (!canReadInto(source)) return;
    const target = new Uint8Array(64);
    await source.readInto(target, source.size - 64, 64);
    expect(Buffer.from(target).equals(Buffer.from(await source.read(source.size - 64, 64)))).toBe(true);
    await expect(source.readInto(target, source.size - 63, 64)).rejects.toMatchObject({ kind: 'corrupt-media' });
    await expect(source.readInto(target, 0, 65)).rejects.toMatchObject({ kind: 'corrupt-media' });
  } finally {
    await source.close();
  }
});

test('pooled reads give the bytes of plain reads, in any order and all at once', async () => {
  const expected = await reference();
  const n = expected.length;
  expect(n).toBeGreaterThan(2);
  // Biggest first, so that smaller spans land in buffers holding older, longer data.
  const order = [...Array(n).keys()].reverse();
  for (const i of order) expect(sha(await tsSegment(view, muxed, i, files.opener))).toBe(expected[i]);
  // Every segment at once, twice over: concurrent leases never share a buffer.
  const all = await Promise.all([...order, ...order].map((i) => tsSegment(view, muxed, i, files.opener)));
  all.forEach((b, k) => expect(sha(b)).toBe(expected[order[k % n]!]));
  expect(segmentReadBuffers.outstanding).toBe(0);
});

test('packed audio through pooled reads gives the bytes of plain reads, also all at once', async () => {
  const audio = view.tracks.find((t) => t.track.properties.type === 'audio')!;
  const r = findRendition(view, `${audio.track.properties.trackName}=${audio.track.properties.systemBitrate}`)!;
  const n = r.tracks[0]!.segments.count;
  const expected: string[] = [];
  for (let i = 0; i < n; i++) expected.push(sha(await packedAudio(view, r, i, openFile)));
  const all = await Promise.all(
    [...Array(2 * n).keys()].map((k) => packedAudio(view, r, (2 * n - 1 - k) % n, files.opener)),
  );
  all.forEach((b, k) => expect(sha(b)).toBe(expected[(2 * n - 1 - k) % n]));
  expect(segmentReadBuffers.outstanding).toBe(0);
});

test('a segment already handed out is not overwritten by the segments written after it', async () => {
  const first = await tsSegment(view, muxed, 0, files.opener);
  const before = sha(first);
  const n = videoOf(muxed)!.segments.count;
  for (let round = 0; round < 3; round++)
    await Promise.all([...Array(n).keys()].map((i) => tsSegment(view, muxed, i, files.opener)));
  expect(sha(first)).toBe(before);
});

test('a failed read returns the buffers only after the other read has settled', async () => {
  await tsSegment(view, muxed, 1, files.opener); // scans done: both reads start at once below
  const videoSrc = videoOf(muxed)!.track.src;
  let audioSettled = false;
  const opener: SourceOpener = async (path) => {
    const inner = await files.opener(path);
    if (!canReadInto(inner)) throw new Error('expected a readInto source');
    const wrapped: ByteSource & { readInto(t: Uint8Array, o: number, l: number): Promise<void> } = {
      name: inner.name,
      size: inner.size,
      read: (o, l) => inner.read(o, l),
      close: () => inner.close(),
      readInto:
        path === videoSrc
          ? async () => {
              throw new Error('video read failed');
            }
          : async (t, o, l) => {
              await new Promise((r) => setTimeout(r, 50));
              await inner.readInto(t, o, l);
              audioSettled = true;
            },
    };
    return wrapped;
  };
  const outstanding = segmentReadBuffers.outstanding;
  await expect(tsSegment(view, muxed, 1, opener)).rejects.toThrow('video read failed');
  expect(audioSettled).toBe(true);
  expect(segmentReadBuffers.outstanding).toBe(outstanding);
});

describe('over HTTP', () => {
  let origin: TestOrigin;
  beforeAll(async () => {
    origin = await startTestOrigin({ h: FILES });
  });
  afterAll(async () => {
    await origin.server.close();
  });

  test('a response the client has not read yet stays intact while other segments are written', async () => {
    const master = (await get(origin.url, '/h.ism/h.m3u8')).text;
    const lists = [...master.matchAll(/^(h-.+video.+)\.m3u8$/gm)].map((m) => m[1]!);
    expect(lists.length).toBeGreaterThan(0);
    const urls: string[] = [];
    for (const l of lists) {
      const playlist = (await get(origin.url, `/h.ism/${l}.m3u8`)).text;
      for (const line of playlist.split('\n')) if (line.endsWith('.ts')) urls.push(`/h.ism/${line}`);
    }
    const expected = new Map<string, string>();
    for (const u of urls) expected.set(u, sha((await get(origin.url, u)).body));
    // The biggest segment, held unread by a paused client while every other one is fetched.
    const sizes = await Promise.all(
      urls.map(async (u) => [u, (await get(origin.url, u, {}, 'HEAD')).headers['content-length']] as const),
    );
    const held = sizes.sort((a, b) => Number(b[1]) - Number(a[1]))[0]![0];
    const u = new URL(origin.url);
    const body = await new Promise<Buffer>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: held, agent: false }, (res) => {
        res.pause();
        const chunks: Buffer[] = [];
        void (async () => {
          for (let round = 0; round < 3; round++) {
            const got = await Promise.all(urls.map((x) => get(origin.url, x)));
            got.forEach((g, k) => expect(sha(g.body)).toBe(expected.get(urls[k]!)));
          }
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks)));
          res.resume();
        })().catch(reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(sha(body)).toBe(expected.get(held));
    await loansBack(segmentReadBuffers);
  });

  /** TS segment URLs of the first video playlist. */
  async function tsUrls(): Promise<string[]> {
    const master = (await get(origin.url, '/h.ism/h.m3u8')).text;
    const list = /^(h-.+video.+)\.m3u8$/m.exec(master)![1]!;
    const playlist = (await get(origin.url, `/h.ism/${list}.m3u8`)).text;
    return playlist
      .split('\n')
      .filter((l) => l.endsWith('.ts'))
      .map((l) => `/h.ism/${l}`);
  }

  test('coalesced GET, HEAD, range and conditional requests of one segment get the right bytes, and the output goes back once', async () => {
    const [url] = await tsUrls();
    const whole = await get(origin.url, url!);
    expect(whole.status).toBe(200);
    await loansBack(segmentReadBuffers);
    const etag = String(whole.headers.etag);
    // All at once: one generation shared by every request (coalescing), each response its own kind.
    const kinds = [
      () => get(origin.url, url!),
      () => get(origin.url, url!, {}, 'HEAD'),
      () => get(origin.url, url!, { range: 'bytes=188-375' }),
      () => get(origin.url, url!, { 'if-none-match': etag }),
      () => get(origin.url, url!, { range: `bytes=${whole.body.length}-` }),
    ];
    const got = await Promise.all(Array.from({ length: 20 }, (_, i) => kinds[i % kinds.length]!()));
    got.forEach((g, i) => {
      const kind = i % kinds.length;
      if (kind === 0) expect(sha(g.body)).toBe(sha(whole.body));
      if (kind === 1)
        expect([g.status, g.body.length, g.headers['content-length']]).toEqual([200, 0, String(whole.body.length)]);
      if (kind === 2) expect([g.status, sha(g.body)]).toEqual([206, sha(whole.body.subarray(188, 376))]);
      if (kind === 3) expect([g.status, g.body.length]).toEqual([304, 0]);
      if (kind === 4) expect(g.status).toBe(416);
    });
    await loansBack(segmentReadBuffers);
  });

  test('a client that goes away before its segment is written still gives the output back', async () => {
    const urls = await tsUrls();
    const expected = sha((await get(origin.url, urls[0]!)).body);
    for (const when of ['sent', 'head'] as const) {
      await cutClients(origin.url, urls, when);
      await loansBack(segmentReadBuffers);
    }
    // And the pool serves correct bytes afterwards.
    expect(sha((await get(origin.url, urls[0]!)).body)).toBe(expected);
  });
});

test('a fragment read again comes from its kept sample table with the same fields, for any shift', async () => {
  const track = videoOf(muxed)!.track;
  // A fresh track object (a copy) has no table yet: the first read parses the moof.
  const fresh = { ...track };
  const source = await openFile(track.src);
  try {
    const parsed = await readFragmentSamples(source, fresh, 1, 7n);
    const kept = await readFragmentSamples(source, fresh, 1, 7n);
    expect(kept).toEqual(parsed);
    const shifted = await readFragmentSamples(source, fresh, 1, 0n);
    expect(shifted.map((s) => s.time)).toEqual(parsed.map((s) => s.time + 7n));
    // A source of another size (the file changed under the track) is parsed again, not trusted.
    const other: ByteSource = {
      name: source.name,
      size: source.size + 1,
      read: (o, l) => source.read(o, l),
      close: async () => undefined,
    };
    expect(await readFragmentSamples(other, fresh, 1, 7n)).toEqual(parsed);
  } finally {
    await source.close();
  }
});

test('kept sample tables are bounded: past the budget the oldest go first and are parsed again', async () => {
  const track = { ...videoOf(muxed)!.track };
  const file = await openFile(track.src);
  let reads = 0;
  const source: ByteSource = {
    name: file.name,
    size: file.size,
    read: (o, l) => (reads++, file.read(o, l)),
    close: async () => undefined,
  };
  const before = setSampleTableBudget(4096);
  try {
    const n = track.fragments.count;
    expect(n).toBeGreaterThan(3);
    const parsed = [];
    for (let i = 0; i < n; i++) parsed.push(await readFragmentSamples(source, track, i, 0n));
    expect(sampleTableBytes()).toBeLessThanOrEqual(4096);
    expect(sampleTableBytes()).toBeGreaterThan(0);
    // The newest is kept (no read), the oldest was dropped (its moof is read and parsed again).
    reads = 0;
    expect(await readFragmentSamples(source, track, n - 1, 0n)).toEqual(parsed[n - 1]);
    expect(reads).toBe(0);
    expect(await readFragmentSamples(source, track, 0, 0n)).toEqual(parsed[0]);
    expect(reads).toBeGreaterThan(0);
  } finally {
    setSampleTableBudget(before);
    await file.close();
  }
});
