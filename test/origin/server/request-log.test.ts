// The log of a real origin on loopback (origin/ops/log.ts, origin/server/observe.ts): JSON lines
// that parse and carry the request's fields, the human lines as they always were, levels, and no
// credential in any line: a player page's content keys, a token parameter, an auth_token path, an
// Authorization header. Keys of a server manifest at debug level, through the CLI and its workers:
// cluster-metrics.test.ts. /readyz when storage is gone.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { startServer } from '../../../origin/server/server';
import { humanLogger, jsonLogger, LogLevel } from '../../../origin/ops/log';
import { get, startTestOrigin, testServerOptions, TestOrigin } from './server-helpers';
import { tempDir } from '../../helpers/fixtures';

const KID = '00112233445566778899aabbccddeeff';
const KEY = 'aa00112233445566778899aabbccddee';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin({ p: ['video_baseline_400k.ismv', 'audio_eng_64k.isma'] });
  await fs.writeFile(
    path.join(origin.root, 'broken.ism'),
    '<smil><body><switch><video src="x.ismv"/></switch></body></smil>',
  );
}, 60_000);

afterAll(() => origin?.server.close());

class Lines extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
  get json(): Array<Record<string, unknown>> {
    return this.text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

/** A server over the test root logging JSON at `level` into a buffer. */
async function jsonOrigin(level: LogLevel, requests = true) {
  const out = new Lines();
  const server = await startServer({
    ...testServerOptions(origin.root, []),
    log: undefined,
    logger: jsonLogger(out, { level, requests }),
  });
  return { server, out };
}

/** Waits until `n` request lines are in: a line is written when its response has closed. */
async function requestLines(out: Lines, n: number): Promise<Array<Record<string, unknown>>> {
  const until = Date.now() + 5000;
  for (;;) {
    const lines = out.json.filter((l) => l.msg === 'request');
    if (lines.length >= n || Date.now() > until) return lines;
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('JSON request lines carry id, kind, presentation, status, bytes, duration and cache outcome', async () => {
  const { server, out } = await jsonOrigin('info');
  try {
    const u = server.url;
    const first = await get(u, '/p.ism/.mpd', { 'x-request-id': 'envoy-id-1' });
    await get(u, '/p.ism/.mpd'); // the hot path
    // One view, two spellings (test/origin/server/caches.test.ts): rendered once.
    await get(u, '/p.ism/.mpd?filter=type%3D%3D%22video%22&suppress_query_parameters=true');
    await get(u, '/p.ism/.mpd?filter=%28type%3D%3D%22video%22%29&suppress_query_parameters=true');
    await get(u, '/nothing.ism/.mpd', { 'x-request-id': 'has space' });
    await get(u, '/broken.ism/.mpd');
    const lines = await requestLines(out, 6);
    expect(lines).toHaveLength(6);
    for (const l of lines) {
      expect(l.level).toBe('info');
      expect(typeof l.time).toBe('string');
      expect(Number.isNaN(Date.parse(l.time as string))).toBe(false);
      expect(l.pid).toBe(process.pid);
      expect(typeof l.durationMs).toBe('number');
      expect(l.method).toBe('GET');
    }
    const [a, b, spelt, c, d, e] = lines as [Record<string, unknown>, ...Array<Record<string, unknown>>];
    expect(spelt).toMatchObject({ kind: 'dash-mpd', status: 200, cache: 'miss' });
    expect(a).toMatchObject({
      requestId: 'envoy-id-1',
      url: '/p.ism/.mpd',
      kind: 'dash-mpd',
      presentation: '/p.ism',
      status: 200,
      bytes: first.body.byteLength,
      cache: 'miss',
    });
    expect(b).toMatchObject({ kind: 'dash-mpd', status: 200, cache: 'hit', bytes: first.body.byteLength });
    expect(b!.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(c).toMatchObject({ kind: 'dash-mpd', status: 200, cache: 'view-hit' });
    // An id that is not one token is replaced by one of ours.
    expect(d).toMatchObject({
      kind: 'dash-mpd',
      status: 404,
      error: 'unknown-presentation',
      presentation: '/nothing.ism',
    });
    expect(d!.requestId).not.toBe('has space');
    expect(e).toMatchObject({ status: 500, error: 'corrupt-media' });
    // The cause of a 500 is logged at error level, with its stack.
    const failure = out.json.find((l) => l.level === 'error');
    expect(failure).toMatchObject({ msg: 'error 500' });
    expect(String(failure!.err)).toMatch(/OriginError.*\n\s+at /);
  } finally {
    await server.close();
  }
});

test('no credential in any line: keys in a query, tokens in the path or query, Authorization', async () => {
  const { server, out } = await jsonOrigin('debug');
  try {
    const u = server.url;
    const token = `/token/${'0123456789abcdef'.repeat(2)}/65f1c2a0`;
    const requests = [
      `/play?player=shaka&url=%2Fp.ism%2F.mpd&clearkeys=${KID}:${KEY}`,
      `/p.ism/.mpd?token=${KEY}&Signature=${KEY}&hls_fmp4=true&${KEY}`,
      `${token}/p.ism/.mpd`,
      `/p.ism/.mpd?drm_a_key=${KID}:${KEY}`,
      `/p.ism/.mpd?${KEY}=1`,
    ];
    for (const p of requests) await get(u, p, { authorization: `Bearer ${KEY}`, cookie: `s=${KEY}` });
    const lines = await requestLines(out, requests.length);
    expect(lines).toHaveLength(requests.length);
    expect(out.text).not.toContain(KEY);
    expect(out.text).not.toContain(KEY.toUpperCase());
    expect(out.text).not.toContain('0123456789abcdef');
    expect(lines.map((l) => l.url)).toEqual([
      '/play?player=[redacted]&url=[redacted]&clearkeys=[redacted]',
      '/p.ism/.mpd?token=[redacted]&Signature=[redacted]&hls_fmp4=true&[redacted]',
      '/token/[redacted]/p.ism/.mpd',
      '/p.ism/.mpd?drm_a_key=[redacted]',
      '/p.ism/.mpd?[redacted]',
    ]);
    // Debug lines add the peer, the User-Agent and Range, and no other header.
    expect(lines[0]).toHaveProperty('remote', '127.0.0.1');
    for (const l of lines) expect(Object.keys(l)).not.toContain('authorization');
    expect(out.json.some((l) => l.level === 'debug' && String(l.msg).startsWith('loaded '))).toBe(true);
  } finally {
    await server.close();
  }
});

test('levels: warn drops the request lines; requests off keeps the errors', async () => {
  for (const [level, requests] of [
    ['warn', true],
    ['info', false],
  ] as const) {
    const { server, out } = await jsonOrigin(level, requests);
    try {
      await get(server.url, '/p.ism/.mpd');
      await get(server.url, '/broken.ism/.mpd');
      await new Promise((r) => setTimeout(r, 100));
      expect(out.json.filter((l) => l.msg === 'request')).toEqual([]);
      expect(out.json.filter((l) => l.level === 'error')).toHaveLength(1);
    } finally {
      await server.close();
    }
  }
});

test('the human format: the request line as it always was, the URL redacted the same way', async () => {
  const lines: string[] = [];
  const server = await startServer({
    ...testServerOptions(origin.root, []),
    log: undefined,
    logger: humanLogger((l) => lines.push(l)),
  });
  try {
    await get(server.url, `/p.ism/.mpd?token=${KEY}`);
    await get(server.url, '/p.ism/.mpd', {}, 'HEAD');
    const until = Date.now() + 5000;
    while (lines.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(lines[0]).toMatch(/^GET \/p\.ism\/\.mpd\?token=\[redacted\] 200 \d+\.\d ms$/);
    expect(lines[1]).toMatch(/^HEAD \/p\.ism\/\.mpd 200 \d+\.\d ms$/);
  } finally {
    await server.close();
  }
});

test('/readyz: 503 when the root cannot be listed, 200 again when it can; /healthz stays 200', async () => {
  const root = tempDir('readyz-');
  const server = await startServer({ ...testServerOptions(root, []), log: undefined });
  try {
    expect((await get(server.url, '/readyz')).status).toBe(200);
    await fs.rm(root, { recursive: true });
    const gone = await get(server.url, '/readyz');
    expect([gone.status, JSON.parse(gone.text)]).toEqual([
      503,
      { ready: false, warmUp: 'done', draining: false, storage: 'ENOENT' },
    ]);
    expect((await get(server.url, '/healthz')).status).toBe(200);
    await fs.mkdir(root);
    expect((await get(server.url, '/readyz')).status).toBe(200);
  } finally {
    await server.close();
  }
});
