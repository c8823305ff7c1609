// Hand-built movie fragments for the layouts the fixtures do not have: several trafs per moof,
// base-data-offset, default-base-is-moof, runs without data_offset, defaults from tfhd or trex
// (ISO/IEC 14496-12 §8.8.7, §8.8.8). Built on the repository's test box builders.

import { BufferSource } from '../../../../origin/io/source';
import { box, concat, fullBox, u32, u64 } from '../../../helpers/mp4-builder';

export interface TfhdSpec {
  trackId: number;
  /** base_data_offset (absolute file offset). */
  base?: number;
  moofBase?: boolean;
  sampleDescriptionIndex?: number;
  duration?: number;
  size?: number;
  flags?: number;
}

export interface TrunSpec {
  dataOffset?: number;
  /** Per-sample sizes (flag 0x200); without them, `count` samples use the defaults. */
  sizes?: number[];
  durations?: number[];
  count?: number;
  version?: number;
  firstSampleFlags?: number;
}

export function tfhdBox(t: TfhdSpec): Uint8Array {
  let flags = 0;
  const fields: Uint8Array[] = [u32(t.trackId)];
  if (t.base !== undefined) {
    flags |= 0x1;
    fields.push(u64(t.base));
  }
  if (t.sampleDescriptionIndex !== undefined) {
    flags |= 0x2;
    fields.push(u32(t.sampleDescriptionIndex));
  }
  if (t.duration !== undefined) {
    flags |= 0x8;
    fields.push(u32(t.duration));
  }
  if (t.size !== undefined) {
    flags |= 0x10;
    fields.push(u32(t.size));
  }
  if (t.flags !== undefined) {
    flags |= 0x20;
    fields.push(u32(t.flags));
  }
  if (t.moofBase) flags |= 0x020000;
  return fullBox('tfhd', 0, flags, ...fields);
}

export function trunBox(r: TrunSpec): Uint8Array {
  const count = r.sizes?.length ?? r.durations?.length ?? r.count ?? 0;
  let flags = 0;
  const head: Uint8Array[] = [u32(count)];
  if (r.dataOffset !== undefined) {
    flags |= 0x1;
    head.push(u32(r.dataOffset));
  }
  if (r.firstSampleFlags !== undefined) {
    flags |= 0x4;
    head.push(u32(r.firstSampleFlags));
  }
  if (r.durations) flags |= 0x100;
  if (r.sizes) flags |= 0x200;
  const entries: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    if (r.durations) entries.push(u32(r.durations[i]!));
    if (r.sizes) entries.push(u32(r.sizes[i]!));
  }
  return fullBox('trun', r.version ?? 0, flags, ...head, ...entries);
}

export function trafBox(t: TfhdSpec, runs: TrunSpec[], extra: Uint8Array[] = []): Uint8Array {
  return box('traf', tfhdBox(t), ...runs.map(trunBox), ...extra);
}

export function moofBox(sequence: number, ...trafs: Uint8Array[]): Uint8Array {
  return box('moof', fullBox('mfhd', 0, 0, u32(sequence)), ...trafs);
}

/** Builds a moof whose data offsets depend on its own size: built once to measure, then for real. */
export function sized(build: (moofSize: number) => Uint8Array): Uint8Array {
  const size = build(0).byteLength;
  const moof = build(size);
  if (moof.byteLength !== size) throw new Error('moof size changed between builds');
  return moof;
}

/** Byte at absolute file offset `o` of every synthetic file, so any range's content is known. */
export const patternByte = (o: number): number => (o * 31 + 7) & 0xff;

export interface SyntheticFile {
  bytes: Uint8Array;
  source: BufferSource;
  moofOffset: number;
  /** First byte of the mdat payload (after its 8-byte header). */
  payloadOffset: number;
}

/** `lead` pattern bytes, the moof, an mdat of `payload` pattern bytes, then `tail` pattern bytes. */
export function syntheticFile(moof: Uint8Array, lead: number, payload: number, tail = 0): SyntheticFile {
  const total = lead + moof.byteLength + 8 + payload + tail;
  const bytes = new Uint8Array(total);
  for (let o = 0; o < total; o++) bytes[o] = patternByte(o);
  bytes.set(moof, lead);
  bytes.set(concat(u32(8 + payload), new TextEncoder().encode('mdat')), lead + moof.byteLength);
  return {
    bytes,
    source: new BufferSource('synthetic.mp4', bytes),
    moofOffset: lead,
    payloadOffset: lead + moof.byteLength + 8,
  };
}
