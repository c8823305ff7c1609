// The fragment index of a legacy Smooth source without `mfra` (issue 22: "without mfra, one scan of
// the top-level box headers, cached per file"), for origin/server/passthrough.ts. Only the
// top-level box headers are read (ISO/IEC 14496-12 §4.2: 32-bit size, `size == 1` for a 64-bit
// largesize, `size == 0` for a box running to the end of the file), plus each `moof` itself to
// learn its tracks and times: a fragment is a `moof` directly followed by its `mdat` (MS-SSTR
// §2.2.4). A fragment's time is its traf's `tfxd` (Smooth's absolute time uuid box, MS-SSTR
// §2.2.4.4), else its `tfdt` (§8.8.12). The mdat payloads are never read.
//
// The work is bounded: at most MAX_BOXES top-level boxes and moofs of at most MAX_MOOF bytes; a
// box whose size is below its header or runs past the end of the file stops the scan with
// `passthrough-bad-layout` rather than guessing where the next box is.

import * as path from 'node:path';
import { originError } from '../errors';
import type { ByteSource } from '../io/source';

/** Top-level boxes read from one file before the scan gives up (a few hours of 2 s fragments is ~10^4). */
export const MAX_BOXES = 1 << 20;
/** A moof larger than this is refused: a Smooth moof is one traf of a few hundred samples. */
const MAX_MOOF = 4 << 20;

/** Bytes read at a time while walking the headers. */
const READ_AHEAD = 64 << 10;

const TFXD = '6d1d9b0542d544e680e2141daff757b2';

/** The fragments of one track in file order: each one's time and moof offset. */
export interface ScannedTrack {
  count: number;
  times: bigint[];
  moofOffsets: number[];
}

let scans = 0;

/** How many files have been scanned in this process (tests check the per-file cache with it). */
export function boxScans(): number {
  return scans;
}

/** Scans the top-level boxes of `file` (`size` bytes, opened as `source`) into a per-track index. */
export async function scanFragments(
  source: ByteSource,
  size: number,
  file: string,
): Promise<Map<number, ScannedTrack>> {
  scans++;
  const name = path.basename(file);
  const bad = (at: number, why: string): Error =>
    originError('passthrough-bad-layout', `top-level box at ${at}: ${why}`, { subject: name });
  const out = new Map<number, ScannedTrack>();
  // Reads go through a window of READ_AHEAD bytes: small boxes (a file of audio fragments, or a
  // hostile one of 2^20 empty boxes) cost one read per window, not one per box.
  let window: { start: number; bytes: Uint8Array } = { start: 0, bytes: new Uint8Array(0) };
  const bytesAt = async (at: number, n: number): Promise<Uint8Array> => {
    const end = Math.min(at + n, size);
    if (at < window.start || end > window.start + window.bytes.byteLength)
      window = { start: at, bytes: await source.read(at, Math.min(Math.max(n, READ_AHEAD), size - at)) };
    return window.bytes.subarray(at - window.start, end - window.start);
  };
  let at = 0;
  for (let n = 0; at < size; n++) {
    if (n >= MAX_BOXES) throw bad(at, `more than ${MAX_BOXES} top-level boxes`);
    if (size - at < 8) throw bad(at, `${size - at} trailing bytes are no box header`);
    const box = header(await bytesAt(at, 16), size - at);
    if (typeof box === 'string') throw bad(at, box);
    if (box.type === 'moof') {
      if (box.size > MAX_MOOF) throw bad(at, `a moof of ${box.size} bytes`);
      // The moof and the header of the box after it.
      const bytes = await bytesAt(at, box.size + 16);
      const next = at + box.size < size ? header(bytes.subarray(box.size), size - at - box.size) : undefined;
      if (typeof next === 'object' && next.type === 'mdat')
        for (const [track, time] of moofTimes(bytes.subarray(0, box.size))) {
          let t = out.get(track);
          if (t === undefined) out.set(track, (t = { count: 0, times: [], moofOffsets: [] }));
          t.times.push(time);
          t.moofOffsets.push(at);
          t.count++;
        }
    }
    at += box.size;
  }
  return out;
}

/** A top-level box header at the start of `bytes` with `left` bytes of file from there, or why not. */
function header(bytes: Uint8Array, left: number): { type: string; size: number } | string {
  if (bytes.byteLength < 8) return 'a truncated box header';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = String.fromCharCode(bytes[4]!, bytes[5]!, bytes[6]!, bytes[7]!);
  const shown = (): string => type.replace(/[^\x20-\x7e]/g, '?');
  let size = view.getUint32(0);
  let headerSize = 8;
  if (size === 1) {
    if (bytes.byteLength < 16) return `box '${shown()}' has a 64-bit size but no room for it`;
    size = Number(view.getBigUint64(8));
    headerSize = 16;
  } else if (size === 0) size = left;
  if (size < headerSize) return `box '${shown()}' declares ${size} bytes, less than its header`;
  if (size > left) return `box '${shown()}' of ${size} bytes runs past the end of the file (${left} bytes left)`;
  return { type, size };
}

/**
 * The track and time of each traf of a moof: `tfhd`'s track_ID, and the `tfxd` time, else the
 * `tfdt` one (a traf with neither is left out: it cannot be asked for by time). Pure.
 */
export function moofTimes(moof: Uint8Array): [number, bigint][] {
  const out: [number, bigint][] = [];
  for (const traf of children(moof, 8)) {
    if (traf.type !== 'traf') continue;
    let track: number | undefined;
    let tfxd: bigint | undefined;
    let tfdt: bigint | undefined;
    for (const b of children(traf.bytes, 8)) {
      const v = new DataView(b.bytes.buffer, b.bytes.byteOffset, b.bytes.byteLength);
      const version = b.bytes[8];
      if (b.type === 'tfhd' && b.bytes.byteLength >= 16) track = v.getUint32(12);
      else if (b.type === 'tfdt' && b.bytes.byteLength >= 16)
        tfdt = version === 1 && b.bytes.byteLength >= 20 ? v.getBigUint64(12) : BigInt(v.getUint32(12));
      else if (b.type === 'uuid' && b.bytes.byteLength >= 28 && hex(b.bytes.subarray(8, 24)) === TFXD) {
        const fields = b.bytes[24] === 1 ? 36 : 32;
        if (b.bytes.byteLength >= fields) tfxd = b.bytes[24] === 1 ? v.getBigUint64(28) : BigInt(v.getUint32(28));
      }
    }
    const time = tfxd ?? tfdt;
    if (track !== undefined && time !== undefined) out.push([track, time]);
  }
  return out;
}

/** The child boxes of a box's bytes from `from`; a child that does not fit ends the list. */
function* children(bytes: Uint8Array, from: number): Generator<{ type: string; bytes: Uint8Array }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = from; at + 8 <= bytes.byteLength;) {
    const size = view.getUint32(at);
    if (size < 8 || at + size > bytes.byteLength) return;
    yield { type: String.fromCharCode(...bytes.subarray(at + 4, at + 8)), bytes: bytes.subarray(at, at + size) };
    at += size;
  }
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
