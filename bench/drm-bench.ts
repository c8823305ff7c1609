// Encryption benchmark: DASH media segments of one presentation served clear, with cenc and with
// cbcs, through the origin's handler in one process (one worker's work, no HTTP), in the same run.
// Every pass requests the same 120 consecutive segments of the 720p video and the 128 kb/s audio
// (bench/media.ts httpBenchSpecs), bodies materialised in memory: the clear path reads its file
// ranges (as the HTTP layer would stream them), the encrypted paths build and encrypt the segment.
// Passes alternate the order of the kinds. Reports MB/s of output per kind (wall time, and per
// CPU-second of the process) and the ratio to clear, the median of the passes' own ratios;
// docs/design/drm.md explains the cost. Each timed pass starts from a collected heap (global.gc,
// which bench/run.ts provides), so a kind's own garbage is collected on its own time and not on
// the next kind's. Every kind is requested once untimed first, so `cenc`
// and `cbcs` are repeated requests, made from their kept layouts (segments/fmp4/encrypted-layout.ts:
// the read and the AES); `cenc-first` and `cbcs-first` run through a context that keeps no
// layouts, every request built as a first request is. The encrypted kinds also run through a
// context with the encrypted-segment cache on (`--encrypted-segment-cache-bytes`, off by default):
// what a warm cache gives, every request a hit.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { main as cli } from '../origin/cli/main';
import { PresentationStore } from '../origin/cache/presentation-store';
import { PresentationTrack } from '../origin/model/presentation';
import { trackKey, viewForQuery } from '../origin/model/view';
import { newPlayoutContext, PlayoutContext } from '../origin/server/handlers';
import { PresentationIds } from '../origin/cache/request-caches';
import { EncryptedSegments } from '../origin/segments/fmp4/encrypted-layout';
import { fetchThrough, Sink } from './in-process';
import { stats } from './stats';
import { median } from './wrk';
import { ensureLongSourcesReport, httpBenchSpecs, repoRoot } from './media';
import { machine, machineLine } from './machine';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const SEGMENTS = 120;
const KINDS = ['clear', 'cenc', 'cbcs', 'cenc-first', 'cbcs-first', 'cenc-cached', 'cbcs-cached'] as const;
type Kind = (typeof KINDS)[number];
/** The cache's bound in the cached runs: one pass of each scheme fits (about 48 MB each). */
const CACHE_BYTES = 256 << 20;
/** The presentation a kind requests. */
const ism = (kind: Kind): string => kind.replace(/-(cached|first)$/, '');

const selectAll = (tracks: readonly PresentationTrack[]): number[] => tracks.map((_, i) => i);

export async function runDrmBench(options: { passes?: number; log?: (l: string) => void } = {}): Promise<unknown> {
  const log = options.log ?? ((line: string) => console.log(line));
  const passes = options.passes ?? Number(process.env['BENCH_PASSES'] ?? 9);
  const report = await ensureLongSourcesReport(0.5, { specs: httpBenchSpecs(30), log: (l) => log(`[media] ${l}`) });
  const video = report.files.find((f) => f.includes('1280x720'))!;
  const audio = report.files.find((f) => f.includes('aac_128k'))!;
  const dir = mkdtempSync(path.join(tmpdir(), 'drm-bench-'));
  try {
    const extra: Record<string, string[]> = {
      clear: [],
      cenc: [`--drm_a.key=${KID}:${KEY}`],
      cbcs: [`--drm_a.key=${KID}:${KEY}`, '--mpd.protection_scheme=cbcs'],
    };
    for (const kind of ['clear', 'cenc', 'cbcs']) {
      const err = new Sink();
      const code = await cli(
        ['package', '-q', '-o', path.join(dir, `${kind}.ism`), video, audio, ...extra[kind]!],
        new Sink(),
        err,
      );
      if (code !== 0) throw new Error(`packaging failed: ${err.text}`);
    }
    const plain = newPlayoutContext(new PresentationStore(), selectAll);
    const cached = newPlayoutContext(new PresentationStore(), selectAll, undefined, CACHE_BYTES);
    // No layouts kept: every encrypted request is built as the first request of its segment is.
    const first = newPlayoutContext(new PresentationStore(), selectAll);
    first.encryptedLayouts = new EncryptedSegments(new PresentationIds(), 0);
    const ctx = (kind: Kind): PlayoutContext =>
      kind.endsWith('-cached') ? cached : kind.endsWith('-first') ? first : plain;
    const probe = await new PresentationStore().presentation(path.join(dir, 'clear.ism'));
    const view = viewForQuery(probe, 'dash', '', selectAll);
    // DASH $Time$ URLs of SEGMENTS consecutive segments of each track (from the 10th).
    const urls = (kind: Kind): string[] =>
      view.tracks.flatMap((t) => {
        const out: string[] = [];
        const name = ism(kind);
        for (let i = 10; i < Math.min(t.segments.count, 10 + SEGMENTS); i++) {
          out.push(`/${name}.ism/dash/${name}-${trackKey(t.track)}-${t.segments.segment(i).time}.dash`);
        }
        return out;
      });
    const file = (kind: Kind): string => path.join(dir, `${ism(kind)}.ism`);
    // One untimed pass of every kind: presentations loaded, layouts kept (cenc, cbcs), the cache
    // filled (the cached kinds' timed passes are all hits).
    for (const kind of KINDS) for (const url of urls(kind)) await fetchThrough(ctx(kind), file(kind), url);
    // Per pass and kind: MB/s of wall time, and MB per second of this process's CPU time (user +
    // system), which other work on a shared machine moves far less.
    const rates: Record<string, number[]> = Object.fromEntries(KINDS.map((k) => [k, []]));
    const cpuRates: Record<string, number[]> = Object.fromEntries(KINDS.map((k) => [k, []]));
    let bytes: Record<string, number> = {};
    for (let pass = 0; pass < passes; pass++) {
      const order = [...KINDS.slice(pass % KINDS.length), ...KINDS.slice(0, pass % KINDS.length)];
      for (const kind of order) {
        // Each pass starts from a collected heap, untimed: the garbage of the kind before (Node's
        // cipher outputs) is not collected on this kind's time.
        (globalThis as { gc?: () => void }).gc?.();
        const start = process.hrtime.bigint();
        const cpu0 = process.cpuUsage();
        let total = 0;
        for (const url of urls(kind)) total += (await fetchThrough(ctx(kind), file(kind), url)).bytes;
        const ms = Number(process.hrtime.bigint() - start) / 1e6;
        const cpu = process.cpuUsage(cpu0);
        rates[kind]!.push(total / 1e3 / ms);
        cpuRates[kind]!.push(total / 1e3 / Math.max(1, (cpu.user + cpu.system) / 1e3));
        bytes = { ...bytes, [kind]: total };
      }
    }
    const s = Object.fromEntries(KINDS.map((k) => [k, stats(rates[k]!)]));
    const c = Object.fromEntries(KINDS.map((k) => [k, stats(cpuRates[k]!)]));
    // A ratio is the median over the passes of the pass's own ratio (neighbouring runs, as
    // segments-bench.ts does), so a change of load between passes does not decide it.
    const ratio = (of: Record<string, number[]>, kind: Kind): number =>
      median(of[kind]!.map((r, pass) => r / of.clear![pass]!));
    log(
      `drm benchmark: ${SEGMENTS} DASH segments per track of ${path.basename(video)} + ${path.basename(audio)}, ${passes} passes, ${machineLine()}`,
    );
    for (const kind of KINDS) {
      const x =
        kind === 'clear' ? '' : `, ${ratio(rates, kind).toFixed(2)}x clear (CPU: ${ratio(cpuRates, kind).toFixed(2)}x)`;
      log(
        `  ${kind.padEnd(11)} ${s[kind]!.median.toFixed(1)} MB/s (min ${s[kind]!.min.toFixed(1)}, max ${s[kind]!.max.toFixed(1)}; ${c[kind]!.median.toFixed(1)} MB per CPU-s)${x}, ${(bytes[kind]! / 1e6).toFixed(1)} MB per pass`,
      );
    }
    const result = {
      suite: 'drm',
      date: new Date().toISOString(),
      machine: machine(),
      settings: {
        segmentsPerTrack: SEGMENTS,
        passes,
        sources: [path.basename(video), path.basename(audio)],
        encryptedSegmentCacheBytes: CACHE_BYTES,
      },
      unit: 'MB/s of output through handlePlayout, one process, bodies in memory; MB per CPU-second of the process',
      results: Object.fromEntries(KINDS.map((k) => [k, { throughputMBs: s[k], cpuMBs: c[k], bytesPerPass: bytes[k] }])),
      ratios: {
        note: 'median over the passes of each pass ratio to clear',
        cencOverClear: ratio(rates, 'cenc'),
        cbcsOverClear: ratio(rates, 'cbcs'),
        cencCachedOverClear: ratio(rates, 'cenc-cached'),
        cbcsCachedOverClear: ratio(rates, 'cbcs-cached'),
        cencFirstOverClear: ratio(rates, 'cenc-first'),
        cbcsFirstOverClear: ratio(rates, 'cbcs-first'),
        cpu: {
          cencOverClear: ratio(cpuRates, 'cenc'),
          cbcsOverClear: ratio(cpuRates, 'cbcs'),
          cencCachedOverClear: ratio(cpuRates, 'cenc-cached'),
          cbcsCachedOverClear: ratio(cpuRates, 'cbcs-cached'),
          cencFirstOverClear: ratio(cpuRates, 'cenc-first'),
          cbcsFirstOverClear: ratio(cpuRates, 'cbcs-first'),
        },
      },
    };
    writeFileSync(path.join(repoRoot(), 'bench', 'results', 'drm.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
