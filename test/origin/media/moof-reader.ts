// A reader of the moofs the fMP4 writer makes, written separately from the writer's code so
// that tests assert fields through a second implementation.

import { childBoxes } from '../../../origin/media/boxes';
import { ByteReader } from '../../../origin/media/byte-reader';

/** A plain Uint8Array copy, so views of Buffers and of Uint8Arrays compare equal in jest. */
const plain = (b: Uint8Array): Uint8Array => Uint8Array.from(b);

export interface ReadTrun {
  version: number;
  flags: number;
  count: number;
  dataOffset?: number;
  firstSampleFlags?: number;
  table: Uint8Array;
}
export interface ReadTraf {
  types: string[];
  tfhd: { flags: number; trackId: number; rest: Uint8Array };
  tfdt?: { version: number; time: bigint };
  truns: ReadTrun[];
  tfxd?: Uint8Array;
}

/** A reader of the new moofs, separate from the writer's code, for field-level assertions. */
export function readMoof(moof: Uint8Array): { sequence: number; trafs: ReadTraf[] } {
  let sequence = -1;
  const trafs: ReadTraf[] = [];
  for (const b of childBoxes(moof.subarray(8), 8, 'moof')) {
    if (b.type === 'mfhd') sequence = new DataView(b.payload.buffer, b.payload.byteOffset).getUint32(4);
    if (b.type === 'traf') trafs.push(readTraf(b.payload, b.start + b.headerSize, moof));
  }
  return { sequence, trafs };
}

function readTraf(payload: Uint8Array, base: number, moof: Uint8Array): ReadTraf {
  const traf: ReadTraf = { types: [], tfhd: { flags: -1, trackId: -1, rest: new Uint8Array(0) }, truns: [] };
  for (const b of childBoxes(payload, base, 'traf')) {
    traf.types.push(b.type);
    const r = new ByteReader(b.payload, b.type);
    if (b.type === 'tfhd')
      traf.tfhd = { flags: r.u32() & 0xffffff, trackId: r.u32(), rest: plain(r.slice(r.remaining)) };
    if (b.type === 'tfdt') {
      const version = r.u8();
      r.skip(3);
      traf.tfdt = { version, time: version === 1 ? r.u64Big() : BigInt(r.u32()) };
    }
    if (b.type === 'uuid') traf.tfxd = plain(moof.subarray(b.start, b.start + b.size));
    if (b.type !== 'trun') continue;
    const version = r.u8();
    const flags = r.u24();
    const trun: ReadTrun = { version, flags, count: r.u32(), table: new Uint8Array(0) };
    if (flags & 0x1) trun.dataOffset = r.i32();
    if (flags & 0x4) trun.firstSampleFlags = r.u32();
    trun.table = plain(r.slice(r.remaining));
    traf.truns.push(trun);
  }
  return traf;
}
