// One stat of a path in flight at a time: callers that ask while one is in flight share its answer
// (or its error); the next caller after it settles starts a new one. For a file that every request
// of a hot path checks, such as a live channel's channel.json (server/live-playout.ts: every
// LL-HLS blocking request woken by a publish reads its channel's version), thousands of requests
// in one event-loop turn cost one stat, not thousands (the LL-HLS load bench's profile: 8 % of the
// serving process). What a caller sees is no older than the start of a stat that was running when
// it asked, which a caller of its own stat could see too (the file may change while it runs).

import { FileStat, Storage } from './storage';

export class SharedStat {
  private readonly running = new Map<string, Promise<FileStat>>();
  /** Stats started (tests). */
  started = 0;

  constructor(private readonly storage: Pick<Storage, 'stat'>) {}

  /** `storage.stat(path)`, shared with every caller of the same path while it runs. */
  stat(path: string): Promise<FileStat> {
    const running = this.running.get(path);
    if (running !== undefined) return running;
    this.started++;
    const p = this.storage.stat(path);
    this.running.set(path, p);
    const done = (): void => {
      if (this.running.get(path) === p) this.running.delete(path);
    };
    p.then(done, done);
    return p;
  }
}
