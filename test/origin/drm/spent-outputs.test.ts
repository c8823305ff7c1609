// SpentOutputs frees what a cipher's update() returned, and nothing else (drm/spent-outputs.ts).

import { createCipheriv, randomBytes } from 'node:crypto';
import { SpentOutputs } from '../../../origin/drm/spent-outputs';

test('outputs of update() are detached at release, their bytes copied out before intact', () => {
  const key = randomBytes(16);
  const iv = randomBytes(16);
  const data = randomBytes(10000);
  const expected = createCipheriv('aes-128-ctr', key, iv).update(data);
  const cipher = createCipheriv('aes-128-ctr', key, iv);
  const spent = new SpentOutputs();
  const copy = new Uint8Array(data.byteLength);
  const first = spent.keep(cipher.update(data.subarray(0, 4096)));
  const second = spent.keep(cipher.update(data.subarray(4096)));
  copy.set(first, 0);
  copy.set(second, 4096);
  spent.release();
  expect(Buffer.from(copy).equals(expected)).toBe(true);
  expect(first.buffer.byteLength).toBe(0);
  expect(second.buffer.byteLength).toBe(0);
  // Released once: a second release has nothing left to free.
  expect(() => spent.release()).not.toThrow();
});

test('views of a larger buffer and pooled Buffers are left alone', () => {
  const pooled = new Uint8Array(1 << 16);
  pooled.fill(7);
  const view = pooled.subarray(0, 1024);
  const small = Buffer.from('pooled bytes'); // a slice of Buffer's shared pool
  const whole = new Uint8Array(64);
  const spent = new SpentOutputs();
  expect(spent.keep(view)).toBe(view);
  spent.keep(pooled.subarray(1024));
  spent.keep(small);
  spent.keep(new Uint8Array(0));
  spent.keep(whole);
  spent.release();
  expect(pooled.byteLength).toBe(1 << 16);
  expect(pooled[100]).toBe(7);
  expect(small.toString()).toBe('pooled bytes');
  expect(whole.buffer.byteLength).toBe(0);
});

test('a buffer that cannot be transferred leaves the others to the collector, without an error', () => {
  const a = new Uint8Array(32);
  const spent = new SpentOutputs();
  spent.keep(a);
  spent.keep(a); // listed twice: the transfer throws (DataCloneError)
  expect(() => spent.release()).not.toThrow();
  const b = spent.keep(new Uint8Array(16));
  spent.release();
  expect(b.buffer.byteLength).toBe(0);
});
