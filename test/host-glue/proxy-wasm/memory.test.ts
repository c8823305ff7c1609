// Guest memory plumbing (§3.2, §6.17, §6.18): the allocator Envoy picks, memory that grows while
// the host is inside a hostcall, and empty results handed over as 0/0 without allocating.

import { GuestMemory } from '../../../host-glue/proxy-wasm/memory';
import { bytes, closeAll, INFO, load, request } from './helpers/harness';

afterEach(closeAll);

test('cpp-host prefers malloc over proxy_on_memory_allocate when both are exported', async () => {
  // the worker already allocated once, for the plugin configuration read in on_configure
  const script = 'request_headers get 0 :path\nrequest_headers alloc_stats';
  const both = await load({ script, entry: 'script-plugin-malloc' });
  let s = both.plugin.newStream(INFO);
  await s.requestHeaders(request('/m'), true);
  expect(both.logs.reports(2)).toEqual(['get 0 :path status=0 value=/m', 'alloc malloc=2 on_memory_allocate=0']);
  const fallback = await load({ script });
  s = fallback.plugin.newStream(INFO);
  await s.requestHeaders(request('/m'), true);
  expect(fallback.logs.reports(2)).toEqual(['get 0 :path status=0 value=/m', 'alloc malloc=0 on_memory_allocate=2']);
});

test('memory grown by the allocator inside a hostcall: the host writes into the new memory', async () => {
  // every allocation grows memory by 16 pages (1 MiB), detaching the ArrayBuffer the host saw
  // when the hostcall started; the plugin then reads back what the host wrote.
  const { plugin, logs } = await load({
    script: [
      'request_headers memory_pages',
      'request_headers malloc_grow 16',
      'request_headers get 0 :path',
      'request_headers pairs 0',
      'request_headers prop request.host',
      'request_headers memory_pages',
    ].join('\n'),
  });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/grown?q=1'), true);
  const [before, path, pairs, host, after] = logs.reports(2);
  expect(path).toBe('get 0 :path status=0 value=/grown?q=1');
  expect(pairs).toBe('pairs 0 status=0 :authority=edge.test|:path=/grown?q=1|:method=GET|:scheme=http');
  expect(host).toMatch(/^prop request.host status=0 hex=[0-9a-f]+ text=edge.test$/);
  const pages = (r: string | undefined): number => Number(/pages=(\d+)/.exec(r ?? '')?.[1]);
  expect(pages(after) - pages(before)).toBeGreaterThanOrEqual(3 * 16);
});

test('a large body copied in while memory grows arrives intact', async () => {
  const { plugin, logs } = await load({ script: 'request_body malloc_grow 8\nrequest_body body 0' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/big', [], 'POST'), false);
  const body = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7 + 3) & 0xff);
  await s.requestBody(body, true);
  let sum = 0;
  for (const b of body) sum = (Math.imul(sum, 31) + b) >>> 0;
  expect(logs.report('body 0', 2)).toMatch(
    new RegExp(`^body 0 status=0 size=${body.length} buffer_size=${body.length} sum=${sum} `),
  );
  s.end();
});

test('memory the plugin grows between calls is seen by the next hostcall', async () => {
  const { plugin, logs } = await load({ script: 'request_headers grow 32\nrequest_body grow 32\nrequest_body body 0' });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request('/g', [], 'POST'), false);
  await s.requestBody(bytes('after growth'), true);
  expect(logs.report('body 0', 2)).toMatch(/text=after growth$/);
});

test('empty results are ptr 0 / size 0 and never call the allocator', async () => {
  const { plugin, logs } = await load({
    script:
      'response_headers alloc_stats\nresponse_headers pairs 0\nresponse_headers body 1\nresponse_headers alloc_stats',
  });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  await s.responseHeaders([[':status', '200']], true);
  // `pairs` pre-fills the slots with 0xdeadbeef: "(none)" means the host wrote size 0
  const [before, pairs, body, after] = logs.reports(2);
  expect([pairs, body]).toEqual(['pairs 0 status=0 (none)', expect.stringMatching(/^body 1 status=0 size=0 /)]);
  expect(after).toBe(before);
});

describe('GuestMemory (cached views)', () => {
  test('views are rebuilt after growth: a write into the new page lands, none goes to the detached buffer', () => {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const guest = new GuestMemory(memory);
    expect(guest.setU32(16, 0xdeadbeef)).toBe(true); // builds the views over the first buffer
    expect(guest.setU32(65536, 1)).toBe(false); // out of bounds before growth
    memory.grow(1); // detaches the buffer the cached views were made over
    expect(guest.setU32(65536 + 4, 0x01020304)).toBe(true);
    expect(new DataView(memory.buffer).getUint32(65536 + 4, true)).toBe(0x01020304);
    expect(guest.getU32(16)).toBe(0xdeadbeef);
    expect(guest.byteLength).toBe(2 * 65536);
  });

  test('latin1 reads and writes are one byte per char for every byte value and length', () => {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const guest = new GuestMemory(memory);
    for (const n of [0, 1, 64, 65, 256, 4096, 4097, 10000]) {
      const text = Array.from({ length: n }, (_, i) => String.fromCharCode((i * 7 + n) & 0xff)).join('');
      expect(guest.writeLatin1(100, text)).toBe(true);
      expect(guest.readLatin1(100, n)).toBe(text);
      expect(Buffer.from(guest.read(100, n)!).toString('latin1')).toBe(text);
    }
    expect(guest.readLatin1(65530, 7)).toBeNull();
    expect(guest.writeLatin1(65530, 'abcdefg')).toBe(false);
  });

  test('setU64Number writes the bytes setU64 writes for the same (double) value', () => {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const guest = new GuestMemory(memory);
    for (const v of [
      0,
      1,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 53 - 1,
      Math.round((performance.timeOrigin + performance.now()) * 1e6),
      1.8e19,
    ]) {
      guest.setU64(0, BigInt(v));
      guest.setU64Number(8, v);
      const written = new Uint8Array(memory.buffer, 0, 16);
      expect(Buffer.from(written.subarray(8, 16)).toString('hex')).toBe(
        Buffer.from(written.subarray(0, 8)).toString('hex'),
      );
    }
  });
});
