// The `ll-hls` suite (bench/run.ts): bench/ll-hls-load.ts at 2 000 clients for 30 s (or
// BENCH_LL_CLIENTS, BENCH_LL_SECONDS), its figures on stdout and in bench/results/ll-hls.json. A
// MISS is an answer later than one part duration (320 ms) after its part left the encoder, or
// after its request if that came later, once the first second of blocking is over (the warm-up,
// reported apart: bench/ll-hls-load.ts).

import { writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runLlLoad, WARM_UP_MS } from './ll-hls-load';
import { machine, machineLine } from './machine';
import { repoRoot } from './media';

export async function runLlHlsBench(): Promise<unknown> {
  const clients = Number(process.env.BENCH_LL_CLIENTS ?? 2000);
  const seconds = Number(process.env.BENCH_LL_SECONDS ?? 30);
  console.log(`ll-hls: ${machineLine()}; ${clients} blocking clients, ${seconds} s, one worker`);
  const r = await runLlLoad(clients, seconds);
  console.log(
    `  ${r.answers} answers (${r.non200} not 200), ${r.maxInFlight} in flight at most (first playlists read in ${r.startMs} ms), ${r.waited} waited for their part; after the part left the encoder (or the request, if later): p50 ${r.p50Ms} ms p95 ${r.p95Ms} ms p99 ${r.p99Ms} ms max ${r.maxMs} ms; ${r.late} later than one part: ${r.late === 0 ? 'holds' : 'MISS'}; warm-up (first ${WARM_UP_MS / 1000} s): ${r.warmUpAnswers} answers, max ${r.warmUpMaxMs} ms, ${r.warmUpLate} later than one part; worker RSS ${r.workerRssStartMb} → ${r.workerRssMaxMb} MB; worker CPU ${r.workerCpuS} s, ${r.workerCpuUsPerAnswer} µs an answer; load ${(os.loadavg()[0] ?? 0).toFixed(1)}`,
  );
  const result = { date: new Date().toISOString(), machine: machine(), loadAverage: os.loadavg()[0], ...r };
  writeFileSync(path.join(repoRoot(), 'bench', 'results', 'll-hls.json'), JSON.stringify(result, null, 2) + '\n');
  return result;
}
