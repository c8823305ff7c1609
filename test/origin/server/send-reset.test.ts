// A client that goes away while a segment's source is being read (origin/server/http.ts
// streamParts): the response's 'close' has then been emitted before the writer waits for 'drain',
// and the wait must not outlive it. Found by the hardening suite's resets (test/hardening/): the
// wait never ended, the source's lease was never released, and Node closed the descriptor on
// garbage collection ("Closing file descriptor N on garbage collection"). Real server, real file;
// the one read is held until the client has reset.

import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { AddressInfo } from 'node:net';
import { send } from '../../../origin/server/http';
import { FileHandles, Lease } from '../../../origin/io/file-handles';
import { BufferPool } from '../../../origin/io/buffers';
import { Reply } from '../../../origin/server/route-handler';
import { tempDir } from '../../helpers/fixtures';

test('a reset during a source read ends the send and releases the lease', async () => {
  const file = path.join(tempDir('send-reset-'), 'source.bin');
  await fs.writeFile(file, Buffer.alloc(8 << 20, 7));
  const files = new FileHandles(60_000);
  let releases = 0;
  let resetDone: () => void = () => undefined;
  const reset = new Promise<void>((r) => (resetDone = r));
  // The real kept handle, its second read held until the client has gone (the first fills the socket).
  const acquire = files.acquire.bind(files);
  files.acquire = async (f: string): Promise<Lease> => {
    const lease = await acquire(f);
    const read = lease.handle.read.bind(lease.handle);
    let reads = 0;
    const handle = Object.create(lease.handle) as typeof lease.handle;
    handle.read = (async (...args: Parameters<typeof read>) => {
      if (reads++ === 1) await reset;
      return read(...args);
    }) as typeof handle.read;
    return {
      handle,
      size: lease.size,
      release: () => {
        releases++;
        lease.release();
      },
    };
  };
  const reply: Reply = {
    contentType: 'video/mp4',
    body: { type: 'parts', file, parts: [{ kind: 'file', offset: 0, length: 8 << 20 }], length: 8 << 20 },
    lastModified: new Date(0),
    etag: '"x"',
    cacheClass: 'segment',
  };
  let sent: Promise<void> | undefined;
  const server = http.createServer((req, res) => {
    res.once('close', () => setTimeout(resetDone, 20));
    sent = send(req, res, reply, {
      opts: { manifestCacheControl: '', segmentCacheControl: '' },
      files,
      buffers: new BufferPool(),
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    socket.write('GET /s HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 200));
    socket.resetAndDestroy();
    await reset;
    // Settles (it hung before the fix) and let go of the source.
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise((r) => (timer = setTimeout(() => r('hung'), 2000)));
    const outcome = await Promise.race([
      sent!.then(
        () => 'settled',
        () => 'settled',
      ),
      hung,
    ]);
    clearTimeout(timer);
    expect(outcome).toBe('settled');
    expect(releases).toBe(1);
  } finally {
    files.close();
    await new Promise((r) => server.close(r));
  }
});
