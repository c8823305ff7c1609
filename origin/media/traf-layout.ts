// Reads a source `moof` as far as reboxing needs: each `traf`'s tfhd, its truns (sample tables
// kept as byte views, to be copied) and its tfxd, and where in the file each run's sample data
// lies. No I/O; every length is checked and errors name `moof@<offset>/traf[i]/trun[j]` and the
// absolute file offset (CONTRIBUTING.md design rule 4).
//
// Where the data is (ISO/IEC 14496-12 §8.8.7.1 tfhd semantics, §8.8.8.3 trun semantics):
// - tfhd base-data-offset-present: that absolute offset is the base;
// - else default-base-is-moof: the first byte of the enclosing moof;
// - else the first traf of the moof uses the moof too, and each later traf starts where the
//   data of the preceding traf (of any track) ended;
// - within a traf, a run with data_offset starts at base + data_offset (signed); a run without
//   one starts where the previous run's data ended (the base for the first run).

import { OriginError, originError } from '../errors';
import { BoxHeader, childBoxes, printable, readBoxHeader } from './boxes';
import { ByteReader, corruptAt } from './byte-reader';

export interface ByteRange {
  /** Absolute file offset. */
  offset: number;
  /** Bytes. */
  length: number;
}

/** tfhd flags (§8.8.7.1). */
export const TFHD = {
  baseDataOffset: 0x000001,
  sampleDescriptionIndex: 0x000002,
  defaultDuration: 0x000008,
  defaultSize: 0x000010,
  defaultFlags: 0x000020,
  durationIsEmpty: 0x010000,
  defaultBaseIsMoof: 0x020000,
} as const;

/** trun flags (§8.8.8.1). */
export const TRUN = {
  dataOffset: 0x000001,
  firstSampleFlags: 0x000004,
  duration: 0x000100,
  size: 0x000200,
  flags: 0x000400,
  compositionOffset: 0x000800,
} as const;

export interface SourceTfhd {
  flags: number;
  trackId: number;
  baseDataOffset?: number;
  sampleDescriptionIndex?: number;
  defaultSampleDuration?: number;
  defaultSampleSize?: number;
  defaultSampleFlags?: number;
}

export interface SourceTrun {
  path: string;
  /** Absolute offset of the trun box, for messages. */
  start: number;
  version: number;
  flags: number;
  sampleCount: number;
  /** Signed 32-bit, relative to the traf's base. */
  dataOffset?: number;
  firstSampleFlags?: number;
  /** The per-sample entries, exactly sampleCount × entrySize bytes (a view into the moof). */
  table: Uint8Array;
  entrySize: number;
}

export interface SourceTraf {
  path: string;
  start: number;
  tfhd: SourceTfhd;
  truns: SourceTrun[];
  /** The whole tfxd uuid box (MS-SSTR §2.2.4.4), header included, when present. */
  tfxd?: Uint8Array;
}

/** Cap on samples per run, as in the fragment index: far above any real fragment. */
const MAX_SAMPLES_PER_RUN = 1 << 20;

export const TFXD_UUID = '6d1d9b0542d544e680e2141daff757b2';
/** Sample encryption (§8.12 via ISO/IEC 23001-7 senc, saiz, saio; PIFF's uuid senc). */
const ENCRYPTION_BOXES = new Set(['senc', 'saiz', 'saio']);
const PIFF_SENC_UUID = 'a2394f525a9b4f14a2446c427c648df4';

/** Parses a whole `moof` box (header included) whose first byte is at file offset `moofOffset`. */
export function parseSourceMoof(moof: Uint8Array, moofOffset: number): SourceTraf[] {
  const path = `moof@${moofOffset}`;
  if (moof.byteLength < 8)
    throw corruptAt(path, moofOffset, `truncated moof: ${moof.byteLength} bytes, a box header needs 8`);
  const type = String.fromCharCode(...moof.subarray(4, 8));
  if (type !== 'moof') throw corruptAt(path, moofOffset, `expected a moof box, found '${printable(type)}'`);
  // undefined when the header itself does not fit (a 64-bit size in a box of fewer than 16 bytes).
  const top = readBoxHeader(moof, 0, moofOffset, moofOffset + moof.byteLength, path);
  if (top === undefined)
    throw corruptAt(path, moofOffset, `truncated moof: ${moof.byteLength} bytes do not hold its box header`);
  if (top.size !== moof.byteLength)
    throw corruptAt(path, moofOffset, `moof declares ${top.size} bytes but ${moof.byteLength} were given`);
  const trafs: SourceTraf[] = [];
  for (const c of childBoxes(moof.subarray(top.headerSize), moofOffset + top.headerSize, path)) {
    if (c.type !== 'traf') continue;
    trafs.push(parseTraf(c, `${path}/traf[${trafs.length}]`, moof, moofOffset));
  }
  return trafs;
}

function parseTraf(
  traf: BoxHeader & { payload: Uint8Array },
  path: string,
  moof: Uint8Array,
  moofOffset: number,
): SourceTraf {
  let tfhd: SourceTfhd | undefined;
  let tfxd: Uint8Array | undefined;
  const truns: SourceTrun[] = [];
  const base = traf.start + traf.headerSize;
  for (const c of childBoxes(traf.payload, base, path)) {
    const boxPath = c.type === 'trun' ? `${path}/trun[${truns.length}]` : `${path}/${printable(c.type)}`;
    const r = new ByteReader(c.payload, boxPath, c.start + c.headerSize);
    const uuid =
      c.type === 'uuid' && c.payload.byteLength >= 16 ? Buffer.from(c.payload.subarray(0, 16)).toString('hex') : '';
    if (c.type === 'tfhd') tfhd = parseTfhd(r);
    else if (c.type === 'trun') truns.push(parseTrun(r, c.start));
    else if (uuid === TFXD_UUID) tfxd = moof.subarray(c.start - moofOffset, c.start - moofOffset + c.size);
    else if (ENCRYPTION_BOXES.has(c.type) || uuid === PIFF_SENC_UUID) {
      throw originError(
        'unsupported-media',
        `encrypted fragments are not supported (${c.type} at file offset ${c.start})`,
        { subject: boxPath },
      );
    }
  }
  if (tfhd === undefined) throw corruptAt(path, traf.start, 'traf without tfhd');
  return { path, start: base, tfhd, truns, ...(tfxd ? { tfxd } : {}) };
}

/** §8.8.7 TrackFragmentHeaderBox. */
function parseTfhd(r: ByteReader): SourceTfhd {
  const flags = r.u32() & 0xffffff;
  const out: SourceTfhd = { flags, trackId: r.u32() };
  if (flags & TFHD.baseDataOffset) out.baseDataOffset = r.u64();
  if (flags & TFHD.sampleDescriptionIndex) out.sampleDescriptionIndex = r.u32();
  if (flags & TFHD.defaultDuration) out.defaultSampleDuration = r.u32();
  if (flags & TFHD.defaultSize) out.defaultSampleSize = r.u32();
  if (flags & TFHD.defaultFlags) out.defaultSampleFlags = r.u32();
  return out;
}

/** §8.8.8 TrackRunBox; the sample table is kept as bytes (copied unchanged into the output). */
function parseTrun(r: ByteReader, start: number): SourceTrun {
  const version = r.u8();
  const flags = r.u24();
  const sampleCount = r.u32();
  if (sampleCount > MAX_SAMPLES_PER_RUN)
    r.fail(`sample_count ${sampleCount} exceeds the limit of ${MAX_SAMPLES_PER_RUN}`);
  const dataOffset = flags & TRUN.dataOffset ? r.i32() : undefined;
  const firstSampleFlags = flags & TRUN.firstSampleFlags ? r.u32() : undefined;
  const entrySize = 4 * [TRUN.duration, TRUN.size, TRUN.flags, TRUN.compositionOffset].filter((f) => flags & f).length;
  const table = r.slice(sampleCount * entrySize);
  return {
    path: r.path,
    start,
    version,
    flags,
    sampleCount,
    ...(dataOffset !== undefined ? { dataOffset } : {}),
    ...(firstSampleFlags !== undefined ? { firstSampleFlags } : {}),
    table,
    entrySize,
  };
}

/** Reads one 32-bit field of every sample entry; `before` lists the flags of the fields ahead of it. */
function sumField(run: SourceTrun, before: number[]): number {
  const at = 4 * before.filter((f) => run.flags & f).length;
  const view = new DataView(run.table.buffer, run.table.byteOffset, run.table.byteLength);
  let sum = 0;
  for (let i = 0; i < run.sampleCount; i++) sum += view.getUint32(i * run.entrySize + at);
  return sum;
}

/** Bytes of sample data a run owns: per-sample sizes, else the tfhd default, else the trex default. */
export function runLength(run: SourceTrun, defaultSize: number | undefined): number {
  if (run.flags & TRUN.size) return sumField(run, [TRUN.duration]);
  if (run.sampleCount === 0) return 0;
  if (defaultSize === undefined) {
    throw corruptAt(run.path, run.start, 'sample sizes are in neither trun nor tfhd, and no trex default was given');
  }
  return run.sampleCount * defaultSize;
}

/** The size of every sample of a traf's runs, in order: per-sample sizes, else the tfhd default, else `defaultSize` (trex). */
export function trafSampleSizes(traf: SourceTraf, defaultSize: number | undefined): number[] {
  const out: number[] = [];
  const fallback = traf.tfhd.defaultSampleSize ?? defaultSize;
  for (const run of traf.truns) {
    if (!(run.flags & TRUN.size)) {
      if (run.sampleCount > 0 && fallback === undefined) runLength(run, undefined); // its error
      for (let i = 0; i < run.sampleCount; i++) out.push(fallback!);
      continue;
    }
    const at = run.flags & TRUN.duration ? 4 : 0;
    const view = new DataView(run.table.buffer, run.table.byteOffset, run.table.byteLength);
    for (let i = 0; i < run.sampleCount; i++) out.push(view.getUint32(i * run.entrySize + at));
  }
  return out;
}

/** Track-timescale ticks a run lasts: per-sample durations, else the tfhd or trex default. */
export function runDuration(run: SourceTrun, defaultDuration: number | undefined): number {
  if (run.flags & TRUN.duration) return sumField(run, []);
  if (run.sampleCount === 0) return 0;
  if (defaultDuration === undefined) {
    throw corruptAt(
      run.path,
      run.start,
      'sample durations are in neither trun nor tfhd, and no trex default was given',
    );
  }
  return run.sampleCount * defaultDuration;
}

/**
 * The file byte range of every run of every traf, in moof order, by the base rules above. A traf
 * whose layout cannot be computed gets its error instead, so that it only fails a request that
 * needs it (a later traf with an implicit base, or the traf itself).
 */
export function locateRuns(
  trafs: readonly SourceTraf[],
  moof: ByteRange,
  defaultSize: (trackId: number) => number | undefined,
  fileSize?: number,
): Array<ByteRange[] | OriginError> {
  const out: Array<ByteRange[] | OriginError> = [];
  let previousEnd: number | OriginError = moof.offset;
  trafs.forEach((traf, i) => {
    const t = traf.tfhd;
    const base: number | OriginError =
      t.baseDataOffset ?? (t.flags & TFHD.defaultBaseIsMoof || i === 0 ? moof.offset : previousEnd);
    try {
      if (base instanceof OriginError) throw base;
      const ranges = locateTraf(traf, base, moof, t.defaultSampleSize ?? defaultSize(t.trackId), fileSize);
      previousEnd = ranges.reduce((end, r) => r.offset + r.length, base);
      out.push(ranges);
    } catch (e) {
      if (!(e instanceof OriginError)) throw e;
      previousEnd = e;
      out.push(e);
    }
  });
  return out;
}

function locateTraf(
  traf: SourceTraf,
  base: number,
  moof: ByteRange,
  defaultSize: number | undefined,
  fileSize?: number,
): ByteRange[] {
  const ranges: ByteRange[] = [];
  let next = base;
  for (const run of traf.truns) {
    const offset = run.dataOffset !== undefined ? base + run.dataOffset : next;
    const length = runLength(run, defaultSize);
    const where = `data of ${length} bytes at file offset ${offset}`;
    if (offset < 0) throw corruptAt(run.path, run.start, `${where} starts before the file`);
    if (fileSize !== undefined && offset + length > fileSize) {
      throw corruptAt(run.path, run.start, `${where} runs past the end of the file (${fileSize} bytes)`);
    }
    if (length > 0 && offset < moof.offset + moof.length && offset + length > moof.offset) {
      throw corruptAt(run.path, run.start, `${where} overlaps its own moof`);
    }
    ranges.push({ offset, length });
    next = offset + length;
  }
  return ranges;
}
