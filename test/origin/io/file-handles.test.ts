// Kept source handles (origin/io/file-handles.ts), on real files, and the pool of the HTTP
// layer's streaming chunks (origin/io/buffers.ts, as server/server.ts uses it).

import { promises as fs, writeFileSync, renameSync } from 'node:fs';
import * as path from 'node:path';
import { FileHandles } from '../../../origin/io/file-handles';
import { BufferPool } from '../../../origin/io/buffers';
import { tempDir } from '../../helpers/fixtures';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function readAll(h: fs.FileHandle): Promise<string> {
  const b = Buffer.alloc(64);
  const { bytesRead } = await h.read(b, 0, 64, 0);
  return b.subarray(0, bytesRead).toString();
}

describe('FileHandles', () => {
  const dir = tempDir('file-io-');
  const file = path.join(dir, 'a.bin');
  writeFileSync(file, 'first');

  test('TTL 0: a new handle per lease, closed on release', async () => {
    const files = new FileHandles(0);
    const a = await files.acquire(file);
    const b = await files.acquire(file);
    expect(a.handle).not.toBe(b.handle);
    a.release();
    b.release();
    await sleep(20);
    await expect(a.handle.stat()).rejects.toThrow(/closed|EBADF/);
    expect(files.size).toBe(0);
  });

  test('within the TTL one handle serves every lease; after it a new one is opened and the old one closed once released', async () => {
    const files = new FileHandles(100);
    const a = await files.acquire(file);
    const b = await files.acquire(file);
    expect(b.handle).toBe(a.handle);
    b.release();
    await sleep(130);
    const c = await files.acquire(file);
    expect(c.handle).not.toBe(a.handle);
    // a still holds the old one: it stays open until released.
    expect((await a.handle.stat()).size).toBe(5);
    a.release();
    await sleep(20);
    await expect(a.handle.stat()).rejects.toThrow(/closed|EBADF/);
    c.release();
  });

  test('a file replaced within the TTL is still read through the handle of the file that was indexed', async () => {
    const files = new FileHandles(10_000);
    const f = path.join(dir, 'replaced.bin');
    writeFileSync(f, 'old bytes');
    const a = await files.acquire(f);
    a.release();
    const next = path.join(dir, 'replaced.tmp');
    writeFileSync(next, 'new bytes');
    renameSync(next, f);
    const b = await files.acquire(f);
    expect(await readAll(b.handle)).toBe('old bytes');
    b.release();
  });

  test('keeps at most `max` handles, closing idle ones first', async () => {
    const files = new FileHandles(10_000, 2);
    const names = ['x', 'y', 'z'].map((n) => {
      const p = path.join(dir, n);
      writeFileSync(p, n);
      return p;
    });
    const busy = await files.acquire(names[0]!);
    const idle = await files.acquire(names[1]!);
    idle.release();
    const third = await files.acquire(names[2]!);
    expect(files.size).toBe(2);
    await sleep(20);
    await expect(idle.handle.stat()).rejects.toThrow(/closed|EBADF/);
    expect(await readAll(busy.handle)).toBe('x');
    busy.release();
    third.release();
  });

  test('a failed open is an error for that lease and is not kept', async () => {
    const files = new FileHandles(10_000);
    const missing = path.join(dir, 'missing.bin');
    await expect(files.acquire(missing)).rejects.toThrow(/no such file/);
    expect(files.size).toBe(0);
    writeFileSync(missing, 'now here');
    const a = await files.acquire(missing);
    expect(await readAll(a.handle)).toBe('now here');
    a.release();
  });

  test('release is idempotent (a double release cannot close a handle another lease holds)', async () => {
    const files = new FileHandles(50);
    const a = await files.acquire(file);
    const b = await files.acquire(file);
    a.release();
    a.release();
    await sleep(70);
    const c = await files.acquire(file); // retires the old entry; b still holds it
    expect((await b.handle.stat()).size).toBe(5);
    b.release();
    c.release();
  });
});

test('the opener: a ByteSource over a kept handle, with the size taken at open; close releases once', async () => {
  const dir = tempDir('file-io-opener-');
  const f = path.join(dir, 'b.bin');
  writeFileSync(f, '0123456789');
  const files = new FileHandles(10_000);
  const a = await files.opener(f);
  const b = await files.opener(f);
  expect([a.size, Buffer.from(await a.read(2, 3)).toString()]).toEqual([10, '234']);
  await expect(a.read(8, 5)).rejects.toThrow(/past the end of the file \(10 bytes\)/);
  await a.close();
  await a.close();
  expect(Buffer.from(await b.read(0, 2)).toString()).toBe('01');
  await b.close();
  await expect(files.opener(dir)).rejects.toThrow(/is a directory|not a regular file/);
});

describe('BufferPool as a streaming pool', () => {
  test('hands back buffers of its size only, up to `keep` idle ones', () => {
    const CHUNK = 1 << 20;
    const pool = new BufferPool(2, 16 * CHUNK);
    const a = pool.take(CHUNK);
    const b = pool.take(CHUNK);
    const c = pool.take(CHUNK);
    expect(a.byteLength).toBe(CHUNK);
    pool.give(a);
    pool.give(b);
    pool.give(c);
    pool.give(Buffer.alloc(10));
    expect(pool.available).toBe(2);
    expect(pool.take(CHUNK)).toBe(b);
  });
});

describe('FileHandles lifetime', () => {
  test('close() closes the idle handles at once and the busy ones when released', async () => {
    const dir = tempDir('file-io-close-');
    const [x, y] = ['x', 'y'].map((n) => {
      const p = path.join(dir, n);
      writeFileSync(p, n);
      return p;
    });
    const files = new FileHandles(10_000);
    const idle = await files.acquire(x!);
    idle.release();
    const busy = await files.acquire(y!);
    files.close();
    expect(files.size).toBe(0);
    await sleep(20);
    await expect(idle.handle.stat()).rejects.toThrow(/closed|EBADF/);
    expect((await busy.handle.stat()).size).toBe(1);
    busy.release();
    await sleep(20);
    await expect(busy.handle.stat()).rejects.toThrow(/closed|EBADF/);
  });

  test('an idle handle whose TTL has passed is closed by the next acquire of any file', async () => {
    const dir = tempDir('file-io-sweep-');
    const [x, y] = ['x', 'y'].map((n) => {
      const p = path.join(dir, n);
      writeFileSync(p, n);
      return p;
    });
    const files = new FileHandles(50);
    const a = await files.acquire(x!);
    a.release();
    await sleep(80);
    const b = await files.acquire(y!);
    expect(files.size).toBe(1);
    await sleep(20);
    await expect(a.handle.stat()).rejects.toThrow(/closed|EBADF/);
    b.release();
    files.close();
  });
});
