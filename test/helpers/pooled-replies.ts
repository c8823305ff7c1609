// What the pooled-buffer tests share (test/origin/drm/encrypted-pooled-reads.test.ts,
// test/origin/segments/mpegts/ts-pooled-reads.test.ts): a reply whose bytes are lent from a pool
// must give them back once every response holding them has closed (server/coalesce.ts), also
// when the client goes away. These wait for the loans to come back, and cut clients off.

import * as net from 'node:net';

/** Waits (up to 2 s) until `pool` has nothing lent out, then checks it. */
export async function loansBack(pool: { readonly outstanding: number }): Promise<void> {
  for (let i = 0; i < 200 && pool.outstanding !== 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(pool.outstanding).toBe(0);
}

/**
 * GETs every path on its own connection and resets it at one of two moments: just after the
 * request is sent (gone before the reply is made) or once the response has started (gone while
 * it is written). Every connection must close without another error.
 */
export async function cutClients(base: string, paths: readonly string[], when: 'sent' | 'head'): Promise<void> {
  const u = new URL(base);
  const cut = await Promise.all(
    paths.map(
      (p) =>
        new Promise<string>((resolve) => {
          const socket = net.connect(Number(u.port), u.hostname, () => {
            socket.write(`GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`);
            if (when === 'sent') setImmediate(() => socket.resetAndDestroy());
          });
          socket.once('data', () => {
            if (when === 'head') socket.resetAndDestroy();
          });
          socket.on('error', (e) => resolve(e.message));
          socket.on('close', () => resolve('cut'));
        }),
    ),
  );
  expect(cut.every((m) => m === 'cut')).toBe(true);
}
