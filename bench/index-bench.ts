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

import { closeSync, fstatSync, openSync, promises as fs, readSync } from 'node:fs';
import * as path from 'node:path';
import { IndexMode, readMediaFile } from '../origin/media/media-file';
import { ByteSource, FileSource } from '../origin/io/source';
import { FragmentTable, MediaFile, trackDuration } from '../origin/model/media';
import { ensureLongSourcesReport, repoRoot } from './media';
import { machine, machineLine } from './machine';

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

export interface Stats {
  n: number;
  min: number;
  median: number;
  p95: number;
  mean: number;
  max: number;
}

export function stats(samples: number[]): Stats {
  if (samples.length === 0) throw new Error('no samples');
  const s = [...samples].sort((a, b) => a - b);
  // Nearest-rank percentiles.
  const rank = (p: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
  const median = s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return {
    n: s.length,
    min: round(s[0]!),
    median: round(median),
    p95: round(rank(0.95)),
    mean: round(s.reduce((a, b) => a + b, 0) / s.length),
    max: round(s[s.length - 1]!),
  };
}

const round = (x: number, digits = 3): number => Number(x.toFixed(digits));
const scale = (st: Stats, by: number): Stats => ({
  n: st.n,
  min: round(st.min * by),
  median: round(st.median * by),
  p95: round(st.p95 * by),
  mean: round(st.mean * by),
  max: round(st.max * by),
});

const now = (): bigint => process.hrtime.bigint();
const msSince = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

/** Runs `fn` `warmups` times untimed, then `n` times timed (ms each). */
async function sample(n: number, warmups: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmups; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    await fn();
    out.push(msSince(t0));
  }
  return out;
}

/**
 * Like `sample` for several functions, interleaved (f1, f2, ... f1, f2, ...), so that drift in
 * machine conditions (other load, thread-pool wake-ups) hits all of them alike and ratios hold.
 */
async function sampleInterleaved(n: number, warmups: number, fns: Array<() => Promise<unknown>>): Promise<number[][]> {
  for (let i = 0; i < warmups; i++) for (const fn of fns) await fn();
  const out: number[][] = fns.map(() => []);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < fns.length; j++) {
      const t0 = now();
      await fns[j]!();
      out[j]!.push(msSince(t0));
    }
  }
  return out;
}

/** A ByteSource that counts reads and the time spent waiting for them. */
class MeteredSource implements ByteSource {
  reads = 0;
  bytes = 0;
  readMs = 0;
  constructor(private readonly inner: ByteSource) {}
  get name(): string {
    return this.inner.name;
  }
  get size(): number {
    return this.inner.size;
  }
  async read(offset: number, length: number): Promise<Uint8Array> {
    const t0 = now();
    this.reads++;
    this.bytes += length;
    try {
      return await this.inner.read(offset, length);
    } finally {
      this.readMs += msSince(t0);
    }
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function indexOne(file: string, mode: IndexMode): Promise<MediaFile> {
  const source = await FileSource.open(file);
  try {
    return await readMediaFile(source, mode);
  } finally {
    await source.close();
  }
}

async function indexSequential(files: string[], mode: IndexMode): Promise<MediaFile[]> {
  const out: MediaFile[] = [];
  for (const f of files) out.push(await indexOne(f, mode));
  return out;
}

/** One index per file with a split of where the time went. */
async function indexMetered(
  file: string,
  mode: IndexMode,
): Promise<{
  media: MediaFile;
  openMs: number;
  readMs: number;
  closeMs: number;
  totalMs: number;
  reads: number;
  bytes: number;
}> {
  const t0 = now();
  const inner = await FileSource.open(file);
  const openMs = msSince(t0);
  const source = new MeteredSource(inner);
  const media = await readMediaFile(source, mode);
  const t1 = now();
  await source.close();
  const closeMs = msSince(t1);
  return {
    media,
    openMs,
    readMs: source.readMs,
    closeMs,
    totalMs: msSince(t0),
    reads: source.reads,
    bytes: source.bytes,
  };
}

// --- reference floors --------------------------------------------------------------------------

async function floorOpenRead16(files: string[]): Promise<void> {
  for (const f of files) {
    const s = await FileSource.open(f);
    await s.read(s.size - 16, 16);
    await s.close();
  }
}

async function floorReadMfra(files: string[]): Promise<number> {
  let total = 0;
  for (const f of files) {
    const h = await fs.open(f, 'r');
    try {
      const { size } = await h.stat();
      const tail = Buffer.allocUnsafe(16);
      await h.read(tail, 0, 16, size - 16);
      const mfraSize = tail.readUInt32BE(12);
      const mfra = Buffer.allocUnsafe(mfraSize);
      await h.read(mfra, 0, mfraSize, size - mfraSize);
      total += mfraSize;
    } finally {
      await h.close();
    }
  }
  return total;
}

function floorSyncOpenRead16(files: string[]): void {
  const buf = Buffer.allocUnsafe(16);
  for (const f of files) {
    const fd = openSync(f, 'r');
    try {
      const { size } = fstatSync(fd);
      readSync(fd, buf, 0, 16, size - 16);
    } finally {
      closeSync(fd);
    }
  }
}

async function warmPageCache(files: string[]): Promise<{ bytes: number; ms: number }> {
  const t0 = now();
  let bytes = 0;
  const buf = Buffer.allocUnsafe(1 << 20);
  for (const f of files) {
    const h = await fs.open(f, 'r');
    try {
      for (;;) {
        const { bytesRead } = await h.read(buf, 0, buf.byteLength, null);
        if (bytesRead === 0) break;
        bytes += bytesRead;
      }
    } finally {
      await h.close();
    }
  }
  return { bytes, ms: msSince(t0) };
}

// --- memory ------------------------------------------------------------------------------------

function tableBytes(f: FragmentTable): number {
  return (
    f.times.byteLength + f.durations.byteLength + f.offsets.byteLength + f.sizes.byteLength + f.keyframes.byteLength
  );
}

function gcOrThrow(): () => void {
  const gc = globalThis.gc;
  if (typeof gc !== 'function')
    throw new Error('global.gc is not exposed: run node with --expose-gc (bench/run.js re-executes itself with it)');
  return () => void gc();
}

async function settledMemory(): Promise<{ heapUsed: number; arrayBuffers: number; external: number }> {
  const gc = gcOrThrow();
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, external: m.external };
}

export interface HeapMeasurement {
  mode: IndexMode;
  copies: number;
  heapUsedDelta: number;
  arrayBuffersDelta: number;
  /** (heapUsed + arrayBuffers) after minus before, per retained copy of the 3-file index. */
  bytesPerCopy: number;
  /** The same loop without retaining the results: what indexing leaves behind that is not the index. */
  controlBytesPerCopy: number;
}

// Each phase runs in its own async function: a suspended async frame can keep its last awaited
// value alive, which would put a dead index copy into a "before" figure and skew the delta.
async function indexDiscarding(files: string[], mode: IndexMode, copies: number): Promise<void> {
  for (let i = 0; i < copies; i++) await indexSequential(files, mode);
}

async function indexRetaining(files: string[], mode: IndexMode, copies: number): Promise<MediaFile[][]> {
  const kept: MediaFile[][] = [];
  for (let i = 0; i < copies; i++) kept.push(await indexSequential(files, mode));
  return kept;
}

async function controlDelta(files: string[], mode: IndexMode, copies: number): Promise<number> {
  const c0 = await settledMemory();
  await indexDiscarding(files, mode, copies);
  const c1 = await settledMemory();
  return c1.heapUsed + c1.arrayBuffers - (c0.heapUsed + c0.arrayBuffers);
}

async function retainedDelta(
  files: string[],
  mode: IndexMode,
  copies: number,
): Promise<{ heapUsed: number; arrayBuffers: number; fragments: number }> {
  const before = await settledMemory();
  const kept = await indexRetaining(files, mode, copies);
  const after = await settledMemory();
  // Use `kept` after the measurement so it is certainly alive during it.
  let fragments = 0;
  for (const copy of kept) for (const m of copy) for (const t of m.tracks) fragments += t.fragments.count;
  return {
    heapUsed: after.heapUsed - before.heapUsed,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
    fragments,
  };
}

async function measureHeap(files: string[], mode: IndexMode, copies: number): Promise<HeapMeasurement> {
  // Control: index `copies` times, keep nothing.
  const control = await controlDelta(files, mode, copies);
  const retained = await retainedDelta(files, mode, copies);
  if (retained.fragments === 0) throw new Error('no fragments retained');
  return {
    mode,
    copies,
    heapUsedDelta: retained.heapUsed,
    arrayBuffersDelta: retained.arrayBuffers,
    bytesPerCopy: Math.round((retained.heapUsed + retained.arrayBuffers) / copies),
    controlBytesPerCopy: Math.round(control / copies),
  };
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
