// The one buffer pool of the origin's I/O: buffers by power-of-two size class, reused across
// requests. Two users, one pool class (an instance each):
// - the segment writers (MPEG-TS): a segment reads its fragments' byte range (a few hundred kB to
//   a few MB) once and muxes it into an output buffer. A fresh buffer per read cost page faults on
//   first touch and GC work for its external memory (profiled: about a fifth of a worker's time on
//   720p TS). The bytes read never leave the writer: the output is a copy, so a read buffer can go
//   back as soon as the segment is written. The output itself is lent by the server from the same
//   pool (BufferLoan, below) until its responses have closed;
// - the HTTP layer's streaming of fMP4 segments (server/http.ts streamParts): chunks of one size
//   read from a kept handle (io/file-handles.ts), handed back once the socket has taken the bytes
//   (the write callback), so steady streaming allocates nothing; a buffer whose write failed never
//   comes back.
// Each server keeps its own streaming instance (the same bounds as before the two pools were one
// class: at most 16 idle chunks), the writers share `segmentReadBuffers`: a failed socket write then
// never shows in the writers' `outstanding` count.
//
// A lease (ReadLease) collects the buffers one segment takes; release() hands them all back,
// and the caller calls it only once every read into them has settled (a read still running in
// the thread pool must not land in a buffer another request has taken since).

/** Smallest pooled size (smaller reads share it): 64 KiB. */
const MIN_CLASS_BITS = 16;
/** Largest pooled size: 16 MiB (a bigger read gets a buffer of its own, not kept). */
const MAX_CLASS_BITS = 24;
/**
 * Idle buffers kept per size class, and in all: a worker answering a few dozen connections has
 * about that many segment reads in flight; beyond the bound, buffers are left to the GC.
 */
const KEEP_PER_CLASS = 16;
const MAX_IDLE_BYTES = 32 << 20;

/** Buffers by power-of-two size class. */
export class BufferPool {
  private readonly idle: Uint8Array[][] = [];
  private idleTotal = 0;
  private lentTotal = 0;
  /** Buffers handed out and not yet returned (tests). */
  outstanding = 0;

  constructor(
    private readonly keepPerClass = KEEP_PER_CLASS,
    private readonly maxIdleBytes = MAX_IDLE_BYTES,
  ) {}

  take(length: number): Uint8Array {
    const bits = classBits(length);
    this.outstanding++;
    if (bits === undefined) {
      this.lentTotal += length;
      return new Uint8Array(length);
    }
    this.lentTotal += 1 << bits;
    const b = this.idle[bits]?.pop();
    if (b !== undefined) {
      this.idleTotal -= b.byteLength;
      return b;
    }
    const raw = Buffer.allocUnsafeSlow(1 << bits);
    // A plain Uint8Array view: its subarrays (one per sample) are cheaper than Buffer's.
    return new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  }

  give(b: Uint8Array): void {
    this.drop(b);
    const bits = classBits(b.byteLength);
    if (bits === undefined || 1 << bits !== b.byteLength) return;
    const list = (this.idle[bits] ??= []);
    if (list.length < this.keepPerClass && this.idleTotal + b.byteLength <= this.maxIdleBytes) {
      list.push(b);
      this.idleTotal += b.byteLength;
    }
  }

  /** A buffer taken that will not come back (left to the GC): no longer counted as lent. */
  drop(b: Uint8Array): void {
    this.outstanding--;
    this.lentTotal -= b.byteLength;
  }

  /** Bytes of the idle buffers kept, and of the buffers handed out and not back (/metrics). */
  get idleBytes(): number {
    return this.idleTotal;
  }

  get lentBytes(): number {
    return this.lentTotal;
  }

  /** Idle buffers (tests). */
  get available(): number {
    return this.idle.reduce((n, l) => n + (l?.length ?? 0), 0);
  }
}

function classBits(length: number): number | undefined {
  if (length > 1 << MAX_CLASS_BITS) return undefined;
  let bits = MIN_CLASS_BITS;
  while (1 << bits < length) bits++;
  return bits;
}

/** The process's pool of segment read buffers. */
export const segmentReadBuffers = new BufferPool();

/** The buffers one segment has taken from a pool. */
export class ReadLease {
  private readonly taken: Uint8Array[] = [];
  private released = false;

  constructor(private readonly pool: BufferPool = segmentReadBuffers) {}

  /** A buffer of at least `length` bytes, valid until release(). */
  take(length: number): Uint8Array {
    if (this.released) throw new Error('ReadLease used after release');
    const b = this.pool.take(length);
    this.taken.push(b);
    return b;
  }

  /** Returns every buffer; nothing may read or write them afterwards. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const b of this.taken) this.pool.give(b);
    this.taken.length = 0;
  }
}

/**
 * A pooled buffer lent past the function that filled it: a generated segment's output, which the
 * HTTP layer writes to one socket or, for coalesced requests, to several. A fresh output buffer
 * per TS segment cost page faults on first touch and left the allocator's heap fragmented (a
 * worker's RSS after a walk of every URL was ~30 MB higher than with big blocks unmapped on free;
 * docs/design/performance.md#pooled-ts-reads-and-lent-ts-output).
 *
 * The server says how many holders there are once the reply is made (share) and each holder lets
 * go when its response has closed; the buffer goes back with the last. A loan never shared (a
 * caller outside the server: the CLI dry run, tests) keeps its buffer, which is left to the GC:
 * a missed return costs an allocation, an early one would corrupt a response.
 */
export class BufferLoan {
  /** The bytes written, a view of the pooled buffer. */
  readonly bytes: Uint8Array;
  private holders = 0;
  private shared = false;

  private constructor(
    private readonly pool: BufferPool,
    private readonly buffer: Uint8Array,
    length: number,
  ) {
    this.bytes = buffer.subarray(0, length);
  }

  /** A loan of `length` bytes (not zero-filled) from `pool`. */
  static take(pool: BufferPool, length: number): BufferLoan {
    return new BufferLoan(pool, pool.take(length), length);
  }

  /** Sets the number of holders, once; none gives the buffer back at once. */
  share(holders: number): void {
    if (this.shared) throw new Error('BufferLoan shared twice');
    this.shared = true;
    this.holders = holders;
    if (holders <= 0) this.pool.give(this.buffer);
  }

  /** One holder is done with the bytes; the last gives the buffer back. Before share(), or past the last holder, nothing. */
  letGo(): void {
    if (!this.shared || this.holders <= 0) return;
    if (--this.holders === 0) this.pool.give(this.buffer);
  }

  /** Holders still counted (tests). */
  get remaining(): number {
    return this.holders;
  }
}
