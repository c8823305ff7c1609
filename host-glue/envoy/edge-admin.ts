// The admin listener of `origin edge`: what Envoy's admin interface (the bootstrap's `admin:`)
// offers for metrics, on a port of its own, apart from the proxied namespace, so no path a client
// sends through the edge is taken from the origin:
//
//   GET /stats/prometheus   Envoy's path for its stats in the Prometheus text format
//   GET /metrics            the same body (the usual Prometheus scrape path)
//
// Only the plugin's custom metrics are there (edge-stats.ts); Envoy's own stats (listener,
// connection manager, clusters) are not emulated. HEAD answers the headers of GET; other methods
// 405; other paths 404 naming the two above.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export const ADMIN_PATHS = ['/stats/prometheus', '/metrics'] as const;

export interface RunningAdmin {
  /** http://host:port */
  url: string;
  close(): Promise<void>;
}

function answer(res: http.ServerResponse, status: number, type: string, body: string, head: boolean): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(head ? undefined : body);
}

async function handle(registry: Registry, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  const head = req.method === 'HEAD';
  if (!(ADMIN_PATHS as readonly string[]).includes(path)) {
    answer(res, 404, 'text/plain; charset=utf-8', `not an admin path: try ${ADMIN_PATHS.join(' or ')}\n`, head);
    return;
  }
  if (req.method !== 'GET' && !head) {
    res.setHeader('allow', 'GET, HEAD');
    answer(res, 405, 'text/plain; charset=utf-8', `${path} answers GET and HEAD\n`, false);
    return;
  }
  answer(res, 200, registry.contentType, await registry.metrics(), head);
}

/** Listens on host:port (0 = any free port) and serves `registry`. */
export async function startEdgeAdmin(o: {
  host: string;
  port: number;
  registry: Registry;
  log?: ((line: string) => void) | undefined;
}): Promise<RunningAdmin> {
  const server = http.createServer((req, res) => {
    handle(o.registry, req, res).catch((e: unknown) => {
      o.log?.(`origin edge admin: ${req.url}: ${(e as Error).message}`);
      if (!res.headersSent)
        answer(res, 500, 'text/plain; charset=utf-8', 'the metrics could not be collected\n', false);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
