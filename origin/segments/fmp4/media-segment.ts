// fMP4 media segments (ISO/IEC 23009-1 §6.3.4 DASH, RFC 8216 §3.3 HLS fMP4, ISO/IEC 23000-19
// §7.3.3 CMAF) made from the source's own fragments without touching a sample: each source moof
// is reboxed into a new moof holding one track, followed by an mdat whose payload is that
// track's byte ranges of the source file. The segment is described as parts (small new bytes +
// file ranges) so the HTTP layer streams the media from the file by range and never reads a
// whole file.
//
// The new moof (ISO/IEC 14496-12 §8.8.4): mfhd (§8.8.5) with the caller's sequence number; per
// traf of the track: tfhd (§8.8.7) with default-base-is-moof and the source's defaults, tfdt
// version 1 (§8.8.12) with the caller's baseMediaDecodeTime, the source truns (§8.8.8) with
// data_offset pointing into the new mdat, and the source tfxd only when asked (Smooth; live
// Smooth gets a fresh tfxd and a tfrf instead, smooth-live-boxes.ts). Other
// boxes (tfrf/other uuids, sdtp, sample groups) are dropped: with default-base-is-moof and a
// tfdt in every fragment, a player needs nothing else.

import { OriginError, originError } from '../../errors';
import { corruptAt } from '../../media/byte-reader';
import type { TrexDefaults } from '../../model/media';
import { ByteSource } from '../../io/source';
import { box, BoxWriter, brandBox, field, fullBox, serialize, Writable } from '../box-writer';
import { AuxOffsets, auxInfoBoxes, patchSaio, SampleAuxInfo } from './encryption-boxes';
import { inFile } from '../../media/moov';
import { SmoothFragmentTime, tfrfBox, tfxdBox } from './smooth-live-boxes';
import { ByteRange, locateRuns, parseSourceMoof, runDuration, SourceTraf, TFHD, TRUN } from '../../media/traf-layout';

export type { ByteRange } from '../../media/traf-layout';

import { MAX_FRAGMENT_DATA_BYTES } from '../../media/fragment-moof';

export { MAX_FRAGMENT_DATA_BYTES, MAX_MOOF_BYTES, readFragmentMoof } from '../../media/fragment-moof';

export interface ReboxOptions {
  /** mfhd sequence_number (§8.8.5): 1-based and increasing within a representation. */
  sequenceNumber: number;
  /** tfdt (§8.8.12), track timescale, unsigned 64-bit: the caller shifts negative source times. */
  baseMediaDecodeTime: bigint;
  /** Keep the source tfxd box (Smooth Streaming output). */
  keepTfxd?: boolean;
  /** With keepTfxd: write this fragment_absolute_time into the kept tfxd (MS-SSTR §2.2.4.4),
   *  for a Smooth timeline shifted to start at or after 0. Duration is kept. */
  tfxdTime?: bigint;
  /**
   * Live Smooth Streaming: instead of the source's tfxd, a fresh one saying `self`, followed by
   * a tfrf listing `next` (smooth-live-boxes.ts), in the track's first traf.
   */
  smoothLive?: { self: SmoothFragmentTime; next: readonly SmoothFragmentTime[] };
  /** Track id written in tfhd; must equal the init segment's (default: the source's). */
  outputTrackId?: number;
  /** trex defaults by source track id (media/moov.ts), for sizes and durations
   *  that neither trun nor tfhd carry. */
  headers?: ReadonlyMap<number, { trexDefaults: TrexDefaults }>;
  /** Source file size in bytes: sample data past it is refused as corrupt. */
  fileSize?: number;
  /** Source name, put in front of error paths. */
  fileName?: string;
  /** Common encryption of the fragment (the sample bytes are encrypted by the caller). */
  encryption?: FragmentEncryption;
}

/** What a protected fragment's moof says beyond the clear one's. */
export interface FragmentEncryption {
  /** tfhd sample_description_index: 1 (the encrypted entry) or 2 (the clear entry of a clear lead). */
  sampleDescriptionIndex: number;
  /** Per traf of the track, in order: its samples' auxiliary information (undefined: a clear traf). */
  trafs: ReadonlyArray<readonly SampleAuxInfo[] | undefined>;
  /** Smooth Streaming: the PIFF `uuid` SampleEncryptionBox instead of `senc`. */
  piff?: boolean;
}

export interface ReboxedFragment {
  /** The new moof, data offsets already pointing into the mdat that must follow it directly. */
  moof: Uint8Array;
  /** The sample data, absolute file ranges in mdat order, contiguous ranges merged. */
  data: ByteRange[];
}

export type SegmentPart = { kind: 'bytes'; bytes: Uint8Array } | { kind: 'file'; offset: number; length: number };

/**
 * `styp` (§8.16.2): `msdh`, the DASH media segment brand (ISO/IEC 23009-1 §6.3.4.2), and
 * `cmfs`, the CMAF segment brand (ISO/IEC 23000-19 §7.2). No `msix`: there is no sidx.
 */
export const STYP_MAJOR_BRAND = 'msdh';
export const STYP_COMPATIBLE_BRANDS: readonly string[] = ['msdh', 'cmfs'];

/** tfhd flags carried over from the source; base-data-offset is replaced by default-base-is-moof. */
const TFHD_KEPT =
  TFHD.sampleDescriptionIndex | TFHD.defaultDuration | TFHD.defaultSize | TFHD.defaultFlags | TFHD.durationIsEmpty;

/** Builds the new moof of one track of a source moof, and says where its sample data is. */
export function reboxFragment(
  moof: Uint8Array,
  moofOffset: number,
  trackID: number,
  opts: ReboxOptions,
): ReboxedFragment {
  try {
    checkOptions(opts);
    const parsed = parseTrackFragment(moof, moofOffset, trackID, opts);
    return { moof: writeMoof(parsed, opts), data: parsed.data };
  } catch (e) {
    throw opts.fileName !== undefined ? inFile(e, opts.fileName) : e;
  }
}

/**
 * One track's trafs of a source moof, parsed and located once: what reboxing needs and what the
 * encrypted path (encrypted-segment.ts) reads its sample sizes from, without a second parse.
 */
export interface TrackFragment {
  trackID: number;
  /** The track's trafs in moof order, each with the file range of each of its runs. */
  trafs: ReadonlyArray<{ traf: SourceTraf; runs: ByteRange[] }>;
  /** The sample data, absolute file ranges in mdat order, contiguous ranges merged. */
  data: ByteRange[];
  /** Bytes of sample data. */
  total: number;
  /** The track's trex defaults, if the caller gave its headers. */
  trex: TrexDefaults | undefined;
}

/** Parses the trafs of `trackID` in a source moof (whose first byte is at `moofOffset`). */
export function parseTrackFragment(
  moof: Uint8Array,
  moofOffset: number,
  trackID: number,
  opts: Pick<ReboxOptions, 'headers' | 'fileSize' | 'fileName'>,
): TrackFragment {
  try {
    return parse(moof, moofOffset, trackID, opts);
  } catch (e) {
    throw opts.fileName !== undefined ? inFile(e, opts.fileName) : e;
  }
}

/** The new moof of a parsed track fragment (reboxFragment without the parse). */
export function writeTrackFragment(parsed: TrackFragment, opts: ReboxOptions): Uint8Array {
  try {
    checkOptions(opts);
    return writeMoof(parsed, opts);
  } catch (e) {
    throw opts.fileName !== undefined ? inFile(e, opts.fileName) : e;
  }
}

function parse(
  moof: Uint8Array,
  moofOffset: number,
  trackID: number,
  opts: Pick<ReboxOptions, 'headers' | 'fileSize'>,
): TrackFragment {
  const trafs = parseSourceMoof(moof, moofOffset);
  const trex = (id: number): TrexDefaults | undefined => opts.headers?.get(id)?.trexDefaults;
  const where = { offset: moofOffset, length: moof.byteLength };
  const layout = locateRuns(trafs, where, (id) => trex(id)?.defaultSampleSize, opts.fileSize);
  const mine: Array<{ traf: SourceTraf; runs: ByteRange[] }> = [];
  trafs.forEach((traf, i) => {
    const runs = layout[i]!;
    if (traf.tfhd.trackId !== trackID) return;
    if (runs instanceof OriginError) throw runs;
    mine.push({ traf, runs });
  });
  if (mine.length === 0) {
    const present = [...new Set(trafs.map((t) => t.tfhd.trackId))].join(', ') || 'none';
    throw corruptAt(`moof@${moofOffset}`, moofOffset, `no traf for track ${trackID} (tracks in this moof: ${present})`);
  }
  const runs = mine.flatMap((m) => m.runs);
  const total = runs.reduce((s, r) => s + r.length, 0);
  if (total > MAX_FRAGMENT_DATA_BYTES) {
    throw corruptAt(
      `moof@${moofOffset}`,
      moofOffset,
      `track ${trackID} claims ${total} bytes of sample data, over the ${MAX_FRAGMENT_DATA_BYTES}-byte limit`,
    );
  }
  return { trackID, trafs: mine, data: mergeRanges(runs), total, trex: trex(trackID) };
}

function checkOptions(opts: ReboxOptions): void {
  const bad = (what: string): never => {
    throw originError('internal', what, { subject: 'reboxFragment' });
  };
  if (!Number.isInteger(opts.sequenceNumber) || opts.sequenceNumber < 0 || opts.sequenceNumber > 0xffffffff) {
    bad(`sequenceNumber ${opts.sequenceNumber} is not an unsigned 32-bit integer`);
  }
  const id = opts.outputTrackId;
  if (id !== undefined && (!Number.isInteger(id) || id < 1 || id > 0xffffffff))
    bad(`outputTrackId ${id} is not in 1..2^32-1`);
  if (opts.baseMediaDecodeTime < 0n || opts.baseMediaDecodeTime >= 1n << 64n) {
    bad(
      `baseMediaDecodeTime ${opts.baseMediaDecodeTime} is not an unsigned 64-bit time (shift negative source times first)`,
    );
  }
}

function writeMoof({ trafs: mine, trackID, total, trex }: TrackFragment, opts: ReboxOptions): Uint8Array {
  // data_offset = bytes from the moof's first byte (default-base-is-moof) to the run's data in
  // the new mdat; it needs the moof size, known once the tree is built and before it is written.
  let moofSize = 0;
  const dataStart = mdatHeaderSize(total);
  let before = 0;
  let time = opts.baseMediaDecodeTime;
  const aux: AuxOffsets[] = [];
  const trafs = mine.map(({ traf, runs }, index) => {
    const truns = traf.truns.map((run, i) => {
      const at = before;
      before += runs[i]!.length;
      const dataOffset: Writable = { size: 4, write: (w) => w.i32(moofSize + dataStart + at) };
      const first = run.firstSampleFlags !== undefined ? [field.u32(run.firstSampleFlags)] : [];
      return fullBox(
        'trun',
        run.version,
        run.flags | TRUN.dataOffset,
        field.u32(run.sampleCount),
        dataOffset,
        ...first,
        field.bytes(run.table),
      );
    });
    const tfdt = fullBox('tfdt', 1, 0, field.u64(time));
    const duration = traf.tfhd.defaultSampleDuration ?? trex?.defaultSampleDuration;
    // A later traf of the same track starts where this one ends (§8.8.12: tfdt is per traf).
    if (index < mine.length - 1) time += BigInt(traf.truns.reduce((s, run) => s + runDuration(run, duration), 0));
    const tfxd = smoothBoxes(traf, index, opts);
    const samples = opts.encryption?.trafs[index];
    const offsets = { saioField: 0, sencStart: 0 };
    if (samples !== undefined) aux.push(offsets);
    const encryption = samples === undefined ? [] : auxInfoBoxes(samples, offsets, opts.encryption?.piff === true);
    const description = opts.encryption?.sampleDescriptionIndex;
    return box('traf', tfhd(traf, opts.outputTrackId ?? trackID, description), tfdt, ...truns, ...tfxd, ...encryption);
  });
  const node = box('moof', fullBox('mfhd', 0, 0, field.u32(opts.sequenceNumber)), ...trafs);
  moofSize = node.size;
  const moof = serialize(node);
  patchSaio(moof, aux);
  return moof;
}

/** The Smooth uuid boxes of a traf: live, fresh tfxd + tfrf in the first; else the source's tfxd if kept. */
function smoothBoxes(traf: SourceTraf, index: number, opts: ReboxOptions): Writable[] {
  const live = opts.smoothLive;
  if (live !== undefined) return index === 0 ? [tfxdBox(live.self), tfrfBox(live.next)] : [];
  if (!opts.keepTfxd || traf.tfxd === undefined) return [];
  return [field.bytes(opts.tfxdTime === undefined ? traf.tfxd : retimeTfxd(traf.tfxd, opts.tfxdTime))];
}

/**
 * §8.8.7: the source's defaults, default-base-is-moof instead of an absolute base; `description`
 * replaces the sample description index (encrypted output's entries are not the source's).
 */
function tfhd(traf: SourceTraf, trackId: number, description?: number): Writable {
  const t = traf.tfhd;
  let flags = (t.flags & TFHD_KEPT) | TFHD.defaultBaseIsMoof;
  const optional: Writable[] = [];
  const index = description ?? t.sampleDescriptionIndex;
  if (description !== undefined) flags |= TFHD.sampleDescriptionIndex;
  if (index !== undefined) optional.push(field.u32(index));
  if (t.defaultSampleDuration !== undefined) optional.push(field.u32(t.defaultSampleDuration));
  if (t.defaultSampleSize !== undefined) optional.push(field.u32(t.defaultSampleSize));
  if (t.defaultSampleFlags !== undefined) optional.push(field.u32(t.defaultSampleFlags));
  return fullBox('tfhd', 0, flags, field.u32(trackId), ...optional);
}

function mergeRanges(ranges: readonly ByteRange[]): ByteRange[] {
  const out: ByteRange[] = [];
  for (const r of ranges) {
    if (r.length === 0) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last.offset + last.length === r.offset) last.length += r.length;
    else out.push({ ...r });
  }
  return out;
}

/** §4.2: the 32-bit size form while it fits, else size 1 and a 64-bit largesize. */
export function mdatHeaderSize(payload: number): number {
  return payload + 8 > 0xffffffff ? 16 : 8;
}

/** The header of an mdat box of `payload` bytes. */
export function mdatHeader(payload: number): Uint8Array {
  const header = mdatHeaderSize(payload);
  const w = new BoxWriter(header);
  w.u32(header === 8 ? payload + 8 : 1);
  w.fourcc('mdat');
  if (header === 16) w.u64(BigInt(payload + 16));
  return w.finish();
}

/** A segment as parts: optional styp, then per fragment its moof, an mdat header and its file ranges. */
export function mediaSegmentParts(
  fragments: ReadonlyArray<{ moof: Uint8Array; data: ReadonlyArray<ByteRange> }>,
  opts: { styp?: boolean } = {},
): { parts: SegmentPart[]; length: number } {
  const parts: SegmentPart[] = [];
  let pending: Uint8Array[] = [];
  let length = 0;
  const flush = (): void => {
    if (pending.length === 0) return;
    const bytes = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    parts.push({ kind: 'bytes', bytes });
    length += bytes.byteLength;
    pending = [];
  };
  if (opts.styp ?? true) pending.push(serialize(brandBox('styp', STYP_MAJOR_BRAND, 0, STYP_COMPATIBLE_BRANDS)));
  fragments.forEach((f, i) => {
    if (f.moof.byteLength < 8 || String.fromCharCode(...f.moof.subarray(4, 8)) !== 'moof') {
      throw originError('internal', `fragment ${i} is not a moof box`, { subject: 'mediaSegmentParts' });
    }
    pending.push(f.moof, mdatHeader(f.data.reduce((s, r) => s + r.length, 0)));
    for (const r of f.data) {
      flush();
      parts.push({ kind: 'file', offset: r.offset, length: r.length });
      length += r.length;
    }
  });
  flush();
  return { parts, length };
}

/** Materialises a segment (tests, dry runs); the HTTP layer streams the parts instead. */
export async function assembleSegment(source: ByteSource, parts: ReadonlyArray<SegmentPart>): Promise<Uint8Array> {
  const total = parts.reduce((s, p) => s + (p.kind === 'bytes' ? p.bytes.byteLength : p.length), 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    if (p.kind === 'bytes') {
      out.set(p.bytes, at);
      at += p.bytes.byteLength;
      continue;
    }
    if (p.offset < 0 || p.length < 0 || p.offset + p.length > source.size) {
      throw originError(
        'corrupt-media',
        `sample data ${p.offset}..${p.offset + p.length} is outside the file (${source.size} bytes)`,
        { subject: source.name },
      );
    }
    out.set(await source.read(p.offset, p.length), at);
    at += p.length;
  }
  return out;
}

/**
 * A copy of a tfxd box (MS-SSTR §2.2.4.4: uuid box, version, flags, then
 * fragment_absolute_time and fragment_duration, 64-bit in version 1, 32-bit in version 0) with
 * a new absolute time.
 */
export function retimeTfxd(tfxd: Uint8Array, time: bigint): Uint8Array {
  const out = tfxd.slice();
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const at = 8 + 16 + 4;
  const version = out[8 + 16] ?? 0;
  if (time < 0n) throw originError('internal', `tfxd time ${time} is negative`);
  if (version === 1 && out.byteLength >= at + 16) view.setBigUint64(at, time);
  else if (version === 0 && out.byteLength >= at + 8 && time <= 0xffffffffn) view.setUint32(at, Number(time));
  else
    throw originError('corrupt-media', `tfxd of ${out.byteLength} bytes (version ${version}) cannot hold time ${time}`);
  return out;
}
