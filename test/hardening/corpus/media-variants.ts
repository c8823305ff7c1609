// The corrupt-media corpus: variants of one committed fixture source, each damaged in one way a
// broken packager, a bad disk or a hostile upload could (ISO/IEC 14496-12 §4.2 box headers, §8.8
// fragments, §8.8.10 tfra, §8.16.3 sidx, MS-SSTR §2.2.4.4 tfxd). Made at test time from the bytes,
// deterministic but for the random flips, which follow the suite's seed.

import { BoxAt, boxMap } from './box-map';
import { Prng } from '../harness/prng';

export type Family =
  'truncation' | 'box-size' | 'entry-count' | 'huge-value' | 'loop' | 'codec' | 'random-bytes' | 'server-manifest';

export interface Variant {
  name: string;
  family: Family;
  bytes: Buffer;
}

const U32_MAX = 0xffffffff;
const U64_MAX = 0xffffffffffffffffn;

/** A copy of `buf` with `edit` applied. */
function edited(buf: Buffer, edit: (b: Buffer) => void): Buffer {
  const b = Buffer.from(buf);
  edit(b);
  return b;
}

const put32 = (at: number, v: number) => (b: Buffer) => b.writeUInt32BE(v >>> 0, at);
const put64 = (at: number, v: bigint) => (b: Buffer) => b.writeBigUInt64BE(v, at);

/** Every variant of one source; `role` names them (`video:box-size:moov/trak/mdia/mdhd=0`). */
export function mediaVariants(role: string, buf: Buffer, prng: Prng): Variant[] {
  const map = boxMap(buf);
  const out: Variant[] = [];
  const add = (family: Family, what: string, bytes: Buffer): void => {
    out.push({ name: `${role}:${family}:${what}`, family, bytes });
  };
  truncations(buf, map, add);
  boxSizes(buf, map, add);
  entryCounts(buf, map, add);
  hugeValues(buf, map, add);
  loops(buf, map, add);
  codecs(buf, map, add);
  randomBytes(buf, map, prng, add);
  return out;
}

type Add = (family: Family, what: string, bytes: Buffer) => void;

/** The interesting boxes: the whole moov tree, the first and last moof trees, mfra, sidx. */
function chosen(map: readonly BoxAt[]): BoxAt[] {
  const moofs = map.filter((b) => b.type === 'moof' && !b.path.includes('/'));
  const last = moofs[moofs.length - 1]?.path ?? 'moof';
  return map.filter((b) => {
    const top = b.path.split('/')[0]!;
    return top === 'moov' || top === 'moof' || top === last || top === 'mfra' || top === 'sidx' || top === 'ftyp';
  });
}

function truncations(buf: Buffer, map: readonly BoxAt[], add: Add): void {
  const at = new Set<number>([0, 1, 4, 7, 8, 9, 16, buf.length - 1, buf.length - 4, buf.length - 8, buf.length - 16]);
  for (const b of chosen(map)) {
    at.add(b.offset);
    at.add(b.offset + 4);
    at.add(b.payload + 2);
    at.add(b.offset + b.size - 1);
  }
  // And through the media data, at even steps.
  for (let i = 1; i < 12; i++) at.add(Math.floor((buf.length * i) / 12));
  for (const n of [...at].filter((x) => x >= 0 && x < buf.length).sort((a, b) => a - b)) {
    add('truncation', `${n}`, buf.subarray(0, n));
  }
}

function boxSizes(buf: Buffer, map: readonly BoxAt[], add: Add): void {
  for (const b of chosen(map)) {
    const o = b.offset;
    add('box-size', `${b.path}=0`, edited(buf, put32(o, 0)));
    add('box-size', `${b.path}=4`, edited(buf, put32(o, 4)));
    add('box-size', `${b.path}=7`, edited(buf, put32(o, 7)));
    add('box-size', `${b.path}=parent+1`, edited(buf, put32(o, b.parentEnd - o + 1)));
    add('box-size', `${b.path}=u32max`, edited(buf, put32(o, U32_MAX)));
    if (b.size >= 16) {
      // size 1: a 64-bit largesize follows the type (§4.2), here written over the payload's start.
      add(
        'box-size',
        `${b.path}=1,large=0`,
        edited(buf, (x) => (put32(o, 1)(x), put64(o + 8, 0n)(x))),
      );
      add(
        'box-size',
        `${b.path}=1,large=15`,
        edited(buf, (x) => (put32(o, 1)(x), put64(o + 8, 15n)(x))),
      );
      add(
        'box-size',
        `${b.path}=1,large=u64max`,
        edited(buf, (x) => (put32(o, 1)(x), put64(o + 8, U64_MAX)(x))),
      );
    }
  }
}

/** The count field of each box that has one, at its payload offset (after version/flags). */
const COUNT_AT: Record<string, number> = {
  trun: 0, // sample_count (§8.8.8)
  stsd: 0, // entry_count (§8.5.2)
  stts: 0, // entry_count (§8.6.1.2)
  stsc: 0,
  stco: 0,
  stsz: 4, // sample_count after sample_size (§8.7.3)
  tfra: 8, // number_of_entry after track_ID and the length sizes (§8.8.10)
  sidx: 18, // reference_count (version 0: reference_ID, timescale, two 32-bit times, reserved) (§8.16.3)
};

function entryCounts(buf: Buffer, map: readonly BoxAt[], add: Add): void {
  for (const b of chosen(map)) {
    const rel = COUNT_AT[b.type];
    if (rel === undefined) continue;
    const at = b.payload + rel;
    if (b.type === 'sidx') {
      const n = buf.readUInt16BE(at);
      for (const v of [0, n + 1, 0xffff])
        add(
          'entry-count',
          `${b.path}=${v}`,
          edited(buf, (x) => x.writeUInt16BE(v, at)),
        );
      continue;
    }
    const n = buf.readUInt32BE(at);
    for (const v of [0, n + 1, n * 2 + 1, 0x10000000, 0x7fffffff, U32_MAX]) {
      add('entry-count', `${b.path}=${v}`, edited(buf, put32(at, v)));
    }
  }
  for (const b of map.filter((x) => x.type === 'tfra')) {
    // length_size_of_traf_num, _trun_num, _sample_num: 2 bits each (§8.8.10).
    add(
      'entry-count',
      `${b.path}/length-sizes=0x3f`,
      edited(buf, (x) => (x[b.payload + 7] = 0x3f)),
    );
  }
}

function hugeValues(buf: Buffer, map: readonly BoxAt[], add: Add): void {
  const version = (b: BoxAt): number => buf[b.payload - 4]!;
  for (const b of map) {
    const p = b.payload;
    if (b.type === 'mdhd' || b.type === 'mvhd') {
      // (v1: 8-byte creation and modification times; v0: 4-byte) then timescale and duration.
      const ts = p + (version(b) === 1 ? 16 : 8);
      for (const v of [0, 1, U32_MAX]) add('huge-value', `${b.path}/timescale=${v}`, edited(buf, put32(ts, v)));
      if (version(b) === 1) {
        add('huge-value', `${b.path}/duration=u64max`, edited(buf, put64(ts + 4, U64_MAX)));
        add('huge-value', `${b.path}/duration=0`, edited(buf, put64(ts + 4, 0n)));
      } else add('huge-value', `${b.path}/duration=u32max`, edited(buf, put32(ts + 4, U32_MAX)));
    }
    if (b.type === 'uuid' && b.path.endsWith('traf/uuid')) {
      // tfxd: 16-byte usertype, version/flags, then (v1) 64-bit absolute time and duration.
      const at = b.offset + 8 + 16 + 4;
      for (const [what, v] of [
        ['time=u64max', U64_MAX],
        ['time=i64min', 0x8000000000000000n],
      ] as const)
        add('huge-value', `${b.path}/${what}`, edited(buf, put64(at, v)));
      add('huge-value', `${b.path}/duration=0`, edited(buf, put64(at + 8, 0n)));
      add('huge-value', `${b.path}/duration=u64max`, edited(buf, put64(at + 8, U64_MAX)));
    }
    if (b.type === 'tfdt') {
      const wide = version(b) === 1;
      add('huge-value', `${b.path}=max`, edited(buf, wide ? put64(p, U64_MAX) : put32(p, U32_MAX)));
    }
    if (b.type === 'trun') truns(buf, b, add);
    if (b.type === 'tfhd') tfhds(buf, b, add);
    if (b.type === 'avcC') {
      add(
        'huge-value',
        `${b.path}/lengthSize=1`,
        edited(buf, (x) => (x[p + 4] = 0xfc)),
      );
      add(
        'huge-value',
        `${b.path}/numSPS=31`,
        edited(buf, (x) => (x[p + 5] = 0xff)),
      );
      add(
        'huge-value',
        `${b.path}/spsLength=65535`,
        edited(buf, (x) => x.writeUInt16BE(0xffff, p + 6)),
      );
    }
    if (b.type === 'esds') {
      // The ES descriptor's tag and its length byte(s) (ISO/IEC 14496-1 §7.2.6.5).
      add(
        'huge-value',
        `${b.path}/descriptor-length=max`,
        edited(buf, (x) => x.fill(0xff, p + 1, p + 5)),
      );
      add(
        'huge-value',
        `${b.path}/descriptor-tag=0`,
        edited(buf, (x) => (x[p] = 0)),
      );
    }
    if (b.type === 'mp4a') {
      // channelcount, samplesize, then samplerate 16.16 (§12.2.3).
      add(
        'huge-value',
        `${b.path}/channels=0`,
        edited(buf, (x) => x.writeUInt16BE(0, b.offset + 8 + 16)),
      );
      add('huge-value', `${b.path}/samplerate=0`, edited(buf, put32(b.offset + 8 + 24, 0)));
    }
    if (b.type === 'avc1') {
      add('huge-value', `${b.path}/size=0x0`, edited(buf, put32(b.offset + 8 + 24, 0)));
      add('huge-value', `${b.path}/size=max`, edited(buf, put32(b.offset + 8 + 24, U32_MAX)));
    }
    if (b.type === 'tfra') tfras(buf, b, add);
  }
}

function truns(buf: Buffer, b: BoxAt, add: Add): void {
  const flags = buf.readUInt32BE(b.payload - 4) & 0xffffff;
  let at = b.payload + 4;
  if (flags & 0x1) {
    for (const v of [0, 0x7fffffff, 0x80000000, U32_MAX])
      add('huge-value', `${b.path}/data_offset=${v}`, edited(buf, put32(at, v)));
    at += 4;
  }
  if (flags & 0x4) at += 4;
  // The first sample's fields, in flag order (§8.8.8.2).
  if (flags & 0x100) {
    for (const v of [0, U32_MAX]) add('huge-value', `${b.path}/sample[0].duration=${v}`, edited(buf, put32(at, v)));
    at += 4;
  }
  if (flags & 0x200) {
    for (const v of [0, 0xfffffff0, 0x7fffffff])
      add('huge-value', `${b.path}/sample[0].size=${v}`, edited(buf, put32(at, v)));
    at += 4;
  }
  if (flags & 0x400) at += 4;
  if (flags & 0x800) {
    for (const v of [0x7fffffff, 0x80000000])
      add('huge-value', `${b.path}/sample[0].cto=${v}`, edited(buf, put32(at, v)));
  }
}

function tfhds(buf: Buffer, b: BoxAt, add: Add): void {
  const flags = buf.readUInt32BE(b.payload - 4) & 0xffffff;
  add('huge-value', `${b.path}/track_ID=99`, edited(buf, put32(b.payload, 99)));
  let at = b.payload + 4;
  if (flags & 0x1) {
    add('huge-value', `${b.path}/base_data_offset=u64max`, edited(buf, put64(at, U64_MAX)));
    at += 8;
  }
  if (flags & 0x2) at += 4;
  if (flags & 0x8) {
    add('huge-value', `${b.path}/default_duration=max`, edited(buf, put32(at, U32_MAX)));
    at += 4;
  }
  if (flags & 0x10) add('huge-value', `${b.path}/default_size=max`, edited(buf, put32(at, 0xfffffff0)));
  // Flags that promise fields the box does not hold.
  add(
    'huge-value',
    `${b.path}/flags=all`,
    edited(buf, (x) => x.writeUIntBE(0x03003b, b.payload - 3, 3)),
  );
}

/** tfra entries (§8.8.10): time and moof_offset (64-bit in version 1), then the three numbers. */
function tfras(buf: Buffer, b: BoxAt, add: Add): void {
  const wide = buf[b.payload - 4] === 1;
  const first = b.payload + 12;
  const w = wide ? 8 : 4;
  const put = (at: number, v: bigint) => (wide ? put64(at, v) : put32(at, Number(v & 0xffffffffn)));
  add('huge-value', `${b.path}/entry[0].time=max`, edited(buf, put(first, U64_MAX)));
  add('huge-value', `${b.path}/entry[0].moof_offset=max`, edited(buf, put(first + w, U64_MAX)));
  add('huge-value', `${b.path}/entry[0].moof_offset=eof`, edited(buf, put(first + w, BigInt(buf.length))));
}

function loops(buf: Buffer, map: readonly BoxAt[], add: Add): void {
  for (const b of map.filter((x) => x.type === 'tfra')) {
    const wide = buf[b.payload - 4] === 1;
    const n = buf.readUInt32BE(b.payload + 8);
    const w = wide ? 8 : 4;
    const sizes = buf.readUInt32BE(b.payload + 4);
    const entry = 2 * w + ((sizes >> 4) & 3) + ((sizes >> 2) & 3) + (sizes & 3) + 3;
    const first = b.payload + 12;
    const moofOffset = (i: number): number => first + i * entry + w;
    const setAll = (v: bigint) => (x: Buffer) => {
      for (let i = 0; i < n; i++) {
        if (wide) x.writeBigUInt64BE(v, moofOffset(i));
        else x.writeUInt32BE(Number(v), moofOffset(i));
      }
    };
    const firstMoof = BigInt(map.find((x) => x.type === 'moof')!.offset);
    const mfra = BigInt(map.find((x) => x.type === 'mfra')!.offset);
    add('loop', `${b.path}/every-entry=first-moof`, edited(buf, setAll(firstMoof)));
    add('loop', `${b.path}/every-entry=0`, edited(buf, setAll(0n)));
    add('loop', `${b.path}/every-entry=mfra`, edited(buf, setAll(mfra)));
    add('loop', `${b.path}/every-entry=tfra`, edited(buf, setAll(BigInt(b.offset))));
    // Entries in reverse order: later times point at earlier fragments.
    add(
      'loop',
      `${b.path}/entries-reversed`,
      edited(buf, (x) => {
        const offsets = Array.from({ length: n }, (_, i) => buf.subarray(moofOffset(i), moofOffset(i) + w));
        offsets.reverse().forEach((o, i) => o.copy(x, moofOffset(i)));
      }),
    );
  }
  for (const b of map.filter((x) => x.type === 'mfro')) {
    // mfro's size of mfra: a reader seeks back this far from the end of the file (§8.8.11).
    for (const [what, v] of [
      ['0', 0],
      ['16', 16],
      ['8', 8],
      ['file', buf.length],
      ['file+1', buf.length + 1],
      ['u32max', U32_MAX],
    ] as const)
      add('loop', `${b.path}/mfra_size=${what}`, edited(buf, put32(b.payload, v)));
  }
  for (const b of map.filter((x) => x.type === 'sidx')) {
    // Version 0: reference_ID, timescale, earliest_presentation_time, first_offset, reserved,
    // reference_count, then the references. The first one's size (31 bits after the reference_type
    // bit) 0, so a walk by the index would not advance.
    add('loop', `${b.path}/ref[0].size=0`, edited(buf, put32(b.payload + 20, 0)));
    add('loop', `${b.path}/first_offset=u32max`, edited(buf, put32(b.payload + 12, U32_MAX)));
  }
  const moofs = map.filter((x) => x.type === 'moof' && !x.path.includes('/'));
  for (const m of moofs.slice(0, 2)) {
    // A moof that claims the rest of the file, and an empty one that a walk must still step over.
    add('loop', `${m.path}=to-eof`, edited(buf, put32(m.offset, 0)));
    add('loop', `${m.path}=header-only`, edited(buf, put32(m.offset, 8)));
  }
  for (const b of map.filter((x) => x.type === 'trun').slice(0, 2)) {
    if (!(buf.readUInt32BE(b.payload - 4) & 0xffffff & 0x1)) continue;
    // data_offset pointing back into the moof itself.
    add('loop', `${b.path}/data_offset=8`, edited(buf, put32(b.payload + 4, 8)));
  }
}

const RENAMES: Record<string, string[]> = {
  avc1: ['xvc1', 'hvc1', 'encv', 'mp4v', '\0\0\0\0'],
  avcC: ['avcX', 'hvcC'],
  mp4a: ['mp4b', 'enca', 'Opus', 'ac-3'],
  esds: ['esdX'],
  'ac-3': ['ac-4', 'ec-3'],
  dac3: ['dacX'],
  stpp: ['wvtt', 'xxxx', 'tx3g'],
};

function codecs(buf: Buffer, map: readonly BoxAt[], add: Add): void {
  for (const b of map) {
    for (const to of RENAMES[b.type] ?? []) {
      add(
        'codec',
        `${b.path}->${JSON.stringify(to).slice(1, -1)}`,
        edited(buf, (x) => x.write(to, b.offset + 4, 'latin1')),
      );
    }
    if (b.type === 'hdlr') {
      // handler_type after pre_defined (§8.4.3).
      for (const h of ['soun', 'vide', 'subt', 'meta', 'xxxx'])
        add(
          'codec',
          `${b.path}/handler=${h}`,
          edited(buf, (x) => x.write(h, b.payload + 4, 'latin1')),
        );
    }
  }
}

/** A few bytes of the boxes (not the media data) set to random values: 40 variants per source. */
function randomBytes(buf: Buffer, map: readonly BoxAt[], prng: Prng, add: Add): void {
  const spans = chosen(map)
    .filter((b) => !b.path.includes('/'))
    .map((b) => [b.offset, b.offset + b.size] as const);
  for (let i = 0; i < 40; i++) {
    const bytes = Buffer.from(buf);
    const changed: string[] = [];
    for (let n = 1 + prng.int(8); n > 0; n--) {
      const [from, to] = prng.pick(spans);
      const at = from + prng.int(to - from);
      bytes[at] = prng.int(256);
      changed.push(`${at}=${bytes[at]}`);
    }
    add('random-bytes', changed.join(','), bytes);
  }
}
