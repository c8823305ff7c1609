// Shared by the in-process edge tests: an origin started with an edge filter in its process, the
// response headers compared, and a client that leaves after the first response bytes.

import * as http from 'node:http';
import { RunningServer, startServer } from '../../../origin/server/server';
import { HttpFilterFactory } from '../../../host-glue/proxy-wasm/http-filter';
import { testServerOptions } from '../../origin/server/server-helpers';
import { Response } from './edge-helpers';

export interface Inline {
  server: RunningServer;
  url: string;
  logs: string[];
}

export async function startInline(
  root: string,
  factory: HttpFilterFactory,
  o: { suppressEnvoyHeaders?: boolean } = {},
): Promise<Inline> {
  const logs: string[] = [];
  const server = await startServer({
    ...testServerOptions(root, logs),
    edge: {
      factory,
      server: { name: 'envoy', transformation: 'OVERWRITE' },
      generateRequestId: true,
      suppressEnvoyHeaders: o.suppressEnvoyHeaders ?? false,
    },
  });
  return { server, url: server.url, logs };
}

/** The headers a player or a cache acts on, and what Envoy adds. */
export const HEADERS = [
  'content-type',
  'content-length',
  'etag',
  'last-modified',
  'cache-control',
  'accept-ranges',
  'content-range',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'x-origin-error',
  'server',
];

export const seen = (r: Response): Record<string, unknown> => ({
  status: r.status,
  ...Object.fromEntries(HEADERS.map((h) => [h, r.headers[h]])),
});

/** A GET whose client goes away once the first response bytes arrived (a new connection). */
export function leaveAfterFirstBytes(url: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', () => undefined);
    req.setTimeout(5000, () => reject(new Error('no data')));
  });
}
