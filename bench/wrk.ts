// wrk runs of the HTTP bench: one run (a Lua script prints its summary as JSON), several runs as
// one, and the median of a set.

import { mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { LOAD_CPU, pinned } from './http-processes';
import { parseWrkSummary, wrkArgs, wrkScript } from './wrk-script';

// ---------------------------------------------------------------------------------------------
// wrk

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  mbps: number;
  bytesPerRequest: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
}

let scriptCount = 0;

/** wrk's threads, and the CPUs it is pinned to (undefined: not pinned). */
export interface WrkLoad {
  threads: number;
  cpus: string | undefined;
}
export const PINNED_LOAD: WrkLoad = { threads: 1, cpus: LOAD_CPU };
export const UNPINNED_LOAD: WrkLoad = { threads: 1, cpus: undefined };

/** wrk against `base` + paths (cycled per connection when more than one). */
export function wrk(
  base: string,
  paths: string[],
  connections: number,
  seconds: number,
  load = PINNED_LOAD,
): WrkResult {
  const { threads, cpus } = load;
  const dir = path.join(os.tmpdir(), `http-bench-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const script = path.join(dir, `s${scriptCount++}.lua`);
  writeFileSync(script, wrkScript(paths));
  const [cmd, args] = pinned(cpus, 'wrk', wrkArgs({ threads, connections, seconds }, script, base + paths[0]));
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`wrk: ${r.error.message} (install it: apt-get install -y wrk)`);
  const j = parseWrkSummary(r.stdout);
  if (j === undefined) throw new Error(`wrk printed no result: ${r.stdout}\n${r.stderr}`);
  const secs = j.durationUs / 1e6;
  return {
    requests: j.requests,
    seconds: Number(secs.toFixed(2)),
    rps: Math.round(j.requests / secs),
    mbps: Number((j.bytes / secs / 1e6).toFixed(1)),
    bytesPerRequest: Math.round(j.bytes / Math.max(1, j.requests)),
    latencyMs: { p50: j.p50 / 1000, p90: j.p90 / 1000, p99: j.p99 / 1000, max: j.max / 1000 },
    errors: { connect: j.connect, read: j.read, write: j.write, status: j.status, timeout: j.timeout },
  };
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The run with the median req/s. */
export const medianRun = (xs: WrkResult[]): WrkResult =>
  [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;

/** Several wrk runs as one: counts summed, rates over the summed time, latency of the worst slice. */
export function sumRuns(parts: WrkResult[]): WrkResult {
  const requests = parts.reduce((n, x) => n + x.requests, 0);
  const seconds = parts.reduce((n, x) => n + x.seconds, 0);
  const bytes = parts.reduce((n, x) => n + x.bytesPerRequest * x.requests, 0);
  const worst = (k: 'p50' | 'p90' | 'p99' | 'max'): number => Math.max(...parts.map((x) => x.latencyMs[k]));
  const errors = { connect: 0, read: 0, write: 0, status: 0, timeout: 0 };
  for (const x of parts) for (const k of Object.keys(errors) as (keyof typeof errors)[]) errors[k] += x.errors[k];
  return {
    requests,
    seconds: Number(seconds.toFixed(2)),
    rps: Math.round(requests / seconds),
    mbps: Number((bytes / seconds / 1048576).toFixed(1)),
    bytesPerRequest: requests === 0 ? 0 : Math.round(bytes / requests),
    latencyMs: { p50: worst('p50'), p90: worst('p90'), p99: worst('p99'), max: worst('max') },
    errors,
  };
}
