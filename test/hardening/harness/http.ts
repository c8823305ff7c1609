// HTTP requests of the hardening suite: the raw path as written (no URL normalisation, so `..`,
// `%2e%2e` and NUL reach the origin), a bound on each answer's time (a hang is a failure, not a
// stuck test), and kept-alive connections shared by a run.

import * as http from 'node:http';
import { rawRequest, RawAnswer } from '../../helpers/raw-request';

export type Answer = RawAnswer;

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  agent?: http.Agent;
  /** The answer must be complete within this (default 15 s). */
  timeoutMs?: number;
}

/** GET (or `method`) of a raw path; rejects on a reset, a malformed answer or the time bound. */
export function request(base: string, rawPath: string, o: RequestOptions = {}): Promise<Answer> {
  return rawRequest(base, rawPath, { ...o, timeoutMs: o.timeoutMs ?? 15_000 });
}

/** Runs `work` over `items` with at most `concurrency` at a time, in order of start. */
export async function eachLimited<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await work(items[i]!, i);
    }
  });
  await Promise.all(lanes);
}
