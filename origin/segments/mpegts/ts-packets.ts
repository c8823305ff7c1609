// MPEG-2 transport stream packets (ISO/IEC 13818-1): the 188-byte packet with its adaptation
// field (§2.4.3.2–2.4.3.5), PAT and PMT sections (§2.4.4.3, §2.4.4.8) with their CRC (Annex A),
// PES headers (§2.4.3.6–2.4.3.7) and the packet count of a PES. Pure byte writing; the muxer
// (mpegts.ts) decides what goes where.
//
// Sizes are computed before anything is written: a PES of L bytes whose first packet carries an
// adaptation field of A bytes takes 1 + ceil(max(0, L − (184 − A)) / 184) packets, the last one
// padded with adaptation-field stuffing (§2.4.3.5: PES data cannot be padded with 0xFF payload).

import { originError } from '../../errors';
import { crc32Mpeg2 } from '../../media/mpegts/crc32-mpeg';

export const TS_PACKET_SIZE = 188;
const TS_HEADER = 4;
const TS_PAYLOAD = TS_PACKET_SIZE - TS_HEADER;
const SYNC_BYTE = 0x47;
/** 33-bit PTS, DTS and PCR base (§2.4.3.7, §2.4.3.5). */
export const TIMESTAMP_WRAP = 1n << 33n;
/** Adaptation field with a PCR: length byte, flags byte, 6 bytes of PCR (§2.4.3.5). */
export const PCR_ADAPTATION_BYTES = 8;

export const PAT_PID = 0x0000;
const TABLE_PAT = 0x00;
const TABLE_PMT = 0x02;
const PROGRAM_NUMBER = 1;
const TRANSPORT_STREAM_ID = 1;

/** Adaptation-field bytes in the first packet of a PES: with a PCR 8, with only the random-access flag 2. */
export function firstAdaptationBytes(pcr: boolean, randomAccess: boolean): number {
  return pcr ? PCR_ADAPTATION_BYTES : randomAccess ? 2 : 0;
}

/** Packets a PES of `length` bytes (header included) takes; `firstAdaptation` bytes of adaptation field in its first packet. */
export function pesPacketCount(length: number, firstAdaptation: number): number {
  const first = TS_PAYLOAD - firstAdaptation;
  return 1 + Math.ceil(Math.max(0, length - first) / TS_PAYLOAD);
}

export interface PmtStream {
  /** Table 2-34 stream_type. */
  streamType: number;
  pid: number;
  /** The ES_info descriptors, already serialised. */
  descriptors: Uint8Array;
}

/** A section (table_id .. CRC) in one packet after a pointer_field of 0; the rest is 0xFF (§2.4.4.2). */
function sectionPacket(out: Uint8Array, at: number, pid: number, cc: number, psi: Uint8Array): void {
  if (psi.byteLength + 1 > TS_PAYLOAD)
    throw originError('internal', `a PSI section of ${psi.byteLength} bytes does not fit one packet`, {
      subject: 'ts',
    });
  writeHeader(out, at, pid | PAYLOAD_UNIT_START, 0b01, cc);
  out[at + 4] = 0; // pointer_field
  out.set(psi, at + 5);
  out.fill(0xff, at + 5 + psi.byteLength, at + TS_PACKET_SIZE);
}

/** §2.4.4.3 program_association_section with one program. */
export function writePat(out: Uint8Array, at: number, pmtPid: number, cc: number): void {
  const body = [
    TRANSPORT_STREAM_ID >> 8,
    TRANSPORT_STREAM_ID & 0xff,
    0xc1 /* version 0, current */,
    0,
    0,
    PROGRAM_NUMBER >> 8,
    PROGRAM_NUMBER & 0xff,
    0xe0 | (pmtPid >> 8),
    pmtPid & 0xff,
  ];
  sectionPacket(out, at, PAT_PID, cc, section(TABLE_PAT, body));
}

/** The one program of a segment: the PID of its PMT, the PID carrying its PCR, its streams. */
export interface PmtProgram {
  pmtPid: number;
  pcrPid: number;
  streams: readonly PmtStream[];
  /** program_info descriptors (§2.4.4.8), already serialised; none when undefined. */
  programInfo?: Uint8Array;
}

/** §2.4.4.8 TS_program_map_section. */
export function writePmt(out: Uint8Array, at: number, program: PmtProgram, cc: number): void {
  const { pmtPid, pcrPid, streams } = program;
  const info = program.programInfo ?? new Uint8Array();
  const body = [
    PROGRAM_NUMBER >> 8,
    PROGRAM_NUMBER & 0xff,
    0xc1,
    0,
    0,
    0xe0 | (pcrPid >> 8),
    pcrPid & 0xff,
    0xf0 | (info.byteLength >> 8),
    info.byteLength & 0xff /* program_info_length */,
    ...info,
  ];
  for (const s of streams) {
    const n = s.descriptors.byteLength;
    body.push(s.streamType, 0xe0 | (s.pid >> 8), s.pid & 0xff, 0xf0 | (n >> 8), n & 0xff, ...s.descriptors);
  }
  sectionPacket(out, at, pmtPid, cc, section(TABLE_PMT, body));
}

/** table_id, section_syntax_indicator 1, '0', reserved, section_length, the body, CRC_32. */
function section(tableId: number, body: number[]): Uint8Array {
  const length = body.length + 4; // + CRC
  const bytes = new Uint8Array(3 + length);
  bytes[0] = tableId;
  bytes[1] = 0xb0 | (length >> 8);
  bytes[2] = length & 0xff;
  bytes.set(body, 3);
  const crc = crc32Mpeg2(bytes.subarray(0, 3 + body.length));
  new DataView(bytes.buffer).setUint32(3 + body.length, crc);
  return bytes;
}

/** payload_unit_start_indicator, in the 16 bits after the sync byte that end with the 13-bit PID. */
const PAYLOAD_UNIT_START = 0x4000;

/**
 * The 4-byte packet header (§2.4.3.2). `pidBits` is the PID, or'ed with PAYLOAD_UNIT_START when a
 * PES or section starts in the packet (the two bytes after the sync byte as one number: written
 * per packet, so no flag object or extra argument).
 */
function writeHeader(out: Uint8Array, at: number, pidBits: number, adaptationControl: number, cc: number): void {
  out[at] = SYNC_BYTE;
  out[at + 1] = pidBits >> 8;
  out[at + 2] = pidBits & 0xff;
  out[at + 3] = (adaptationControl << 4) | (cc & 0x0f);
}

/** The 6 bytes of program_clock_reference_base (33 bits, 90 kHz) and _extension (9 bits, 0). */
function writePcr(out: Uint8Array, at: number, pcr: bigint): void {
  const base = wrap33(pcr);
  const high = Math.floor(base / 2); // 32 bits
  out[at] = high >>> 24;
  out[at + 1] = (high >>> 16) & 0xff;
  out[at + 2] = (high >>> 8) & 0xff;
  out[at + 3] = high & 0xff;
  out[at + 4] = ((base % 2) << 7) | 0x7e; // 6 reserved bits, extension high bit 0
  out[at + 5] = 0;
}

const WRAP_33 = 2 ** 33;

/**
 * `value` modulo 2^33 (§2.4.3.7, §2.4.3.5), as a number (< 2^33, so exact). In number arithmetic
 * when `value` is a safe integer (every 90 kHz time below some 3,000 years): each BigInt operation
 * allocates, and a segment writes a few hundred timestamps.
 */
function wrap33(value: bigint): number {
  const n = Number(value);
  if (Number.isSafeInteger(n)) {
    const v = n % WRAP_33;
    return v < 0 ? v + WRAP_33 : v + 0; // + 0: no −0
  }
  return Number(((value % TIMESTAMP_WRAP) + TIMESTAMP_WRAP) % TIMESTAMP_WRAP);
}

/** An adaptation-field-only packet carrying a PCR (§2.4.3.4: the continuity counter does not advance). */
export function writePcrPacket(out: Uint8Array, at: number, pid: number, cc: number, pcr: bigint): void {
  writeHeader(out, at, pid, 0b10, cc);
  out[at + 4] = TS_PAYLOAD - 1; // adaptation_field_length
  out[at + 5] = 0x10; // PCR_flag
  writePcr(out, at + 6, pcr);
  out.fill(0xff, at + 12, at + TS_PACKET_SIZE);
}

export interface PesPackets {
  pid: number;
  /** Continuity counter of the first packet. */
  cc: number;
  /** Packets the PES takes (pesPacketCount). */
  packets: number;
  /** Bytes of the PES, header included. */
  length: number;
  /** PCR in the first packet's adaptation field (90 kHz). */
  pcr?: bigint;
  /** random_access_indicator in the first packet (§2.4.3.5): a keyframe starts here. */
  randomAccess: boolean;
}

/**
 * Turns one PES into its TS packets in place. The caller has written the whole PES (header and
 * payload) contiguously at the end of the packets' span: out[end − length, end), end = at +
 * packets × 188. Each packet's payload is then moved forward to its place behind the packet's
 * header and adaptation field (§2.4.3.2), first packet first. No byte is overwritten before it is
 * moved: the bytes before payload byte k in the span are the headers of the packets before it,
 * never more than all the headers, so every move goes towards the start of the span and ends
 * before the next payload's source begins. One copy of the payload into the span plus one
 * memmove per packet, no per-packet allocation.
 *
 * `packets` may exceed pesPacketCount (SAMPLE-AES pads a stream's packet count, see
 * sample-aes-streams.ts): every packet still carries at least one payload byte, the ones beyond
 * the minimum at the end, the rest of each filled with adaptation-field stuffing (§2.4.3.5). With
 * the minimum count every packet but the last is full, as before.
 */
export function packetizePes(out: Uint8Array, at: number, p: PesPackets): void {
  const end = at + p.packets * TS_PACKET_SIZE;
  const pcr = p.pcr;
  const firstField = firstAdaptationBytes(pcr !== undefined, p.randomAccess);
  let src = end - p.length;
  let left = p.length;
  if (src < at + TS_HEADER + firstField)
    throw originError('internal', `a PES of ${p.length} bytes does not fit ${p.packets} packets`, { subject: 'ts' });
  let cc = p.cc;
  for (let i = 0; i < p.packets; i++, at += TS_PACKET_SIZE, cc = (cc + 1) & 0x0f) {
    const first = i === 0;
    const fieldBytes = first ? firstField : 0;
    const room = TS_PAYLOAD - fieldBytes;
    const most = left - (p.packets - i - 1); // a byte for each packet after this one
    const take = room < most ? room : most;
    if (take <= 0) throw originError('internal', 'PES payload shorter than planned', { subject: 'ts' });
    // Stuffing only in the last packet(s) (§2.4.3.5: PES data cannot be padded with 0xFF payload).
    const adaptation = fieldBytes + room - take;
    const dest = at + TS_HEADER + adaptation;
    if (dest !== src) out.copyWithin(dest, src, src + take);
    writeHeader(out, at, first ? p.pid | PAYLOAD_UNIT_START : p.pid, adaptation > 0 ? 0b11 : 0b01, cc);
    if (adaptation > 0) {
      out[at + 4] = adaptation - 1; // adaptation_field_length
      if (adaptation > 1) {
        out[at + 5] = first ? (p.randomAccess ? 0x40 : 0) | (pcr !== undefined ? 0x10 : 0) : 0;
        let f = at + 6;
        if (first && pcr !== undefined) {
          writePcr(out, f, pcr);
          f += 6;
        }
        out.fill(0xff, f, dest);
      }
    }
    src += take;
    left -= take;
  }
  if (left !== 0) throw originError('internal', 'PES payload longer than planned', { subject: 'ts' });
}

/** Bytes of a PES header with PTS only (§2.4.3.7: PTS_DTS_flags '10') or PTS and DTS ('11'). */
export function pesHeaderSize(withDts: boolean): number {
  return 9 + (withDts ? 10 : 5);
}

/** The stream a PES belongs to (the writer's TsStream has these fields). */
export interface PesStream {
  streamId: number;
  role: 'video' | 'audio';
}

/** A PES's payload size and timestamps (the writer's PesUnit has these fields): DTS is written when withDts. */
export interface PesTiming {
  /** Bytes after the PES header. */
  payload: number;
  pts: bigint;
  dts: bigint;
  withDts: boolean;
}

/**
 * §2.4.3.6 PES_packet header: stream_id, PES_packet_length (0 = unbounded, allowed for video only
 * in a transport stream), data_alignment_indicator set (every PES starts with an access unit),
 * PTS and, when it differs, DTS. Timestamps are taken modulo 2^33. Written at out[at]; returns the
 * offset after it.
 */
export function writePesHeader(out: Uint8Array, at: number, stream: PesStream, unit: PesTiming): number {
  const streamId = stream.streamId;
  const payloadLength = unit.payload;
  const pts = unit.pts;
  const dts = unit.withDts ? unit.dts : undefined;
  const video = stream.role === 'video';
  const size = pesHeaderSize(dts !== undefined);
  const packetLength = size - 6 + payloadLength;
  if (packetLength > 0xffff && !video)
    throw originError('internal', `an audio PES of ${packetLength} bytes exceeds PES_packet_length`, { subject: 'ts' });
  out[at] = 0; // packet_start_code_prefix 00 00 01
  out[at + 1] = 0;
  out[at + 2] = 1;
  out[at + 3] = streamId;
  const lengthField = packetLength > 0xffff ? 0 : packetLength;
  out[at + 4] = lengthField >> 8;
  out[at + 5] = lengthField & 0xff;
  out[at + 6] = 0x84; // '10', not scrambled, data_alignment_indicator
  out[at + 7] = dts === undefined ? 0x80 : 0xc0;
  out[at + 8] = size - 9;
  writeTimestamp(out, at + 9, dts === undefined ? 0b0010 : 0b0011, pts);
  if (dts !== undefined) writeTimestamp(out, at + 14, 0b0001, dts);
  return at + size;
}

/** 4-bit prefix, then the 33 bits split 3/15/15 with marker bits (§2.4.3.7). */
function writeTimestamp(out: Uint8Array, at: number, prefix: number, value: bigint): void {
  const v = wrap33(value);
  const high = Math.floor(v / 2 ** 30); // 3 bits
  const mid = Math.floor(v / 2 ** 15) & 0x7fff;
  const low = v % 2 ** 15;
  out[at] = (prefix << 4) | (high << 1) | 1;
  out[at + 1] = mid >> 7;
  out[at + 2] = ((mid & 0x7f) << 1) | 1;
  out[at + 3] = low >> 7;
  out[at + 4] = ((low & 0x7f) << 1) | 1;
}

/** §2.6.8 registration_descriptor. */
export function registrationDescriptor(formatIdentifier: string): number[] {
  return [0x05, 4, ...[...formatIdentifier].map((c) => c.charCodeAt(0))];
}

/** §2.6.18 ISO_639_language_descriptor (audio_type 0: undefined). */
export function languageDescriptor(language: string): number[] {
  return [0x0a, 4, ...[...language.slice(0, 3)].map((c) => c.charCodeAt(0) & 0x7f), 0];
}
