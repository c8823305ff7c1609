// The read side of remote storage's round-trip savings (origin/io/remote/): InFlightRanges (a read
// contained in one in flight joins it, never one of another object version, and nothing is kept
// once it arrived), RemoteSource's willNeed (one range read for a hinted span) checked against the
// plain reader, and an object replaced on storage while a hinted read is in flight: every byte
// read is the byte of the version the read was pinned to, or the read fails as storage-changed.

import * as http from 'node:http';
import * as path from 'node:path';
import { originError } from '../../../origin/errors';
import { HttpStorage } from '../../../origin/io/remote/http-storage';
import { InFlightRanges } from '../../../origin/io/remote/in-flight-ranges';
import { READ_AHEAD, RemoteSource } from '../../../origin/io/remote/remote-source';
import { BufferSource } from '../../../origin/io/source';
import { rejectedOriginError } from '../../helpers/errors';
import { storageOn, StubbedStorage } from '../../helpers/storage-stub';

/** Deterministic bytes (a xorshift stream): equal offsets of two seeds differ almost everywhere. */
function bytesOf(size: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

/** A range read over `bytes` that records its calls and can be held until released. */
function recordingRead(bytes: Buffer): {
  read: (offset: number, length: number) => Promise<Uint8Array>;
  calls: [number, number][];
  hold: () => () => void;
} {
  const calls: [number, number][] = [];
  let gate: Promise<void> | undefined;
  return {
    calls,
    read: async (offset, length) => {
      calls.push([offset, length]);
      if (gate !== undefined) await gate;
      return Uint8Array.from(bytes.subarray(offset, offset + length));
    },
    hold: () => {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

describe('InFlightRanges', () => {
  const object = bytesOf(1 << 20, 7);

  test('a read contained in one in flight joins it; nothing is kept once it arrived', async () => {
    const ranges = new InFlightRanges();
    const r = recordingRead(object);
    const release = r.hold();
    const wide = ranges.read('/a', '"v1"', 1000, 50_000, r.read);
    const inside = ranges.read('/a', '"v1"', 2000, 10_000, r.read);
    const same = ranges.read('/a', '"v1"', 1000, 50_000, r.read);
    const outside = ranges.read('/a', '"v1"', 40_000, 20_000, r.read);
    expect(ranges.pending).toBe(2);
    release();
    expect(Buffer.from(await wide).equals(object.subarray(1000, 51_000))).toBe(true);
    expect(Buffer.from(await inside).equals(object.subarray(2000, 12_000))).toBe(true);
    expect(Buffer.from(await same).equals(object.subarray(1000, 51_000))).toBe(true);
    expect(Buffer.from(await outside).equals(object.subarray(40_000, 60_000))).toBe(true);
    expect(r.calls).toEqual([
      [1000, 50_000],
      [40_000, 20_000],
    ]);
    expect([ranges.joined, ranges.fetched, ranges.pending]).toEqual([2, 2, 0]);
    // Arrived: a later read asks storage again (it carries If-Match there; see the file header).
    await ranges.read('/a', '"v1"', 2000, 10_000, r.read);
    expect(r.calls).toHaveLength(3);
  });

  test('a read pinned to another version, or of another path, never joins', async () => {
    const ranges = new InFlightRanges();
    const v2 = bytesOf(1 << 20, 8);
    const r1 = recordingRead(object);
    const r2 = recordingRead(v2);
    const release = r1.hold();
    const old = ranges.read('/a', '"v1"', 0, 100_000, r1.read);
    const fresh = ranges.read('/a', '"v2"', 10, 1000, r2.read);
    const other = ranges.read('/b', '"v1"', 10, 1000, r2.read);
    expect(Buffer.from(await fresh).equals(v2.subarray(10, 1010))).toBe(true);
    expect(Buffer.from(await other).equals(v2.subarray(10, 1010))).toBe(true);
    release();
    expect(Buffer.from(await old).equals(object.subarray(0, 100_000))).toBe(true);
    expect(ranges.joined).toBe(0);
  });

  test('a failed read fails its joiners and leaves nothing behind', async () => {
    const ranges = new InFlightRanges();
    let fail = true;
    const read = async (offset: number, length: number): Promise<Uint8Array> => {
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw originError('storage-changed', 'changed (412)');
      return object.subarray(offset, offset + length);
    };
    const a = ranges.read('/a', '"v1"', 0, 1000, read);
    const b = ranges.read('/a', '"v1"', 10, 100, read);
    expect((await rejectedOriginError(a)).code).toBe('storage-changed');
    expect((await rejectedOriginError(b)).code).toBe('storage-changed');
    expect(ranges.pending).toBe(0);
    fail = false;
    expect(Buffer.from(await ranges.read('/a', '"v1"', 10, 100, read)).equals(object.subarray(10, 110))).toBe(true);
  });

  test('an answer of the wrong length is a storage error, not data', async () => {
    const ranges = new InFlightRanges();
    const short = async (offset: number, length: number): Promise<Uint8Array> =>
      object.subarray(offset, offset + length - 1);
    expect((await rejectedOriginError(ranges.read('/a', '"v1"', 0, 1000, short))).code).toBe('storage-error');
  });
});

describe('RemoteSource: willNeed and readInto against the plain reader', () => {
  const size = 3 * READ_AHEAD + 12_345;
  const object = bytesOf(size, 3);

  test('random reads and readIntos, hinted or not, answer the bytes a BufferSource answers', async () => {
    const plain = new BufferSource('plain', object);
    let seed = 12345;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 40; round++) {
      const r = recordingRead(object);
      const source = new RemoteSource('remote', size, r.read);
      for (let i = 0; i < 25; i++) {
        const offset = rnd(size);
        const length = rnd(Math.min(size - offset, 3 * READ_AHEAD) + 1);
        if (rnd(3) === 0) source.willNeed(offset, Math.min(size - offset, length + rnd(4096)));
        const want = Buffer.from(await plain.read(offset, length));
        if (rnd(2) === 0) {
          // readInto: the same bytes, into the caller's buffer and nowhere else.
          const target = Buffer.alloc(length + 2, 0xee);
          await source.readInto(target.subarray(1, 1 + length), offset, length);
          expect(target.subarray(1, 1 + length).equals(want)).toBe(true);
          expect([target[0], target[length + 1]]).toEqual([0xee, 0xee]);
          continue;
        }
        const got = await source.read(offset, length);
        expect(Buffer.from(got).equals(want)).toBe(true);
        // Bytes of its own: writing into them changes no later answer.
        if (got.byteLength > 0) got[0] = got[0]! ^ 0xff;
      }
      await source.close();
    }
  });

  test('reads inside a hinted span cost one range read of the span', async () => {
    const r = recordingRead(object);
    const source = new RemoteSource('remote', size, r.read);
    source.willNeed(1000, 150_000);
    for (const [o, n] of [
      [1000, 16],
      [1000, 800],
      [1800, 100_000],
      [101_800, 49_200],
    ] as const)
      expect(Buffer.from(await source.read(o, n)).equals(object.subarray(o, o + n))).toBe(true);
    expect(r.calls).toEqual([[1000, 150_000]]);
    // Hints past the end or over the bound are not taken: reads go on as without one.
    source.willNeed(size - 10, 20);
    await source.read(size - 10, 10);
    expect(r.calls[1]).toEqual([size - 10, 10]);
    await expect(source.read(size - 5, 10)).rejects.toThrow(/past the end/);
  });
});

describe('an object replaced on storage while a hinted read is in flight', () => {
  const SIZE = 400_000;
  let current = { etag: '"one"', bytes: bytesOf(SIZE, 11) };
  const versions = new Map<string, Buffer>();
  let hold: Promise<void> | undefined;
  let stub: StubbedStorage;
  let storage: HttpStorage;
  const DIR = path.join(path.sep, 'root', 'loc') + path.sep;
  const FILE = DIR + 'v.ismv';

  beforeAll(async () => {
    versions.set(current.etag, current.bytes);
    // A storage that checks If-Match when the request arrives and sends the bytes it had then,
    // after `hold` (a slow body): a replacement meanwhile does not change an answer under way.
    const listener: http.RequestListener = (req, res) => {
      const now = current;
      const headers = { ETag: now.etag, 'Last-Modified': 'Mon, 01 Jan 2024 10:00:00 GMT' };
      if (req.method === 'HEAD') return res.writeHead(200, { ...headers, 'Content-Length': SIZE }).end();
      if (req.headers['if-match'] !== undefined && req.headers['if-match'] !== now.etag)
        return res.writeHead(412).end();
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')!;
      const [start, end] = [Number(m[1]), Number(m[2])];
      const body = now.bytes.subarray(start, end + 1);
      void (hold ?? Promise.resolve()).then(() =>
        res
          .writeHead(206, {
            ...headers,
            'Content-Range': `bytes ${start}-${end}/${SIZE}`,
            'Content-Length': body.length,
          })
          .end(body),
      );
    };
    stub = await storageOn(listener, { dir: DIR, urlPath: '/', connections: 4, timeoutMs: 5000 });
    storage = stub.storage;
  });

  afterAll(() => stub.close());

  test('each read answers its own version or storage-changed: zero wrong bytes', async () => {
    const one = current;
    const old = await storage.open(FILE, one.etag);
    old.willNeed!(10_000, 300_000);
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    // The hinted span is on its way (If-Match "one" checked); a joiner waits for it.
    const first = old.read(10_000, 1000);
    const joiner = (await storage.open(FILE, one.etag)).read(200_000, 5000);
    await new Promise((r) => setTimeout(r, 50));
    // Replaced meanwhile: another object under the same name.
    current = { etag: '"two"', bytes: bytesOf(SIZE, 12) };
    versions.set(current.etag, current.bytes);
    const fresh = await storage.open(FILE, current.etag);
    const freshRead = fresh.read(200_000, 5000);
    hold = undefined;
    release();
    const answers: [Uint8Array, number, string][] = [
      [await first, 10_000, '"one"'],
      [await joiner, 200_000, '"one"'],
      [await freshRead, 200_000, '"two"'],
    ];
    // The joiner waited for the hinted read (one request for both); the fresh read did not.
    expect(storage.reads.joined).toBe(1);
    // Within the span already read: the bytes of the version the source is pinned to.
    answers.push([await old.read(250_000, 1000), 250_000, '"one"']);
    for (const [bytes, at, etag] of answers)
      expect(Buffer.from(bytes).equals(versions.get(etag)!.subarray(at, at + bytes.byteLength))).toBe(true);
    // Outside it, storage is asked with If-Match "one": 412, never the new object's bytes.
    expect((await rejectedOriginError(old.read(350_000, 1000))).code).toBe('storage-changed');
    expect((await rejectedOriginError((await storage.open(FILE, one.etag)).read(10_000, 1000))).code).toBe(
      'storage-changed',
    );
    expect(storage.reads.pending).toBe(0);
  });
});
