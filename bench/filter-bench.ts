// Filter benchmark: the cost of evaluating a compiled filter expression against 20 tracks
// through the wasm boundary (build/filter.wasm via host-glue/filter/filter-engine.ts).
//
// Acceptance target: parse once + evaluate against 20 tracks, <= 2 us (2000 ns) per call.
//
// What is measured, per expression (four shapes: trivial, typical, a long device-class rule,
// count()), with the 20 tracks loaded once and the expression compiled once:
//  - wasm: engine.evaluateHandle(handle, out): one call into the module (evaluate every track),
//          then the 20 result bytes copied out. The figure compared with the target.
//  - select: engine.select(expression, tracks): what one request pays (cache lookup, loading
//          the 20 tracks into the module, evaluation, a boolean[]), as context.
//  - references in the same run: a hand-written JS predicate over the same 20 tracks (what V8
//          makes of the expression written as code: the floor) and, for the typical shape, the
//          TypeScript reference evaluator of the tests (an AST walk with BigInt rationals).
//  - compile: parse + compile + release of a fresh text through the raw module, as context.
// Timing: calls are timed in batches (BATCH calls between two hrtime readings, so the timer's
// ~50 ns does not count); the median and p95 are over the per-call means of the batches.
// Misses are reported (MISS), never thrown.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createFilterEngine, WasmFilterEngine } from '../host-glue/filter/filter-engine';
import { instantiateFilterModule } from '../host-glue/filter/filter-module';
import { TrackProperties } from '../origin/model/media';
import { Cond, holds } from '../test/assembly/filter/reference';
import type { Track } from '../test/assembly/filter/filter-wasm';
import { stats, Stats } from './stats';
import { repoRoot } from './media';
import { machine, machineLine } from './machine';

export const TARGET_NS_PER_CALL = 2000;
const TRACK_COUNT = 20;

export interface FilterBenchOptions {
  /** Calls per timed batch. */
  batch?: number;
  /** Timed batches per measurement. */
  batches?: number;
  warmupCalls?: number;
  outFile?: string;
  log?: (line: string) => void;
}

/** 10 video (three profiles, two frame rates), 7 audio (AAC, AC-3), 3 text: a large ladder. */
export function benchTracks(): TrackProperties[] {
  return Array.from({ length: TRACK_COUNT }, (_, i): TrackProperties => {
    const video = i < 10;
    const base: TrackProperties = {
      type: video ? 'video' : i < 17 ? 'audio' : 'textstream',
      FourCC: video ? 'AVC1' : i < 17 ? (i % 3 ? 'AACL' : 'ac-3') : 'TTML',
      trackID: 1,
      trackName: video ? 'video_eng' : i < 17 ? (i % 2 ? 'audio_eng' : 'audio_nld') : 'textstream_eng',
      systemBitrate: 100_000 * (i + 1),
      systemLanguage: i % 2 ? 'eng' : 'nld',
      TimeScale: 10_000_000,
      CodecPrivateData: '',
      codecs: '',
      sampleEntry: '',
    };
    if (video) {
      return {
        ...base,
        avc_profile: [66, 77, 100][i % 3]!,
        avc_level: 30,
        MaxWidth: 512 + 64 * i,
        MaxHeight: 288 + 72 * i,
        FrameRate: i % 2 ? { num: 30000, den: 1001 } : { num: 25, den: 1 },
        ScanType: 'progressive',
      };
    }
    if (i < 17)
      return { ...base, Channels: i % 3 ? 2 : 6, SamplingRate: 48000, BitsPerSample: 16, AudioTag: i % 3 ? 255 : 8192 };
    return { ...base, Roles: 'subtitle' };
  });
}

type Predicate = (t: TrackProperties, all: readonly TrackProperties[]) => boolean;
const lt = (r: { num: number; den: number } | undefined, num: number, den: number): boolean =>
  r !== undefined && r.num * den <= num * r.den;

interface Shape {
  name: string;
  expression: string;
  /** The same condition as JavaScript code. */
  js: Predicate;
  /** The same condition as a tree for the reference evaluator (one shape is enough). */
  tree?: Cond;
}

const str = (name: string, s: string): Cond => ({
  k: 'cmp',
  op: '==',
  l: { k: 'var', name, spelled: name },
  r: { k: 'str', s },
});

export const SHAPES: Shape[] = [
  { name: 'trivial', expression: 'true', js: () => true },
  {
    name: 'typical',
    expression: 'type=="video"&&systemBitrate<=1000000',
    js: (t) => t.type === 'video' && t.systemBitrate <= 1_000_000,
    tree: {
      k: 'and',
      items: [
        str('type', 'video'),
        {
          k: 'cmp',
          op: '<=',
          l: { k: 'var', name: 'systemBitrate', spelled: 'systemBitrate' },
          r: { k: 'num', n: 1000000n, d: null },
        },
      ],
    },
  },
  {
    name: 'device class',
    expression:
      '(type=="video"&&avc_profile<=AVC_PROFILE_MAIN&&MaxHeight<=720&&FrameRate<=30000/1001)||(type=="audio"&&FourCC=="AACL"&&Channels==2)||type=="textstream"',
    js: (t) =>
      (t.type === 'video' &&
        t.avc_profile !== undefined &&
        t.avc_profile <= 77 &&
        t.MaxHeight !== undefined &&
        t.MaxHeight <= 720 &&
        lt(t.FrameRate, 30000, 1001)) ||
      (t.type === 'audio' && t.FourCC === 'AACL' && t.Channels === 2) ||
      t.type === 'textstream',
  },
  {
    name: 'count()',
    expression: 'type=="audio"&&(FourCC=="ac-3"||count(FourCC=="ac-3")==0)',
    js: (t, all) => t.type === 'audio' && (t.FourCC === 'ac-3' || all.filter((x) => x.FourCC === 'ac-3').length === 0),
  },
];

const now = (): bigint => process.hrtime.bigint();

/** Per-call ns: `batches` batch means of `batch` calls each, after `warmup` untimed calls. */
function timeCalls(batch: number, batches: number, warmup: number, call: () => void): number[] {
  for (let i = 0; i < warmup; i++) call();
  const out: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = now();
    for (let i = 0; i < batch; i++) call();
    out.push(Number(now() - t0) / batch);
  }
  return out;
}

function toReferenceTrack(p: TrackProperties): Track {
  const out: Track = {};
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined || k === 'CodecPrivateData' || k === 'codecs' || k === 'sampleEntry') continue;
    out[k] = typeof v === 'object' ? [v.num, v.den] : v;
  }
  return out;
}

const fmtNs = (x: number): string => (x < 100 ? x.toFixed(1) : x.toFixed(0));

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r, i) => {
      const line = r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
      return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

export async function runFilterBench(options: FilterBenchOptions = {}): Promise<Record<string, unknown>> {
  const log = options.log ?? ((line: string) => console.log(line));
  const batch = options.batch ?? 100;
  const batches = options.batches ?? 2000;
  const warmupCalls = options.warmupCalls ?? 20_000;
  const root = repoRoot();
  const outFile = options.outFile ?? path.join(root, 'bench', 'results', 'filter.json');

  const engine: WasmFilterEngine = createFilterEngine(path.join(root, 'build', 'filter.wasm'));
  const tracks = benchTracks();
  const refTracks = tracks.map(toReferenceTrack);
  const out = new Uint8Array(tracks.length);
  let sink = 0; // results feed this so no call can be optimised away

  const results = SHAPES.map((shape) => {
    // Correctness first: the engine and the hand-written predicate agree on every track.
    const expected = tracks.map((t) => shape.js(t, tracks));
    const got = engine.select(shape.expression, tracks);
    if (got.some((k, i) => k !== expected[i]))
      throw new Error(
        `${shape.name}: the engine and the JS predicate disagree: ${JSON.stringify(got)} vs ${JSON.stringify(expected)}`,
      );
    if (shape.tree && refTracks.some((t, i) => holds(shape.tree!, t, refTracks) !== expected[i]))
      throw new Error(`${shape.name}: the reference evaluator disagrees`);

    engine.loadTracks(tracks);
    const handle = engine.handleOf(shape.expression);
    const wasm = timeCalls(batch, batches, warmupCalls, () => {
      sink += engine.evaluateHandle(handle, out) + out[0]!;
    });
    const select = timeCalls(Math.max(1, batch / 10), Math.max(100, batches / 10), warmupCalls / 10, () => {
      sink += engine.select(shape.expression, tracks).length;
    });
    const js = timeCalls(batch, batches, warmupCalls, () => {
      for (const t of tracks) if (shape.js(t, tracks)) sink++;
    });
    const reference = shape.tree
      ? timeCalls(Math.max(1, batch / 10), Math.max(100, batches / 10), warmupCalls / 10, () => {
          for (const t of refTracks) if (holds(shape.tree!, t, refTracks)) sink++;
        })
      : undefined;
    return {
      shape: shape.name,
      expression: shape.expression,
      kept: expected.filter((k) => k).length,
      wasmNs: stats(wasm),
      selectNs: stats(select),
      jsPredicateNs: stats(js),
      referenceEvaluatorNs: reference ? stats(reference) : undefined,
      wasmSamplesNs: wasm.filter((_, i) => i % 10 === 0).map((x) => Math.round(x)),
    };
  });

  // Compile cost (a cache miss), through the raw module: parse + compile + release.
  const raw = instantiateFilterModule(new Uint8Array(readFileSync(path.join(root, 'build', 'filter.wasm'))));
  const compile = SHAPES.map((shape) => {
    const times = timeCalls(10, 200, 500, () => {
      raw.release(raw.compile(raw.__newString(shape.expression)));
    });
    return { shape: shape.name, microseconds: stats(times.map((ns) => ns / 1000)) };
  });

  const targets = results.map((r) => ({
    target: `parse once + evaluate ${TRACK_COUNT} tracks through the wasm boundary (${r.shape})`,
    limit: TARGET_NS_PER_CALL,
    measured: r.wasmNs.median,
    unit: 'ns per call',
    basis: `median of ${batches} batches of ${batch} calls; p95 ${fmtNs(r.wasmNs.p95)} ns`,
    pass: r.wasmNs.median <= TARGET_NS_PER_CALL,
  }));

  // --- print ---
  log(`filter benchmark: ${TRACK_COUNT} tracks, ${machineLine()}`);
  log('');
  log('ns per call, evaluating all 20 tracks (median / p95)');
  const cell = (s: Stats | undefined): string => (s ? `${fmtNs(s.median)} / ${fmtNs(s.p95)}` : '');
  log(
    table([
      ['shape', 'kept', 'wasm <- target', 'engine.select()', 'JS predicate', 'TS reference', 'wasm / JS'],
      ...results.map((r) => [
        r.shape,
        String(r.kept),
        cell(r.wasmNs),
        cell(r.selectNs),
        cell(r.jsPredicateNs),
        cell(r.referenceEvaluatorNs),
        (r.wasmNs.median / r.jsPredicateNs.median).toFixed(1),
      ]),
    ]),
  );
  log('');
  log(
    `compile (parse + compile + release, raw module), us median / p95: ${compile.map((c) => `${c.shape} ${c.microseconds.median.toFixed(1)} / ${c.microseconds.p95.toFixed(1)}`).join('; ')}`,
  );
  for (const r of results) log(`  ${r.shape}: ${r.expression}`);
  log('');
  log('targets');
  for (const t of targets)
    log(`  ${t.pass ? 'PASS' : 'MISS'}  ${t.target}: ${fmtNs(t.measured)} ns (target <= ${t.limit}; ${t.basis})`);

  // --- JSON ---
  const result = {
    suite: 'filter',
    date: new Date().toISOString(),
    machine: machine(),
    settings: { tracks: TRACK_COUNT, batch, batches, warmupCalls },
    unit: 'ns per call (all 20 tracks evaluated)',
    results,
    compile,
    targets,
    sink,
  };
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${path.relative(root, outFile)}`);
  return result;
}
