// The archive's index file, one per archive file of a track (origin/live/archive.ts): a 32-byte
// header, then one 40-byte record per fragment, appended after the fragment's bytes are on disk,
// each preceded by a 40-byte producer-time record when the ingest sent a `prft` before it.
// Pure: bytes in, records out.
//
//   header  'OLIX' | version u32 = 2 | timescale u32 | init size u32 | reserved 16 bytes
//   record  'OLFR' | time i64 | duration u64 | offset u64 | size u32 | flags u32 | crc32 u32
//   prft    'OLPT' | ntp u64 | media time i64 | prft flags u32 | reserved 12 bytes | crc32 u32
//
// Big-endian like the boxes it indexes. `time` is the fragment's decode time in the track
// timescale, exact 64-bit (a UTC time at 10 MHz is past 2^53); `offset`/`size` locate its
// moof+mdat (with the emsg boxes that came before the moof) in the archive file;
// flags bit 0: starts with a sync sample; bit 1: top-level `emsg` boxes lie ahead of the moof
// (ISO/IEC 23009-1 §5.10.3.3; docs/design/live.md#timed-metadata); bit 2: an 'OLPT' record
// precedes this one. 'OLPT' holds the fragment's `prft` (ISO/IEC 14496-12 §8.16.5): its NTP
// time, its media time rescaled to the track timescale, its flags; the two records are
// appended as one write, and one without the other is a torn tail.
// The crc32 (ISO 3309, as zlib's) covers a record's first 36 bytes. A record is trusted only
// when its magic and crc check and its bytes lie inside the media file: a crash between the
// fragment's write and its record's, or in the middle of either, leaves a tail that fails one
// of those, which reload drops (and cuts off both files).
// Version 1 files (before producer times) hold no 'OLPT' record and are read alike; a reader
// that knows only version 1 refuses a version 2 header.

export const INDEX_HEADER_BYTES = 32;
export const INDEX_RECORD_BYTES = 40;
const HEADER_MAGIC = 0x4f4c4958; // 'OLIX'
const RECORD_MAGIC = 0x4f4c4652; // 'OLFR'
const PRODUCER_MAGIC = 0x4f4c5054; // 'OLPT'
const VERSION = 2;
const READABLE_VERSIONS = [1, 2];
const FLAG_PRODUCER = 4;

/** A fragment's `prft` as archived: the mapping of a media time to the wall clock. */
export interface ProducerTime {
  /** NTP timestamp (RFC 5905 §6) the encoder gave `mediaTime`. */
  ntp: bigint;
  /** Track timescale (the prft's reference track's media time, rescaled). */
  mediaTime: bigint;
  /** The prft's flags (ISO/IEC 14496-12 §8.16.5.3): which instant the NTP time is. */
  flags: number;
}

export interface IndexHeader {
  /** Ticks per second of every time and duration of the track. */
  timescale: number;
  /** Bytes of the init (ftyp + moov) at the start of the archive file. */
  initSize: number;
}

export interface IndexRecord {
  /** Decode time of the fragment's first sample, track timescale. */
  time: bigint;
  /** Track timescale units. */
  duration: number;
  /** Offset of the fragment's first byte in the archive file. */
  offset: number;
  size: number;
  keyframe: boolean;
  /** Top-level `emsg` boxes precede the moof inside the record's bytes. */
  events: boolean;
  /** The `prft` the ingest sent before the fragment. */
  producer?: ProducerTime;
}

export function writeIndexHeader(h: IndexHeader): Uint8Array {
  const b = new Uint8Array(INDEX_HEADER_BYTES);
  const v = new DataView(b.buffer);
  v.setUint32(0, HEADER_MAGIC);
  v.setUint32(4, VERSION);
  v.setUint32(8, h.timescale);
  v.setUint32(12, h.initSize);
  return b;
}

/** The header, or undefined when the bytes are not one (too short, another magic or version). */
export function readIndexHeader(b: Uint8Array): IndexHeader | undefined {
  if (b.byteLength < INDEX_HEADER_BYTES) return undefined;
  const v = new DataView(b.buffer, b.byteOffset, INDEX_HEADER_BYTES);
  if (v.getUint32(0) !== HEADER_MAGIC || !READABLE_VERSIONS.includes(v.getUint32(4))) return undefined;
  const timescale = v.getUint32(8);
  if (timescale === 0) return undefined;
  return { timescale, initSize: v.getUint32(12) };
}

/** A fragment's record, behind its producer-time record when it has one (40 or 80 bytes, one write). */
export function writeIndexRecord(r: IndexRecord): Uint8Array {
  const p = r.producer;
  const b = new Uint8Array(INDEX_RECORD_BYTES * (p === undefined ? 1 : 2));
  const v = new DataView(b.buffer);
  let at = 0;
  if (p !== undefined) {
    v.setUint32(0, PRODUCER_MAGIC);
    v.setBigUint64(4, p.ntp);
    v.setBigInt64(12, p.mediaTime);
    v.setUint32(20, p.flags);
    v.setUint32(36, crc32(b.subarray(0, 36)));
    at = INDEX_RECORD_BYTES;
  }
  v.setUint32(at, RECORD_MAGIC);
  v.setBigInt64(at + 4, r.time);
  v.setBigUint64(at + 12, BigInt(r.duration));
  v.setBigUint64(at + 20, BigInt(r.offset));
  v.setUint32(at + 28, r.size);
  v.setUint32(at + 32, (r.keyframe ? 1 : 0) | (r.events ? 2 : 0) | (p === undefined ? 0 : FLAG_PRODUCER));
  v.setUint32(at + 36, crc32(b.subarray(at, at + 36)));
  return b;
}

/**
 * The records of an index file's body (the bytes after its header), in order, up to the first
 * one that does not check (magic, crc, or bytes past `mediaSize`, the archive file's size, or
 * not after the previous record's, or a producer-time record without its fragment's). `valid` is
 * how many fragment records were kept, `bytes` how much of the body they take: the rest is a torn tail.
 */
export function readIndexRecords(
  body: Uint8Array,
  mediaSize: number,
): { records: IndexRecord[]; valid: number; bytes: number } {
  const records: IndexRecord[] = [];
  const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const checks = (at: number): boolean => v.getUint32(at + 36) === crc32(body.subarray(at, at + 36));
  let end = -1;
  let good = 0;
  let producer: ProducerTime | undefined;
  for (let at = 0; at + INDEX_RECORD_BYTES <= body.byteLength; at += INDEX_RECORD_BYTES) {
    const magic = v.getUint32(at);
    if (magic === PRODUCER_MAGIC && producer === undefined && checks(at)) {
      producer = { ntp: v.getBigUint64(at + 4), mediaTime: v.getBigInt64(at + 12), flags: v.getUint32(at + 20) };
      continue;
    }
    if (magic !== RECORD_MAGIC || !checks(at)) break;
    const offset = Number(v.getBigUint64(at + 20));
    const size = v.getUint32(at + 28);
    const flags = v.getUint32(at + 32);
    if (offset < end || offset + size > mediaSize || size === 0) break;
    if (((flags & FLAG_PRODUCER) !== 0) !== (producer !== undefined)) break;
    end = offset + size;
    records.push({
      time: v.getBigInt64(at + 4),
      duration: Number(v.getBigUint64(at + 12)),
      offset,
      size,
      keyframe: (flags & 1) === 1,
      events: (flags & 2) === 2,
      ...(producer === undefined ? {} : { producer }),
    });
    producer = undefined;
    good = at + INDEX_RECORD_BYTES;
  }
  return { records, valid: records.length, bytes: good };
}

const CRC_TABLE = ((): Uint32Array => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (ISO 3309 / ITU-T V.42, reflected polynomial 0xEDB88320), as zlib computes it. */
export function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.byteLength; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
