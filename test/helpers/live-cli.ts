// `origin serve --ingest-port 0` as its own process (the built CLI, bin/origin.js → dist/), for the
// drills that kill the origin: its serving and ingest URLs once it prints them, its stderr, and a
// SIGKILL that waits for the process to be gone.

import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from './fixtures';

export interface ServedCli {
  child: ChildProcess;
  /** http://127.0.0.1:<port> of the serving port. */
  url: string;
  /** http://127.0.0.1:<port> of the ingest listener. */
  ingest: string;
  stderr: () => string;
}

/** Starts `origin serve --root <root> --ingest-port 0 <args>` (two workers unless `args` say otherwise). */
export function serveCli(
  root: string,
  args: string[] = ['--workers', '2'],
  env: NodeJS.ProcessEnv = {},
): Promise<ServedCli> {
  const all = ['serve', '--root', root, '--port', '0', '--ingest-port', '0', '--warm-up-rounds', '0', '-q', ...args];
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'origin.js'), ...all], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return whenServing(child, () => err).then((at) => ({ child, ...at, stderr: () => err }));
}

/**
 * The serving and ingest URLs an `origin serve --ingest-port` process prints on stdout, once it has
 * printed both (also bench/live-origin.ts); rejects if it exits first.
 */
export function whenServing(child: ChildProcess, stderr: () => string): Promise<{ url: string; ingest: string }> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`origin serve exited (${code}): ${stderr()}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const s = /serving .* at (http:\/\/[\d.]+:\d+)\//.exec(out);
      const i = /live ingest at (http:\/\/[\d.]+:\d+)\//.exec(out);
      if (s !== null && i !== null) {
        child.removeAllListeners('exit');
        resolve({ url: s[1]!, ingest: i[1]! });
      }
    });
  });
}

/** Sends `signal` and resolves once the process has exited (at once if it already has). */
export function stopCli(o: ServedCli, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (o.child.exitCode !== null || o.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    o.child.once('exit', () => resolve());
    o.child.kill(signal);
  });
}
