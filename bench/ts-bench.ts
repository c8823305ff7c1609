// MPEG-TS benchmark: how fast the origin generates HLS MPEG-TS segments, next to the fMP4
// segment path (the reboxing path of playout: new moofs + the source's sample bytes by range),
// in the same run, on the same content: the long generated sources of bench/media.ts (1 h of
// H.264 320x180 ~250 kb/s and AAC 64 kb/s, 2 s fragments), packaged into one .ism.
//
// What is measured, through the playout handler the HTTP server calls (handlePlayout: route,
// view, rendition, segment, ETag), every segment of the hour in turn (HLS 4 s segments):
//  - ts:   `<name>-<audio>-<video>-<n>.ts`, the multiplexed TS segment (bytes in memory);
//  - fmp4: `hls/<name>-<video>-<n>.m4s` + `hls/<name>-<audio>-<n>.m4s`, the same media as two
//          fMP4 segments, their file ranges read into memory as the HTTP layer would stream them;
//  - ts writer alone: segments/hls-segments.ts tsSegment() on a view built once (no routing, view
//          building or ETag): what the TS generation itself costs.
// Throughput = output bytes / wall time per pass (MB/s, 10^6 bytes), and media bytes (the
// samples, identical on both paths) / time; median over the passes. Also: the first TS request
// of a cold presentation, which pays the one-time continuity-counter scan of both tracks (every
// moof read once), and the TS overhead (TS bytes / fMP4 bytes).
// Nothing here asserts timings; the JSON goes to bench/results/ts.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { main as cli } from '../origin/cli/main';
import { PresentationStore } from '../origin/cache/presentation-store';
import { PresentationTrack } from '../origin/model/presentation';
import { viewForQuery } from '../origin/model/view';
import { findRendition } from '../origin/model/rendition';
import { tsSegment } from '../origin/segments/hls-segments';
import { newPlayoutContext } from '../origin/server/handlers';
import { fetchThrough, Sink } from './in-process';
import { stats, Stats } from './stats';
import { ensureLongSources, repoRoot } from './media';
import { machine, machineLine } from './machine';

export interface TsBenchOptions {
  hours?: number;
  passes?: number;
  outFile?: string;
  log?: (line: string) => void;
}

const selectAll = (tracks: readonly PresentationTrack[]): number[] => tracks.map((_, i) => i);
const now = (): bigint => process.hrtime.bigint();
const ms = (from: bigint): number => Number(now() - from) / 1e6;

export async function runTsBench(options: TsBenchOptions = {}): Promise<Record<string, unknown>> {
  const log = options.log ?? ((line: string) => console.log(line));
  const hours = options.hours ?? 1;
  const passes = options.passes ?? 5;
  const root = repoRoot();
  const outFile = options.outFile ?? path.join(root, 'bench', 'results', 'ts.json');
  const [video, , audio] = await ensureLongSources(hours, { log });
  const dir = mkdtempSync(path.join(tmpdir(), 'ts-bench-'));
  try {
    const ism = path.join(dir, 'bench.ism');
    const err = new Sink();
    const code = await cli(['package', '-q', '-o', ism, video!, audio!], new Sink(), err);
    if (code !== 0) throw new Error(`packaging failed: ${err.text}`);

    // Names from the view the origin builds for an HLS request.
    const probeStore = new PresentationStore();
    const view = viewForQuery(await probeStore.presentation(ism), 'hls', '', selectAll);
    const keyOf = (type: string): string => {
      const t = view.tracks.find((x) => x.track.properties.type === type)!;
      return `${t.track.properties.trackName}=${t.track.properties.systemBitrate}`;
    };
    const v = keyOf('video');
    const a = keyOf('audio');
    const segments = view.tracks.find((x) => x.track.properties.type === 'video')!.segments.count;
    const tsUrl = (n: number): string => `/bench.ism/bench-${a}-${v}-${n}.ts`;
    const fmp4Urls = (n: number): string[] => [
      `/bench.ism/hls/bench-${v}-${n}.m4s`,
      `/bench.ism/hls/bench-${a}-${n}.m4s`,
    ];

    // Cold: a fresh store, the first TS request pays the continuity scan; then the same segment again.
    const cold = newPlayoutContext(new PresentationStore(), selectAll);
    await fetchThrough(cold, ism, fmp4Urls(1)[0]!); // presentation and index loaded: not part of the TS cost
    let t0 = now();
    await fetchThrough(cold, ism, tsUrl(segments));
    const firstTsMs = ms(t0);
    t0 = now();
    await fetchThrough(cold, ism, tsUrl(segments));
    const warmTsMs = ms(t0);

    const ctx = newPlayoutContext(new PresentationStore(), selectAll);
    await fetchThrough(ctx, ism, tsUrl(1));
    const tsRates: number[] = [];
    const fmp4Rates: number[] = [];
    const tsMs: number[] = [];
    const fmp4Ms: number[] = [];
    let tsBytes = 0;
    let fmp4Bytes = 0;
    for (let pass = 0; pass < passes; pass++) {
      // Alternate the order so that drift hits both paths alike.
      const order = pass % 2 === 0 ? ['ts', 'fmp4'] : ['fmp4', 'ts'];
      for (const which of order) {
        const start = now();
        let bytes = 0;
        for (let n = 1; n <= segments; n++) {
          if (which === 'ts') bytes += (await fetchThrough(ctx, ism, tsUrl(n))).bytes;
          else for (const url of fmp4Urls(n)) bytes += (await fetchThrough(ctx, ism, url)).bytes;
        }
        const elapsed = ms(start);
        if (which === 'ts') {
          tsRates.push(bytes / 1e3 / elapsed);
          tsMs.push(elapsed / segments);
          tsBytes = bytes;
        } else {
          fmp4Rates.push(bytes / 1e3 / elapsed);
          fmp4Ms.push(elapsed / segments);
          fmp4Bytes = bytes;
        }
      }
    }
    // The writer alone, on one view.
    const fixedView = viewForQuery(await ctx.store.presentation(ism), 'hls', '', selectAll);
    const rendition = findRendition(fixedView, `${a}-${v}`)!;
    const writerRates: number[] = [];
    for (let pass = 0; pass < passes; pass++) {
      const start = now();
      let bytes = 0;
      for (let i = 0; i < segments; i++)
        bytes += (await tsSegment(fixedView, rendition, i, ctx.files.opener)).byteLength;
      writerRates.push(bytes / 1e3 / ms(start));
    }
    const writer = stats(writerRates);
    cold.files.close();
    ctx.files.close();
    const ts: Stats = stats(tsRates);
    const fmp4: Stats = stats(fmp4Rates);
    const perSegmentTs = stats(tsMs);
    const perSegmentFmp4 = stats(fmp4Ms);
    log(
      `ts benchmark: ${hours} h of H.264 + AAC (${path.basename(video!)}, ${path.basename(audio!)}), ${segments} segments of 4 s, ${passes} passes, ${machineLine()}`,
    );
    log('');
    log(
      `  MPEG-TS (multiplexed)   ${ts.median.toFixed(1)} MB/s output (min ${ts.min.toFixed(1)}, max ${ts.max.toFixed(1)}), ${perSegmentTs.median.toFixed(2)} ms per segment, ${(tsBytes / 1e6).toFixed(1)} MB per pass`,
    );
    log(
      `  fMP4 (video + audio)    ${fmp4.median.toFixed(1)} MB/s output (min ${fmp4.min.toFixed(1)}, max ${fmp4.max.toFixed(1)}), ${perSegmentFmp4.median.toFixed(2)} ms per segment pair, ${(fmp4Bytes / 1e6).toFixed(1)} MB per pass`,
    );
    log(
      `  TS writer alone         ${writer.median.toFixed(1)} MB/s output (min ${writer.min.toFixed(1)}, max ${writer.max.toFixed(1)}): tsSegment() on a prebuilt view`,
    );
    log(
      `  TS / fMP4: ${(ts.median / fmp4.median).toFixed(2)}x the throughput, ${((tsBytes / fmp4Bytes - 1) * 100).toFixed(1)} % more bytes`,
    );
    log(
      `  first TS request of a cold presentation (continuity scan of both tracks): ${firstTsMs.toFixed(0)} ms; the same segment again: ${warmTsMs.toFixed(1)} ms`,
    );
    const result = {
      suite: 'ts',
      date: new Date().toISOString(),
      machine: machine(),
      settings: { hours, passes, segments, segmentSeconds: 4, sources: [path.basename(video!), path.basename(audio!)] },
      unit: 'MB/s of output (10^6 bytes per second), through handlePlayout, body in memory',
      results: {
        ts: { throughputMBs: ts, msPerSegment: perSegmentTs, bytesPerPass: tsBytes },
        fmp4: { throughputMBs: fmp4, msPerSegmentPair: perSegmentFmp4, bytesPerPass: fmp4Bytes },
        tsWriterAlone: { throughputMBs: writer },
        tsOverFmp4Throughput: Number((ts.median / fmp4.median).toFixed(3)),
        tsExtraBytesPercent: Number(((tsBytes / fmp4Bytes - 1) * 100).toFixed(2)),
        coldFirstTsRequestMs: Number(firstTsMs.toFixed(1)),
        warmSameSegmentMs: Number(warmTsMs.toFixed(2)),
      },
    };
    mkdirSync(path.dirname(outFile), { recursive: true });
    writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
    log(`results: ${path.relative(root, outFile)}`);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
