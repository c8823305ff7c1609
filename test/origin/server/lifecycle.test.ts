// Signals and the life of `origin serve`'s processes (origin/server/drain.ts,
// origin/cli/serve-cluster.ts), through the built CLI: SIGTERM lets a slow response in flight
// finish, answers what a kept-alive connection sent after it with `Connection: close`, refuses new
// connections and exits; past --drain-seconds it exits anyway; workers do not outlive a primary
// killed with SIGKILL; dead workers are replaced after growing delays and a crash loop is reported.

import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { parseExposition, valueOf } from '../../helpers/prometheus';
import { alive, childrenOf, exited, linux, startCli, stopCli, waitFor } from './cli-origin';
import { get, startTestOrigin, TestOrigin } from './server-helpers';

const maybe = linux ? test : test.skip;
/** A static file too big for the socket buffers: its response stays in flight while the client does not read. */
const BIG = 48 << 20;

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin({ p: ['video_baseline_400k.ismv', 'audio_eng_64k.isma'] });
  const big = Buffer.alloc(BIG);
  for (let i = 0; i < BIG; i += 4096) big.writeUInt32BE(i, i);
  await fs.writeFile(path.join(origin.root, 'big.bin'), big);
}, 60_000);
afterAll(() => origin?.server.close());

const serveArgs = (...extra: string[]): string[] => [
  '--root',
  origin.root,
  '--port',
  '0',
  '--warm-up-rounds',
  '0',
  '--log-format',
  'json',
  ...extra,
];

test('--drain-seconds, --log-format, --log-level and --no-metrics parse; bad values are usage errors', () => {
  const a = parseServeArgs([
    '--root',
    'x',
    '--drain-seconds',
    '3',
    '--log-format',
    'json',
    '--log-level',
    'debug',
    '--no-metrics',
  ]);
  expect([a.drainSeconds, a.logFormat, a.logLevel, a.metrics]).toEqual([3, 'json', 'debug', false]);
  expect(parseServeArgs(['--root', 'x']).drainSeconds).toBeUndefined();
  expect(() => parseServeArgs(['--root', 'x', '--drain-seconds', '-1'])).toThrow(/--drain-seconds/);
  expect(() => parseServeArgs(['--root', 'x', '--drain-seconds', '3601'])).toThrow(/--drain-seconds/);
  expect(() => parseServeArgs(['--root', 'x', '--log-format', 'xml'])).toThrow(/--log-format must be json or human/);
  expect(() => parseServeArgs(['--root', 'x', '--log-level', 'loud'])).toThrow(/--log-level must be one of/);
});

/** Raw HTTP/1.1 on one connection: requests written at once (pipelined), everything read kept. */
function pipelined(url: string, paths: string[]): { socket: net.Socket; received: () => Buffer; ended: Promise<void> } {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), u.hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
  return { socket, received: () => Buffer.concat(chunks), ended };
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Responses with Content-Length, one after the other. */
function parseResponses(bytes: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error('incomplete head');
    const [statusLine, ...lines] = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers['content-length']);
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: bytes.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

function connects(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

maybe(
  'SIGTERM: the response in flight finishes, what its connection sends next gets Connection: close, new connections are refused',
  async () => {
    const cli = await startCli(serveArgs('--workers', '1', '--drain-seconds', '20'));
    const c = pipelined(cli.url, ['/big.bin']);
    await waitFor(() => c.received().length > 0);
    c.socket.pause(); // a slow client: the server's writes back up
    await new Promise((r) => setTimeout(r, 200));
    const sent = Date.now();
    const code = exited(cli.child);
    cli.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    expect(alive(cli.child.pid!)).toBe(true); // draining, not gone
    expect(await connects(cli.url)).toBe(false);
    // A request on the busy kept-alive connection, sent after SIGTERM: answered after the file.
    c.socket.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
    c.socket.resume();
    await c.ended; // the server closes the connection after that answer
    const [big, ready, ...rest] = parseResponses(c.received());
    expect(rest).toEqual([]);
    expect([big!.status, big!.body.length, big!.headers.connection]).toEqual([200, BIG, 'keep-alive']);
    expect(big!.body.readUInt32BE(BIG - 4096)).toBe(BIG - 4096);
    expect([ready!.status, ready!.headers.connection, JSON.parse(ready!.body.toString())]).toEqual([
      503,
      'close',
      { ready: false, warmUp: 'done', draining: true, storage: 'not checked' },
    ]);
    expect(await code).toBe(0);
    expect(Date.now() - sent).toBeLessThan(15_000);
    const lines = cli.jsonLines();
    expect(lines.some((l) => String(l.msg).startsWith('origin: draining'))).toBe(true);
    expect(lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]); // nothing was cut off
  },
  60_000,
);

maybe(
  'past --drain-seconds, a response whose client does not read is cut off and the process exits',
  async () => {
    const cli = await startCli(serveArgs('--workers', '1', '--drain-seconds', '1'));
    const c = pipelined(cli.url, ['/big.bin']);
    await waitFor(() => c.received().length > 0);
    c.socket.pause();
    const sent = Date.now();
    expect(await stopCli(cli)).toBe(0);
    const took = Date.now() - sent;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(5000);
    c.socket.resume(); // the end of the stream is seen once what came before it is read
    await c.ended;
    expect(c.received().length).toBeLessThan(BIG);
    const lines = cli.jsonLines();
    expect(lines.some((l) => l.level === 'warn' && /cut off/.test(String(l.msg)))).toBe(true);
    expect(lines.find((l) => l.msg === 'request')).toMatchObject({
      url: '/big.bin',
      status: 200,
      aborted: true,
      bytes: 0,
    });
    expect(lines.filter((l) => l.level === 'error')).toEqual([]); // a client cut off is no server error
  },
  30_000,
);

maybe(
  'workers: SIGTERM drains each (a slow download finishes) and the primary exits 0; a primary killed with SIGKILL leaves no worker behind',
  async () => {
    const calm = await startCli(serveArgs('--workers', '2', '--drain-seconds', '20'));
    const calmWorkers = childrenOf(calm.child.pid!);
    expect(calmWorkers).toHaveLength(2);
    expect((await get(calm.url, '/p.ism/.mpd')).status).toBe(200);
    // A slow download through one of the workers finishes during the stop, with SIGTERM sent to
    // every process, as a terminal's Ctrl-C or systemd's control-group stop does (the primary's
    // own SIGTERM to the workers follows: a second signal a draining worker must not die of).
    const c = pipelined(calm.url, ['/big.bin']);
    await waitFor(() => c.received().length > 0);
    c.socket.pause();
    const stopped = stopCli(calm);
    for (const w of calmWorkers) process.kill(w, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    expect(alive(calm.child.pid!)).toBe(true);
    c.socket.resume();
    expect(await stopped).toBe(0);
    await c.ended;
    const [big] = parseResponses(c.received());
    expect([big!.status, big!.body.length]).toEqual([200, BIG]);
    expect(calmWorkers.filter(alive)).toEqual([]);

    const cli = await startCli(serveArgs('--workers', '2'));
    const workers = childrenOf(cli.child.pid!);
    expect(workers).toHaveLength(2);
    const gone = exited(cli.child);
    cli.child.kill('SIGKILL');
    await gone;
    const killed = Date.now();
    await waitFor(() => workers.every((w) => !alive(w)), 5000);
    expect(Date.now() - killed).toBeLessThan(5000);
  },
  60_000,
);

maybe(
  'a dead worker is replaced after a delay that doubles with each death close to the others; five are a crash loop',
  async () => {
    const cli = await startCli(serveArgs('--workers', '2', '-q'));
    try {
      const primary = cli.child.pid!;
      const listening = (pid: number): boolean =>
        cli.jsonLines().some((l) => l.msg === `origin: worker ${pid} listening`);
      for (let death = 1; death <= 5; death++) {
        const [victim, other] = childrenOf(primary);
        process.kill(victim!, 'SIGKILL');
        // Its replacement is up once the primary says it listens.
        await waitFor(() => {
          const now = childrenOf(primary);
          return now.length === 2 && !now.includes(victim!) && now.includes(other!) && now.every(listening);
        }, 20_000);
      }
      const deaths = cli.jsonLines().filter((l) => / died \(SIGKILL\); starting another in /.test(String(l.msg)));
      expect(deaths.map((l) => Number(/in (\d+) ms/.exec(String(l.msg))![1]))).toEqual([100, 200, 400, 800, 1600]);
      expect(deaths.map((l) => l.level)).toEqual(['warn', 'warn', 'warn', 'warn', 'error']);
      expect(String(deaths[4]!.msg)).toContain('crash loop: 5 deaths within a minute');
      // Every worker still answers, and /metrics says what happened.
      const e = parseExposition((await get(cli.url, '/metrics')).text);
      expect(valueOf(e, 'origin_workers')).toBe(2);
      expect(valueOf(e, 'origin_worker_restarts_total')).toBe(5);
      expect(valueOf(e, 'origin_worker_crash_loop')).toBe(1);
      expect((await get(cli.url, '/p.ism/.mpd')).status).toBe(200);
    } finally {
      expect(await stopCli(cli)).toBe(0);
    }
  },
  90_000,
);
