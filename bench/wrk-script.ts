// What every wrk run shares (bench/wrk.ts, test/hardening/harness/wrk.ts): its arguments, a script that
// rotates over a list of paths, starting each wrk thread at a random place, and prints wrk's
// summary as one JSON line, and the parser of that line.

/** wrk's summary as the script prints it: counts, microseconds. */
export interface WrkSummary {
  requests: number;
  bytes: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

const DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"bytes":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;

/** The script for `paths`: one path is requested as wrk's URL; more are rotated. */
export function wrkScript(paths: readonly string[]): string {
  if (paths.length <= 1) return DONE;
  const list = paths.map((p) => JSON.stringify(p)).join(',');
  return `local paths = {${list}}
local i = 0
init = function(args)
  i = math.random(#paths)
end
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
${DONE}`;
}

/** wrk's arguments: `connections` on `threads` for `seconds` with `script`, a 10 s timeout. */
export function wrkArgs(
  load: { threads: number; connections: number; seconds: number },
  script: string,
  url: string,
): string[] {
  const { threads, connections, seconds } = load;
  return ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '10s', '-s', script, url];
}

/** The summary wrk printed, or undefined when it printed none (it failed to start or to run). */
export function parseWrkSummary(stdout: string): WrkSummary | undefined {
  const m = /WRKJSON (\{.*\})/.exec(stdout);
  return m === null ? undefined : (JSON.parse(m[1]!) as WrkSummary);
}
