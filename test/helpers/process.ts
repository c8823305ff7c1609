// Running an external tool (ffmpeg, ffprobe, ...) from a test: its exit code and its output as
// text, never an exception for a non-zero exit (the test asserts on them).

import { spawn, spawnSync } from 'node:child_process';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a tool without blocking the event loop: for tools that ask an origin living in this process.
 * `env` is added to this process's environment.
 */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

/**
 * Runs a tool to its end and returns its code and output; a tool that could not run (missing, or
 * output past maxBuffer) has a non-zero code and the error appended to its stderr.
 */
export function runSync(cmd: string, args: string[]): Ran {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 << 20 });
  return { code: r.status ?? 1, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}
