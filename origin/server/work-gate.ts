// How many generated segments (MPEG-TS, packed audio, WebVTT, I-frame, HDS) a worker makes at
// once: GENERATION_SLOTS, the others wait their turn in arrival order.
//
// Why: a generated segment holds pooled buffers (io/buffers.ts) from its first read until it is
// written: its fragments' byte range (about 1 MiB for a 720p TS segment) and its output. Without a
// bound, 64 connections asking at once start 64 segments at once: measured on a one-worker server,
// the segment pool's lent bytes swung between 0 and 64 MB within a second, so most buffers were
// fresh ones (page faults on first touch, zeroed by the kernel) that the pool could not keep (16
// a size class) and left to the GC ("external memory pressure" collections). A worker has one
// thread for the writers' CPU work and libuv's pool (4 threads by default) for the reads: a few
// segments in flight keep both busy, and the rest would only hold memory while they wait for the
// CPU anyway. Requests are answered in the order they came; none is refused.
//
// Rule: a task inside the gate never waits for another task to enter the gate (the writers share
// one-time scans through promises, which the task that started them finishes on its own).

import { OriginError, originError } from '../errors';

/** Generated segments made at once by one worker (libuv's default thread pool size). */
export const GENERATION_SLOTS = 4;

export class WorkGate {
  private running = 0;
  /** Waiting tasks' wake-ups, oldest first from `head`; a cancelled one leaves a hole. */
  private waiting: Array<(() => void) | undefined> = [];
  private head = 0;
  private waitingCount = 0;
  /** Tasks whose signal aborted while they waited: never started (/metrics). */
  cancelled = 0;

  constructor(readonly slots: number = GENERATION_SLOTS) {
    if (!(Number.isInteger(slots) && slots >= 1))
      throw new RangeError(`a work gate needs 1 or more slots, not ${slots}`);
  }

  /**
   * Runs `task` once a slot is free; its slot passes to the oldest waiting task when it settles.
   * A task whose `signal` aborts before it starts (every client that asked for it has gone) is
   * never started: it rejects with `client-gone` and gives up its place in the queue.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted === true) throw this.gone();
    if (this.running < this.slots) this.running++;
    else await this.wait(signal);
    try {
      return await task();
    } finally {
      this.leave();
    }
  }

  /** Tasks running and waiting (tests, /metrics). */
  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waitingCount;
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Valid until this entry is woken: the list is emptied only once every entry has been.
      const at = this.waiting.length;
      const onAbort = (): void => {
        this.waiting[at] = undefined;
        this.waitingCount--;
        reject(this.gone());
      };
      this.waiting.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      this.waitingCount++;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private gone(): OriginError {
    this.cancelled++;
    return originError('client-gone', 'every client that asked for this segment closed its connection');
  }

  private leave(): void {
    while (this.head < this.waiting.length) {
      const wake = this.waiting[this.head];
      this.waiting[this.head++] = undefined;
      if (this.head === this.waiting.length) {
        this.waiting = [];
        this.head = 0;
      }
      if (wake === undefined) continue; // cancelled while it waited
      this.waitingCount--;
      wake(); // the slot passes on: `running` stays
      return;
    }
    this.running--;
  }
}
