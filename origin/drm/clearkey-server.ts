// A W3C ClearKey license server for demos and tests, never for content that matters: it hands
// out content keys to anyone who asks (ClearKey has no license protection; W3C EME §9.1.3). It
// answers the CDM's license request (POST JSON `{"kids":["<base64url KID>"],"type":"temporary"}`,
// W3C EME §9.1.4) with the keys it holds for those KIDs (`{"keys":[{"kty":"oct","kid":…,"k":…}]}`,
// §9.1.5), with CORS so a player page on another port can call it. Off unless a demo or a test
// starts it, on its own port, loopback by default. Keys never reach its log lines.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ClearKeyServer {
  url: string;
  close(): Promise<void>;
  /** License requests answered (tests). */
  answered(): number;
}

const MAX_REQUEST_BYTES = 16 << 10;

const b64url = (bytes: Buffer): string => bytes.toString('base64url');

/** `keys`: content keys by KID, both 32 hexadecimal digits. */
export async function startClearKeyServer(opts: {
  keys: ReadonlyMap<string, string>;
  host?: string;
  port?: number;
  log?: (line: string) => void;
}): Promise<ClearKeyServer> {
  const keys = new Map<string, Buffer>();
  for (const [kid, key] of opts.keys) keys.set(b64url(Buffer.from(kid, 'hex')), Buffer.from(key, 'hex'));
  let answered = 0;
  const server = http.createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST, OPTIONS' }).end();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BYTES) {
        res.writeHead(413).end();
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      const reply = license(Buffer.concat(chunks), keys);
      if (typeof reply === 'string') {
        opts.log?.(`clearkey: 400 ${reply}`);
        res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${reply}\n`);
        return;
      }
      answered++;
      opts.log?.(`clearkey: ${reply.keys.length} of ${reply.asked} keys for ${req.socket.remoteAddress ?? '?'}`);
      const body = JSON.stringify({ keys: reply.keys, type: 'temporary' });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/license`,
    answered: () => answered,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The keys of a license request, or why it is not one. */
function license(
  body: Buffer,
  keys: ReadonlyMap<string, Buffer>,
): { keys: Array<{ kty: 'oct'; kid: string; k: string }>; asked: number } | string {
  let request: unknown;
  try {
    request = JSON.parse(body.toString('utf8'));
  } catch {
    return 'the body is not JSON (W3C EME §9.1.4: {"kids": [...], "type": ...})';
  }
  const kids = (request as { kids?: unknown }).kids;
  if (!Array.isArray(kids) || kids.length === 0 || kids.length > 64 || !kids.every((k) => typeof k === 'string')) {
    return '"kids" must be a non-empty array of base64url key ids';
  }
  const out = (kids as string[]).flatMap((kid) => {
    const key = keys.get(kid.replace(/=+$/, ''));
    return key === undefined ? [] : [{ kty: 'oct' as const, kid: kid.replace(/=+$/, ''), k: b64url(key) }];
  });
  return { keys: out, asked: kids.length };
}
