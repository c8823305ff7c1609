// Encrypted fMP4 segments read into a pooled buffer (segments/fmp4/encrypted-segment.ts with
// EncryptedAs.pool; the server lends it when the encrypted-segment cache is off). What must hold:
// - the bytes are those of a buffer of its own, for every segment, cenc and cbcs, one at a time
//   and all at once (a pooled buffer that held a bigger segment must not leak stale bytes, and a
//   segment handed out is not overwritten while it is held);
// - a failed read, or media that fails to parse after the read, gives the buffer back;
// - over HTTP the buffer goes back once every response holding it has closed: GET, HEAD, range,
//   304 and coalesced requests, and clients that go away.

import { createHash } from 'node:crypto';
import { BufferPool, segmentReadBuffers } from '../../../origin/io/buffers';
import { FileHandles } from '../../../origin/io/file-handles';
import { ReadIntoSource, SourceOpener } from '../../../origin/io/source';
import { Presentation } from '../../../origin/model/presentation';
import { EncryptedAs, joinedParts, readEncryptedSegment } from '../../../origin/segments/fmp4/encrypted-segment';
import { cutClients, loansBack } from '../../helpers/pooled-replies';
import { loadPresentation, packageFixtures, viewOf } from '../../helpers/presentations';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';

const FILES = ['video_high_1600k.ismv', 'audio_eng_128k.isma'];
const KEY = ['--drm_a.key=00112233445566778899aabbccddeeff:3a2a1b68dd2bd9b2eeb25e84c4776668'];

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

let files: FileHandles;
beforeAll(() => {
  files = new FileHandles(60_000);
});
afterAll(() => files.close());

/** Every DASH segment of `p` as (track, segment) pairs. */
function dashSegments(p: Presentation): Array<[ReturnType<typeof viewOf>['tracks'][number], number]> {
  return viewOf(p, 'dash').tracks.flatMap((t) =>
    Array.from({ length: t.segments.count }, (_, i) => [t, i] as [typeof t, number]),
  );
}

describe.each([
  ['cenc', []],
  ['cbcs', ['--mpd.protection_scheme=cbcs']],
])('%s', (scheme, options) => {
  let p: Presentation;
  beforeAll(async () => {
    p = await loadPresentation(await packageFixtures(FILES, `pooled-${scheme}`, [...KEY, ...options]));
  }, 60_000);
  // One key for every track (--drm_a.key).
  const as = (pool?: BufferPool): EncryptedAs => ({
    protection: [...p.protection!.dash!.values()][0]!,
    mode: 'fmp4',
    pool,
  });

  test('pooled reads give the bytes of a buffer of its own, one at a time and all at once', async () => {
    const segments = dashSegments(p);
    expect(segments.length).toBeGreaterThanOrEqual(8);
    const expected: string[] = [];
    for (const [t, i] of segments) {
      const plain = await readEncryptedSegment(files.opener, t.track, t.segments.segment(i), p, as());
      expect(plain.loan).toBeUndefined();
      expected.push(sha(joinedParts(plain.parts)));
    }
    const pool = new BufferPool();
    // One at a time, each buffer given back before the next: the same few buffers reused.
    for (const [k, [t, i]] of segments.entries()) {
      const got = await readEncryptedSegment(files.opener, t.track, t.segments.segment(i), p, as(pool));
      expect(got.loan).toBeDefined();
      expect([k, sha(joinedParts(got.parts))]).toEqual([k, expected[k]]);
      got.loan!.share(0);
    }
    expect(pool.outstanding).toBe(0);
    expect(pool.available).toBeGreaterThan(0);
    // All at once, in reverse order, every one held until all are made.
    const all = await Promise.all(
      [...segments]
        .reverse()
        .map(([t, i]) => readEncryptedSegment(files.opener, t.track, t.segments.segment(i), p, as(pool))),
    );
    all.reverse().forEach((got, k) => expect([k, sha(joinedParts(got.parts))]).toEqual([k, expected[k]]));
    expect(pool.outstanding).toBe(segments.length);
    for (const got of all) got.loan!.share(0);
    expect(pool.outstanding).toBe(0);
  });

  test('a failed read or media that fails after the read gives the buffer back', async () => {
    const [t, i] = dashSegments(p).find(([x]) => x.track.properties.type === 'video')!;
    const pool = new BufferPool();
    const failing: SourceOpener = async (file) => {
      const s = (await files.opener(file)) as ReadIntoSource;
      return { ...s, readInto: () => Promise.reject(new Error('disk gone')) };
    };
    await expect(readEncryptedSegment(failing, t.track, t.segments.segment(i), p, as(pool))).rejects.toThrow(
      'disk gone',
    );
    expect(pool.outstanding).toBe(0);
    // The bytes read are not the moofs the table promised: parsing fails once the span is in memory.
    const zeroed: SourceOpener = async (file) => {
      const s = (await files.opener(file)) as ReadIntoSource;
      const source: ReadIntoSource = {
        ...s,
        readInto: async (target, offset, length) => {
          await s.readInto(target, offset, length);
          target.fill(0, 0, length);
        },
      };
      return source;
    };
    await expect(readEncryptedSegment(zeroed, t.track, t.segments.segment(i), p, as(pool))).rejects.toThrow();
    expect(pool.outstanding).toBe(0);
    expect(pool.available).toBe(1);
  });
});

describe('over HTTP', () => {
  let origin: TestOrigin;
  beforeAll(async () => {
    origin = await startTestOrigin({ e: FILES }, { e: KEY });
  }, 60_000);
  afterAll(async () => {
    await origin.server.close();
  });

  /** Media segment URLs of every representation, from the MPD's SegmentTimeline. */
  async function segmentUrls(): Promise<string[]> {
    const mpd = (await get(origin.url, '/e.ism/e.mpd')).text;
    const out: string[] = [];
    for (const set of mpd.split('<AdaptationSet').slice(1)) {
      const media = /media="([^"]+)"/.exec(set)![1]!;
      const times: number[] = [];
      let time = 0;
      for (const m of set.matchAll(/<S (?:t="(\d+)" )?d="(\d+)"(?: r="(\d+)")?/g)) {
        if (m[1] !== undefined) time = Number(m[1]);
        for (let r = 0; r <= Number(m[3] ?? 0); r++, time += Number(m[2])) times.push(time);
      }
      for (const id of set.matchAll(/<Representation id="([^"]+)"/g)) {
        for (const t of times) {
          out.push(`/e.ism/${media.replace('$RepresentationID$', id[1]!).replace('$Time$', String(t))}`);
        }
      }
    }
    return out;
  }

  test('GET, HEAD, range, 304 and coalesced requests get the right bytes, and the buffer goes back', async () => {
    const urls = await segmentUrls();
    expect(urls.length).toBeGreaterThanOrEqual(8);
    const whole = await get(origin.url, urls[0]!);
    expect(whole.status).toBe(200);
    expect(whole.body.length).toBeGreaterThan(1000);
    await loansBack(segmentReadBuffers);
    const etag = String(whole.headers.etag);
    const kinds = [
      () => get(origin.url, urls[0]!),
      () => get(origin.url, urls[0]!, {}, 'HEAD'),
      () => get(origin.url, urls[0]!, { range: 'bytes=100-999' }),
      () => get(origin.url, urls[0]!, { 'if-none-match': etag }),
    ];
    const got = await Promise.all(Array.from({ length: 16 }, (_, i) => kinds[i % kinds.length]!()));
    got.forEach((g, i) => {
      const kind = i % kinds.length;
      if (kind === 0) expect(sha(g.body)).toBe(sha(whole.body));
      if (kind === 1) expect([g.status, g.body.length]).toEqual([200, 0]);
      if (kind === 2) expect([g.status, sha(g.body)]).toEqual([206, sha(whole.body.subarray(100, 1000))]);
      if (kind === 3) expect([g.status, g.body.length]).toEqual([304, 0]);
    });
    await loansBack(segmentReadBuffers);
    // Every segment at once, twice: each the bytes it had alone.
    const expected = await Promise.all(urls.map(async (u) => sha((await get(origin.url, u)).body)));
    for (let round = 0; round < 2; round++) {
      const again = await Promise.all(urls.map((u) => get(origin.url, u)));
      again.forEach((g, k) => expect([k, sha(g.body)]).toEqual([k, expected[k]]));
    }
    await loansBack(segmentReadBuffers);
  });

  test('clients that go away still give the buffer back', async () => {
    const urls = await segmentUrls();
    for (const when of ['sent', 'head'] as const) {
      await cutClients(origin.url, urls, when);
      await loansBack(segmentReadBuffers);
    }
  });
});
