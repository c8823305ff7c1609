// A segment being ingested, as the bytes it has so far (LL-DASH chunked transfer, issue 23). One
// per (channel, query, segment URL) in a serving process: every request for the segment shares
// its chunks (the same Buffers are written to every response, never copied per client) and hears
// of each new one through a listener: no timer and no thread per client. What feeds it (reading
// the channel on each publish) is server/live-chunked.ts; nothing here knows HTTP or the channel.
//
// A chunk is the bytes one ingest fragment adds to the segment: the first is styp + moof + mdat,
// each next moof + mdat, so the chunks end to end are exactly the bytes of the whole segment.

/** What a response does with the segment: write each chunk, then end (whole) or break (failed). */
export interface ChunkListener {
  chunk(bytes: Uint8Array): void;
  end(complete: boolean): void;
}

export type GrowingState = 'growing' | 'complete' | 'failed';

export class GrowingSegment {
  private readonly list: Uint8Array[] = [];
  private readonly listeners = new Set<ChunkListener>();
  private settled: Promise<boolean> | undefined;
  private settle: ((complete: boolean) => void) | undefined;
  private status: GrowingState = 'growing';
  /** Bytes so far. */
  length = 0;

  get state(): GrowingState {
    return this.status;
  }

  /** The chunks so far (shared: read, never change). */
  get chunks(): readonly Uint8Array[] {
    return this.list;
  }

  /** Responses listening now (tests, /metrics). */
  get listening(): number {
    return this.listeners.size;
  }

  /**
   * Hands `l` every chunk so far at once, then each new one as it comes, then the end; returns
   * how to stop listening (the client went away).
   */
  listen(l: ChunkListener): () => void {
    for (const c of this.list) l.chunk(c);
    if (this.status !== 'growing') {
      l.end(this.status === 'complete');
      return () => undefined;
    }
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }

  /** Resolves when the segment is whole (true) or has failed (false). */
  done(): Promise<boolean> {
    if (this.status !== 'growing') return Promise.resolve(this.status === 'complete');
    this.settled ??= new Promise((resolve) => (this.settle = resolve));
    return this.settled;
  }

  append(bytes: Uint8Array): void {
    if (this.status !== 'growing') throw new Error(`append to a ${this.status} segment`);
    this.list.push(bytes);
    this.length += bytes.byteLength;
    for (const l of this.listeners) l.chunk(bytes);
  }

  /** The segment is whole: every listener ends. */
  complete(): void {
    this.finish('complete');
  }

  /** The segment will not be completed here (the encoder stalled, the timeline broke). */
  fail(): void {
    this.finish('failed');
  }

  private finish(state: 'complete' | 'failed'): void {
    if (this.status !== 'growing') return;
    this.status = state;
    const all = [...this.listeners];
    this.listeners.clear();
    for (const l of all) l.end(state === 'complete');
    this.settle?.(state === 'complete');
  }
}

/** The growing segments of a serving process, by key; an entry leaves when it is whole or failed. */
export class GrowingSegments {
  private readonly byKey = new Map<string, GrowingSegment>();

  /** Segments growing now. */
  get size(): number {
    return this.byKey.size;
  }

  /** The segment at `key`, or a new one fed by `feed` (called once, with the new segment). */
  get(key: string, feed: (g: GrowingSegment) => Promise<void>): GrowingSegment {
    const held = this.byKey.get(key);
    if (held !== undefined) return held;
    const g = new GrowingSegment();
    this.byKey.set(key, g);
    const leave = (): void => {
      if (this.byKey.get(key) === g) this.byKey.delete(key);
    };
    void g.done().then(leave);
    feed(g).catch(() => g.fail());
    return g;
  }
}
