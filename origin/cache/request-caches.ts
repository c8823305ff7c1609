// Per-request work kept between requests, for one presentation object at a time: the playout view
// of a (format, query) and the boxes of a segment. A presentation object is rebuilt whenever its
// .ism or a source changes (presentation-store.ts), so keying by the object's generation makes every entry of
// an older version unreachable at once; the byte bounds then evict them.

import { CacheCounts, CostLru } from './presentation-store';
import { Presentation } from '../model/presentation';

/** A small number per presentation object, for cache keys (weakly held). */
export class PresentationIds {
  private readonly ids = new WeakMap<Presentation, number>();
  private next = 1;

  of(p: Presentation): number {
    let id = this.ids.get(p);
    if (id === undefined) {
      id = this.next++;
      this.ids.set(p, id);
    }
    return id;
  }
}

/**
 * Values computed from a presentation and a request key, bounded by an estimated cost in bytes.
 * `get` computes synchronously on a miss (views) or shares one promise between concurrent misses
 * (`getAsync`, segment boxes). Failures are not kept.
 */
export class PresentationMemo<T> {
  private readonly lru: CostLru<T>;

  constructor(
    private readonly ids: PresentationIds,
    readonly maxBytes: number,
  ) {
    this.lru = new CostLru(maxBytes);
  }

  /** The entry of (the presentation's path, key), valid for this presentation object only. */
  get(p: Presentation, key: string, compute: () => T, cost: (value: T) => number): T {
    if (this.maxBytes === 0) return compute();
    const id = `${p.path}\n${key}`;
    const version = `${this.ids.of(p)}`;
    const hit = this.lru.peek(id, version);
    if (hit !== undefined) return hit;
    const value = compute();
    this.lru.delete(id);
    void this.lru.get(id, version, async () => ({ value, cost: cost(value) }));
    return value;
  }

  getAsync(p: Presentation, key: string, compute: () => Promise<T>, cost: (value: T) => number): Promise<T> {
    if (this.maxBytes === 0) return compute();
    return this.lru.get(`${p.path}\n${key}`, `${this.ids.of(p)}`, async () => {
      const value = await compute();
      return { value, cost: cost(value) };
    });
  }

  get size(): number {
    return this.lru.size;
  }

  counts(): CacheCounts {
    return this.lru.counts();
  }

  get cost(): number {
    return this.lru.cost;
  }
}
