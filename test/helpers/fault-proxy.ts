// A small HTTP proxy of our own in front of a real storage (nginx): it passes requests on, or
// breaks them the ways storage breaks — a reset in the middle of the body, a 500, a body shorter
// than its Content-Length, an answer that comes late. Which fault a request meets is the test's
// choice (`decide`), so runs are reproducible.

import * as http from 'node:http';
import * as net from 'node:net';

export type Fault = 'pass' | 'reset-mid-body' | 'status-500' | 'short-body' | { delayMs: number };

export interface FaultProxy {
  /** Base URL, with the same path as the target's: `http://127.0.0.1:<port>/media/`. */
  url: string;
  /** Requests seen, and the faults dealt. */
  seen: number;
  dealt: Record<string, number>;
  close(): Promise<void>;
}

export async function startFaultProxy(
  target: string,
  decide: (req: http.IncomingMessage, n: number) => Fault,
): Promise<FaultProxy> {
  const to = new URL(target);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const state = { seen: 0, dealt: {} as Record<string, number> };
  const server = http.createServer((req, res) => {
    const fault = decide(req, state.seen++);
    const name = typeof fault === 'string' ? fault : 'delay';
    state.dealt[name] = (state.dealt[name] ?? 0) + 1;
    if (fault === 'status-500') {
      res.writeHead(500, { 'Content-Length': '6' });
      return res.end('broken');
    }
    const forward = (): void => {
      const up = http.request(
        { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers, agent },
        (upRes) => {
          const length = Number(upRes.headers['content-length'] ?? 0);
          if ((fault === 'reset-mid-body' || fault === 'short-body') && req.method === 'GET' && length > 1) {
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            let sent = 0;
            const half = Math.floor(length / 2);
            upRes.on('data', (c: Buffer) => {
              if (sent >= half) return;
              const piece = c.subarray(0, half - sent);
              sent += piece.byteLength;
              res.write(piece);
              if (sent >= half) {
                upRes.destroy();
                // A reset (RST), or an orderly close after a body cut short.
                if (fault === 'reset-mid-body') (res.socket as net.Socket).resetAndDestroy();
                else res.socket?.end();
              }
            });
            return;
          }
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      up.end();
    };
    if (typeof fault === 'object') setTimeout(forward, fault.delayMs);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${to.pathname}`,
    get seen() {
      return state.seen;
    },
    get dealt() {
      return state.dealt;
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  } as FaultProxy;
}
