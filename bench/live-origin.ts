// A live origin for the benches that ingest (bench/ingest-bench.ts, bench/ll-hls-load.ts): the
// built CLI's `origin serve --ingest-port 0` in its own process, with N workers, resolved once it
// has printed both its serving and its ingest address.

import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { whenServing } from '../test/helpers/live-cli';
import { pinned } from './http-processes';
import { repoRoot } from './media';

export interface LiveOrigin {
  child: ChildProcess;
  /** The serving port's `http://host:port`. */
  url: string;
  /** The ingest port's `http://host:port`. */
  ingest: string;
}

export interface LiveOriginOptions {
  workers: number;
  /** CPUs the origin's processes run on (taskset -c), where there are two or more. */
  cpus?: string;
  /** Node flags of the primary, which node:cluster hands to its workers (`--cpu-prof`…). */
  nodeFlags?: string[];
}

export function startLiveOrigin(root: string, o: LiveOriginOptions): Promise<LiveOrigin> {
  const bin = path.join(repoRoot(), 'bin', 'origin.js');
  const args = ['serve', '--root', root, '--port', '0', '--workers', String(o.workers), '--ingest-port', '0', '-q'];
  const [cmd, argv] = pinned(o.cpus, process.execPath, [...(o.nodeFlags ?? []), bin, ...args, '--warm-up-rounds', '0']);
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'ignore'] });
  return whenServing(child, () => '').then((at) => ({ child, ...at }));
}
