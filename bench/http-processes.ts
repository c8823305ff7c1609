// The HTTP bench's processes: the origin (`origin serve`, or another build's, BENCH_ORIGIN_CLI),
// the references (a node:http server with a fixed body, nginx serving static copies), pinned to
// CPUs with taskset where there are two or more, and the RSS of a process and its workers.

import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fetchUrl } from './http-urls';
import { childrenOf } from './procfs';
import { repoRoot } from './media';

export const CPUS = os.availableParallelism();
export const PIN = CPUS >= 2 && spawnSync('taskset', ['-V']).status === 0;
/** CPU sets: the servers on the last CPU, wrk on the first (one-process runs). */
export const SERVER_CPU = String(CPUS - 1);
export const LOAD_CPU = '0';

// ---------------------------------------------------------------------------------------------
// processes

export interface Proc {
  child: ChildProcess;
  url: string;
  pid: number;
}

export function pinned(cpus: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return PIN && cpus !== undefined ? ['taskset', ['-c', cpus, cmd, ...args]] : [cmd, args];
}

/** Starts a process and waits for the first `http://host:port` it prints on stdout. */
export function startPrinting(
  cpus: string | undefined,
  cmd: string,
  args: string[],
  pattern = /(http:\/\/[\d.]+:\d+)/,
): Promise<Proc> {
  const [c, a] = pinned(cpus, cmd, args);
  const child = spawn(c, a, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) =>
      reject(new Error(`${cmd} ${args.join(' ')} exited (${code}) before listening: ${err}`)),
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m !== null && out.includes('\n')) {
        child.removeAllListeners('exit');
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ child, url: m[1]!, pid: child.pid! });
      }
    });
  });
}

export function stop(p: Proc | undefined): Promise<void> {
  if (p === undefined || p.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.child.once('exit', () => resolve());
    p.child.kill('SIGTERM');
  });
}

export function originCliPath(): string {
  return process.env['BENCH_ORIGIN_CLI'] ?? path.join(repoRoot(), 'bin', 'origin.js');
}

/** `origin serve` on `root` at a free port: this build's CLI, or another build's `cli`. */
export function startOrigin(root: string, workers: number, extra: string[] = [], cli = originCliPath()): Promise<Proc> {
  const args = [
    cli,
    'serve',
    '--root',
    root,
    '--port',
    '0',
    '--no-player',
    '-q',
    // Always named: `origin serve` defaults to one worker per CPU (two here), not one.
    '--workers',
    String(workers),
    ...extra,
  ];
  return startPrinting(workers > 1 ? undefined : SERVER_CPU, process.execPath, args);
}

/** RSS in bytes of a process and, for a cluster primary, of its workers. */
export function rssOf(pid: number): { pid: number; rss: number }[] {
  const one = (p: number): number => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m === null ? 0 : Number(m[1]) * 1024;
    } catch {
      return 0;
    }
  };
  // Through taskset the pid is exec'd in place, so the child pid is node's.
  return [pid, ...childrenOf(pid)].map((p) => ({ pid: p, rss: one(p) }));
}

/** Clock ticks a second of /proc/<pid>/stat's utime and stime (sysconf(_SC_CLK_TCK); 100 on Linux). */
export const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/**
 * CPU seconds (user + system, proc(5) /proc/<pid>/stat fields 14 and 15) a process and its
 * children (nginx's worker, a cluster's workers) have used so far; a process gone counts 0.
 */
export function cpuSecondsOf(pid: number): number {
  const one = (p: number): number => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may hold spaces.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
    } catch {
      return 0;
    }
  };
  return rssOf(pid).reduce((s, x) => s + one(x.pid), 0);
}

// ---------------------------------------------------------------------------------------------
// references

const NODE_REFERENCE = `
const http = require('node:http');
const body = Buffer.alloc(Number(process.argv[1]), 0x61);
http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
  res.end(body);
}).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port); });
`;

export function startNodeReference(bytes: number): Promise<Proc> {
  return startPrinting(SERVER_CPU, process.execPath, ['-e', NODE_REFERENCE, String(bytes)]);
}

export async function startNginx(root: string, workers: number, dir: string): Promise<Proc> {
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes ${workers};\n${workers === 1 && PIN ? `worker_cpu_affinity ${'1'.padEnd(CPUS, '0').split('').reverse().join('')};\n` : ''}daemon off;\nmaster_process on;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\n` +
      `events { worker_connections 4096; }\nhttp {\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n  keepalive_requests 10000000;\n  keepalive_timeout 65;\n` +
      `  client_body_temp_path ${dir}/tmp; proxy_temp_path ${dir}/tmp; fastcgi_temp_path ${dir}/tmp; uwsgi_temp_path ${dir}/tmp; scgi_temp_path ${dir}/tmp;\n` +
      `  default_type application/octet-stream;\n  server { listen 127.0.0.1:${port}; root ${root}; }\n}\n`,
  );
  mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  const child = spawn('nginx', ['-c', conf, '-e', `${dir}/error.log`], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.once('error', () => undefined);
  for (let i = 0; i < 100; i++) {
    await sleep(50);
    if (child.exitCode !== null)
      throw new Error(`nginx exited (${child.exitCode}); install it: apt-get install -y nginx`);
    const ok = await fetchUrl(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (ok) return { child, url: `http://127.0.0.1:${port}`, pid: child.pid! };
  }
  throw new Error('nginx did not start');
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
