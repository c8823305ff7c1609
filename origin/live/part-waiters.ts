// Requests waiting for a channel's next publish (LL-HLS blocking reload and preload-hinted
// parts, server/live-low-latency.ts): one set of waiters per channel, all woken by the channel's
// publish message (fragment-table.ts LivePublished, which every serving process already gets),
// and one sweep timer per process for their deadlines (and a wake-up every second, as messages
// are hints), running only while someone waits. No
// timer and no thread per waiting request: thousands wait on one worker for the memory of a
// promise and a set entry each. A woken request reads the channel again and waits again if its
// part is still not there (a message of another track of the channel).

/** Why a wait ended: the channel published, the deadline passed, or the request's signal aborted. */
export type WaitOutcome = 'published' | 'timeout' | 'gone';

interface Waiter {
  /** Ms on the waiters' clock. */
  deadline: number;
  settle(outcome: WaitOutcome): void;
}

/** How often deadlines are checked, ms: a timeout answers up to this late. */
const SWEEP_MS = 100;
/**
 * How often every waiter is woken without a message, ms. A message is a hint (fragment-table.ts):
 * an ingest listener in another process that tells no one, or a missed message, still ends a
 * wait this soon after channel.json shows the part.
 */
const RECHECK_MS = 1000;

export class PartWaiters {
  private readonly byChannel = new Map<string, Set<Waiter>>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private count = 0;
  private rechecked = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Requests waiting now (/metrics, tests). */
  get waiting(): number {
    return this.count;
  }

  /** Whether requests wait for `channel`. */
  has(channel: string): boolean {
    return this.byChannel.has(channel);
  }

  /** Waits for the next publish of `channel`, at most until `deadline`. */
  wait(channel: string, deadline: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (signal?.aborted === true) return Promise.resolve('gone');
    return new Promise((resolve) => {
      let set = this.byChannel.get(channel);
      if (set === undefined) this.byChannel.set(channel, (set = new Set()));
      const list = set;
      const onAbort = (): void => waiter.settle('gone');
      const waiter: Waiter = {
        deadline,
        settle: (outcome) => {
          if (!list.delete(waiter)) return;
          this.count--;
          if (list.size === 0 && this.byChannel.get(channel) === list) this.byChannel.delete(channel);
          signal?.removeEventListener('abort', onAbort);
          if (this.count === 0) this.stopSweep();
          resolve(outcome);
        },
      };
      list.add(waiter);
      this.count++;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.startSweep();
    });
  }

  /** The channel published: every request waiting for it goes on. Returns how many. */
  wake(channel: string): number {
    const list = this.byChannel.get(channel);
    if (list === undefined) return 0;
    const all = [...list];
    for (const w of all) w.settle('published');
    return all.length;
  }

  private startSweep(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    // A waiting request holds its socket open; the timer itself keeps nothing alive.
    this.timer.unref();
  }

  private stopSweep(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private sweep(): void {
    const now = this.now();
    const recheck = now - this.rechecked >= RECHECK_MS;
    if (recheck) this.rechecked = now;
    for (const list of [...this.byChannel.values()])
      for (const w of [...list]) {
        if (w.deadline <= now) w.settle('timeout');
        else if (recheck) w.settle('published');
      }
  }
}
