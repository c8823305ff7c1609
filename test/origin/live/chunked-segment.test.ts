// GrowingSegment (origin/live/chunked-segment.ts): a late listener gets every chunk so far, then
// the new ones, then the end; a failed segment ends its listeners with false; the registry keeps
// one segment per key while it grows and lets it go when it is done.

import { GrowingSegment, GrowingSegments } from '../../../origin/live/chunked-segment';

function recorder(): { chunks: string[]; ended: boolean[]; l: { chunk(b: Uint8Array): void; end(c: boolean): void } } {
  const r = { chunks: [] as string[], ended: [] as boolean[] };
  return {
    ...r,
    l: { chunk: (b) => r.chunks.push(Buffer.from(b).toString()), end: (c) => r.ended.push(c) },
  };
}

test('listeners get the chunks so far, the new ones, then the end', async () => {
  const g = new GrowingSegment();
  const early = recorder();
  g.listen(early.l);
  g.append(Buffer.from('a'));
  const late = recorder();
  g.listen(late.l);
  g.append(Buffer.from('b'));
  expect(g.listening).toBe(2);
  g.complete();
  expect(early.chunks).toEqual(['a', 'b']);
  expect(late.chunks).toEqual(['a', 'b']);
  expect([early.ended, late.ended]).toEqual([[true], [true]]);
  expect(await g.done()).toBe(true);
  expect(g.length).toBe(2);
  // After the end: the whole, then the end at once.
  const after = recorder();
  g.listen(after.l);
  expect([after.chunks, after.ended]).toEqual([['a', 'b'], [true]]);
  expect(() => g.append(Buffer.from('c'))).toThrow(/complete/);
});

test('a failed segment ends its listeners with false; one that stopped listening hears nothing', async () => {
  const g = new GrowingSegment();
  const kept = recorder();
  const gone = recorder();
  g.listen(kept.l);
  const stop = g.listen(gone.l);
  stop();
  g.append(Buffer.from('x'));
  g.fail();
  g.complete();
  expect([kept.chunks, kept.ended]).toEqual([['x'], [false]]);
  expect([gone.chunks, gone.ended]).toEqual([[], []]);
  expect(await g.done()).toBe(false);
  expect(g.state).toBe('failed');
});

test('the registry: one segment per key while it grows, fed once; gone when done or when its feed throws', async () => {
  const segments = new GrowingSegments();
  let feeds = 0;
  let finish: (() => void) | undefined;
  const feed = async (g: GrowingSegment): Promise<void> => {
    feeds++;
    await new Promise<void>((r) => (finish = r));
    g.complete();
  };
  const a = segments.get('k', feed);
  expect(segments.get('k', feed)).toBe(a);
  expect([feeds, segments.size]).toEqual([1, 1]);
  finish!();
  expect(await a.done()).toBe(true);
  expect(segments.size).toBe(0);
  expect(segments.get('k', feed)).not.toBe(a);
  const broken = segments.get('b', () => Promise.reject(new Error('read failed')));
  expect(await broken.done()).toBe(false);
  expect(segments.size).toBe(1);
});
