// Debian's nginx serving a directory on loopback: the HTTP storage of the remote-storage tests
// (`proxy_pass`). Range requests, strong ETags and Last-Modified are nginx's own (its static
// module); nothing here imitates a storage. .ci/run installs the package.

import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { tempDir } from './fixtures';

export const NGINX = '/usr/sbin/nginx';

export const haveNginx = existsSync(NGINX);

export interface Nginx {
  /** Base URL of the served directory: `http://127.0.0.1:<port>/media/`. */
  url: string;
  port: number;
  /** Stops it (SIGQUIT: in-flight responses finish), resolves once it exited. */
  stop(): Promise<void>;
  /** Kills it at once. */
  kill(): Promise<void>;
  /** The access log so far (one line per request: method, URI, status, Range, If-Match). */
  accessLog(): string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts nginx serving `dir` under /media/ on `port` (a free one when 0). */
export async function startNginx(dir: string, port = 0): Promise<Nginx> {
  const prefix = tempDir('origin-nginx-');
  const listen = port === 0 ? await freePort() : port;
  const conf = path.join(prefix, 'nginx.conf');
  const log = path.join(prefix, 'access.log');
  writeFileSync(
    conf,
    `daemon off;
master_process off;
worker_processes 1;
pid ${path.join(prefix, 'nginx.pid')};
error_log ${path.join(prefix, 'error.log')} warn;
events { worker_connections 1024; }
http {
  types { application/octet-stream ism ismv isma ismt; }
  log_format storage '$request_method $uri $status "$http_range" "$http_if_match" $connection';
  access_log ${log} storage;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:${listen};
    location /media/ { alias ${dir.endsWith('/') ? dir : dir + '/'}; }
  }
}
`,
  );
  const child: ChildProcess = spawn(NGINX, ['-p', prefix, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitListening(listen, () => err, child);
  return {
    url: `http://127.0.0.1:${listen}/media/`,
    port: listen,
    stop: async () => {
      child.kill('SIGQUIT');
      await exited;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    accessLog: () => (existsSync(log) ? readFileSync(log, 'utf8') : ''),
  };
}

async function waitListening(port: number, err: () => string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${err()}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`nginx did not listen on ${port}: ${err()}`);
}
