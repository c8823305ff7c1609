// When to start the replacement of a dead worker (`origin serve --workers`). A worker that dies
// now and then is replaced at once (after BASE_MS); deaths close together are a fault that a
// restart will not fix (a bad file crashing every worker that reads it, memory exhausted), and
// restarting at full speed would burn the CPU the other workers need. So each death within
// WINDOW_MS of the ones before doubles the delay, up to CAP_MS, and LOOP_DEATHS of them within the
// window are a crash loop, which the primary reports (log line, origin_worker_crash_loop). Deaths
// older than the window are forgotten: a worker that ran a minute restarts the count.

export const BACKOFF = {
  /** Delay before the replacement of a death with no other in the window, ms. */
  baseMs: 100,
  /** Longest delay, ms. */
  capMs: 30_000,
  /** How long a death counts, ms. */
  windowMs: 60_000,
  /** Deaths within the window that make a crash loop. */
  loopDeaths: 5,
} as const;

export interface Restart {
  /** Wait this long before starting the replacement, ms. */
  delayMs: number;
  /** Deaths within the window, this one included. */
  recent: number;
  crashLoop: boolean;
}

/** Deaths of workers and the delays they call for; times are the caller's clock, ms. */
export class RestartBackoff {
  private deaths: number[] = [];

  constructor(private readonly o: typeof BACKOFF = BACKOFF) {}

  /** A worker died at `now`. */
  died(now: number): Restart {
    this.forget(now);
    this.deaths.push(now);
    // The window holds at most a few hundred deaths at the capped rate; keep no more than needed.
    if (this.deaths.length > 64) this.deaths.splice(0, this.deaths.length - 64);
    const recent = this.deaths.length;
    const delayMs = Math.min(this.o.capMs, this.o.baseMs * 2 ** Math.min(recent - 1, 30));
    return { delayMs, recent, crashLoop: recent >= this.o.loopDeaths };
  }

  /** Whether the deaths within the window at `now` are a crash loop. */
  inCrashLoop(now: number): boolean {
    this.forget(now);
    return this.deaths.length >= this.o.loopDeaths;
  }

  private forget(now: number): void {
    const from = now - this.o.windowMs;
    while (this.deaths.length > 0 && this.deaths[0]! <= from) this.deaths.shift();
  }
}
