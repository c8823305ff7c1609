// Narrow readers for the ISO BMFF boxes the fragment index needs (ISO/IEC 14496-12:2022 §8.8,
// MS-SSTR §2.2.4 for the Smooth `tfxd` uuid box). moov.ts reads `moov`; these read `moof`, `mfra`
// and box headers, where we need exact 64-bit signed times and speed. No I/O here: every
// function takes bytes and returns a result.

import type { TrexDefaults } from '../model/media';
import { ByteReader, corruptAt } from './byte-reader';

export interface BoxHeader {
  type: string;
  /** Absolute file offset of the box's first byte. */
  start: number;
  /** Whole box size in bytes, header included. */
  size: number;
  headerSize: number;
}

/**
 * Reads a box header at `bytes[at]` (absolute file offset `base + at`). `limit` is the absolute end
 * of the enclosing container (file size for top level). Returns undefined when fewer than 8 bytes
 * are available, so callers can fetch more.
 */
export function readBoxHeader(
  bytes: Uint8Array,
  at: number,
  base: number,
  limit: number,
  path: string,
): BoxHeader | undefined {
  if (at + 8 > bytes.byteLength) return undefined;
  // The 32-bit size and the type read in place: every box of every moof passes here, and a view,
  // a reader and a new type string per box were most of what parsing a moof allocated.
  let size = ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
  const type = fourccAt(bytes, at + 4);
  let headerSize = 8;
  if (size === 1) {
    if (at + 16 > bytes.byteLength) return undefined;
    size = new ByteReader(bytes.subarray(at + 8), path, base + at + 8).u64();
    headerSize = 16;
  } else if (size === 0) {
    // §4.2: size 0 means "extends to the end of the file" (only legal for the last box).
    size = limit - (base + at);
  }
  const start = base + at;
  if (size < headerSize)
    throw corruptAt(path, start, `box '${printable(type)}' declares size ${size}, smaller than its header`);
  if (start + size > limit) {
    throw corruptAt(
      path,
      start,
      `box '${printable(type)}' of ${size} bytes runs past the end of its container (${limit - start} bytes left)`,
    );
  }
  return { type, start, size, headerSize };
}

/** Box types seen, by their 32-bit code: the same few dozen come back in every file. */
const fourccs = new Map<number, string>();

/** The four bytes at `at` as a type string (one char per byte), shared for a type seen before. */
function fourccAt(bytes: Uint8Array, at: number): string {
  const code = ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
  let type = fourccs.get(code);
  if (type === undefined) {
    type = String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
    // Bounded: a corrupt file can name any type.
    if (fourccs.size < 1024) fourccs.set(code, type);
  }
  return type;
}

export function printable(fourcc: string): string {
  return /^[\x20-\x7e]{4}$/.test(fourcc) ? fourcc : `0x${Buffer.from(fourcc, 'latin1').toString('hex')}`;
}

/** Iterates the child boxes of a container whose payload is `bytes` (absolute offset `base`). */
export function* childBoxes(
  bytes: Uint8Array,
  base: number,
  path: string,
): Generator<BoxHeader & { payload: Uint8Array }> {
  let at = 0;
  const limit = base + bytes.byteLength;
  while (at < bytes.byteLength) {
    const h = readBoxHeader(bytes, at, base, limit, path);
    if (h === undefined) throw corruptAt(path, base + at, 'truncated box header');
    yield {
      type: h.type,
      start: h.start,
      size: h.size,
      headerSize: h.headerSize,
      payload: bytes.subarray(at + h.headerSize, at + h.size),
    };
    at += h.size;
  }
}

/** The children of one container, first box of each type, with its payload view. */
export type FirstChildren = Map<string, BoxHeader & { payload: Uint8Array }>;

export function firstChildren(payload: Uint8Array, base: number, path: string): FirstChildren {
  const out: FirstChildren = new Map();
  for (const c of childBoxes(payload, base, path)) if (!out.has(c.type)) out.set(c.type, c);
  return out;
}

/** The child of `type`, or corrupt-media "missing <type> box" at the container's offset. */
export function requireChild(
  c: FirstChildren,
  type: string,
  path: string,
  containerStart: number,
): BoxHeader & { payload: Uint8Array } {
  const found = c.get(type);
  if (found === undefined) throw corruptAt(path, containerStart, `missing ${type} box`);
  return found;
}

/** §8.4.2.3 packed ISO 639-2/T: three 5-bit letters, each stored as (char - 0x60). Zero and non-letters mean "unset". */
export function unpackLanguage(packed: number): string {
  const code = String.fromCharCode(((packed >> 10) & 31) + 0x60, ((packed >> 5) & 31) + 0x60, (packed & 31) + 0x60);
  return /^[a-z]{3}$/.test(code) ? code : 'und';
}

// MS-SSTR §2.2.4.4 TfxdBox: uuid 6D1D9B05-42D5-44E6-80E2-141DAFF757B2.
const TFXD_UUID = '6d1d9b0542d544e680e2141daff757b2';

/** ISO/IEC 14496-12 §8.8.3.1 sample_flags: sample_is_non_sync_sample. */
const SAMPLE_IS_NON_SYNC = 0x00010000;

/** What one `traf` of a `moof` says about its fragment of one track. */
export interface TrafSummary {
  trackId: number;
  /** Decode time of the first sample in track timescale: tfxd when present (Smooth), else tfdt. */
  baseTime: bigint | undefined;
  /** Sum of the sample durations, in track timescale. */
  duration: number;
  sampleCount: number;
  /** Sum of the sample sizes: the media bytes this traf owns in the mdat. */
  dataSize: number;
  /** Whether the first sample is a sync sample (a random access point). */
  startsWithSync: boolean;
}

/** Parses a whole `moof` box (header included); `start` is its absolute file offset. */
export function parseMoof(
  moof: Uint8Array,
  start: number,
  defaults: (trackId: number) => TrexDefaults | undefined,
): TrafSummary[] {
  const top = readBoxHeader(moof, 0, start, start + moof.byteLength, 'file');
  const path = `moof@${start}`;
  if (top === undefined || top.type !== 'moof') throw corruptAt(path, start, 'expected a moof box');
  const out: TrafSummary[] = [];
  let trafIndex = 0;
  for (const child of childBoxes(moof.subarray(top.headerSize, top.size), start + top.headerSize, path)) {
    if (child.type !== 'traf') continue;
    out.push(parseTraf(child.payload, child.start + child.headerSize, `${path}/traf[${trafIndex++}]`, defaults));
  }
  return out;
}

function parseTraf(
  payload: Uint8Array,
  base: number,
  path: string,
  defaults: (trackId: number) => TrexDefaults | undefined,
): TrafSummary {
  let tfhd: { trackId: number; duration?: number; size?: number; flags?: number } | undefined;
  let tfdt: bigint | undefined;
  let tfxd: bigint | undefined;
  const runs: Array<{ payload: Uint8Array; base: number }> = [];
  for (const box of childBoxes(payload, base, path)) {
    const boxPath = `${path}/${printable(box.type)}`;
    const r = new ByteReader(box.payload, boxPath, box.start + box.headerSize);
    if (box.type === 'tfhd') tfhd = parseTfhd(r);
    else if (box.type === 'tfdt') tfdt = parseTfdt(r);
    else if (box.type === 'trun') runs.push({ payload: box.payload, base: box.start + box.headerSize });
    else if (box.type === 'uuid' && r.remaining >= 16 && Buffer.from(r.slice(16)).toString('hex') === TFXD_UUID) {
      tfxd = parseTfxd(r);
    }
  }
  if (tfhd === undefined) throw corruptAt(path, base, 'traf without tfhd');
  const trex = defaults(tfhd.trackId);
  const sampleDefaults = {
    duration: tfhd.duration ?? trex?.defaultSampleDuration ?? 0,
    size: tfhd.size ?? trex?.defaultSampleSize ?? 0,
    flags: tfhd.flags ?? trex?.defaultSampleFlags ?? 0,
  };
  const summary: TrafSummary = {
    trackId: tfhd.trackId,
    baseTime: tfxd ?? tfdt,
    duration: 0,
    sampleCount: 0,
    dataSize: 0,
    startsWithSync: false,
  };
  runs.forEach((run, i) => {
    const r = new ByteReader(run.payload, `${path}/trun[${i}]`, run.base);
    addTrun(r, sampleDefaults, summary, i === 0);
  });
  return summary;
}

/** §8.8.7 TrackFragmentHeaderBox. */
function parseTfhd(r: ByteReader): { trackId: number; duration?: number; size?: number; flags?: number } {
  const flags = r.u32() & 0xffffff;
  const trackId = r.u32();
  const out: { trackId: number; duration?: number; size?: number; flags?: number } = { trackId };
  if (flags & 0x1) r.skip(8); // base_data_offset
  if (flags & 0x2) r.skip(4); // sample_description_index
  if (flags & 0x8) out.duration = r.u32();
  if (flags & 0x10) out.size = r.u32();
  if (flags & 0x20) out.flags = r.u32();
  return out;
}

/** §8.8.12 TrackFragmentBaseMediaDecodeTimeBox. */
function parseTfdt(r: ByteReader): bigint {
  const version = r.u8();
  r.skip(3);
  return version === 1 ? r.u64Big() : BigInt(r.u32());
}

/** MS-SSTR §2.2.4.4: FragmentAbsoluteTime, signed here because ffmpeg writes AAC priming as negative. */
function parseTfxd(r: ByteReader): bigint {
  const version = r.u8();
  r.skip(3);
  return version === 1 ? r.i64Big() : BigInt(r.u32());
}

/** Cap on samples per run: far above any real fragment, low enough to refuse absurd counts early. */
const MAX_SAMPLES_PER_RUN = 1 << 20;

/** §8.8.8 TrackRunBox: accumulates durations and sizes, and notes whether the run opens on a sync sample. */
function addTrun(
  r: ByteReader,
  defaults: { duration: number; size: number; flags: number },
  into: TrafSummary,
  first: boolean,
): void {
  const flags = r.u32() & 0xffffff;
  const count = r.u32();
  if (count > MAX_SAMPLES_PER_RUN) r.fail(`sample_count ${count} exceeds the limit of ${MAX_SAMPLES_PER_RUN}`);
  if (flags & 0x1) r.skip(4); // data_offset
  let firstFlags: number | undefined;
  if (flags & 0x4) firstFlags = r.u32();
  const perSample =
    (flags & 0x100 ? 4 : 0) + (flags & 0x200 ? 4 : 0) + (flags & 0x400 ? 4 : 0) + (flags & 0x800 ? 4 : 0);
  r.need(perSample * count);
  let duration = 0;
  let size = 0;
  for (let i = 0; i < count; i++) {
    duration += flags & 0x100 ? r.u32() : defaults.duration;
    size += flags & 0x200 ? r.u32() : defaults.size;
    const sampleFlags = flags & 0x400 ? r.u32() : i === 0 && firstFlags !== undefined ? firstFlags : defaults.flags;
    if (flags & 0x800) r.skip(4);
    if (i === 0 && first) into.startsWithSync = (sampleFlags & SAMPLE_IS_NON_SYNC) === 0;
  }
  into.duration += duration;
  into.dataSize += size;
  into.sampleCount += count;
}

/** Index of the high 32-bit word of a 64-bit integer in a Uint32Array view (platform order). */
const HIGH_WORD = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 1 : 0;

/** The `tfra` entries of one track (§8.8.10), as columns: the random access points in file order. */
export interface RandomAccessTable {
  count: number;
  /** Each entry's decode time, track timescale. */
  times: BigInt64Array;
  /** The same times as numbers, for arithmetic without BigInt; exact only when `timesSafe`. */
  timeNumbers: Float64Array;
  /** Every time is below 2^53 in magnitude (VOD; a live capture with epoch-based 10 MHz times is not). */
  timesSafe: boolean;
  /** Each entry's moof offset in the file. */
  moofOffsets: Float64Array;
  /** Both the moof offsets and the times strictly ascend (the order §8.8.10 asks for). */
  ascending: boolean;
  /**
   * timeNumbers[e + 1] − timeNumbers[e] (exact when `timesSafe`), 0 for the last entry: a
   * fragment's duration when the entries are consecutive fragments. Computed in the parse loop,
   * so that the index needs no further pass over the entries.
   */
  timeSteps: Float64Array;
  /** moofOffsets[e + 1] − moofOffsets[e], 0 for the last entry. */
  offsetSteps: Float64Array;
}

/**
 * Parses a whole `mfra` box (header included); returns the tfra entries per track id.
 * Columns, not an object per entry: a 2-hour file has thousands of entries per track, and this
 * runs on the first request for a presentation (the cold-start path).
 */
export function parseMfra(mfra: Uint8Array, start: number): Map<number, RandomAccessTable> {
  const top = readBoxHeader(mfra, 0, start, start + mfra.byteLength, 'file');
  const path = `mfra@${start}`;
  if (top === undefined || top.type !== 'mfra') throw corruptAt(path, start, 'expected an mfra box');
  const out = new Map<number, RandomAccessTable>();
  let i = 0;
  for (const box of childBoxes(mfra.subarray(top.headerSize, top.size), start + top.headerSize, path)) {
    if (box.type !== 'tfra') continue;
    const r = new ByteReader(box.payload, `${path}/tfra[${i++}]`, box.start + box.headerSize);
    const version = r.u8();
    r.skip(3);
    const trackId = r.u32();
    const sizes = r.u32();
    const trafBytes = ((sizes >> 4) & 3) + 1;
    const trunBytes = ((sizes >> 2) & 3) + 1;
    const sampleBytes = (sizes & 3) + 1;
    const count = r.u32();
    const entryBytes = (version === 1 ? 16 : 8) + trafBytes + trunBytes + sampleBytes;
    r.need(count * entryBytes);
    const times = new BigInt64Array(count);
    // Written as two 32-bit words each (no BigInt per entry); the word order is the platform's.
    const words = new Uint32Array(times.buffer);
    const timeNumbers = new Float64Array(count);
    const moofOffsets = new Float64Array(count);
    const timeSteps = new Float64Array(count);
    const offsetSteps = new Float64Array(count);
    let timesSafe = true;
    let ascending = true;
    let prevHigh = 0;
    let prevLow = 0;
    let prevTime = 0;
    let prevOffset = 0;
    const view = new DataView(box.payload.buffer, box.payload.byteOffset + r.offset, count * entryBytes);
    // One pass does everything per entry (this loop runs cold on a first request: each extra
    // pass over thousands of entries cost milliseconds before the JIT caught up).
    for (let e = 0, p = 0; e < count; e++, p += entryBytes) {
      // The time is unsigned in §8.8.10, but ffmpeg clamps or wraps negative times; read it
      // signed so a wrapped value stays meaningful. The first time is re-read from the moof anyway.
      let timeHigh = 0;
      let timeLow: number;
      let offset: number;
      if (version === 1) {
        timeHigh = view.getInt32(p);
        timeLow = view.getUint32(p + 4);
        // Safe (|t| < 2^53) exactly when the high word is in [-2^21, 2^21), except -2^53 itself.
        if (timeHigh < -0x200000 || timeHigh >= 0x200000 || (timeHigh === -0x200000 && timeLow === 0))
          timesSafe = false;
        const high = view.getUint32(p + 8);
        // Offsets past 2^53 cannot be file positions here; refuse rather than round.
        if (high > 0x1fffff) r.fail(`entry ${e}: moof_offset exceeds 2^53`);
        offset = high * 0x100000000 + view.getUint32(p + 12);
      } else {
        timeLow = view.getUint32(p);
        offset = view.getUint32(p + 4);
      }
      words[2 * e + HIGH_WORD] = timeHigh >>> 0;
      words[2 * e + 1 - HIGH_WORD] = timeLow;
      const time = timeHigh * 0x100000000 + timeLow;
      timeNumbers[e] = time;
      moofOffsets[e] = offset;
      if (e > 0) {
        timeSteps[e - 1] = time - prevTime;
        offsetSteps[e - 1] = offset - prevOffset;
        // Times compared as (high, low) words: exact even past 2^53.
        if (offset <= prevOffset || timeHigh < prevHigh || (timeHigh === prevHigh && timeLow <= prevLow))
          ascending = false;
      }
      prevHigh = timeHigh;
      prevLow = timeLow;
      prevTime = time;
      prevOffset = offset;
    }
    out.set(trackId, { count, times, timeNumbers, timesSafe, moofOffsets, ascending, timeSteps, offsetSteps });
  }
  return out;
}

/** §8.8.11 MovieFragmentRandomAccessOffsetBox: the last 16 bytes of a file with an mfra. */
export function parseMfro(tail: Uint8Array, start: number): number | undefined {
  if (tail.byteLength !== 16) return undefined;
  const r = new ByteReader(tail, `mfro@${start}`, start);
  r.skip(4); // size: the mfro is the fixed last 16 bytes
  if (r.fourcc() !== 'mfro') return undefined;
  r.skip(4); // version + flags
  return r.u32();
}
