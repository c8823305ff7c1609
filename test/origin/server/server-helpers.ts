// A real origin on loopback over a temp root holding packaged fixture presentations.

import * as http from 'node:http';
import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import { RunningServer, ServerOptions, startServer } from '../../../origin/server/server';
import { wasmTrackSelector } from '../../../origin/server/select';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';

export interface TestOrigin {
  root: string;
  server: RunningServer;
  url: string;
  logs: string[];
}

/** Packages `presentations` (name → fixture files) under a temp root and serves it. */
export async function startTestOrigin(
  presentations: Record<string, readonly string[]>,
  extra: Record<string, string[]> = {},
): Promise<TestOrigin> {
  const root = tempDir('origin-root-');
  for (const [name, files] of Object.entries(presentations)) {
    const target = path.join(root, `${name}.ism`);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const r = await runOrigin(['package', '-q', '-o', target, ...(extra[name] ?? []), ...files.map(media)]);
    if (r.code !== 0) throw new Error(`packaging ${name} failed: ${r.stderr}`);
  }
  const logs: string[] = [];
  const server = await startServer(testServerOptions(root, logs));
  return { root, server, url: server.url, logs };
}

/** The options the test origins are served with: loopback, a free port, log lines into `logs`. */
export function testServerOptions(root: string, logs: string[]): ServerOptions {
  return {
    root,
    host: '127.0.0.1',
    port: 0,
    manifestCacheControl: 'public, max-age=60',
    segmentCacheControl: 'public, max-age=86400',
    select: wasmTrackSelector,
    playerPage: true,
    log: (l) => logs.push(l),
  };
}

export interface Fetched {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/** A raw GET (no URL normalisation: tests send `..` and `%2F` exactly as written). */
export function get(
  base: string,
  rawPath: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Fetched> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: rawPath, method, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
