// The embedded edge's proxy mechanics against an upstream the tests control (set-up in
// edge-proxy-support.ts): the header maps the plugin sees (Envoy's, docs/specs.md ABI §3.4),
// routing on the headers it let through, local replies, and the responses the plugin and the
// client get.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../helpers/fixtures';
import { ENVOY_YAML, eventually, recordingFactory, request, startTestEdge, withFactory } from './edge-helpers';
import { edge, Handler, lastStream, names, plugin, setUpProxyEdge, upstream } from './edge-proxy-support';

/** What the current test's upstream does. */
let handler: Handler;
setUpProxyEdge(
  (req, res) => handler(req, res),
  (h) => (handler = h),
);

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
