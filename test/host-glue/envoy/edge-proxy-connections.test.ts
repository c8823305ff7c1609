// The embedded edge's proxy mechanics against an upstream the tests control (set-up in
// edge-proxy-support.ts): streaming both ways, the keep-alive pool, upstream failures worded as
// Envoy's router words them, timeouts, aborts.

import * as http from 'node:http';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { UPSTREAM_RESET_PREFIX } from '../../../host-glue/envoy/upstream-failure';
import { tempDir } from '../../helpers/fixtures';
import {
  closedPort,
  ENVOY_YAML,
  eventually,
  recordingFactory,
  request,
  startTestEdge,
  startUpstream,
  withFactory,
} from './edge-helpers';
import { edge, Handler, lastStream, plugin, setUpProxyEdge, upstream } from './edge-proxy-support';

/** What the current test's upstream does. */
let handler: Handler;
setUpProxyEdge(
  (req, res) => handler(req, res),
  (h) => (handler = h),
);

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
