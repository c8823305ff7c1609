// HttpStorage and its client (origin/io/remote/) against a small HTTP server of our own that
// answers what a storage might: objects larger than any body bound, refusals, weak ETags, no
// ETag at all, a body longer than announced, a 200 to a range request. nginx-backed behaviour is
// test/origin/remote/.

import * as http from 'node:http';
import * as path from 'node:path';
import { HttpStorage } from '../../../origin/io/remote/http-storage';
import { rejectedOriginError } from '../../helpers/errors';
import { storageOn, StubbedStorage } from '../../helpers/storage-stub';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

let stub: StubbedStorage;
let handler: Handler = (_req, res) => res.end();
const seen: http.IncomingHttpHeaders[] = [];
let storage: HttpStorage;
const DIR = path.join(path.sep, 'root', 'loc') + path.sep;
const at = (name: string): string => DIR + name;

beforeAll(async () => {
  const listener: http.RequestListener = (req, res) => {
    seen.push(req.headers);
    handler(req, res);
  };
  stub = await storageOn(listener, { dir: DIR, urlPath: '/media/', connections: 2, timeoutMs: 2000 });
  storage = stub.storage;
});

afterAll(() => stub.close());

test('the stat of an object larger than any body bound (a HEAD has no body)', async () => {
  handler = (req, res) => {
    expect(req.method).toBe('HEAD');
    res.writeHead(200, {
      'Content-Length': String(2 ** 40),
      ETag: '"big"',
      'Last-Modified': 'Mon, 01 Jan 2024 10:00:00 GMT',
    });
    res.end();
  };
  expect(await storage.stat(at('a/big.ismv'))).toEqual({
    mtimeMs: Date.UTC(2024, 0, 1, 10),
    size: 2 ** 40,
    version: '"big"',
  });
  expect(seen.at(-1)!.host).toMatch(/^127\.0\.0\.1:/);
});

test('paths are percent-encoded segment by segment under the base', async () => {
  let url = '';
  handler = (req, res) => {
    url = req.url!;
    res.writeHead(200, { 'Content-Length': '1' });
    res.end();
  };
  await storage.stat(at('a b/x#1.ism'));
  expect(url).toBe('/media/a%20b/x%231.ism');
});

test('a weak ETag is not used for If-Match: Last-Modified with If-Unmodified-Since instead', async () => {
  const lm = 'Tue, 02 Jan 2024 03:04:05 GMT';
  handler = (req, res) => {
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'Content-Length': '10', ETag: 'W/"weak"', 'Last-Modified': lm });
      return res.end();
    }
    const [, from, to] = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range!)!.map(Number) as [number, number, number];
    res.writeHead(206, { 'Content-Length': String(to - from + 1), 'Content-Range': `bytes ${from}-${to}/10` });
    res.end('abcdefghij'.slice(from, to + 1));
  };
  const stat = await storage.stat(at('w.ismv'));
  expect(stat.version).toBe(`lm:${lm}`);
  const source = await storage.open(at('w.ismv'), stat.version);
  await expect(source.read(2, 4)).resolves.toEqual(Buffer.from('cdef'));
  expect(seen.at(-1)!['if-unmodified-since']).toBe(lm);
  expect(seen.at(-1)!['if-match']).toBeUndefined();
  // 2-5 asked as a 64 KiB read-ahead, clipped to the object: bytes=2-9; the next read is in it.
  expect(seen.at(-1)!.range).toBe('bytes=2-9');
  const count = seen.length;
  await expect(source.read(6, 4)).resolves.toEqual(Buffer.from('ghij'));
  expect(seen.length).toBe(count);
});

test.each([
  [403, 'storage-denied'],
  [401, 'storage-denied'],
  [404, 'not-found'],
  [410, 'not-found'],
  [412, 'storage-changed'],
  [503, 'storage-unavailable'],
])('storage answering %d to a read: %s', async (status, code) => {
  handler = (req, res) => {
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'Content-Length': '100', ETag: '"e"' });
      return res.end();
    }
    res.writeHead(status, { 'Content-Length': '0' });
    res.end();
  };
  const source = await storage.open(at('s.ismv'), '"e"');
  expect((await rejectedOriginError(source.read(0, 10))).code).toBe(code);
});

test('a range answered with other bytes, or a whole object for a part of it: storage-error', async () => {
  for (const answer of [
    { status: 206, headers: { 'Content-Range': 'bytes 0-9/100', 'Content-Length': '10' }, body: '0123456789' },
    { status: 200, headers: { 'Content-Length': '100' }, body: 'x'.repeat(100) },
  ]) {
    handler = (req, res) => {
      if (req.method === 'HEAD') {
        res.writeHead(200, { 'Content-Length': '100', ETag: '"e"' });
        return res.end();
      }
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    };
    const source = await storage.open(at('r.ismv'), '"e"');
    expect((await rejectedOriginError(source.read(90, 10))).code).toBe('storage-error');
  }
});

test('a body longer than its Content-Length is refused, never passed on', async () => {
  handler = (req, res) => {
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'Content-Length': '20', ETag: '"e"' });
      return res.end();
    }
    // Chunked, announcing fewer bytes than it sends through a raw socket write.
    res.socket!.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n0123456789');
    res.socket!.end();
  };
  const e = await rejectedOriginError(storage.readText(at('t.ism'), '"e"'));
  expect(['storage-error', 'storage-unavailable']).toContain(e.code);
});
