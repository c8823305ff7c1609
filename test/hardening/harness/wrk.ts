// wrk (Debian package `wrk`) for the load runs: asynchronous, so the test samples the origin's
// processes while it runs. The Lua script of bench/wrk-script.ts rotates over the URL mix (each
// wrk thread starts at a random place) and prints its summary as JSON; errors are wrk's own
// counts (connect, read, write, timeout) and every answer that is not 2xx/3xx (status).

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseWrkSummary, wrkArgs, wrkScript } from '../../../bench/wrk-script';

export interface WrkRun {
  requests: number;
  seconds: number;
  rps: number;
  bytes: number;
  latencyMs: { p50: number; p99: number; max: number };
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
}

export const WRK = process.env['WRK'] ?? 'wrk';

/** `connections` connections on one wrk thread for `seconds` over `paths` (absolute paths of `base`). */
export function runWrk(base: string, paths: string[], connections: number, seconds: number): Promise<WrkRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hardening-wrk-'));
  const script = path.join(dir, 'mix.lua');
  writeFileSync(script, wrkScript(paths));
  const args = wrkArgs({ threads: 1, connections, seconds }, script, base + paths[0]);
  return new Promise((resolve, reject) => {
    const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => reject(new Error(`${WRK}: ${e.message} (install it: apt-get install -y wrk)`)));
    child.on('close', () => {
      const j = parseWrkSummary(out);
      if (j === undefined) return reject(new Error(`wrk printed no summary: ${out}\n${err}`));
      const secs = j.durationUs / 1e6;
      resolve({
        requests: j.requests,
        seconds: secs,
        rps: Math.round(j.requests / secs),
        bytes: j.bytes,
        latencyMs: { p50: j.p50 / 1000, p99: j.p99 / 1000, max: j.max / 1000 },
        errors: { connect: j.connect, read: j.read, write: j.write, status: j.status, timeout: j.timeout },
      });
    });
  });
}
