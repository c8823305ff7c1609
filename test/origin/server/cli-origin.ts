// `origin serve` as its own process: the built CLI (bin/origin.js → dist/, made by `npm test`'s
// build), for the tests of workers, signals and what the primary does. Which processes exist is
// read from /proc (Linux).

import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../helpers/fixtures';

export const linux = existsSync('/proc/self/task');

export interface Cli {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  /** stderr's complete lines parsed as JSON (with --log-format json); a line that does not parse throws. */
  jsonLines: () => Array<Record<string, unknown>>;
}

/** Starts `origin serve <args>`; resolves with its URL once it prints it. */
export function startCli(args: string[]): Promise<Cli> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'origin.js'), 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const jsonLines = (): Array<Record<string, unknown>> =>
    err
      .split('\n')
      .slice(0, -1)
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          throw new Error(`not a JSON line: ${l}`);
        }
      });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`origin serve exited (${code}): ${err}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/[\d.]+:\d+)\//.exec(out);
      if (m !== null) {
        child.removeAllListeners('exit');
        resolve({ child, url: m[1]!, stderr: () => err, jsonLines });
      }
    });
  });
}

export { childrenOf } from '../../../bench/procfs';

/** Whether a process exists (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

export async function waitFor(what: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!what()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves with the exit code (or signal) once the process has exited. */
export function exited(child: ChildProcess): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
}

/** SIGTERM; resolves with the exit code. */
export function stopCli(cli: Cli): Promise<number | string | null> {
  const done = exited(cli.child);
  cli.child.kill('SIGTERM');
  return done;
}
