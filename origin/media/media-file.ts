// Reads a fragmented MP4 source into the media model: track properties from `moov` and a
// fragment table per track. Two ways to build the table:
//
// - `mfra` fast path (ISO/IEC 14496-12 §8.8.9–8.8.11): read `mfro`, then `mfra`, then only the
//   first and last `moof` of each track. Used by the origin. The reads go through a read-ahead
//   (ReadAhead below) that asks for the file's head and tail at once: a one-track file costs two
//   or three reads (a video track's last moof lies before a large mdat, outside the tail). The
//   first `moof` gives the exact start time (ffmpeg's `tfra` clamps the negative AAC priming
//   time of `tfxd` to 0) and proves the layout (moof+mdat end where the next entry begins); the
//   last gives the final duration and must agree with its `tfra` time. Any disagreement falls
//   back to the walk.
// - `moof` walk: visit every top-level box after `moov`. Exact media byte counts (the bitrate the
//   packager writes), works without `mfra`, detects truncation.
//
// No parsing happens here that is not in boxes.ts / moov.ts; this file only decides what
// to read next (CONTRIBUTING.md design rule 3: parsers do no I/O).

import { OriginError, originError } from '../errors';
import { FragmentTable, MediaFile, MediaTrack, TrackProperties, TrexDefaults } from '../model/media';
import { corruptAt } from './byte-reader';
import { parseMfra, parseMfro, parseMoof, printable, RandomAccessTable, readBoxHeader, TrafSummary } from './boxes';
import { ByteSource } from '../io/source';
import { frameRateFromTiming, MoovTrack, readMoov } from './moov';

export type IndexMode = 'fast' | 'exact';

/** Caps that keep a hostile file from making us allocate without bound. */
const MAX_MOOV_BYTES = 64 << 20;
const MAX_MOOF_BYTES = 16 << 20;
const MAX_MFRA_BYTES = 64 << 20;
/** Read window for the walk: one read usually holds a moof and the next mdat's header. */
const WINDOW = 16 << 10;
/** First read of the fast path: ftyp and moov (a few kB), and usually the first moof and mdat header. */
const HEAD_BYTES = 64 << 10;
/** Last bytes of the file, read at once on the fast path: mfro and mfra (a 2-hour track's tfra is ~68 kB; 4 hours ~137 kB). */
const TAIL_BYTES = 256 << 10;
/** One read at a moof: the moof of a 2-second fragment is under 4 kB even at 60 frames per second. */
const MOOF_GUESS = 16 << 10;

/** Boxes that may open an ISO BMFF file (§4.3 ftyp, §8.16 styp, and boxes seen before ftyp in the wild). */
const FIRST_BOXES = new Set(['ftyp', 'styp', 'moov', 'free', 'skip', 'wide', 'uuid', 'pdin', 'sidx']);

export async function readMediaFile(
  source: ByteSource,
  mode: IndexMode = 'fast',
  /** Only this track of the moov (a live archive file holds one track's fragments under a moov of several). */
  onlyTrack?: number,
): Promise<MediaFile> {
  try {
    return await read(source, mode, onlyTrack);
  } catch (e) {
    if (e instanceof OriginError && e.subject !== undefined && !e.subject.startsWith(source.name)) {
      throw e.within(`${source.name}: ${e.subject}`);
    }
    throw e;
  }
}

async function read(source: ByteSource, mode: IndexMode, onlyTrack: number | undefined): Promise<MediaFile> {
  if (source.size === 0)
    throw originError('corrupt-media', 'empty file (0 bytes), not an MP4 file', { subject: source.name });
  const ahead = new ReadAhead(source);
  // The fast path needs the file's two ends: the head (ftyp, moov, first moof) and the tail
  // (mfro, mfra, often the last moof). Both are asked for at once, one read each: before, the
  // boxes were fetched one small read after another (about ten round trips a file).
  if (mode === 'fast') ahead.prefetch(Math.max(0, source.size - TAIL_BYTES), Math.min(TAIL_BYTES, source.size));
  const { moovTracks, fragmented, afterMoov, moov } = await readHeader(ahead);
  if (!fragmented) {
    throw originError(
      'unsupported-media',
      'not a fragmented MP4 (moov has no mvex): package it as fragmented MP4 first, e.g. ffmpeg -f ismv',
      { subject: source.name },
    );
  }
  if (moovTracks.length === 0) throw originError('corrupt-media', 'moov declares no tracks', { subject: source.name });
  let built: Built | undefined;
  if (mode === 'fast') built = await tryMfra(ahead, moovTracks, afterMoov);
  const indexedBy = built ? 'mfra' : 'moof-walk';
  built ??= await walkMoofs(source, moovTracks, afterMoov);
  const tracks = moovTracks
    .filter((t) => onlyTrack === undefined || t.properties.trackID === onlyTrack)
    .map((t) => finishTrack(t, built!.get(t.properties.trackID), source.name));
  const headers = new Map(moovTracks.map((t) => [t.header.trackID, t.header]));
  return { name: source.name, size: source.size, tracks, indexedBy, moov, headers };
}

async function readHeader(
  source: ReadAhead,
): Promise<{ moovTracks: MoovTrack[]; fragmented: boolean; afterMoov: number; moov: Uint8Array }> {
  let offset = 0;
  let first = true;
  while (offset < source.size) {
    const head = await source.readAhead(offset, Math.min(16, source.size - offset), HEAD_BYTES);
    const type = head.byteLength >= 8 ? String.fromCharCode(...head.subarray(4, 8)) : '';
    if (first && !FIRST_BOXES.has(type)) {
      throw originError(
        'corrupt-media',
        `not an MP4 file (first box type is '${printable(type.padEnd(4, '\0'))}', expected ftyp)`,
        { subject: source.name },
      );
    }
    first = false;
    const h = readBoxHeader(head, 0, offset, source.size, 'file');
    if (h === undefined) throw corruptAt('file', offset, 'truncated box header');
    if (h.type === 'moof' || h.type === 'mdat')
      throw corruptAt('file', offset, `'${h.type}' before moov: no moov to describe the tracks`);
    if (h.type === 'moov') {
      if (h.size > MAX_MOOV_BYTES)
        throw corruptAt('file', offset, `moov of ${h.size} bytes exceeds the ${MAX_MOOV_BYTES}-byte limit`);
      // A copy: the moov is kept with the index (init segments), the read-ahead window is not.
      const moov = Buffer.from(await source.readAhead(offset, h.size, HEAD_BYTES));
      const { tracks, fragmented } = readMoov(moov, source.name, offset);
      return { moovTracks: tracks, fragmented, afterMoov: offset + h.size, moov };
    }
    offset += h.size;
  }
  throw originError('corrupt-media', 'no moov box', { subject: source.name });
}

/** Fragment rows per track id, as the moof walk collects them. */
class TrackBuilder {
  times: bigint[] = [];
  durations: number[] = [];
  offsets: number[] = [];
  sizes: number[] = [];
  keyframes: number[] = [];
  dataBytes = 0;
  samples = 0;
  /** Samples and duration of the first fragment: the frame rate when the SPS has no VUI timing. */
  firstTiming: { samples: number; duration: number } | undefined;

  table(): Indexed {
    return {
      fragments: {
        count: this.times.length,
        times: BigInt64Array.from(this.times),
        durations: Float64Array.from(this.durations),
        offsets: Float64Array.from(this.offsets),
        sizes: Float64Array.from(this.sizes),
        keyframes: Uint8Array.from(this.keyframes),
      },
      dataBytes: this.dataBytes,
      samples: this.samples,
      firstTiming: this.firstTiming,
    };
  }
}

/** One track's finished index, from either path. */
interface Indexed {
  fragments: FragmentTable;
  /** Payload bytes and samples, counted by the walk only. */
  dataBytes: number | undefined;
  samples: number | undefined;
  firstTiming: { samples: number; duration: number } | undefined;
  /** The sums of `durations` and `sizes` when known without adding them up (the mfra path). */
  totals?: { duration: number; rangeBytes: number } | undefined;
}
type Built = Map<number, Indexed>;

async function tryMfra(source: ReadAhead, tracks: MoovTrack[], afterMoov: number): Promise<Built | undefined> {
  if (source.size < afterMoov + 16) return undefined;
  const mfraSize = parseMfro(await source.read(source.size - 16, 16), source.size - 16);
  if (mfraSize === undefined || mfraSize > MAX_MFRA_BYTES || mfraSize < 16 || source.size - mfraSize < afterMoov)
    return undefined;
  const mfraStart = source.size - mfraSize;
  const entries = parseMfra(await source.read(mfraStart, mfraSize), mfraStart);
  const lists: RandomAccessTable[] = [];
  for (const t of tracks) {
    const list = entries.get(t.properties.trackID);
    // tfra entries ascend (§8.8.10) and lie between the moov and the mfra; strictly ascending
    // offsets need only the first and the last checked.
    if (
      list === undefined ||
      list.count === 0 ||
      !list.ascending ||
      list.moofOffsets[0]! < afterMoov ||
      list.moofOffsets[list.count - 1]! >= mfraStart
    )
      return undefined;
    lists.push(list);
  }
  // Every fragment ends where the next one of any track begins (or at the mfra): the sorted
  // union of all moof offsets. One track per file (the usual .ismv/.isma) needs no merge.
  const boundaries = lists.length === 1 ? lists[0]!.moofOffsets : union(lists);
  const nextAfter = (offset: number): number => {
    const i = upperBound(boundaries, offset);
    return i < boundaries.length ? boundaries[i]! : mfraStart;
  };
  const defaults = defaultsLookup(tracks);
  const built: Built = new Map();
  for (const [k, t] of tracks.entries()) {
    const id = t.properties.trackID;
    const list = lists[k]!;
    const n = list.count;
    const first = await trafAt(source, list.moofOffsets[0]!, id, defaults);
    // Layout proof: the first fragment's moof+mdat ends exactly where the next fragment begins.
    if (first === undefined || first.end !== nextAfter(list.moofOffsets[0]!)) return undefined;
    const last = n === 1 ? first : await trafAt(source, list.moofOffsets[n - 1]!, id, defaults);
    if (last === undefined || (n > 1 && last.traf.baseTime !== undefined && last.traf.baseTime !== list.times[n - 1]!))
      return undefined;
    // The parse's own columns become the table's (they are this load's alone): no copies.
    const times = list.times;
    if (first.traf.baseTime !== undefined) times[0] = first.traf.baseTime;
    const offsets = list.moofOffsets;
    const firstTime = Number(times[0]!);
    let durations: Float64Array;
    let sizes: Float64Array;
    let totals: Indexed['totals'];
    if (lists.length === 1 && list.timesSafe) {
      // One track per file (the usual .ismv/.isma): a fragment lasts until the next entry's time
      // and its bytes run to the next entry's moof (the last one's to the mfra). The parse
      // already took those steps; only both ends change. No pass over the entries here.
      durations = list.timeSteps;
      sizes = list.offsetSteps;
      if (n > 1) durations[0] = list.timeNumbers[1]! - firstTime;
      durations[n - 1] = last.traf.duration;
      sizes[n - 1] = mfraStart - offsets[n - 1]!;
      // Later steps are positive: the times strictly ascend (checked above).
      if (!(durations[0]! > 0) || !(durations[n - 1]! > 0)) return undefined;
      // Sums of exact integers below 2^53 are exact in any order: finishTrack's totals without
      // its loop. (Larger spans take that loop.)
      const span = list.timeNumbers[n - 1]! - firstTime + last.traf.duration;
      if (n === 1 || span < 2 ** 52)
        totals = { duration: n === 1 ? durations[0]! : span, rangeBytes: mfraStart - offsets[0]! };
    } else {
      durations = new Float64Array(n);
      sizes = new Float64Array(n);
      const tn = list.timeNumbers;
      // Both lists ascend: one pointer walks the boundaries alongside the fragments.
      let j = 0;
      for (let i = 0; i < n; i++) {
        const d =
          i + 1 >= n
            ? last.traf.duration
            : list.timesSafe
              ? tn[i + 1]! - (i === 0 ? firstTime : tn[i]!)
              : Number(times[i + 1]! - times[i]!);
        if (!(d > 0)) return undefined;
        durations[i] = d;
        while (j < boundaries.length && boundaries[j]! <= offsets[i]!) j++;
        sizes[i] = (j < boundaries.length ? boundaries[j]! : mfraStart) - offsets[i]!;
      }
    }
    built.set(id, {
      // tfra lists random access points only (§8.8.10): every fragment opens on a keyframe.
      fragments: { count: n, times, durations, offsets, sizes, keyframes: new Uint8Array(n).fill(1) },
      totals,
      dataBytes: undefined,
      samples: undefined,
      firstTiming: { samples: first.traf.sampleCount, duration: first.traf.duration },
    });
  }
  return built;
}

/** The sorted, de-duplicated union of several tracks' moof offsets. */
function union(lists: RandomAccessTable[]): Float64Array {
  const all = new Float64Array(lists.reduce((s, l) => s + l.count, 0));
  let at = 0;
  for (const l of lists) {
    all.set(l.moofOffsets, at);
    at += l.count;
  }
  all.sort();
  let w = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[w - 1]) all[w++] = all[i]!;
  return all.subarray(0, w);
}

/** The first index whose value is greater than `x` (values ascending). */
function upperBound(values: Float64Array, x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function defaultsLookup(tracks: MoovTrack[]): (id: number) => TrexDefaults | undefined {
  const m = new Map(tracks.map((t) => [t.properties.trackID, t.header.trexDefaults]));
  return (id) => m.get(id);
}

/** Reads the moof at `offset` and the header of the mdat after it; undefined when the layout is not moof+mdat. */
async function trafAt(
  source: ReadAhead,
  offset: number,
  trackId: number,
  defaults: (id: number) => TrexDefaults | undefined,
): Promise<{ traf: TrafSummary; end: number } | undefined> {
  // One read of MOOF_GUESS bytes usually holds the whole moof and the mdat header after it;
  // a larger moof takes a second read.
  const head = await source.readAhead(offset, Math.min(16, source.size - offset), MOOF_GUESS);
  const h = readBoxHeader(head, 0, offset, source.size, 'file');
  if (h === undefined || h.type !== 'moof' || h.size > MAX_MOOF_BYTES) return undefined;
  const moofEnd = offset + h.size;
  const bytes = await source.readAhead(offset, Math.min(h.size + 16, source.size - offset), MOOF_GUESS);
  const traf = parseMoof(bytes.subarray(0, h.size), offset, defaults).find((t) => t.trackId === trackId);
  const mdat = readBoxHeader(bytes, h.size, offset, source.size, 'file');
  if (traf === undefined || mdat === undefined || mdat.type !== 'mdat') return undefined;
  return { traf, end: moofEnd + mdat.size };
}

async function walkMoofs(source: ByteSource, tracks: MoovTrack[], afterMoov: number): Promise<Built> {
  const built = new Map(tracks.map((t) => [t.properties.trackID, new TrackBuilder()]));
  const defaults = defaultsLookup(tracks);
  // Fragments whose byte range is still open: it ends where the next moof (or mfra) begins.
  let open: TrackBuilder[] = [];
  let lastMediaEnd = afterMoov;
  const close = (end: number): void => {
    for (const b of open) b.sizes.push(end - b.offsets[b.offsets.length - 1]!);
    open = [];
  };
  let offset = afterMoov;
  let window: Uint8Array = new Uint8Array(0);
  let windowStart = 0;
  while (offset < source.size) {
    if (offset < windowStart || offset + 16 > windowStart + window.byteLength) {
      windowStart = offset;
      window = await source.read(offset, Math.min(WINDOW, source.size - offset));
    }
    const h = readBoxHeader(window, offset - windowStart, windowStart, source.size, 'file');
    if (h === undefined) throw corruptAt('file', offset, 'truncated box header at the end of the file');
    if (h.type === 'moof') {
      if (h.size > MAX_MOOF_BYTES)
        throw corruptAt('file', offset, `moof of ${h.size} bytes exceeds the ${MAX_MOOF_BYTES}-byte limit`);
      close(offset);
      const inWindow = offset + h.size <= windowStart + window.byteLength;
      const moof = inWindow
        ? window.subarray(offset - windowStart, offset - windowStart + h.size)
        : await source.read(offset, h.size);
      for (const traf of parseMoof(moof, offset, defaults)) {
        const b = built.get(traf.trackId);
        if (b === undefined)
          throw corruptAt(`moof@${offset}`, offset, `traf for track ${traf.trackId}, which moov does not declare`);
        addTraf(b, traf, offset);
        open.push(b);
      }
    } else if (h.type === 'mfra') {
      break;
    }
    offset += h.size;
    lastMediaEnd = offset;
  }
  close(lastMediaEnd);
  return new Map([...built].map(([id, b]) => [id, b.table()]));
}

function addTraf(b: TrackBuilder, traf: TrafSummary, offset: number): void {
  const n = b.times.length;
  const time = traf.baseTime ?? (n === 0 ? 0n : b.times[n - 1]! + BigInt(b.durations[n - 1]!));
  // A track's fragments ascend in time (ISO/IEC 14496-12 §8.8.12 tfdt, MS-SSTR §2.2.4.4 tfxd are
  // the decode times of successive fragments): one that goes back (a tfxd of −2^63 in the last
  // fragment) would give negative durations that every writer downstream trips over.
  if (n > 0 && time <= b.times[n - 1]!) {
    throw corruptAt(
      `moof@${offset}`,
      offset,
      `fragment time ${time} of track ${traf.trackId} is not after the previous fragment's ${b.times[n - 1]!}`,
    );
  }
  b.times.push(time);
  b.durations.push(traf.duration);
  b.offsets.push(offset);
  b.keyframes.push(traf.startsWithSync ? 1 : 0);
  b.dataBytes += traf.dataSize;
  b.samples += traf.sampleCount;
  b.firstTiming ??= { samples: traf.sampleCount, duration: traf.duration };
}

function finishTrack(t: MoovTrack, b: Indexed | undefined, fileName: string): MediaTrack {
  const p: TrackProperties = { ...t.properties };
  if (b === undefined || b.fragments.count === 0) {
    throw originError(
      'unsupported-media',
      `track ${p.trackID} (${p.type}) has no fragments: no moof boxes and no mfra index`,
      { subject: fileName },
    );
  }
  const fragments = b.fragments;
  let duration = 0;
  let rangeBytes = 0;
  if (b.totals !== undefined) ({ duration, rangeBytes } = b.totals);
  else {
    for (let i = 0; i < fragments.count; i++) {
      duration += fragments.durations[i]!;
      rangeBytes += fragments.sizes[i]!;
    }
  }
  if (duration > 0) {
    // Average bitrate of the media payload (exact when the walk counted sample sizes; from
    // moof+mdat ranges on the mfra path).
    const bytes = b.dataBytes ?? rangeBytes;
    p.systemBitrate = Math.round((bytes * 8 * p.TimeScale) / duration);
  }
  if (p.type === 'video' && p.FrameRate === undefined && b.firstTiming) {
    const rate = frameRateFromTiming(p.TimeScale, b.firstTiming.samples, b.firstTiming.duration);
    if (rate) p.FrameRate = rate;
  }
  return { properties: p, fragments, dataBytes: b.dataBytes, sampleCount: b.samples };
}

/**
 * The source with a few windows of bytes already asked for: a read inside a window is answered
 * from it, `readAhead` widens a read that misses into a new window. Which window covers a read is
 * known before its bytes arrive, so a pending window never delays a read it does not cover.
 * Windows are views of the reads, not copies; they live as long as this object (one index load).
 */
class ReadAhead implements ByteSource {
  readonly name: string;
  readonly size: number;
  private readonly windows: Array<{ start: number; end: number; bytes: Promise<Uint8Array> }> = [];
  constructor(private readonly inner: ByteSource) {
    this.name = inner.name;
    this.size = inner.size;
  }

  /** Starts reading [start, start + length) into a window without waiting for it. */
  prefetch(start: number, length: number): Promise<Uint8Array> {
    const bytes = this.inner.read(start, length);
    // Observed here: a failed window is read again, directly, by whoever needs its bytes.
    bytes.catch(() => undefined);
    this.windows.push({ start, end: start + length, bytes });
    return bytes;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    return (await this.fromWindow(offset, length)) ?? this.inner.read(offset, length);
  }

  /** `length` bytes at `offset`; on a miss, reads at least `window` bytes there (within the file) and keeps them. */
  async readAhead(offset: number, length: number, window: number): Promise<Uint8Array> {
    const hit = await this.fromWindow(offset, length);
    if (hit !== undefined) return hit;
    const wide = Math.min(Math.max(length, window), this.size - offset);
    if (offset < 0 || length < 0 || wide <= length) return this.inner.read(offset, length);
    const bytes = await this.prefetch(offset, wide);
    return bytes.subarray(0, length);
  }

  private async fromWindow(offset: number, length: number): Promise<Uint8Array | undefined> {
    for (const w of this.windows) {
      if (offset < w.start || length < 0 || offset + length > w.end) continue;
      const bytes = await w.bytes.catch(() => undefined);
      if (bytes !== undefined) return bytes.subarray(offset - w.start, offset - w.start + length);
    }
    return undefined;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
