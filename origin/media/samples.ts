// The samples of a track's source fragments, as the HLS segment writers (MPEG-TS, packed audio,
// WebVTT) need them: decode time on the output timeline, composition offset, duration, size, sync
// flag and where the bytes are; then, for the samples a segment carries, their bytes. Reads go
// through a ByteSource (CONTRIBUTING.md design rule 3): one read per moof, one per contiguous run of sample data.
//
// What a sample's fields come from (ISO/IEC 14496-12):
// - decode times: the fragment table's time of the fragment's first sample (tfxd or tfdt, what
//   every other output uses), then the sum of the durations before it (§8.8.8.3);
// - duration, size, flags, composition offset: the trun entry, else the tfhd default (§8.8.7.1),
//   else the trex default (§8.8.3.1); the first sample's flags may be first_sample_flags;
// - sync: sample_is_non_sync_sample clear in the sample flags (§8.8.3.1);
// - composition offset: unsigned in trun version 0, signed in version 1 (§8.8.8.2);
// - data: the runs laid out by traf-layout.ts (base-data-offset, default-base-is-moof, data_offset).
//
// Corrupt input is an OriginError corrupt-media naming the file, the box path and the offset.

import { OriginError, originError } from '../errors';
import { locateRuns, parseSourceMoof, SourceTraf, SourceTrun, TRUN } from './traf-layout';
import { inFile, trackHeaderOf } from './moov';
import type { TrexDefaults } from '../model/media';
import { MAX_FRAGMENT_DATA_BYTES, readFragmentMoof } from './fragment-moof';
import { corruptAt } from './byte-reader';
import { ByteSource, canReadInto, SpanSource } from '../io/source';
import { PresentationTrack, ticksIn } from '../model/presentation';
import { ReadLease } from '../io/buffers';

/** §8.8.3.1 sample_flags: sample_is_non_sync_sample. */
const SAMPLE_IS_NON_SYNC = 0x00010000;

export interface SourceSample {
  /** Source decode time, track timescale. */
  sourceTime: bigint;
  /** Output decode time: source time minus the presentation origin (model/timeline.ts), track timescale. */
  time: bigint;
  /** Composition offset (presentation time − decode time), track timescale, signed. */
  compositionOffset: number;
  /** Track timescale. */
  duration: number;
  /** Bytes. */
  size: number;
  sync: boolean;
  /** Index of the source fragment in the track's fragment table. */
  fragment: number;
  /** Absolute file offset of the sample's bytes. */
  offset: number;
}

export interface SampleWithData extends SourceSample {
  /** Exactly `size` bytes. */
  data: Uint8Array;
}

/** Ticks to subtract from a source time of this track to put it on the output timeline. */
export function outputShift(track: PresentationTrack, origin: { ticks: bigint; timescale: number }): bigint {
  return ticksIn(origin, track.properties.TimeScale);
}

/**
 * The samples of source fragment `index` (metadata only, no sample bytes read). `shift` is
 * outputShift(track, presentation.origin).
 */
export async function readFragmentSamples(
  source: ByteSource,
  track: PresentationTrack,
  index: number,
  shift: bigint,
): Promise<SourceSample[]> {
  const f = track.fragments;
  if (!Number.isInteger(index) || index < 0 || index >= f.count) {
    throw originError('internal', `fragment ${index} is outside 0..${f.count - 1}`, { subject: 'readFragmentSamples' });
  }
  const known = sampleTables.get(track)?.[index];
  if (known !== undefined && known.fileSize === source.size) return expand(known, f.times[index]!, shift, index);
  const offset = f.offsets[index]!;
  const moof = await readMoof(source, offset);
  let samples: SourceSample[];
  try {
    const trex = trackHeaderOf(track).trexDefaults;
    samples = samplesOfMoof(moof, offset, {
      trackId: track.properties.trackID,
      trex,
      baseTime: f.times[index]!,
      fragment: index,
      shift,
      fileSize: source.size,
    });
  } catch (e) {
    throw inFile(e, source.name);
  }
  keepTable(track, index, compact(samples, source.size));
  return samples;
}

/**
 * The per-sample fields of one parsed fragment, packed (24 bytes a sample): what samplesOfMoof
 * gives besides the times, which follow from the fragment table's time and the durations. The
 * moof of a fragment never changes while its track object lives (the presentation store builds a
 * new track when the source changes), so every segment after the first (and after the
 * continuity scans of ts-continuity.ts, which read every moof once) skips the moof read and
 * parse: profiled at about an eighth of a 720p TS segment's time. Kept per track object, so it
 * goes with the presentation; `fileSize` guards against a source that changed under the track.
 */
interface SampleTable {
  fileSize: number;
  /** duration (track timescale), size (bytes), sync (0/1), a sample each. */
  fields: Uint32Array;
  /** Absolute file offset and composition offset (signed, or up to 2^32 − 1 from a version 0 trun), a sample each. */
  wide: Float64Array;
}

const sampleTables = new WeakMap<PresentationTrack, Array<SampleTable | undefined>>();

/**
 * The tables are bounded in all (a 2-hour presentation's tracks hold ~20 MB of them, and a worker
 * serves many presentations): kept in the order they were made, the oldest dropped once the bytes
 * pass SAMPLE_TABLE_BYTES. First in, first out suits playback, which walks fragments in order.
 * The queue holds the track weakly: a track the store let go takes its tables with it.
 */
let SAMPLE_TABLE_BYTES = 8 << 20;
const tableQueue: Array<{ track: WeakRef<PresentationTrack>; index: number; bytes: number }> = [];
let tableHead = 0;
let tableBytes = 0;

function keepTable(track: PresentationTrack, index: number, table: SampleTable): void {
  let tables = sampleTables.get(track);
  if (tables === undefined) {
    tables = new Array<SampleTable | undefined>(track.fragments.count);
    sampleTables.set(track, tables);
  }
  if (tables[index] !== undefined) return;
  tables[index] = table;
  const bytes = table.fields.byteLength + table.wide.byteLength + 64;
  tableQueue.push({ track: new WeakRef(track), index, bytes });
  tableBytes += bytes;
  while (tableBytes > SAMPLE_TABLE_BYTES && tableHead < tableQueue.length) {
    const old = tableQueue[tableHead]!;
    tableQueue[tableHead++] = undefined as never;
    tableBytes -= old.bytes;
    const t = old.track.deref();
    if (t !== undefined) sampleTables.get(t)![old.index] = undefined;
  }
  // Compact the queue once its dropped head is most of it.
  if (tableHead > 1024 && tableHead * 2 > tableQueue.length) {
    tableQueue.splice(0, tableHead);
    tableHead = 0;
  }
}

/** Bytes of sample tables kept (tests). */
export function sampleTableBytes(): number {
  return tableBytes;
}

/** Sets the bound on kept sample tables (tests); returns the one it replaces. */
export function setSampleTableBudget(bytes: number): number {
  const before = SAMPLE_TABLE_BYTES;
  SAMPLE_TABLE_BYTES = bytes;
  return before;
}

function compact(samples: readonly SourceSample[], fileSize: number): SampleTable {
  const fields = new Uint32Array(samples.length * 3);
  const wide = new Float64Array(samples.length * 2);
  samples.forEach((s, i) => {
    fields[3 * i] = s.duration;
    fields[3 * i + 1] = s.size;
    fields[3 * i + 2] = s.sync ? 1 : 0;
    wide[2 * i] = s.offset;
    wide[2 * i + 1] = s.compositionOffset;
  });
  return { fileSize, fields, wide };
}

/** The SourceSample list samplesOfMoof gave for the table's fragment, rebuilt (same fields, same order). */
function expand(t: SampleTable, baseTime: bigint, shift: bigint, fragment: number): SourceSample[] {
  const n = t.wide.length / 2;
  const out: SourceSample[] = new Array(n);
  const step = new TimeStep(baseTime, shift);
  for (let i = 0; i < n; i++) {
    const duration = t.fields[3 * i]!;
    out[i] = {
      sourceTime: step.time,
      time: step.output(),
      compositionOffset: t.wide[2 * i + 1]!,
      duration,
      size: t.fields[3 * i + 1]!,
      sync: t.fields[3 * i + 2] === 1,
      fragment,
      offset: t.wide[2 * i]!,
    };
    step.advance(duration);
  }
  return out;
}

/** Bytes read first at a moof: enough for the whole box of a typical fragment (48 video or 94 AAC samples take under 2 kB). */
const MOOF_GUESS = 4096;

/**
 * The whole moof box at `offset`: one read when it fits in MOOF_GUESS bytes (the common case),
 * else readFragmentMoof's header-then-box reads, which also check and name what is wrong.
 */
async function readMoof(source: ByteSource, offset: number): Promise<Uint8Array> {
  if (Number.isSafeInteger(offset) && offset >= 0 && offset + 8 <= source.size) {
    const head = await source.read(offset, Math.min(MOOF_GUESS, source.size - offset));
    const size = new DataView(head.buffer, head.byteOffset, 8).getUint32(0);
    const type = String.fromCharCode(head[4]!, head[5]!, head[6]!, head[7]!);
    if (type === 'moof' && size >= 8 && size <= head.byteLength) return head.subarray(0, size);
  }
  return readFragmentMoof(source, offset);
}

/** How withFragmentSpan reads: at most `maxBytes` at once, into the `lease`'s pooled buffers if any. */
export interface SpanRead {
  maxBytes: number;
  lease?: ReadLease;
}

/**
 * `source` with fragments [first, last] of `track` (moofs and data) read in one go, later reads
 * answered from memory; a range over `maxBytes` or implausible is not pre-read (reads go through).
 */
export async function withFragmentSpan(
  source: ByteSource,
  track: PresentationTrack,
  first: number,
  last: number,
  { maxBytes, lease }: SpanRead,
): Promise<ByteSource> {
  const f = track.fragments;
  if (!(first >= 0 && first <= last && last < f.count)) return source;
  return withByteSpan(source, f.offsets[first]!, f.offsets[last]! + f.sizes[last]!, { maxBytes, lease });
}

/** withFragmentSpan's read for any byte range [start, end) (one sample's bytes, say). */
export async function withByteSpan(
  source: ByteSource,
  start: number,
  end: number,
  { maxBytes, lease }: SpanRead,
): Promise<ByteSource> {
  if (!(
    Number.isSafeInteger(start) &&
    Number.isSafeInteger(end) &&
    start >= 0 &&
    end > start &&
    end <= source.size &&
    end - start <= maxBytes
  ))
    return source;
  const length = end - start;
  // With a lease, into a pooled buffer (io/buffers.ts), valid until the caller releases the lease.
  if (lease !== undefined && canReadInto(source)) {
    const buffer = lease.take(length);
    await source.readInto(buffer, start, length);
    return new SpanSource(source, start, buffer.subarray(0, length));
  }
  return new SpanSource(source, start, await source.read(start, length));
}

/** The samples of fragments [first, first + count), in decode order. */
export async function readFragmentRange(
  source: ByteSource,
  track: PresentationTrack,
  first: number,
  count: number,
  shift: bigint,
): Promise<SourceSample[]> {
  const out: SourceSample[] = [];
  for (let i = first; i < first + count; i++) {
    for (const s of await readFragmentSamples(source, track, i, shift)) out.push(s);
  }
  return out;
}

export interface MoofContext {
  trackId: number;
  /** The track's trex defaults (§8.8.3). */
  trex: TrexDefaults;
  /** Decode time of the fragment's first sample (the fragment table's), track timescale. */
  baseTime: bigint;
  /** Index of the fragment in the track's table. */
  fragment: number;
  /** Subtracted from source times to give output times. */
  shift: bigint;
  /** Source size in bytes: data past it is corrupt. */
  fileSize: number;
}

/** Pure part: the samples of one track in a whole moof box whose first byte is at file offset `moofOffset`. */
export function samplesOfMoof(moof: Uint8Array, moofOffset: number, c: MoofContext): SourceSample[] {
  const { trackId, trex, fileSize, shift } = c;
  const trafs = parseSourceMoof(moof, moofOffset);
  const layout = locateRuns(
    trafs,
    { offset: moofOffset, length: moof.byteLength },
    (id) => (id === trackId ? trex.defaultSampleSize : undefined),
    fileSize,
  );
  const out: SourceSample[] = [];
  const step = new TimeStep(c.baseTime, shift);
  let total = 0;
  trafs.forEach((traf, t) => {
    if (traf.tfhd.trackId !== trackId) return;
    const ranges = layout[t]!;
    if (ranges instanceof OriginError) throw ranges;
    traf.truns.forEach((run, r) => {
      let at = ranges[r]!.offset;
      const f = new RunFields(traf, run, trex);
      for (let i = 0; i < run.sampleCount; i++) {
        const duration = f.duration(i);
        const size = f.size(i);
        out.push({
          sourceTime: step.time,
          time: step.output(),
          compositionOffset: f.cto(i),
          duration,
          size,
          sync: f.sync(i),
          fragment: c.fragment,
          offset: at,
        });
        at += size;
        step.advance(duration);
      }
      total += ranges[r]!.length;
    });
  });
  if (total > MAX_FRAGMENT_DATA_BYTES) {
    throw corruptAt(
      `moof@${moofOffset}`,
      moofOffset,
      `track ${trackId} claims ${total} bytes of sample data, over the ${MAX_FRAGMENT_DATA_BYTES}-byte limit`,
    );
  }
  if (out.length === 0 && !trafs.some((x) => x.tfhd.trackId === trackId)) {
    throw corruptAt(`moof@${moofOffset}`, moofOffset, `no traf for track ${trackId}`);
  }
  return out;
}

/**
 * Decode times of consecutive samples, in BigInt (64-bit times, exact): one BigInt a sample. The
 * output time is the source time itself when there is no shift, and a duration's BigInt is made
 * once for a run of equal durations (the usual case).
 */
class TimeStep {
  time: bigint;
  private lastDuration = -1;
  private lastStep = 0n;

  constructor(
    start: bigint,
    private readonly shift: bigint,
  ) {
    this.time = start;
  }

  output(): bigint {
    return this.shift === 0n ? this.time : this.time - this.shift;
  }

  advance(duration: number): void {
    if (duration !== this.lastDuration) {
      this.lastDuration = duration;
      this.lastStep = BigInt(duration);
    }
    this.time += this.lastStep;
  }
}

/** The per-sample values of one run, defaults applied (§8.8.8.3, §8.8.7.1, §8.8.3.1), read in place. */
class RunFields {
  private readonly view: DataView;
  private readonly entrySize: number;
  /** Byte offset of each field in an entry, or -1 when the run does not carry it. */
  private readonly durationAt: number;
  private readonly sizeAt: number;
  private readonly flagsAt: number;
  private readonly ctoAt: number;
  private readonly signedCto: boolean;
  private readonly defaultDuration: number;
  private readonly defaultSize: number;
  private readonly defaultFlags: number;
  private readonly firstFlags: number | undefined;

  constructor(traf: SourceTraf, run: SourceTrun, trex: TrexDefaults) {
    const t = traf.tfhd;
    this.view = new DataView(run.table.buffer, run.table.byteOffset, run.table.byteLength);
    this.entrySize = run.entrySize;
    const has = (flag: number): boolean => (run.flags & flag) !== 0;
    const fieldAt = (flag: number): number =>
      has(flag)
        ? 4 * [TRUN.duration, TRUN.size, TRUN.flags, TRUN.compositionOffset].filter((f) => f < flag && has(f)).length
        : -1;
    this.durationAt = fieldAt(TRUN.duration);
    this.sizeAt = fieldAt(TRUN.size);
    this.flagsAt = fieldAt(TRUN.flags);
    this.ctoAt = fieldAt(TRUN.compositionOffset);
    this.signedCto = run.version !== 0;
    this.defaultDuration = t.defaultSampleDuration ?? trex.defaultSampleDuration;
    this.defaultSize = t.defaultSampleSize ?? trex.defaultSampleSize;
    this.defaultFlags = t.defaultSampleFlags ?? trex.defaultSampleFlags;
    this.firstFlags = run.firstSampleFlags;
  }

  duration(i: number): number {
    return this.durationAt < 0 ? this.defaultDuration : this.view.getUint32(i * this.entrySize + this.durationAt);
  }

  size(i: number): number {
    return this.sizeAt < 0 ? this.defaultSize : this.view.getUint32(i * this.entrySize + this.sizeAt);
  }

  sync(i: number): boolean {
    const flags =
      this.flagsAt >= 0
        ? this.view.getUint32(i * this.entrySize + this.flagsAt)
        : i === 0 && this.firstFlags !== undefined
          ? this.firstFlags
          : this.defaultFlags;
    return (flags & SAMPLE_IS_NON_SYNC) === 0;
  }

  cto(i: number): number {
    if (this.ctoAt < 0) return 0;
    const at = i * this.entrySize + this.ctoAt;
    return this.signedCto ? this.view.getInt32(at) : this.view.getUint32(at);
  }
}

/**
 * The bytes of `samples` (from one source), read in as few reads as the layout allows: samples
 * whose bytes are contiguous in the file are read together. `maxBytes` bounds the total.
 */
export async function readSampleData(
  source: ByteSource,
  samples: readonly SourceSample[],
  maxBytes: number,
): Promise<SampleWithData[]> {
  const bytes = await readSampleBytes(source, samples, maxBytes);
  const out: SampleWithData[] = new Array(samples.length);
  for (let k = 0; k < samples.length; k++) {
    const s = samples[k]!;
    // Every field by name rather than a spread: one object shape, and no generic property copy
    // per sample (a 4 s segment has a few hundred samples; the spread showed in profiles).
    out[k] = {
      sourceTime: s.sourceTime,
      time: s.time,
      compositionOffset: s.compositionOffset,
      duration: s.duration,
      size: s.size,
      sync: s.sync,
      fragment: s.fragment,
      offset: s.offset,
      data: bytes[k]!,
    };
  }
  return out;
}

/** readSampleData's bytes alone, a view per sample (the TS writer needs no other copy of the fields). */
export async function readSampleBytes(
  source: ByteSource,
  samples: readonly SourceSample[],
  maxBytes: number,
): Promise<Uint8Array[]> {
  let total = 0;
  for (const x of samples) total += x.size;
  if (total > maxBytes) {
    throw originError(
      'segment-too-large',
      `the samples of this segment hold ${total} bytes, over the ${maxBytes}-byte limit of one generated segment`,
      { subject: source.name },
    );
  }
  const out: Uint8Array[] = new Array(samples.length);
  let i = 0;
  while (i < samples.length) {
    // A run of samples stored back to back.
    let j = i + 1;
    let end = samples[i]!.offset + samples[i]!.size;
    while (j < samples.length && samples[j]!.offset === end) end += samples[j++]!.size;
    const start = samples[i]!.offset;
    if (end > source.size)
      throw originError(
        'corrupt-media',
        `sample data ${start}..${end} runs past the end of the file (${source.size} bytes)`,
        { subject: source.name },
      );
    const bytes = await source.read(start, end - start);
    for (let k = i; k < j; k++) {
      const from = samples[k]!.offset - start;
      out[k] = bytes.subarray(from, from + samples[k]!.size);
    }
    i = j;
  }
  return out;
}
