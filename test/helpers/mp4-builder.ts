// Test-only builders for ISO BMFF boxes, so unit tests can state exact byte layouts
// (ISO/IEC 14496-12 §4.2 box header, §8.8 movie fragments, MS-SSTR §2.2.4.4 tfxd).

export function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n >>> 0);
  return b;
}

export function i64(n: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, n);
  return b;
}

export function u64(n: number | bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n));
  return b;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export function box(type: string, ...payload: Uint8Array[]): Uint8Array {
  const body = concat(...payload);
  return concat(u32(8 + body.byteLength), new TextEncoder().encode(type), body);
}

export function fullBox(type: string, version: number, flags: number, ...payload: Uint8Array[]): Uint8Array {
  return box(type, u32(((version & 0xff) << 24) | (flags & 0xffffff)), ...payload);
}

export const TFXD_UUID = Uint8Array.from(Buffer.from('6d1d9b0542d544e680e2141daff757b2', 'hex'));

export function tfxd(time: bigint, duration: bigint): Uint8Array {
  return box('uuid', TFXD_UUID, u32(0x01000000), i64(time), u64(duration));
}

export interface SampleSpec {
  duration: number;
  size: number;
  flags?: number;
}

/** A traf with tfhd (track id), optional tfxd/tfdt, and one trun carrying durations, sizes and flags. */
export function traf(trackId: number, samples: SampleSpec[], opts: { tfxd?: bigint; tfdt?: bigint } = {}): Uint8Array {
  const parts: Uint8Array[] = [fullBox('tfhd', 0, 0x020000, u32(trackId))];
  if (opts.tfdt !== undefined) parts.push(fullBox('tfdt', 1, 0, u64(opts.tfdt)));
  const entries = samples.map((s) => concat(u32(s.duration), u32(s.size), u32(s.flags ?? 0)));
  parts.push(fullBox('trun', 0, 0x000701, u32(samples.length), u32(0), ...entries));
  if (opts.tfxd !== undefined) parts.push(tfxd(opts.tfxd, BigInt(samples.reduce((s, x) => s + x.duration, 0))));
  return box('traf', ...parts);
}

export function moof(sequence: number, ...trafs: Uint8Array[]): Uint8Array {
  return box('moof', fullBox('mfhd', 0, 0, u32(sequence)), ...trafs);
}

export function mdat(size: number): Uint8Array {
  return box('mdat', new Uint8Array(size));
}

/** Non-sync sample flags (§8.8.3.1: sample_is_non_sync_sample, depends on others). */
export const NON_SYNC = 0x01010000;
export const SYNC = 0x02000000;
