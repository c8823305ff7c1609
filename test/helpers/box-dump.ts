// A deterministic text dump of an ISO BMFF box tree, for golden tests of what the outside world
// reads (CONTRIBUTING.md design rule 11). One line per box: indentation, type, size, and the fields of the
// boxes whose values matter to a player (ISO/IEC 14496-12 §4.3 ftyp, §8.16.2 styp, §8.2.2 mvhd,
// §8.3.2 tkhd, §8.4.2 mdhd, §8.4.3 hdlr, §8.8.3 trex, §8.8.5 mfhd, §8.8.7 tfhd, §8.8.12 tfdt,
// §8.8.8 trun with its first 3 samples). Other boxes show type and size; mdat shows a hash of
// its payload so a golden notices changed media without holding it.

import { createHash } from 'node:crypto';
import { childBoxes, printable } from '../../origin/media/boxes';
import { ByteReader } from '../../origin/media/byte-reader';

const CONTAINERS = new Set([
  'moov',
  'trak',
  'mdia',
  'minf',
  'dinf',
  'stbl',
  'mvex',
  'moof',
  'traf',
  'edts',
  'udta',
  'mfra',
]);
/** Full boxes whose payload, after version/flags and an entry count, is a list of boxes. */
const LISTS = new Set(['stsd', 'dref']);
const TFXD_UUID = '6d1d9b0542d544e680e2141daff757b2';
const TRUN_SAMPLES_SHOWN = 3;

const hex = (n: number, digits = 6): string => `0x${n.toString(16).padStart(digits, '0')}`;

export function dumpBoxes(bytes: Uint8Array): string {
  const lines: string[] = [];
  walk(bytes, 0, 0, 'file', lines);
  return lines.join('\n') + '\n';
}

function walk(bytes: Uint8Array, base: number, depth: number, path: string, lines: string[]): void {
  for (const b of childBoxes(bytes, base, path)) {
    const indent = '  '.repeat(depth);
    const boxPath = `${path}/${printable(b.type)}`;
    const r = new ByteReader(b.payload, boxPath, b.start + b.headerSize);
    const { label, extra } = describe(b.type, r);
    lines.push(`${indent}${label} ${b.size}${extra.length ? ' ' + extra[0] : ''}`);
    for (const e of extra.slice(1)) lines.push(`${indent}  ${e}`);
    if (CONTAINERS.has(b.type)) walk(b.payload, b.start + b.headerSize, depth + 1, boxPath, lines);
    if (LISTS.has(b.type)) walk(b.payload.subarray(8), b.start + b.headerSize + 8, depth + 1, boxPath, lines);
  }
}

/** The box's label (type, or uuid name) and its field text: first entry on the box line, the rest below. */
function describe(type: string, r: ByteReader): { label: string; extra: string[] } {
  const one = (s: string): { label: string; extra: string[] } => ({ label: type, extra: [s] });
  switch (type) {
    case 'ftyp':
    case 'styp':
      return one(brands(r));
    case 'mvhd':
      return one(mvhd(r));
    case 'tkhd':
      return one(tkhd(r));
    case 'mdhd':
      return one(mdhd(r));
    case 'hdlr': {
      r.skip(8);
      const handler = r.fourcc();
      r.skip(12);
      return one(
        `handler=${handler} name=${JSON.stringify(new TextDecoder().decode(r.slice(r.remaining)).replace(/\0+$/, ''))}`,
      );
    }
    case 'trex': {
      r.skip(4);
      return one(
        `track_ID=${r.u32()} sample_description_index=${r.u32()} duration=${r.u32()} size=${r.u32()} flags=${hex(r.u32(), 8)}`,
      );
    }
    case 'mfhd':
      r.skip(4);
      return one(`sequence_number=${r.u32()}`);
    case 'tfhd':
      return one(tfhd(r));
    case 'tfdt': {
      const v = r.u8();
      r.skip(3);
      return one(`v${v} baseMediaDecodeTime=${v === 1 ? r.u64Big() : r.u32()}`);
    }
    case 'trun':
      return { label: type, extra: trun(r) };
    case 'stsd':
    case 'dref':
      r.skip(4);
      return one(`entry_count=${r.u32()}`);
    case 'uuid': {
      const id = Buffer.from(r.slice(16)).toString('hex');
      return { label: id === TFXD_UUID ? 'uuid(tfxd)' : `uuid(${id})`, extra: [] };
    }
    case 'mdat':
      return one(`sha256=${createHash('sha256').update(r.slice(r.remaining)).digest('hex').slice(0, 16)}`);
    default:
      return { label: printable(type), extra: [] };
  }
}

function brands(r: ByteReader): string {
  const major = r.fourcc();
  const minor = r.u32();
  const compatible: string[] = [];
  while (r.remaining >= 4) compatible.push(r.fourcc());
  return `major=${major} minor=${minor} compatible=${compatible.join(',')}`;
}

function mvhd(r: ByteReader): string {
  const v = r.u8();
  r.skip(3 + (v === 1 ? 16 : 8));
  const timescale = r.u32();
  const duration = v === 1 ? r.u64Big() : r.u32();
  const rate = r.i32() / 0x10000;
  const volume = r.u16() / 0x100;
  r.skip(10 + 36 + 24);
  return `v${v} timescale=${timescale} duration=${duration} rate=${rate} volume=${volume} next_track_ID=${r.u32()}`;
}

function tkhd(r: ByteReader): string {
  const v = r.u8();
  const flags = r.u24();
  r.skip(v === 1 ? 16 : 8);
  const id = r.u32();
  r.skip(4);
  const duration = v === 1 ? r.u64Big() : r.u32();
  r.skip(8);
  const layer = r.u16();
  const group = r.u16();
  const volume = r.u16() / 0x100;
  r.skip(2 + 36);
  const width = r.u32() / 0x10000;
  const height = r.u32() / 0x10000;
  return `v${v} flags=${hex(flags)} track_ID=${id} duration=${duration} layer=${layer} alternate_group=${group} volume=${volume} width=${width} height=${height}`;
}

function mdhd(r: ByteReader): string {
  const v = r.u8();
  r.skip(3 + (v === 1 ? 16 : 8));
  const timescale = r.u32();
  const duration = v === 1 ? r.u64Big() : r.u32();
  const packed = r.u16() & 0x7fff;
  const language = String.fromCharCode(((packed >> 10) & 31) + 0x60, ((packed >> 5) & 31) + 0x60, (packed & 31) + 0x60);
  return `v${v} timescale=${timescale} duration=${duration} language=${language}`;
}

function tfhd(r: ByteReader): string {
  const flags = r.u32() & 0xffffff;
  const parts = [`flags=${hex(flags)}`, `track_ID=${r.u32()}`];
  if (flags & 0x1) parts.push(`base_data_offset=${r.u64Big()}`);
  if (flags & 0x2) parts.push(`sample_description_index=${r.u32()}`);
  if (flags & 0x8) parts.push(`default_duration=${r.u32()}`);
  if (flags & 0x10) parts.push(`default_size=${r.u32()}`);
  if (flags & 0x20) parts.push(`default_flags=${hex(r.u32(), 8)}`);
  return parts.join(' ');
}

function trun(r: ByteReader): string[] {
  const v = r.u8();
  const flags = r.u24();
  const count = r.u32();
  const head = [`v${v} flags=${hex(flags)} sample_count=${count}`];
  if (flags & 0x1) head.push(`data_offset=${r.i32()}`);
  if (flags & 0x4) head.push(`first_sample_flags=${hex(r.u32(), 8)}`);
  const lines = [head.join(' ')];
  for (let i = 0; i < Math.min(count, TRUN_SAMPLES_SHOWN); i++) {
    const s: string[] = [`[${i}]`];
    if (flags & 0x100) s.push(`duration=${r.u32()}`);
    if (flags & 0x200) s.push(`size=${r.u32()}`);
    if (flags & 0x400) s.push(`flags=${hex(r.u32(), 8)}`);
    if (flags & 0x800) s.push(`composition_offset=${v === 1 ? r.i32() : r.u32()}`);
    if (s.length === 1) s.push('(defaults)');
    lines.push(s.join(' '));
  }
  if (count > TRUN_SAMPLES_SHOWN) lines.push(`... ${count - TRUN_SAMPLES_SHOWN} more samples`);
  return lines;
}
