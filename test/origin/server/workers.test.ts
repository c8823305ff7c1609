// `origin serve --workers N`: N processes behind one port (node:cluster), a dead worker replaced,
// a clean stop on SIGTERM. Runs the built CLI (cli-origin.ts). Which process holds a connection
// is read from /proc (Linux): the server adds nothing to its answers for the test's sake. Signals,
// drain and restarts with backoff: lifecycle.test.ts.

import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import * as http from 'node:http';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { childrenOf, linux, startCli, stopCli, waitFor } from './cli-origin';
import { get, startTestOrigin, TestOrigin } from './server-helpers';

const maybe = linux ? test : test.skip;

let origin: TestOrigin;
beforeAll(async () => {
  // Only for its packaged root: the workers serve the same directory.
  origin = await startTestOrigin({ p: ['video_baseline_400k.ismv', 'audio_eng_64k.isma'] });
});
afterAll(async () => {
  await origin.server.close();
});

/** Inodes of established TCP sockets whose local port is `port` (/proc/net/tcp, state 01). */
function establishedInodes(port: number): Set<string> {
  const out = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const localPort = parseInt(f[1]!.split(':').pop()!, 16);
      if (localPort === port && f[3] === '01') out.add(f[9]!);
    }
  }
  return out;
}

/** How many of those sockets each process holds. */
function connectionsOf(pid: number, inodes: Set<string>): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m !== null && inodes.has(m[1]!)) n++;
    } catch {
      // the fd closed meanwhile
    }
  }
  return n;
}

test('--workers and --manifest-cache-bytes parse; the default is the CPU count', () => {
  expect(parseServeArgs(['--root', 'x', '--workers', '3']).workers).toBe(3);
  expect(parseServeArgs(['--root', 'x', '--manifest-cache-bytes', '0']).manifestCacheBytes).toBe(0);
  expect(parseServeArgs(['--root', 'x']).workers).toBeGreaterThanOrEqual(1);
  expect(() => parseServeArgs(['--root', 'x', '--workers', '0'])).toThrow(/--workers/);
  expect(() => parseServeArgs(['--root', 'x', '--workers', 'two'])).toThrow(/--workers/);
  expect(() => parseServeArgs(['--root', 'x', '--manifest-cache-bytes', '-1'])).toThrow(/--manifest-cache-bytes/);
});

maybe(
  '--workers 2 answers on one port from 2 processes, replaces a dead worker and stops on SIGTERM',
  async () => {
    const cli = await startCli(['--root', origin.root, '--port', '0', '--workers', '2', '-q', '--no-player']);
    try {
      const primary = cli.child.pid!;
      const workers = childrenOf(primary);
      expect(workers).toHaveLength(2);
      // Four keep-alive connections, each used once and held open: round-robin gives each worker some.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
      const answers = await Promise.all(
        Array.from(
          { length: 4 },
          () =>
            new Promise<number>((resolve, reject) => {
              http
                .get(`${cli.url}/p.ism/.mpd`, { agent }, (res) => {
                  res.resume();
                  res.on('end', () => resolve(res.statusCode ?? 0));
                })
                .on('error', reject);
            }),
        ),
      );
      expect(answers).toEqual([200, 200, 200, 200]);
      const inodes = establishedInodes(Number(new URL(cli.url).port));
      const held = workers.map((w) => connectionsOf(w, inodes));
      agent.destroy();
      expect(held.every((n) => n > 0)).toBe(true);
      expect(held.reduce((a, b) => a + b, 0)).toBe(4);

      // A worker that dies is replaced, with a log line, and the port keeps answering.
      process.kill(workers[0]!, 'SIGKILL');
      await waitFor(() => childrenOf(primary).length === 2 && !childrenOf(primary).includes(workers[0]!));
      expect(cli.stderr()).toContain(`worker ${workers[0]} died (SIGKILL); starting another`);
      expect((await get(cli.url, '/p.ism/Manifest')).status).toBe(200);
    } finally {
      const code = await stopCli(cli);
      expect(code).toBe(0);
    }
  },
  30_000,
);
