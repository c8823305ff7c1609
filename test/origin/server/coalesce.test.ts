// Request coalescing (origin/server/coalesce.ts) over real HTTP on loopback: the work behind a
// shared reply is told to stop (its signal aborts) only once every request waiting for it has
// lost its client, never while one is still connected.

import * as http from 'node:http';
import { AddressInfo, Socket, connect } from 'node:net';
import { Coalescer } from '../../../origin/server/coalesce';
import { Reply } from '../../../origin/server/route-handler';

interface Work {
  signal: AbortSignal;
  finish: () => void;
}

/** A server whose every request joins one reply for key `k`, made when the test says. */
async function coalescingServer(): Promise<{ url: URL; works: Work[]; close: () => Promise<void> }> {
  const coalescer = new Coalescer();
  const works: Work[] = [];
  const server = http.createServer((req, res) => {
    coalescer
      .reply(
        'k',
        res,
        (signal) =>
          new Promise<Reply>((resolve, reject) => {
            const reply: Reply = {
              contentType: 'text/plain',
              body: { type: 'bytes', bytes: Buffer.from('made\n') },
              lastModified: new Date(0),
              etag: '"x"',
              cacheClass: 'segment',
            };
            works.push({ signal, finish: () => resolve(reply) });
            signal.addEventListener('abort', () => reject(new Error('aborted')));
          }),
      )
      .then(
        (r) => res.end(r.body.type === 'bytes' ? Buffer.from(r.body.bytes) : ''),
        () => res.destroy(),
      );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    works,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

interface Client {
  socket: Socket;
  answer: Promise<string>;
}

/** A raw client that sent its request and waits. */
function client(url: URL): Promise<Client> {
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      const answer = new Promise<string>((r) => socket.on('close', () => r(text)));
      resolve({ socket, answer });
    });
  });
}

const until = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(what()).toBe(true);
};

/** Two clients of one work, the first then gone: the second is returned, still waiting. */
async function secondOfOneWork(s: { url: URL; works: Work[] }): Promise<Client> {
  const a = await client(s.url);
  await until(() => s.works.length === 1);
  const b = await client(s.url);
  await new Promise((r) => setTimeout(r, 50));
  a.socket.destroy();
  return b;
}

test('the work goes on while one of its requests is connected, and its answer reaches that one', async () => {
  const s = await coalescingServer();
  try {
    const b = await secondOfOneWork(s);
    await new Promise((r) => setTimeout(r, 100));
    expect(s.works).toHaveLength(1);
    expect(s.works[0]!.signal.aborted).toBe(false);
    s.works[0]!.finish();
    expect(await b.answer).toMatch(/200 OK[\s\S]*made/);
  } finally {
    await s.close();
  }
});

test('the work is told to stop once every request waiting for it has lost its client', async () => {
  const s = await coalescingServer();
  try {
    const b = await secondOfOneWork(s);
    await new Promise((r) => setTimeout(r, 50));
    expect(s.works[0]!.signal.aborted).toBe(false);
    b.socket.destroy();
    await until(() => s.works[0]!.signal.aborted);
    // A request after that starts new work; the old key is gone.
    const c = await client(s.url);
    await until(() => s.works.length === 2);
    expect(s.works[1]!.signal.aborted).toBe(false);
    s.works[1]!.finish();
    expect(await c.answer).toMatch(/made/);
  } finally {
    await s.close();
  }
});
