// Reads a fragmented MP4 source into the media model: track properties from `moov` and a
// fragment table per track. Two ways to build the table:
//
// - `mfra` fast path (ISO/IEC 14496-12 §8.8.9–8.8.11): read `mfro`, then `mfra`, then only the
//   first and last `moof` of each track. Used by the origin; an hour of three tracks costs a
//   handful of reads. The first `moof` gives the exact start time (ffmpeg's `tfra` clamps the
//   negative AAC priming time of `tfxd` to 0) and proves the layout (moof+mdat end where the next
//   entry begins); the last gives the final duration and must agree with its `tfra` time. Any
//   disagreement falls back to the walk.
// - `moof` walk: visit every top-level box after `moov`. Exact media byte counts (the bitrate the
//   packager writes), works without `mfra`, detects truncation.
//
// No parsing happens here that is not in boxes.ts / track-info.ts; this file only decides what
// to read next (house style §3: parsers do no I/O).

import { OriginError } from '../errors';
import { FragmentTable, MediaFile, MediaTrack, TrackProperties } from '../model';
import { corruptAt } from './byte-reader';
import { parseMfra, parseMfro, parseMoof, printable, RandomAccessTable, readBoxHeader, TrackDefaults, TrafSummary } from './boxes';
import { ByteSource } from './source';
import { frameRateFromTiming, MoovTrack, readMoov } from './track-info';

export type IndexMode = 'fast' | 'exact';

/** Caps that keep a hostile file from making us allocate without bound. */
const MAX_MOOV_BYTES = 64 << 20;
const MAX_MOOF_BYTES = 16 << 20;
const MAX_MFRA_BYTES = 64 << 20;
/** Read window for the walk: one read usually holds a moof and the next mdat's header. */
const WINDOW = 16 << 10;

/** Boxes that may open an ISO BMFF file (§4.3 ftyp, §8.16 styp, and boxes seen before ftyp in the wild). */
const FIRST_BOXES = new Set(['ftyp', 'styp', 'moov', 'free', 'skip', 'wide', 'uuid', 'pdin', 'sidx']);

export async function readMediaFile(source: ByteSource, mode: IndexMode = 'fast'): Promise<MediaFile> {
  try {
    return await read(source, mode);
  } catch (e) {
    if (e instanceof OriginError && e.subject !== undefined && !e.subject.startsWith(source.name)) {
      throw e.within(`${source.name}: ${e.subject}`);
    }
    throw e;
  }
}

async function read(source: ByteSource, mode: IndexMode): Promise<MediaFile> {
  if (source.size === 0) throw new OriginError('corrupt-media', 'empty file (0 bytes), not an MP4 file', source.name);
  const { moovTracks, fragmented, afterMoov, moov } = await readHeader(source);
  if (!fragmented) {
    throw new OriginError(
      'unsupported-media',
      'not a fragmented MP4 (moov has no mvex): package it as fragmented MP4 first, e.g. ffmpeg -f ismv',
      source.name,
    );
  }
  if (moovTracks.length === 0) throw new OriginError('corrupt-media', 'moov declares no tracks', source.name);
  let built: Built | undefined;
  if (mode === 'fast') built = await tryMfra(source, moovTracks, afterMoov);
  const indexedBy = built ? 'mfra' : 'moof-walk';
  built ??= await walkMoofs(source, moovTracks, afterMoov);
  const tracks = moovTracks.map((t) => finishTrack(t, built!.get(t.properties.trackID), source.name));
  return { name: source.name, size: source.size, tracks, indexedBy, moov };
}

async function readHeader(source: ByteSource): Promise<{ moovTracks: MoovTrack[]; fragmented: boolean; afterMoov: number; moov: Uint8Array }> {
  let offset = 0;
  let first = true;
  while (offset < source.size) {
    const head = await source.read(offset, Math.min(16, source.size - offset));
    const type = head.byteLength >= 8 ? String.fromCharCode(...head.subarray(4, 8)) : '';
    if (first && !FIRST_BOXES.has(type)) {
      throw new OriginError('corrupt-media', `not an MP4 file (first box type is '${printable(type.padEnd(4, '\0'))}', expected ftyp)`, source.name);
    }
    first = false;
    const h = readBoxHeader(head, 0, offset, source.size, 'file');
    if (h === undefined) throw corruptAt('file', offset, 'truncated box header');
    if (h.type === 'moof' || h.type === 'mdat') throw corruptAt('file', offset, `'${h.type}' before moov: no moov to describe the tracks`);
    if (h.type === 'moov') {
      if (h.size > MAX_MOOV_BYTES) throw corruptAt('file', offset, `moov of ${h.size} bytes exceeds the ${MAX_MOOV_BYTES}-byte limit`);
      const moov = await source.read(offset, h.size);
      const { tracks, fragmented } = readMoov(moov, 'moov');
      return { moovTracks: tracks, fragmented, afterMoov: offset + h.size, moov };
    }
    offset += h.size;
  }
  throw new OriginError('corrupt-media', 'no moov box', source.name);
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
}
type Built = Map<number, Indexed>;

async function tryMfra(source: ByteSource, tracks: MoovTrack[], afterMoov: number): Promise<Built | undefined> {
  if (source.size < afterMoov + 16) return undefined;
  const mfraSize = parseMfro(await source.read(source.size - 16, 16), source.size - 16);
  if (mfraSize === undefined || mfraSize > MAX_MFRA_BYTES || mfraSize < 16 || source.size - mfraSize < afterMoov) return undefined;
  const mfraStart = source.size - mfraSize;
  const entries = parseMfra(await source.read(mfraStart, mfraSize), mfraStart);
  const lists: RandomAccessTable[] = [];
  for (const t of tracks) {
    const list = entries.get(t.properties.trackID);
    if (list === undefined || list.count === 0 || !ascending(list, afterMoov, mfraStart)) return undefined;
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
    if (last === undefined || (n > 1 && last.traf.baseTime !== undefined && last.traf.baseTime !== list.times[n - 1]!)) return undefined;
    const times = list.times.slice();
    if (first.traf.baseTime !== undefined) times[0] = first.traf.baseTime;
    const durations = new Float64Array(n);
    const sizes = new Float64Array(n);
    const tn = list.timeNumbers;
    const firstTime = Number(times[0]!);
    const offsets = list.moofOffsets;
    // Both lists ascend: one pointer walks the boundaries alongside the fragments.
    let j = 0;
    for (let i = 0; i < n; i++) {
      const d = i + 1 >= n ? last.traf.duration : list.timesSafe ? tn[i + 1]! - (i === 0 ? firstTime : tn[i]!) : Number(times[i + 1]! - times[i]!);
      if (!(d > 0)) return undefined;
      durations[i] = d;
      while (j < boundaries.length && boundaries[j]! <= offsets[i]!) j++;
      sizes[i] = (j < boundaries.length ? boundaries[j]! : mfraStart) - offsets[i]!;
    }
    built.set(id, {
      // tfra lists random access points only (§8.8.10): every fragment opens on a keyframe.
      fragments: { count: n, times, durations, offsets: list.moofOffsets, sizes, keyframes: new Uint8Array(n).fill(1) },
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

function ascending(list: RandomAccessTable, min: number, max: number): boolean {
  const { moofOffsets: o } = list;
  const t = list.timesSafe ? list.timeNumbers : list.times;
  for (let i = 0; i < list.count; i++) {
    if (o[i]! < min || o[i]! >= max) return false;
    if (i > 0 && (o[i]! <= o[i - 1]! || t[i]! <= t[i - 1]!)) return false;
  }
  return true;
}

function defaultsLookup(tracks: MoovTrack[]): (id: number) => TrackDefaults | undefined {
  const m = new Map(tracks.map((t) => [t.properties.trackID, t.defaults]));
  return (id) => m.get(id);
}

/** Reads the moof at `offset` and the header of the mdat after it; undefined when the layout is not moof+mdat. */
async function trafAt(
  source: ByteSource,
  offset: number,
  trackId: number,
  defaults: (id: number) => TrackDefaults | undefined,
): Promise<{ traf: TrafSummary; end: number } | undefined> {
  const head = await source.read(offset, Math.min(16, source.size - offset));
  const h = readBoxHeader(head, 0, offset, source.size, 'file');
  if (h === undefined || h.type !== 'moof' || h.size > MAX_MOOF_BYTES) return undefined;
  const moofEnd = offset + h.size;
  const bytes = await source.read(offset, Math.min(h.size + 16, source.size - offset));
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
      if (h.size > MAX_MOOF_BYTES) throw corruptAt('file', offset, `moof of ${h.size} bytes exceeds the ${MAX_MOOF_BYTES}-byte limit`);
      close(offset);
      const inWindow = offset + h.size <= windowStart + window.byteLength;
      const moof = inWindow ? window.subarray(offset - windowStart, offset - windowStart + h.size) : await source.read(offset, h.size);
      for (const traf of parseMoof(moof, offset, defaults)) {
        const b = built.get(traf.trackId);
        if (b === undefined) throw corruptAt(`moof@${offset}`, offset, `traf for track ${traf.trackId}, which moov does not declare`);
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
    throw new OriginError(
      'unsupported-media',
      `track ${p.trackID} (${p.type}) has no fragments: no moof boxes and no mfra index`,
      fileName,
    );
  }
  const fragments = b.fragments;
  let duration = 0;
  let rangeBytes = 0;
  for (let i = 0; i < fragments.count; i++) {
    duration += fragments.durations[i]!;
    rangeBytes += fragments.sizes[i]!;
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
