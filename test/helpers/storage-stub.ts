// HttpStorage (origin/io/remote/) over a small HTTP server of the test's own on loopback, which
// answers what a storage might (refusals, replaced objects, slow bodies...). No revalidation
// period and one 1 ms retry, so that every read reaches the server at once.

import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { HttpStorage } from '../../origin/io/remote/http-storage';

export interface StubbedStorage {
  storage: HttpStorage;
  /** Closes the storage's connections, then the server. */
  close(): Promise<void>;
}

/** `handler` listening on 127.0.0.1, and an HttpStorage for `dir` at `http://127.0.0.1:<port><urlPath>`. */
export async function storageOn(
  handler: http.RequestListener,
  o: { dir: string; urlPath: string; connections: number; timeoutMs: number },
): Promise<StubbedStorage> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const storage = new HttpStorage({
    dir: o.dir,
    base: `http://127.0.0.1:${port}${o.urlPath}`,
    connections: o.connections,
    timeoutMs: o.timeoutMs,
    revalidateMs: 0,
    retryDelaysMs: [1],
  });
  return {
    storage,
    close: async () => {
      storage.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
