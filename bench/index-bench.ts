// Index benchmark: time to a usable fragment index and the memory it keeps, on an hour of three
// tracks (two H.264 renditions + AAC, one track per file, 2 s fragments) generated at bench time.
//
// Acceptance targets: <= 50 ms per hour of 3 tracks from the page cache ('fast', mfra path),
// <= 1 MB per track-hour of retained index memory.
//
// What is measured (all from a warm page cache: every file is read once first):
//  - fast:  FileSource.open + readMediaFile(source, 'fast') + close, for the three files in turn;
//           N iterations after warm-ups. The same, three files concurrently, as context.
//  - exact: the same with the moof walk, fewer iterations, as context.
//  - reference floors: what any index of these files costs at least through the same I/O layer
//           (open + stat + read the 16-byte mfro + close), the raw fs.promises cost of reading the
//           whole mfra, and the synchronous open/read16/close syscalls (the libuv thread-pool
//           round trips excluded). Ratios fast/floor say how far the index is from its floor.
//  - memory: the FragmentTable typed arrays' byteLength, and the heap cost measured with
//           global.gc: retain `copies` complete MediaFile indexes, compare heapUsed+arrayBuffers.
//
// Timing misses are reported (MISS), never thrown: only errors make the suite fail.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { trackDuration } from '../origin/model/media';
import { gcOrThrow, measureHeap, tableBytes } from './index-memory';
import {
  floorOpenRead16,
  floorReadMfra,
  floorSyncOpenRead16,
  indexMetered,
  indexOne,
  indexSequential,
  warmPageCache,
} from './index-reads';
import { ensureLongSourcesReport, repoRoot } from './media';
import { machine, machineLine } from './machine';
import { msSince, now, round, sample, sampleInterleaved, scale, stats, Stats } from './stats';

export const TARGET_MS_PER_HOUR_OF_3_TRACKS = 50;
/** 1 MB taken as 10^6 bytes (the stricter reading). */
export const TARGET_BYTES_PER_TRACK_HOUR = 1_000_000;

export interface IndexBenchOptions {
  hours?: number;
  iterations?: number;
  warmups?: number;
  exactIterations?: number;
  exactWarmups?: number;
  /**
   * Index copies retained for the heap measurement. V8's own heap moves by +-100-200 kB between
   * two gc'd snapshots (feedback, code, caches), so the per-copy figure is only as good as
   * that noise divided by the copies: 200 'fast' copies (1 s) bring it to ~1 kB per 3-file index.
   */
  copies?: number;
  /** The same for 'exact' (each copy walks every moof; default 20). */
  exactCopies?: number;
  /** Default <repo>/bench/results/index.json */
  outFile?: string;
  log?: (line: string) => void;
}

// --- report ------------------------------------------------------------------------------------

const fmtMs = (x: number): string => (x < 10 ? x.toFixed(3) : x < 100 ? x.toFixed(2) : x.toFixed(1));
const fmtBytes = (b: number): string =>
  Math.abs(b) >= 1e6 ? `${(b / 1e6).toFixed(2)} MB` : Math.abs(b) >= 1e3 ? `${(b / 1e3).toFixed(1)} kB` : `${b} B`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r, i) => {
      const line = r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
      return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

export interface TargetCheck {
  target: string;
  limit: number;
  measured: number;
  unit: string;
  basis: string;
  pass: boolean;
}

export async function runIndexBench(
  options: IndexBenchOptions = {},
): Promise<{ result: Record<string, unknown>; targets: TargetCheck[] }> {
  const log = options.log ?? ((line: string) => console.log(line));
  const hours = options.hours ?? 1;
  const iterations = options.iterations ?? 30;
  const warmups = options.warmups ?? 3;
  const exactIterations = options.exactIterations ?? 5;
  const exactWarmups = options.exactWarmups ?? 1;
  const copies = options.copies ?? 200;
  const exactCopies = options.exactCopies ?? 20;
  const root = repoRoot();
  const outFile = options.outFile ?? path.join(root, 'bench', 'results', 'index.json');
  gcOrThrow();

  // 1. Media.
  const sources = await ensureLongSourcesReport(hours);
  const files = sources.files;
  const rel = (f: string): string => path.relative(root, f);

  // 2. Warm the page cache (read every byte once), then time the first index call of this
  //    process: with the cache warm, what it adds over the steady state is JIT/module warm-up.
  const warm = await warmPageCache(files);
  log(
    `page cache warmed: read ${fmtBytes(warm.bytes)} in ${fmtMs(warm.ms)} ms (${(warm.bytes / 1e6 / (warm.ms / 1e3)).toFixed(0)} MB/s)`,
  );
  const t0 = now();
  const first = await indexSequential(files, 'fast');
  const firstCallMs = msSince(t0);

  // What the index is.
  const tracks = first.flatMap((m) =>
    m.tracks.map((t) => ({
      file: rel(m.name),
      indexedBy: m.indexedBy,
      type: t.properties.type,
      codecs: t.properties.codecs,
      timescale: t.properties.TimeScale,
      fragments: t.fragments.count,
      seconds: round(Number(trackDuration(t.fragments)) / t.properties.TimeScale, 3),
      tableBytes: tableBytes(t.fragments),
      systemBitrate: t.properties.systemBitrate,
    })),
  );
  const odd: string[] = [];
  for (const m of first) if (m.indexedBy !== 'mfra') odd.push(`${rel(m.name)}: 'fast' fell back to ${m.indexedBy}`);
  if (tracks.length !== 3) odd.push(`${tracks.length} tracks, expected 3`);
  const trackHours = tracks.reduce((s, t) => s + t.seconds, 0) / 3600;
  const hoursOf3Tracks = trackHours / 3;

  // 3. Fast, sequential (the figure), interleaved with the reference floors (section 5); then
  //    the three files concurrently (context) and the per-file split.
  let mfraBytes = 0;
  const [fastSeq, refOpenRead16, refReadMfra, refSync] = (await sampleInterleaved(iterations, warmups, [
    () => indexSequential(files, 'fast'),
    () => floorOpenRead16(files),
    async () => {
      mfraBytes = await floorReadMfra(files);
    },
    async () => floorSyncOpenRead16(files),
  ])) as [number[], number[], number[], number[]];
  const fastConc = await sample(iterations, warmups, () => Promise.all(files.map((f) => indexOne(f, 'fast'))));
  const perFile: Array<{
    file: string;
    totalMs: number[];
    openMs: number[];
    readMs: number[];
    closeMs: number[];
    reads: number;
    bytes: number;
  }> = files.map((f) => ({
    file: rel(f),
    totalMs: [],
    openMs: [],
    readMs: [],
    closeMs: [],
    reads: 0,
    bytes: 0,
  }));
  for (let i = 0; i < iterations; i++) {
    for (let j = 0; j < files.length; j++) {
      const r = await indexMetered(files[j]!, 'fast');
      const p = perFile[j]!;
      p.totalMs.push(r.totalMs);
      p.openMs.push(r.openMs);
      p.readMs.push(r.readMs);
      p.closeMs.push(r.closeMs);
      p.reads = r.reads;
      p.bytes = r.bytes;
    }
  }

  // 4. Exact, as context.
  const exactSeq = await sample(exactIterations, exactWarmups, () => indexSequential(files, 'exact'));
  const exactPerFile = [];
  for (const f of files) {
    const r = await indexMetered(f, 'exact');
    exactPerFile.push({
      file: rel(f),
      totalMs: round(r.totalMs),
      readMs: round(r.readMs),
      reads: r.reads,
      bytes: r.bytes,
      indexedBy: r.media.indexedBy,
    });
  }
  // Cross-check: both modes give the same fragment table (the fast one is only usable if so).
  const exactMedia = await indexSequential(files, 'exact');
  for (let i = 0; i < files.length; i++) {
    const a = first[i]!.tracks;
    const b = exactMedia[i]!.tracks;
    for (let t = 0; t < a.length; t++) {
      const fa = a[t]!.fragments;
      const fb = b[t]?.fragments;
      const columns = ['times', 'durations', 'offsets', 'sizes', 'keyframes'] as const;
      const differ =
        !fb || fa.count !== fb.count
          ? ['count']
          : columns.filter(
              (c) =>
                (fa[c] as ArrayLike<unknown>).length !== (fb[c] as ArrayLike<unknown>).length ||
                Array.prototype.some.call(fa[c], (x: unknown, k: number) => x !== (fb[c] as ArrayLike<unknown>)[k]),
            );
      if (differ.length > 0)
        odd.push(`${rel(files[i]!)} track ${t}: 'fast' and 'exact' fragment tables differ in ${differ.join(', ')}`);
    }
  }

  // 5. Memory.
  const typedBytes = tracks.reduce((s, t) => s + t.tableBytes, 0);
  const heapFast = await measureHeap(files, 'fast', copies);
  const heapExact = await measureHeap(files, 'exact', exactCopies);

  // --- figures ---
  const fast = stats(fastSeq);
  const fastPerHour = scale(fast, 1 / hoursOf3Tracks);
  const conc = stats(fastConc);
  const exact = stats(exactSeq);
  const exactPerHour = scale(exact, 1 / hoursOf3Tracks);
  const floor16 = stats(refOpenRead16);
  const floorMfra = stats(refReadMfra);
  const floorSync = stats(refSync);
  const typedPerTrackHour = Math.round(typedBytes / trackHours);
  const heapPerTrackHour = Math.round(heapFast.bytesPerCopy / trackHours);
  const heapExactPerTrackHour = Math.round(heapExact.bytesPerCopy / trackHours);
  const ratio = (a: number, b: number): number => round(a / b, 2);

  const targets: TargetCheck[] = [
    {
      target: "time to a usable index ('fast', page cache)",
      limit: TARGET_MS_PER_HOUR_OF_3_TRACKS,
      measured: fastPerHour.median,
      unit: 'ms per hour of 3 tracks',
      basis: `median of ${iterations}; p95 ${fmtMs(fastPerHour.p95)}`,
      pass: fastPerHour.median <= TARGET_MS_PER_HOUR_OF_3_TRACKS,
    },
    {
      target: 'index memory',
      limit: TARGET_BYTES_PER_TRACK_HOUR,
      measured: Math.max(typedPerTrackHour, heapPerTrackHour),
      unit: 'bytes per track-hour',
      basis: 'larger of typed-array bytes and gc heap measurement',
      pass: Math.max(typedPerTrackHour, heapPerTrackHour) <= TARGET_BYTES_PER_TRACK_HOUR,
    },
  ];

  // --- print ---
  log('');
  log(
    `index benchmark: ${tracks.length} tracks, ${trackHours.toFixed(3)} track-hours (${hoursOf3Tracks.toFixed(3)} h of 3 tracks), ${machineLine()}`,
  );
  log(
    table([
      ['file', 'track', 'fragments', 'seconds', 'size', 'table bytes'],
      ...tracks.map((t, i) => [
        t.file,
        `${t.type} ${t.codecs}`,
        String(t.fragments),
        t.seconds.toFixed(1),
        fmtBytes(sources.details[i]?.size ?? 0),
        String(t.tableBytes),
      ]),
    ]),
  );
  log('');
  const row = (name: string, st: Stats, perHour = true): string[] => [
    name,
    String(st.n),
    fmtMs(st.min),
    fmtMs(st.median),
    fmtMs(st.p95),
    perHour ? fmtMs(st.median / hoursOf3Tracks) : '',
    ratio(st.median, floor16.median).toFixed(2),
  ];
  log('time for all 3 files (ms), page cache warm');
  log(
    table([
      ['measurement', 'n', 'min', 'median', 'p95', 'median/h of 3 tr', 'x floor16'],
      row('fast (mfra), sequential  <- target', fast),
      row('fast (mfra), 3 concurrent', conc),
      row('exact (moof walk), sequential', exact),
      row('floor: FileSource open+read 16 B+close', floor16),
      row('ref: fs open+stat+read mfro+mfra+close', floorMfra),
      row('ref: sync open+fstat+read 16 B+close', floorSync),
    ]),
  );
  log(
    `first 'fast' call in this process (cold JIT, warm page cache): ${fmtMs(firstCallMs)} ms; mfra bytes of the 3 files: ${fmtBytes(mfraBytes)}`,
  );
  log('');
  log("'fast' per file (median ms): where the time goes");
  log(
    table([
      ['file', 'total', 'open', 'reads', 'close', 'other (CPU)', 'reads n', 'bytes read'],
      ...perFile.map((p) => {
        const tot = stats(p.totalMs).median;
        const op = stats(p.openMs).median;
        const rd = stats(p.readMs).median;
        const cl = stats(p.closeMs).median;
        return [
          p.file,
          fmtMs(tot),
          fmtMs(op),
          fmtMs(rd),
          fmtMs(cl),
          fmtMs(Math.max(0, tot - op - rd - cl)),
          String(p.reads),
          fmtBytes(p.bytes),
        ];
      }),
      ...exactPerFile.map((p) => [
        `${p.file} (exact, 1 run)`,
        fmtMs(p.totalMs),
        '',
        fmtMs(p.readMs),
        '',
        '',
        String(p.reads),
        fmtBytes(p.bytes),
      ]),
    ]),
  );
  log('');
  log('index memory (3 tracks)');
  log(
    table([
      ['measurement', 'per 3-file index', 'per track-hour'],
      ['FragmentTable typed arrays (byteLength)', fmtBytes(typedBytes), fmtBytes(typedPerTrackHour)],
      [
        `heap, 'fast', ${heapFast.copies} copies retained (heapUsed+arrayBuffers)`,
        fmtBytes(heapFast.bytesPerCopy),
        fmtBytes(heapPerTrackHour),
      ],
      [
        `  of which arrayBuffers`,
        fmtBytes(Math.round(heapFast.arrayBuffersDelta / heapFast.copies)),
        fmtBytes(Math.round(heapFast.arrayBuffersDelta / heapFast.copies / trackHours)),
      ],
      [
        `  control: same loop, nothing retained`,
        fmtBytes(heapFast.controlBytesPerCopy),
        fmtBytes(Math.round(heapFast.controlBytesPerCopy / trackHours)),
      ],
      [
        `heap, 'exact', ${heapExact.copies} copies retained`,
        fmtBytes(heapExact.bytesPerCopy),
        fmtBytes(heapExactPerTrackHour),
      ],
      [
        `  of which arrayBuffers`,
        fmtBytes(Math.round(heapExact.arrayBuffersDelta / heapExact.copies)),
        fmtBytes(Math.round(heapExact.arrayBuffersDelta / heapExact.copies / trackHours)),
      ],
      [
        `  control: same loop, nothing retained`,
        fmtBytes(heapExact.controlBytesPerCopy),
        fmtBytes(Math.round(heapExact.controlBytesPerCopy / trackHours)),
      ],
    ]),
  );
  log('');
  log('targets');
  for (const t of targets) {
    const shown = t.unit.startsWith('bytes') ? fmtBytes(t.measured) : fmtMs(t.measured);
    const limit = t.unit.startsWith('bytes') ? fmtBytes(t.limit) : `${t.limit}`;
    log(
      `  ${t.pass ? 'PASS' : 'MISS'}  ${t.target}: ${shown} ${t.unit.replace(/^bytes /, '')} (target <= ${limit}; ${t.basis})`,
    );
  }
  for (const o of odd) log(`  NOTE  ${o}`);

  // --- JSON ---
  const result = {
    suite: 'index',
    date: new Date().toISOString(),
    machine: machine(),
    settings: { hours, iterations, warmups, exactIterations, exactWarmups, copies, exactCopies },
    media: {
      trackHours: round(trackHours, 4),
      hoursOf3Tracks: round(hoursOf3Tracks, 4),
      generatedThisRun: sources.generated.map(rel),
      generationSecondsThisRun: sources.generationSeconds,
      files: sources.details.map((d) => ({
        file: rel(d.file),
        size: d.size,
        description: d.description,
        generatedAt: d.generatedAt,
        generationSeconds: d.generationSeconds,
      })),
      tracks,
      mfraBytes,
      pageCacheWarmup: { bytes: warm.bytes, ms: round(warm.ms) },
    },
    fast: {
      unit: 'ms for all 3 files',
      firstCallMs: round(firstCallMs),
      sequential: fast,
      sequentialPerHourOf3Tracks: fastPerHour,
      concurrent: conc,
      perFile: perFile.map((p) => ({
        file: p.file,
        totalMs: stats(p.totalMs),
        openMs: stats(p.openMs),
        readMs: stats(p.readMs),
        closeMs: stats(p.closeMs),
        reads: p.reads,
        bytesRead: p.bytes,
      })),
    },
    exact: {
      unit: 'ms for all 3 files',
      sequential: exact,
      sequentialPerHourOf3Tracks: exactPerHour,
      perFile: exactPerFile,
    },
    samplesMs: {
      fastSequential: fastSeq.map((x) => round(x)),
      fastConcurrent: fastConc.map((x) => round(x)),
      exactSequential: exactSeq.map((x) => round(x)),
      floorFileSourceOpenRead16Close: refOpenRead16.map((x) => round(x)),
    },
    reference: {
      fileSourceOpenRead16Close: floor16,
      fsPromisesOpenStatReadMfroMfraClose: floorMfra,
      syncOpenFstatRead16Close: floorSync,
      ratios: {
        fastOverFloor16: ratio(fast.median, floor16.median),
        fastOverReadMfra: ratio(fast.median, floorMfra.median),
        fastOverSync: ratio(fast.median, floorSync.median),
        exactOverFast: ratio(exact.median, fast.median),
        concurrentOverSequential: ratio(conc.median, fast.median),
      },
    },
    memory: {
      typedArrayBytes: typedBytes,
      typedArrayBytesPerTrackHour: typedPerTrackHour,
      heapFast: { ...heapFast, bytesPerTrackHour: heapPerTrackHour },
      heapExact: { ...heapExact, bytesPerTrackHour: heapExactPerTrackHour },
    },
    targets,
    notes: odd,
  };
  await fs.mkdir(path.dirname(outFile), { recursive: true });
  const tmp = `${outFile}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(result, null, 2)}\n`);
  await fs.rename(tmp, outFile);
  log('');
  log(`wrote ${rel(outFile)}`);
  return { result, targets };
}
