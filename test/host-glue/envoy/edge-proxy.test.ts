// The embedded edge's proxy mechanics against upstream servers the tests control, with a plugin
// written here (host-glue/proxy-wasm/http-filter.ts's interface, recording every call): the header maps the
// plugin sees (Envoy's, docs/specs.md ABI §3.4), routing on the headers it let through, local
// replies, streaming both ways, the keep-alive pool, upstream failures worded as Envoy's router
// words them, timeouts, aborts — and every stream's end() exactly once.

import * as http from 'node:http';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { UPSTREAM_RESET_PREFIX } from '../../../host-glue/envoy/upstream-failure';
import { HeaderList } from '../../../host-glue/proxy-wasm/http-filter';
import { tempDir } from '../../helpers/fixtures';
import {
  closedPort,
  ENVOY_YAML,
  eventually,
  recordingFactory,
  RecordingFactory,
  request,
  startTestEdge,
  startUpstream,
  Upstream,
  withFactory,
  EdgeUnderTest,
} from './edge-helpers';

let plugin: RecordingFactory;
let upstream: Upstream;
let edge: EdgeUnderTest;
/** What the current test's upstream does. */
let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;

beforeAll(async () => {
  upstream = await startUpstream((req, res) => handler(req, res));
  plugin = recordingFactory();
  edge = await startTestEdge(upstream.url, { createPlugin: withFactory(plugin) });
});

afterAll(async () => {
  await edge.close();
  await upstream.close();
  expect(plugin.shutdowns).toBe(1);
});

beforeEach(() => {
  plugin.behaviour = {};
  handler = (req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`${req.method} ${req.url}`);
  };
});

afterEach(async () => {
  // Every stream of the test is over and was ended exactly once (Envoy: on_log, on_done, on_delete).
  await eventually(() => plugin.streams.every((s) => s.ends > 0));
  expect(plugin.streams.map((s) => s.ends)).toEqual(plugin.streams.map(() => 1));
  for (const s of plugin.streams) expect(s.calls.filter((c) => c.call === 'end').length).toBe(1);
  plugin.streams.length = 0;
});

const names = (h: HeaderList | undefined): string[] => (h ?? []).map(([k]) => k);
const lastStream = () => plugin.streams[plugin.streams.length - 1]!;

describe('request headers as the plugin sees them', () => {
  test('pseudo-headers first (:authority from Host, :path with the query), lowercase names, order and duplicates kept, x-forwarded-proto and x-request-id added', async () => {
    await request(edge.url, '/a/b.ism/.mpd?x=1&y=%22', {
      headers: ['Host', 'example.test:8080', 'X-Dup', 'one', 'User-Agent', 'ua', 'X-Dup', 'two'],
    });
    const h = lastStream().requestHeaders!;
    expect(h.slice(0, 4)).toEqual([
      [':authority', 'example.test:8080'],
      [':path', '/a/b.ism/.mpd?x=1&y=%22'],
      [':method', 'GET'],
      [':scheme', 'http'],
    ]);
    expect(h.filter(([k]) => k === 'x-dup')).toEqual([
      ['x-dup', 'one'],
      ['x-dup', 'two'],
    ]);
    expect(names(h)).toEqual([
      ':authority',
      ':path',
      ':method',
      ':scheme',
      'x-dup',
      'user-agent',
      'x-dup',
      'x-forwarded-proto',
      'x-request-id',
    ]);
    expect(h.find(([k]) => k === 'x-request-id')![1]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(h.find(([k]) => k === 'x-forwarded-proto')![1]).toBe('http');
    expect(lastStream().calls.map((c) => [c.call, c.eos])).toEqual([
      ['requestHeaders', true],
      ['responseHeaders', false],
      ['responseBody', true],
      ['end', undefined],
    ]);
    expect(lastStream().info).toEqual({
      remoteAddress: '127.0.0.1',
      remotePort: expect.any(Number),
      protocol: 'HTTP/1.1',
      localAddress: '127.0.0.1',
      localPort: Number(new URL(edge.url).port),
      connectionId: expect.any(Number),
    });
  });

  test('a client x-request-id is kept, a client x-forwarded-proto is overwritten in place', async () => {
    await request(edge.url, '/', { headers: { 'x-request-id': 'abc', 'x-forwarded-proto': 'https' } });
    const h = lastStream().requestHeaders!;
    expect(h.filter(([k]) => k === 'x-request-id' || k === 'x-forwarded-proto')).toEqual([
      ['x-request-id', 'abc'],
      ['x-forwarded-proto', 'http'],
    ]);
  });

  test('hop-by-hop headers (and those Connection names) are neither shown to the plugin nor forwarded', async () => {
    handler = (req, res) => res.end(JSON.stringify(req.rawHeaders));
    const r = await request(edge.url, '/', {
      headers: {
        Connection: 'keep-alive, X-Hop',
        'X-Hop': 'secret',
        'Keep-Alive': 'timeout=5',
        'Proxy-Connection': 'x',
        TE: 'trailers',
        'X-End': 'kept',
      },
    });
    expect(names(lastStream().requestHeaders)).toEqual([
      ':authority',
      ':path',
      ':method',
      ':scheme',
      'x-end',
      'x-forwarded-proto',
      'x-request-id',
    ]);
    const forwarded = JSON.parse(r.body.toString()) as string[];
    const forwardedNames = forwarded.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(forwardedNames).toEqual(
      expect.arrayContaining(['host', 'x-end', 'x-forwarded-proto', 'x-request-id', 'x-envoy-expected-rq-timeout-ms']),
    );
    expect(forwardedNames).not.toEqual(expect.arrayContaining(['x-hop']));
    expect(forwardedNames.filter((n) => n === 'keep-alive' || n === 'proxy-connection' || n === 'te')).toEqual([]);
  });
});

describe('routing after the filter', () => {
  test('the upstream gets the :path and :authority the plugin set (and the client the upstream answer)', async () => {
    plugin.behaviour.requestHeaders = (h) => ({
      kind: 'continue',
      headers: h.map(([k, v]): [string, string] =>
        k === ':path' ? [k, '/rewritten?q=1'] : k === ':authority' ? [k, 'origin.internal'] : [k, v],
      ),
    });
    handler = (req, res) => res.end(`${req.url} ${req.headers.host}`);
    const r = await request(edge.url, '/original');
    expect(r.body.toString()).toBe('/rewritten?q=1 origin.internal');
  });

  test('a plugin reply goes to the client as given and nothing goes upstream; HEAD gets its headers only', async () => {
    const before = upstream.requests.length;
    plugin.behaviour.requestHeaders = () => ({
      kind: 'respond',
      response: {
        headers: [
          [':status', '403'],
          ['content-type', 'text/plain'],
          ['content-length', '7'],
          ['x-why', 'token'],
        ],
        body: new TextEncoder().encode('denied\n'),
        details: 'token_rejected',
      },
    });
    const get = await request(edge.url, '/secret');
    expect([get.status, get.headers['x-why'], get.headers['content-length'], get.body.toString()]).toEqual([
      403,
      'token',
      '7',
      'denied\n',
    ]);
    const head = await request(edge.url, '/secret', { method: 'HEAD' });
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([403, '7', 0]);
    expect(upstream.requests.length).toBe(before);
    // A plugin reply does not go through the response callbacks a second time here (the host ran them).
    expect(lastStream().calls.map((c) => c.call)).toEqual(['requestHeaders', 'end']);
  });

  test("no route for the rewritten path: Envoy's 404 (through the response callbacks), nothing upstream", async () => {
    const dir = tempDir('edge-routes-');
    const yaml = (await fs.readFile(ENVOY_YAML, 'utf8'))
      .replace('- match: { prefix: "/" }', '- match: { prefix: "/media/" }')
      .replace('build/edge.wasm', path.resolve('build/edge.wasm'));
    await fs.writeFile(path.join(dir, 'envoy.yaml'), yaml);
    const local = recordingFactory();
    const e = await startTestEdge(upstream.url, {
      config: path.join(dir, 'envoy.yaml'),
      createPlugin: withFactory(local),
    });
    try {
      const before = upstream.requests.length;
      expect((await request(e.url, '/media/x')).status).toBe(200);
      const r = await request(e.url, '/elsewhere');
      expect([r.status, r.body.length, r.headers.server]).toEqual([404, 0, 'envoy']);
      expect(upstream.requests.length).toBe(before + 1);
      await eventually(() => local.streams.every((s) => s.ends === 1));
      expect(local.streams[1]!.calls.map((c) => [c.call, c.eos])).toEqual([
        ['requestHeaders', true],
        ['responseHeaders', true],
        ['end', undefined],
      ]);
    } finally {
      await e.close();
    }
  });
});

describe('responses', () => {
  test('the plugin sees :status first and x-envoy-upstream-service-time; the client gets server: envoy (HCM OVERWRITE), duplicates kept', async () => {
    handler = (_req, res) => {
      res.writeHead(201, [
        'Server',
        'origin/1',
        'Set-Cookie',
        'a=1',
        'Set-Cookie',
        'b=2',
        'Content-Type',
        'text/plain',
        'Content-Length',
        '2',
      ]);
      res.end('ok');
    };
    const r = await request(edge.url, '/');
    const h = lastStream().responseHeaders!;
    expect(h[0]).toEqual([':status', '201']);
    expect(names(h)).toEqual([
      ':status',
      'server',
      'set-cookie',
      'set-cookie',
      'content-type',
      'content-length',
      'date',
      'x-envoy-upstream-service-time',
    ]);
    expect(Number(h.find(([k]) => k === 'x-envoy-upstream-service-time')![1])).toBeGreaterThanOrEqual(0);
    expect([r.status, r.headers.server, r.headers['set-cookie'], r.body.toString()]).toEqual([
      201,
      'envoy',
      ['a=1', 'b=2'],
      'ok',
    ]);
    expect(r.headers['x-envoy-upstream-service-time']).toBeDefined();
  });

  test("the router's suppress_envoy_headers: true leaves out x-envoy-upstream-service-time and x-envoy-expected-rq-timeout-ms", async () => {
    const dir = tempDir('edge-suppress-');
    const yaml = (await fs.readFile(ENVOY_YAML, 'utf8'))
      .replace(
        '"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
        '"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router\n              suppress_envoy_headers: true',
      )
      .replace('build/edge.wasm', path.resolve('build/edge.wasm'));
    await fs.writeFile(path.join(dir, 'envoy.yaml'), yaml);
    const local = recordingFactory();
    const e = await startTestEdge(upstream.url, {
      config: path.join(dir, 'envoy.yaml'),
      createPlugin: withFactory(local),
    });
    try {
      handler = (req, res) => res.end(String(req.headers['x-envoy-expected-rq-timeout-ms']));
      const r = await request(e.url, '/');
      expect([r.body.toString(), r.headers['x-envoy-upstream-service-time'], r.headers.server]).toEqual([
        'undefined',
        undefined,
        'envoy',
      ]);
      await eventually(() => local.streams.every((x) => x.ends === 1));
      expect(names(local.streams[0]!.responseHeaders)).not.toContain('x-envoy-upstream-service-time');
      handler = (req, res) => res.end(String(req.headers['x-envoy-expected-rq-timeout-ms']));
      expect((await request(edge.url, '/')).body.toString()).toBe('15000');
    } finally {
      await e.close();
    }
  });

  test('response headers the plugin rewrote are what the client gets; a plugin reply at response time replaces the upstream answer', async () => {
    plugin.behaviour.responseHeaders = (h) => ({
      kind: 'continue',
      headers: [...h.filter(([k]) => k !== 'content-type'), ['content-type', 'application/x-edge'], ['x-edge', '1']],
    });
    const r = await request(edge.url, '/');
    expect([r.headers['content-type'], r.headers['x-edge']]).toEqual(['application/x-edge', '1']);
    plugin.behaviour.responseHeaders = () => ({
      kind: 'respond',
      response: { headers: [[':status', '451']], body: new Uint8Array(0), details: 'nope' },
    });
    const r2 = await request(edge.url, '/');
    expect([r2.status, r2.body.length]).toEqual([451, 0]);
  });

  test('a body the plugin buffers (PAUSE) reaches the client whole once the plugin continues at the end', async () => {
    const held: Uint8Array[] = [];
    plugin.behaviour.responseBody = (chunk, eos) => {
      held.push(chunk);
      if (!eos) return { kind: 'buffer' };
      return { kind: 'continue', data: new TextEncoder().encode(Buffer.concat(held).toString().toUpperCase()) };
    };
    handler = (_req, res) => {
      res.write('abc');
      setTimeout(() => res.end('def'), 20);
    };
    const r = await request(edge.url, '/');
    expect(r.body.toString()).toBe('ABCDEF');
    expect(
      lastStream()
        .calls.filter((c) => c.call === 'responseBody')
        .map((c) => c.eos),
    ).toEqual([false, false, true]);
  });

  test('HEAD, 304 and 204: headers only, the plugin told end_of_stream with the headers', async () => {
    handler = (req, res) => {
      if (req.url === '/304') {
        res.statusCode = 304;
        return res.end();
      }
      if (req.url === '/204') {
        res.statusCode = 204;
        return res.end();
      }
      res.setHeader('content-length', '5');
      res.end(req.method === 'HEAD' ? undefined : 'hello');
    };
    const head = await request(edge.url, '/x', { method: 'HEAD' });
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([200, '5', 0]);
    expect(lastStream().calls.find((c) => c.call === 'responseHeaders')!.eos).toBe(true);
    for (const code of [304, 204]) {
      const r = await request(edge.url, `/${code}`);
      expect([r.status, r.body.length]).toEqual([code, 0]);
      expect(lastStream().calls.map((c) => c.call)).toEqual(['requestHeaders', 'responseHeaders', 'end']);
    }
  });
});

describe('streaming', () => {
  test('a large response is not held: the client reads the first bytes while the upstream has not finished', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let upstreamDone = false;
    const chunk = Buffer.alloc(256 * 1024, 7);
    handler = (_req, res) => {
      res.setHeader('content-length', String(chunk.length * 9));
      res.write(chunk);
      // The rest only after the client has seen bytes: a proxy holding the body never gets there.
      void released.then(() => {
        for (let i = 0; i < 8; i++) res.write(chunk);
        res.end(() => (upstreamDone = true));
      });
    };
    const u = new URL(edge.url);
    const got = await new Promise<{ firstAt: boolean; total: number }>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error('no byte reached the client while the upstream was still sending: the edge holds the body')),
        5000,
      );
      const req = http.get({ host: u.hostname, port: u.port, path: '/big', agent: false }, (res) => {
        let total = 0;
        let firstAt: boolean | undefined;
        res.on('data', (c: Buffer) => {
          if (firstAt === undefined) {
            firstAt = !upstreamDone;
            clearTimeout(timer);
            release();
          }
          total += c.length;
        });
        res.on('end', () => resolve({ firstAt: firstAt!, total }));
      });
      req.on('error', reject);
    });
    expect(got).toEqual({ firstAt: true, total: chunk.length * 9 });
    // Streamed through the plugin chunk by chunk, the last one flagged end_of_stream.
    const bodies = lastStream().calls.filter((c) => c.call === 'responseBody');
    expect(bodies.length).toBeGreaterThan(2);
    expect(bodies.reduce((s, c) => s + c.bytes!, 0)).toBe(chunk.length * 9);
    expect(bodies.map((c) => c.eos)).toEqual([...bodies.slice(1).map(() => false), true]);
  });

  test('a request body streams to the upstream through the plugin (chunked and with Content-Length)', async () => {
    handler = (req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () =>
        res.end(
          `${req.headers['transfer-encoding'] ?? 'length ' + req.headers['content-length']}:${Buffer.concat(parts).toString()}`,
        ),
      );
    };
    const chunked = await request(edge.url, '/up', { method: 'POST', body: ['part1-', 'part2-', 'part3'] });
    expect(chunked.body.toString()).toBe('chunked:part1-part2-part3');
    const calls = lastStream().calls.filter((c) => c.call === 'requestBody' || c.call === 'requestHeaders');
    expect(calls[0]).toMatchObject({ call: 'requestHeaders', eos: false });
    expect(calls[calls.length - 1]!.eos).toBe(true);
    const sized = await request(edge.url, '/up', {
      method: 'PUT',
      body: Buffer.from('0123456789'),
      headers: { 'content-length': '10' },
    });
    expect(sized.body.toString()).toBe('length 10:0123456789');
    expect(
      lastStream()
        .calls.filter((c) => c.call === 'requestBody')
        .map((c) => [c.bytes, c.eos]),
    ).toEqual([[10, true]]);
  });

  test('a plugin reply during the request body stops the upload and answers the client', async () => {
    plugin.behaviour.requestBody = () => ({
      kind: 'respond',
      response: { headers: [[':status', '413']], body: new Uint8Array(0), details: 'too_big' },
    });
    handler = (req, res) => req.on('data', () => undefined).on('end', () => res.end('read'));
    const r = await request(edge.url, '/up', { method: 'POST', body: ['x'.repeat(1000), 'y'.repeat(1000)] });
    expect(r.status).toBe(413);
  });
});

describe('the upstream connection pool', () => {
  test('sequential requests from a keep-alive client reuse one upstream connection; concurrent ones open at most one each', async () => {
    const e = await startUpstream((_req, res) => res.end('pooled'));
    const local = recordingFactory();
    const edge2 = await startTestEdge(e.url, { createPlugin: withFactory(local) });
    const client = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 20; i++)
        expect((await request(edge2.url, `/seq/${i}`, { agent: client })).body.toString()).toBe('pooled');
      expect([e.connections, edge2.edge.stats.upstreamConnections, edge2.edge.stats.upstreamRequests]).toEqual([
        1, 1, 20,
      ]);
      const many = await Promise.all(Array.from({ length: 8 }, (_, i) => request(edge2.url, `/par/${i}`)));
      expect(many.every((r) => r.body.toString() === 'pooled')).toBe(true);
      expect(e.connections).toBeLessThanOrEqual(8);
      expect(e.connections).toBe(edge2.edge.stats.upstreamConnections);
      await eventually(() => local.streams.length === 28 && local.streams.every((s) => s.ends === 1));
    } finally {
      client.destroy();
      await edge2.close();
      await e.close();
    }
  });

  test('a pooled connection the origin drops as it is reused is replaced: the request is retried once on a new one', async () => {
    const seen = new WeakSet<object>();
    let dropped = 0;
    handler = (req, res) => {
      // A kept-alive connection seen before: close it without answering, as an origin whose
      // keep-alive timeout fired just as the request arrived.
      if (seen.has(req.socket) && dropped === 0) {
        dropped++;
        return void req.socket.destroy();
      }
      seen.add(req.socket);
      res.end('again');
    };
    expect((await request(edge.url, '/one')).body.toString()).toBe('again');
    const before = upstream.connections;
    expect((await request(edge.url, '/two')).body.toString()).toBe('again');
    expect([dropped, upstream.connections]).toEqual([1, before + 1]);
  });
});

describe('failures', () => {
  test("upstream down: 503 with Envoy's router text, through the plugin's response callbacks", async () => {
    const port = await closedPort();
    const local = recordingFactory();
    const e = await startTestEdge(`http://127.0.0.1:${port}`, { createPlugin: withFactory(local) });
    try {
      const r = await request(e.url, '/x.ism/Manifest');
      const text = r.body.toString();
      expect(r.status).toBe(503);
      expect(text).toBe(
        `${UPSTREAM_RESET_PREFIX}remote connection failure, transport failure reason: delayed connect error: 111`,
      );
      expect(text.startsWith('upstream connect error or disconnect/reset before headers. reset reason: ')).toBe(true);
      expect([r.headers['content-type'], r.headers['content-length'], r.headers.server]).toEqual([
        'text/plain',
        String(text.length),
        'envoy',
      ]);
      const head = await request(e.url, '/x.ism/Manifest', { method: 'HEAD' });
      expect([head.status, head.body.length]).toEqual([503, 0]);
      await eventually(() => local.streams.length === 2 && local.streams.every((s) => s.ends === 1));
      expect(local.streams[0]!.calls.map((c) => [c.call, c.eos])).toEqual([
        ['requestHeaders', true],
        ['responseHeaders', false],
        ['responseBody', true],
        ['end', undefined],
      ]);
      expect(local.streams[0]!.responseHeaders).toEqual([
        [':status', '503'],
        ['content-length', String(text.length)],
        ['content-type', 'text/plain'],
      ]);
      expect(e.logs.some((l) => l.includes('ECONNREFUSED'))).toBe(true);
    } finally {
      await e.close();
    }
  });

  test('the route timeout (here 0.3 s) answers 504 "upstream request timeout" when the origin sends nothing', async () => {
    const dir = tempDir('edge-timeout-');
    const yaml = (await fs.readFile(ENVOY_YAML, 'utf8'))
      .replace('timeout: 15s', 'timeout: 0.3s')
      .replace('build/edge.wasm', path.resolve('build/edge.wasm'));
    await fs.writeFile(path.join(dir, 'envoy.yaml'), yaml);
    const local = recordingFactory();
    const hanging = await startUpstream(() => undefined);
    const e = await startTestEdge(hanging.url, {
      config: path.join(dir, 'envoy.yaml'),
      createPlugin: withFactory(local),
    });
    try {
      const t0 = Date.now();
      const r = await request(e.url, '/slow');
      expect([r.status, r.body.toString()]).toEqual([504, 'upstream request timeout']);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
      await eventually(() => local.streams.every((s) => s.ends === 1));
    } finally {
      await e.close();
      await hanging.close();
    }
  });

  test('the origin resetting mid-body resets the client connection (no truncated 200 passed off as complete)', async () => {
    handler = (_req, res) => {
      res.setHeader('content-length', '1000');
      res.write('x'.repeat(100));
      setTimeout(() => res.socket?.destroy(), 30);
    };
    await expect(request(edge.url, '/cut')).rejects.toThrow(/aborted|socket hang up|ECONNRESET/);
  });

  test('a client that goes away aborts the upstream request, and its stream ends once', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    handler = (_req, res) => {
      res.write('first');
      res.on('close', () => upstreamClosed());
    };
    const u = new URL(edge.url);
    await new Promise<void>((resolve) => {
      const req = http.get({ host: u.hostname, port: u.port, path: '/endless', agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
    });
    await closed; // the upstream saw its response closed: the edge dropped the connection
    await eventually(() => lastStream().ends === 1);
    expect(edge.logs.some((l) => l.includes('/endless') && l.includes('(aborted)'))).toBe(true);
  });
});
