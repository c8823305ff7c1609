// One HTTP request with the path exactly as written (no URL normalisation, so `..`, `%2e%2e` and
// NUL reach the server), for the edge and hardening tests: headers as given (an array keeps
// duplicates and order), a body whole or chunk by chunk, and an optional bound on the answer's
// time (a hang is then a failure, not a stuck test).

import * as http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string> | string[];
  /** A string array is sent chunked, each string written separately. */
  body?: Buffer | string[];
  agent?: http.Agent;
  /** The answer must be complete within this; unset: no bound. */
  timeoutMs?: number;
}

/** GET (or `method`) of a raw path; rejects on a reset, a malformed answer or the time bound. */
export function rawRequest(base: string, rawPath: string, o: RawRequestOptions = {}): Promise<RawAnswer> {
  const u = new URL(base);
  const method = o.method ?? 'GET';
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const fail = (e: Error): void => {
      clearTimeout(timer);
      reject(new Error(`${method} ${rawPath.slice(0, 200)}: ${e.message}`));
    };
    const req = http.request(
      { host: u.hostname, port: u.port, path: rawPath, method, headers: o.headers ?? {}, agent: o.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body: Buffer.concat(chunks),
          });
        });
        res.on('error', fail);
      },
    );
    if (o.timeoutMs !== undefined) {
      const ms = o.timeoutMs;
      timer = setTimeout(() => req.destroy(new Error(`no complete answer within ${ms} ms`)), ms);
    }
    req.on('error', fail);
    if (Array.isArray(o.body)) {
      for (const part of o.body) req.write(part);
      req.end();
    } else req.end(o.body);
  });
}
