// The filter protocol around the in-process origin (host-glue/envoy/edge-inline.ts), with a filter
// written in the test: the filter sees Envoy's calls in Envoy's order and its verdicts (a local
// reply, a rewritten :path, changed headers, a replaced response, rewritten or held body bytes)
// take effect, with end() exactly once whatever happens to the client; decided and held alike.

import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { PLAYABLE } from '../../helpers/presentations';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { eventually, recordingFactory, RecordingFactory, request, Response } from './edge-helpers';
import { pathOf, smoothUrls } from './format-urls';
import { Inline, startInline, seen, leaveAfterFirstBytes } from './edge-inline-support';

// A filter's verdicts come as plain values when decided during the call (the real host, nearly
// always) and as promises when held: every behaviour below runs both ways.
describe.each([
  ['decided (plain values)', true],
  ['held (promises)', false],
])('the filter protocol around the in-process origin (a filter written in the test), verdicts %s', (_how, decided) => {
  let origin: TestOrigin;
  let f: RecordingFactory;
  let inline: Inline;
  const big = Buffer.alloc(3 * 1024 * 1024 + 17);

  beforeAll(async () => {
    origin = await startTestOrigin({ p: PLAYABLE });
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 11)) & 0xff;
    await fs.writeFile(path.join(origin.root, 'big.bin'), big);
    f = recordingFactory({}, { decided });
    inline = await startInline(origin.root, f);
  }, 60_000);

  afterAll(async () => {
    await inline?.server.close();
    await origin?.server.close();
  });

  beforeEach(() => {
    f.behaviour = {};
    f.streams.length = 0;
  });

  const lastStream = async (): Promise<RecordingFactory['streams'][number]> => {
    await eventually(() => f.streams.length > 0 && f.streams[f.streams.length - 1]!.ends > 0);
    return f.streams[f.streams.length - 1]!;
  };

  test("Envoy's order and end-of-stream flags: a GET with a body, a HEAD without", async () => {
    const r = await request(inline.url, '/p.ism/.mpd');
    expect(r.status).toBe(200);
    const s = await lastStream();
    expect(s.calls.map((c) => `${c.call}${c.eos === undefined ? '' : `:${c.eos}`}`)).toEqual([
      'requestHeaders:true',
      'responseHeaders:false',
      'responseBody:true',
      'end',
    ]);
    expect(s.calls[2]!.bytes).toBe(r.body.length);
    expect(s.requestHeaders!.slice(0, 4).map(([k]) => k)).toEqual([':authority', ':path', ':method', ':scheme']);
    expect(s.responseHeaders![0]).toEqual([':status', '200']);
    expect(s.responseHeaders!.some(([k]) => k === 'x-envoy-upstream-service-time')).toBe(true);
    expect(s.responseHeaders!.find(([k]) => k === 'date')?.[1]).toBe(r.headers.date); // the filter sees the date the client gets
    await request(inline.url, '/p.ism/.mpd', { method: 'HEAD' });
    const h = await lastStream();
    expect(h.calls.map((c) => `${c.call}${c.eos === undefined ? '' : `:${c.eos}`}`)).toEqual([
      'requestHeaders:true',
      'responseHeaders:true',
      'end',
    ]);
    expect(h.ends).toBe(1);
  });

  test('a streamed file: every chunk through responseBody, the bytes intact, backpressure kept', async () => {
    const r = await request(inline.url, '/big.bin');
    expect(r.status).toBe(200);
    expect(r.body.equals(big)).toBe(true);
    const s = await lastStream();
    const bodies = s.calls.filter((c) => c.call === 'responseBody');
    expect(bodies.length).toBeGreaterThan(2);
    expect(bodies.reduce((n, c) => n + c.bytes!, 0)).toBe(big.length);
    expect(bodies.slice(0, -1).every((c) => c.eos === false)).toBe(true);
    expect(bodies[bodies.length - 1]!.eos).toBe(true);
  });

  test('a filter that rewrites every body chunk (new bytes): the client gets the rewritten bytes', async () => {
    f.behaviour.responseBody = (chunk) => ({ kind: 'continue', data: Uint8Array.from(chunk, (b) => b ^ 0xff) });
    const r = await request(inline.url, '/big.bin');
    expect(r.body.length).toBe(big.length);
    expect(r.body.equals(Buffer.from(big.map((b) => b ^ 0xff)))).toBe(true);
  });

  test('a local reply at the request headers: the origin is not asked', async () => {
    f.behaviour.requestHeaders = () => ({
      kind: 'respond',
      response: {
        headers: [
          [':status', '403'],
          ['content-type', 'text/plain'],
        ],
        body: Buffer.from('no\n'),
        details: 'test',
      },
    });
    const before = origin.logs.length + inline.logs.length;
    const r = await request(inline.url, '/p.ism/.mpd?refused=1');
    expect([r.status, r.body.toString(), r.headers.server]).toEqual([403, 'no\n', 'envoy']);
    expect(inline.logs.slice(0).some((l) => l.includes('refused=1'))).toBe(false);
    expect(origin.logs.length + inline.logs.length).toBe(before);
    expect((await lastStream()).calls.map((c) => c.call)).toEqual(['requestHeaders', 'end']);
  });

  test('a rewritten :path and request header: the origin answers what the filter asked for', async () => {
    f.behaviour.requestHeaders = (h) => ({
      kind: 'continue',
      headers: h
        .map(([k, v]) => (k === ':path' ? [k, '/p.ism/Manifest'] : [k, v]))
        .concat([['range', 'bytes=0-9']]) as typeof h,
    });
    const r = await request(inline.url, '/p.ism/.mpd');
    const direct = await request(origin.url, '/p.ism/Manifest');
    expect([r.status, r.headers['content-type']]).toEqual([200, direct.headers['content-type']]);
    expect(r.body.equals(direct.body)).toBe(true); // manifests ignore Range, as directly
    const seg = smoothUrls(direct.body.toString(), `${origin.url}/p.ism/Manifest`)[0]!;
    f.behaviour.requestHeaders = (h) => ({
      kind: 'continue',
      headers: h
        .map(([k, v]) => (k === ':path' ? [k, pathOf(seg)] : [k, v]))
        .concat([['range', 'bytes=0-9']]) as typeof h,
    });
    const ranged = await request(inline.url, '/anything');
    expect([ranged.status, ranged.body.length]).toEqual([206, 10]);
  });

  test('changed response headers reach the client; a response replaced at its headers drops the origin body', async () => {
    f.behaviour.responseHeaders = (h) => ({
      kind: 'continue',
      headers: [...h.filter(([k]) => k !== 'cache-control'), ['x-test', 'yes']],
    });
    const r = await request(inline.url, '/p.ism/.mpd');
    expect([r.status, r.headers['x-test'], r.headers['cache-control']]).toEqual([200, 'yes', undefined]);
    f.behaviour.responseHeaders = () => ({
      kind: 'respond',
      response: {
        headers: [
          [':status', '451'],
          ['content-length', '4'],
        ],
        body: Buffer.from('gone'),
        details: 'test',
      },
    });
    const replaced = await request(inline.url, '/big.bin');
    expect([replaced.status, replaced.body.toString()]).toEqual([451, 'gone']);
    expect((await lastStream()).ends).toBe(1);
    f.behaviour = {};
    expect((await request(inline.url, '/big.bin')).body.equals(big)).toBe(true); // the server is fine after it
  });

  test('a local reply after the head went out resets the stream (as Envoy)', async () => {
    let n = 0;
    f.behaviour.responseBody = (chunk) =>
      ++n === 2
        ? { kind: 'respond', response: { headers: [[':status', '500']], body: new Uint8Array(0), details: 'late' } }
        : { kind: 'continue', data: chunk };
    await expect(request(inline.url, '/big.bin')).rejects.toThrow();
    expect((await lastStream()).ends).toBe(1);
  });

  test('a request body goes through requestBody before the origin refuses the method', async () => {
    const r = await request(inline.url, '/p.ism/.mpd', { method: 'POST', body: ['abc', 'defg'] });
    expect(r.status).toBe(405);
    const s = await lastStream();
    const body = s.calls.filter((c) => c.call === 'requestBody');
    expect(body.reduce((n, c) => n + c.bytes!, 0)).toBe(7);
    expect(body[body.length - 1]!.eos).toBe(true);
  });

  test('a client that leaves mid-body: end() once, and the server serves on', async () => {
    await leaveAfterFirstBytes(`${inline.url}/big.bin`);
    const s = await lastStream();
    expect(s.ends).toBe(1);
    expect((await request(inline.url, '/big.bin')).body.equals(big)).toBe(true);
  });

  test('a response the filter lets pass: the same head and bytes as through it, no response callbacks', async () => {
    const paths = ['/p.ism/.mpd', '/big.bin', '/missing.ism/.mpd'];
    const through: Response[] = [];
    for (const p of paths) through.push(await request(inline.url, p));
    f.behaviour.passesResponse = () => true;
    for (const [i, p] of paths.entries()) {
      const r = await request(inline.url, p);
      expect(seen(r)).toEqual(seen(through[i]!));
      expect(r.body.equals(through[i]!.body)).toBe(true);
      expect(r.headers['x-envoy-upstream-service-time']).toMatch(/^\d+$/);
      expect(r.headers.date).toBeDefined();
      const s = await lastStream();
      expect(s.calls.map((c) => c.call)).toEqual(['requestHeaders', 'responsePassed', 'responsePassed', 'end']);
      expect(s.calls.slice(1, 3).map((c) => [c.status, c.bytes])).toEqual([
        [r.status, 0],
        [r.status, r.body.length],
      ]);
      // The same names in the same order as through the filter: lowercase, `server` last
      // (Node's own framing headers of the connection aside).
      const names = (x: Response): string[] =>
        x.rawHeaders.filter((n, at) => at % 2 === 0 && !['Connection', 'Keep-Alive', 'Transfer-Encoding'].includes(n));
      expect(names(r)).toEqual(names(through[i]!));
      expect(names(r).filter((n) => n !== n.toLowerCase())).toEqual([]);
      expect(names(r)[names(r).length - 1]).toBe('server');
    }
  });

  test('past the filter: HEAD, a range, a 304 and a streamed file with backpressure', async () => {
    f.behaviour.passesResponse = () => true;
    const get = await request(inline.url, '/p.ism/.mpd');
    const head = await request(inline.url, '/p.ism/.mpd', { method: 'HEAD' });
    expect([head.status, head.body.length, head.headers['content-length']]).toEqual([200, 0, String(get.body.length)]);
    expect((await lastStream()).calls.map((c) => c.call)).toEqual([
      'requestHeaders',
      'responsePassed',
      'responsePassed',
      'end',
    ]);
    const notModified = await request(inline.url, '/p.ism/.mpd', {
      headers: { 'if-none-match': get.headers.etag as string },
    });
    expect([notModified.status, notModified.body.length]).toEqual([304, 0]);
    const ranged = await request(inline.url, '/big.bin', { headers: { range: 'bytes=100-199' } });
    expect([ranged.status, ranged.body.equals(big.subarray(100, 200))]).toEqual([206, true]);
    // A slow reader: the file is streamed under backpressure and arrives whole.
    const slow = await new Promise<Buffer>((resolve, reject) => {
      http
        .get(`${inline.url}/big.bin`, (res) => {
          const parts: Buffer[] = [];
          res.pause();
          const tick = setInterval(() => {
            const c = res.read() as Buffer | null;
            if (c !== null) parts.push(c);
          }, 2);
          res.on('end', () => {
            clearInterval(tick);
            resolve(Buffer.concat(parts));
          });
          res.on('readable', () => undefined);
        })
        .on('error', reject);
    });
    expect(slow.equals(big)).toBe(true);
    const s = await lastStream();
    expect(s.calls.filter((c) => c.call.startsWith('response')).map((c) => c.call)).toEqual([
      'responsePassed',
      'responsePassed',
    ]);
    expect(s.calls[2]!.bytes).toBe(big.length);
  });

  test('past the filter: a reply for the stream after its head went out resets it; a client that leaves, end() once', async () => {
    let asked = 0;
    f.behaviour.passesResponse = () => ++asked < 3; // the head and the first chunk pass, then a reply came
    await expect(request(inline.url, '/big.bin')).rejects.toThrow();
    const reset = await lastStream();
    expect(reset.ends).toBe(1);
    expect(reset.calls.some((c) => c.call === 'responseBody')).toBe(false);
    f.behaviour.passesResponse = () => true;
    await leaveAfterFirstBytes(`${inline.url}/big.bin`);
    expect((await lastStream()).ends).toBe(1);
    expect((await request(inline.url, '/big.bin')).body.equals(big)).toBe(true);
  });

  test('a reply that came before the head: the response goes through the filter after all', async () => {
    f.behaviour.passesResponse = () => false;
    f.behaviour.responseHeaders = () => ({
      kind: 'respond',
      response: {
        headers: [
          [':status', '503'],
          ['content-length', '4'],
        ],
        body: Buffer.from('late'),
        details: 'test',
      },
    });
    const r = await request(inline.url, '/p.ism/.mpd');
    expect([r.status, r.body.toString()]).toEqual([503, 'late']);
    expect((await lastStream()).calls.map((c) => c.call)).toEqual(['requestHeaders', 'responseHeaders', 'end']);
  });

  test('suppress_envoy_headers: no x-envoy-upstream-service-time', async () => {
    const quiet = await startInline(origin.root, recordingFactory({}, { decided }), { suppressEnvoyHeaders: true });
    try {
      const r = await request(quiet.url, '/p.ism/.mpd');
      expect([r.status, r.headers['x-envoy-upstream-service-time']]).toEqual([200, undefined]);
    } finally {
      await quiet.server.close();
    }
  });
});
