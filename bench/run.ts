// Benchmark entry point: `npm run bench` (builds, then `node dist/bench/run.js`).
//
//   node dist/bench/run.js                  run every suite
//   node dist/bench/run.js --only index     run the named suite(s) (comma-separated or repeated)
//   node dist/bench/run.js --list           list the suites
//
// Suites register in SUITES below. Each writes its JSON to bench/results/<name>.json. Figures
// that miss a target are reported as MISS; the exit code is non-zero only when a suite errors.
// The memory measurements need global.gc, so without it this script re-executes itself with
// --expose-gc.

import { spawnSync } from 'node:child_process';

interface Suite {
  name: string;
  description: string;
  run: () => Promise<unknown>;
}

const SUITES: Suite[] = [
  {
    name: 'index',
    description:
      "time to a usable fragment index ('fast' mfra path and 'exact' moof walk) and its memory, on 1 h of 3 generated tracks",
    run: async () => (await import('./index-bench.js')).runIndexBench(),
  },
  {
    name: 'filter',
    description:
      'filter expression compiled once, evaluated against 20 tracks through the wasm boundary (ns per call), with JS and reference-evaluator baselines',
    run: async () => (await import('./filter-bench.js')).runFilterBench(),
  },
  {
    name: 'ts',
    description: 'HLS MPEG-TS segment generation (MB/s) next to the fMP4 segment path on the same content, same run',
    run: async () => (await import('./ts-bench.js')).runTsBench(),
  },
  {
    name: 'segments',
    description:
      'every segment kind over 60 distinct segments at 64 connections, one worker: req/s, MB/s, server CPU per request next to nginx static and our fMP4, the coalesced hot URL, RSS after every URL (needs wrk and nginx; BENCH_BEFORE_CLI adds an older build)',
    run: async () => (await import('./segments-bench.js')).runSegmentsBench(),
  },
  {
    name: 'identity',
    description:
      'every TS, packed audio, I-frame segment and HDS fragment of the segments presentation from this build and BENCH_BEFORE_CLI: SHA-256 compared',
    run: async () => (await import('./segments-identity.js')).runIdentityCheck(),
  },
  {
    name: 'drm',
    description: 'DASH segments encrypted at playout (cenc, cbcs) next to the same segments clear, same run (MB/s)',
    run: async () => (await import('./drm-bench.js')).runDrmBench(),
  },
  {
    name: 'edge',
    description:
      'proxy-wasm host overhead per request (pass-through plugin, in-process), and req/s through the embedded edge next to direct for a cached manifest',
    run: async () => (await import('./edge-bench.js')).runEdgeBench(),
  },
  {
    name: 'http',
    description:
      'origin serve under wrk (1 and N workers): manifests cold/warm and segments next to a node:http fixed body and nginx static files, edge vs direct, RSS, a 256-connection soak (needs wrk and nginx)',
    run: async () => (await import('./http-bench.js')).runHttpBench(),
  },
  {
    name: 'remote',
    description:
      'remote storage (proxy_pass to nginx) next to local files, same run: cold first manifest, segment req/s, connections to storage under 256 clients with 2 workers (needs wrk and nginx)',
    run: async () => (await import('./remote-bench.js')).runRemoteBench(),
  },
  {
    name: 'ingest',
    description:
      'live ingest: N channels (3 video renditions + audio, the test encoder at real time) into origin serve --workers 2 while readers poll /archive: ingest-to-available latency p50/p99, the largest N that holds (BENCH_INGEST_SECONDS, BENCH_INGEST_MAX)',
    run: async () => (await import('./ingest-bench.js')).runIngestBench(),
  },
  {
    name: 'll-hls',
    description:
      'LL-HLS blocking reload: N clients (own process) each looping on _HLS_msn/_HLS_part against origin serve --workers 1 while the test encoder pushes 0.32 s parts at real time: answer latency after the part left the encoder p50/p95/max, answers later than one part, worker RSS (BENCH_LL_CLIENTS, BENCH_LL_SECONDS)',
    run: async () => (await import('./ll-hls-bench.js')).runLlHlsBench(),
  },
  {
    name: 'capture',
    description:
      'origin capture of 120 s of 720p + AAC from origin serve on loopback next to ffmpeg -c copy of the same MPD URL, interleaved: x real time, peak RSS (BENCH_PASSES, BENCH_CAPTURE_SECONDS)',
    run: async () => (await import('./capture-bench.js')).runCaptureBench(),
  },
  {
    name: 'edge-plugin',
    description:
      'plugin work per request (µs) for path normalisation, alias rewrite, token check, filter validation and Basic auth, callbacks driven in-process through the host',
    run: async () => (await import('./edge-plugin-bench.js')).runEdgePluginBench(),
  },
];

const REEXEC_ENV = 'STREAMING_ORIGIN_BENCH_REEXEC';

function reexecWithGc(): never {
  if (process.env[REEXEC_ENV] === '1') {
    console.error('bench: global.gc is still missing after re-executing with --expose-gc');
    process.exit(2);
  }
  const args = [...process.execArgv, '--expose-gc', ...process.argv.slice(1)];
  const child = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, [REEXEC_ENV]: '1' } });
  if (child.error) {
    console.error(`bench: could not re-execute node with --expose-gc: ${child.error.message}`);
    process.exit(2);
  }
  if (child.signal) process.kill(process.pid, child.signal);
  process.exit(child.status ?? 1);
}

function usage(): string {
  return [
    'usage: node dist/bench/run.js [--only NAME[,NAME...]] [--list]',
    'suites:',
    ...SUITES.map((s) => `  ${s.name.padEnd(10)} ${s.description}`),
  ].join('\n');
}

function parseArgs(argv: string[]): { only: string[] | undefined; list: boolean } {
  let only: string[] | undefined;
  let list = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--list') list = true;
    else if (a === '--help' || a === '-h') {
      console.log(usage());
      process.exit(0);
    } else if (a === '--only' || a.startsWith('--only=')) {
      const value = a === '--only' ? argv[++i] : a.slice('--only='.length);
      if (!value) throw new Error('--only needs a suite name');
      only = [
        ...(only ?? []),
        ...value
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
      ];
    } else {
      throw new Error(`unknown argument '${a}'\n${usage()}`);
    }
  }
  return { only, list };
}

async function main(): Promise<number> {
  const { only, list } = parseArgs(process.argv.slice(2));
  if (list) {
    console.log(usage());
    return 0;
  }
  const unknown = (only ?? []).filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown suite(s): ${unknown.join(', ')}\n${usage()}`);
  const selected = only ? SUITES.filter((s) => only.includes(s.name)) : SUITES;
  let failed = 0;
  const started = process.hrtime.bigint();
  for (const suite of selected) {
    console.log(`=== bench: ${suite.name} ===`);
    const t0 = process.hrtime.bigint();
    try {
      await suite.run();
      console.log(`=== ${suite.name}: done in ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s ===\n`);
    } catch (e) {
      failed++;
      console.error(`=== ${suite.name}: ERROR ===\n${(e as Error)?.stack ?? String(e)}\n`);
    }
  }
  console.log(
    `bench: ${selected.length - failed}/${selected.length} suite(s) ran in ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s${failed ? `, ${failed} failed` : ''}`,
  );
  return failed > 0 ? 1 : 0;
}

if (typeof globalThis.gc !== 'function') reexecWithGc();

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(`bench: ${(e as Error)?.message ?? String(e)}`);
    process.exitCode = 2;
  },
);
