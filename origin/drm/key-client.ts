// Key acquisition, the I/O part: POSTs the signed request that origin/drm/key-request.ts builds
// and gives the answer back to it to be read. One request, no retry, no redirect followed (a 3xx
// is an HTTP status like any other), a deadline for the whole exchange and a cap on the answer's
// size. Messages name the key server without user info or query (either may hold a credential).

import * as http from 'node:http';
import * as https from 'node:https';
import { AcquiredKey, KeyRequest, keyRequestBody, parseKeyAnswer } from './key-request';
import { KeyServerError, keyServerError } from './key-server-error';

export interface KeyServer {
  /** http:// or https:// URL the request is POSTed to. */
  url: string;
  /** Deadline for connecting, sending and reading the whole answer, in milliseconds. */
  timeoutMs: number;
}

/** An answer is a few KiB (one track, its pssh); more is not a key server answering us. */
export const MAX_ANSWER_BYTES = 1 << 20;

/** Asks `server` for the key pair of `request`; every failure is a KeyServerError naming the server. */
export async function acquireKey(server: KeyServer, request: KeyRequest): Promise<AcquiredKey> {
  try {
    const answer = await post(server, keyRequestBody(request));
    if (answer.status !== 200) {
      const reason = http.STATUS_CODES[answer.status];
      throw keyServerError('http-status', `answered HTTP ${answer.status}${reason ? ` ${reason}` : ''}, not 200`);
    }
    return parseKeyAnswer(answer.body, request.trackType);
  } catch (e) {
    if (e instanceof KeyServerError) throw e.at(shownUrl(server.url));
    throw e;
  }
}

/** The URL as messages show it: scheme, host, port and path. */
export function shownUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

interface Answer {
  status: number;
  body: Buffer;
}

function post(server: KeyServer, body: string): Promise<Answer> {
  const url = new URL(server.url);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (e: KeyServerError): void => {
      settle(() => reject(e));
      req.destroy();
    };
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = transport.request(url, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = Number(res.headers['content-length'] ?? 0);
      const tooLarge = (): void =>
        fail(keyServerError('malformed', `malformed answer: larger than ${MAX_ANSWER_BYTES} bytes`));
      if (size > MAX_ANSWER_BYTES) return tooLarge();
      size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) tooLarge();
        else chunks.push(c);
      });
      res.on('end', () => settle(() => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) })));
      res.on('error', (e: NodeJS.ErrnoException) =>
        fail(keyServerError('unreachable', `the connection broke before the whole answer (${e.code ?? 'aborted'})`)),
      );
    });
    const timer = setTimeout(
      () => fail(keyServerError('timeout', `no answer within ${server.timeoutMs / 1000} s (--key_server_timeout)`)),
      server.timeoutMs,
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      const code = e.code ?? 'connection failed';
      // A certificate the default CAs do not trust is told apart from no connection at all.
      fail(
        keyServerError('unreachable', /CERT|TLS|SSL/.test(code) ? `TLS failed (${code})` : `cannot reach it (${code})`),
      );
    });
    req.end(body);
  });
}
