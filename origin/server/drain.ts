// Stopping without cutting responses off (SIGTERM, docs/guide/operations.md#signals): the
// listener closes (new connections are refused; in a worker, the primary stops handing it any),
// idle keep-alive connections are closed at once and busy ones as soon as their response is done
// (handle() answers with `Connection: close` while draining, and a sweep closes connections that
// went idle), and the server is done when the last connection has closed. Past the bound the rest
// are closed as they are.

import * as http from 'node:http';

/** How often connections that went idle are looked for while draining, ms. */
const SWEEP_MS = 50;

/** Drains `server` within `boundMs`; resolves true when every response ended, false when some were cut off. */
export function drain(server: http.Server, boundMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (clean: boolean): void => {
      if (settled) return;
      settled = true;
      clearInterval(sweep);
      clearTimeout(bound);
      resolve(clean);
    };
    const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
    const bound = setTimeout(() => {
      server.closeAllConnections();
      done(false);
    }, boundMs);
    if (!server.listening) {
      server.closeAllConnections();
      return done(true);
    }
    server.close(() => done(true));
    server.closeIdleConnections();
  });
}
