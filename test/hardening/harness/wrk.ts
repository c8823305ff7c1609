// wrk (Debian package `wrk`) for the load runs: asynchronous, so the test samples the origin's
// processes while it runs. A Lua script rotates over the URL mix (each connection starts at a
// random place) and prints its summary as JSON; errors are wrk's own counts (connect, read,
// write, timeout) and every answer that is not 2xx/3xx (status).

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface WrkRun {
  requests: number;
  seconds: number;
  rps: number;
  bytes: number;
  latencyMs: { p50: number; p99: number; max: number };
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
}

const LUA = (paths: string[]): string => `
local paths = {${paths.map((p) => JSON.stringify(p)).join(',')}}
local i = 0
init = function(args)
  i = math.random(#paths)
end
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"bytes":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`;

export const WRK = process.env['WRK'] ?? 'wrk';

/** `connections` connections on one wrk thread for `seconds` over `paths` (absolute paths of `base`). */
export function runWrk(base: string, paths: string[], connections: number, seconds: number): Promise<WrkRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hardening-wrk-'));
  const script = path.join(dir, 'mix.lua');
  writeFileSync(script, LUA(paths));
  const args = [
    '-t',
    '1',
    '-c',
    String(connections),
    '-d',
    `${seconds}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    base + paths[0],
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => reject(new Error(`${WRK}: ${e.message} (install it: apt-get install -y wrk)`)));
    child.on('close', () => {
      const m = /WRKJSON (\{.*\})/.exec(out);
      if (m === null) return reject(new Error(`wrk printed no summary: ${out}\n${err}`));
      const j = JSON.parse(m[1]!) as Record<string, number>;
      const secs = j['durationUs']! / 1e6;
      resolve({
        requests: j['requests']!,
        seconds: secs,
        rps: Math.round(j['requests']! / secs),
        bytes: j['bytes']!,
        latencyMs: { p50: j['p50']! / 1000, p99: j['p99']! / 1000, max: j['max']! / 1000 },
        errors: {
          connect: j['connect']!,
          read: j['read']!,
          write: j['write']!,
          status: j['status']!,
          timeout: j['timeout']!,
        },
      });
    });
  });
}
