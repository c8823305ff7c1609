// The transport-stream layer of the demuxer (ISO/IEC 13818-1): 188-byte packets (§2.4.3.2) with
// their adaptation field (§2.4.3.4), the PAT and the PMT of the first program (§2.4.4.3,
// §2.4.4.8, CRC_32 of Annex A checked), and PES packets reassembled across TS packets
// (§2.4.3.6). Pure; stateful across the segments of one stream (the PMT of an earlier segment
// holds until a new one comes), reset per segment only for continuity counters.
//
// The rules:
// - a byte where a sync byte (0x47) should be, or a packet cut short, is corrupt-media at its
//   offset: the reader never guesses where the next packet starts;
// - a continuity counter that skips (§2.4.3.3) without the adaptation field's
//   discontinuity_indicator drops the PES being assembled and is reported, never glued to the
//   next packets; a packet sent twice (same counter, allowed once) is dropped silently; counters
//   are checked within a segment (HLS segments are cut out of a stream and may restart them);
// - packets before the PAT and PMT that describe them, and continuations of a PES whose start
//   was not seen, are skipped and counted (a decoder joining a multiplex does the same);
// - stream types are taken (H.264 0x1B, ADTS AAC 0x0F), skipped (ID3 0x15, SCTE-35 0x86, private
//   and any other data) or refused by name (other codecs, SAMPLE-AES 0xDB/0xCF/0xC1/0xC2), as is a
//   scrambled packet or PES (transport_scrambling_control, PES_scrambling_control).

import { originError } from '../../errors';
import { crc32Mpeg2 } from './crc32-mpeg';

export const TS_PACKET = 188;
const SYNC = 0x47;
const NULL_PID = 0x1fff;
/** Cap on one reassembled PES: a video access unit is at most a few MB. */
const MAX_PES_BYTES = 32 << 20;

export type TsCodec = 'h264' | 'aac';

/** Table 2-34 stream_type → what the reader does with it. */
const STREAM_TYPES: ReadonlyMap<number, TsCodec | { refuse: string }> = new Map<number, TsCodec | { refuse: string }>([
  [0x1b, 'h264'],
  [0x0f, 'aac'],
  [0x01, { refuse: 'MPEG-1 video' }],
  [0x02, { refuse: 'MPEG-2 video' }],
  [0x03, { refuse: 'MPEG-1 audio' }],
  [0x04, { refuse: 'MPEG-2 audio' }],
  [0x10, { refuse: 'MPEG-4 Visual' }],
  [0x11, { refuse: 'AAC in LATM' }],
  [0x24, { refuse: 'HEVC' }],
  [0x81, { refuse: 'AC-3' }],
  [0x87, { refuse: 'E-AC-3' }],
  // RFC 8216 §4.3.2.4 SAMPLE-AES in MPEG-TS (Apple's sample encryption: stream types 0xDB, 0xCF, 0xC1, 0xC2).
  [0xdb, { refuse: 'encryption (SAMPLE-AES H.264)' }],
  [0xcf, { refuse: 'encryption (SAMPLE-AES AAC)' }],
  [0xc1, { refuse: 'encryption (SAMPLE-AES AC-3)' }],
  [0xc2, { refuse: 'encryption (SAMPLE-AES E-AC-3)' }],
]);

export interface TsStream {
  pid: number;
  streamType: number;
  codec: TsCodec;
  /** ISO 639-2 code of an ISO_639_language_descriptor (tag 0x0A, §2.6.18), when given. */
  language?: string;
}

export interface Pes {
  pid: number;
  /** Raw 33-bit 90 kHz values (§2.4.3.7), when the header carries them. */
  pts?: number;
  dts?: number;
  /** The PES payload after its header. */
  data: Uint8Array;
  /** Byte offset in the segment of its first TS packet. */
  offset: number;
}

export interface TsNotice {
  pid: number;
  /** Byte offset in the segment. */
  offset: number;
  message: string;
}

export interface TsRead {
  /** A PMT is known (from this segment or an earlier one). */
  program: boolean;
  /** The taken elementary streams, in PMT order. */
  streams: TsStream[];
  /** Complete PES packets of the taken streams, in the order they end. */
  pes: Pes[];
  /** Continuity breaks and PES packets dropped for them, or cut short. */
  discontinuities: TsNotice[];
  /** Packets skipped: before the PAT/PMT, or continuing a PES whose start was not seen. */
  skipped: number;
}

interface Assembly {
  offset: number;
  parts: Uint8Array[];
  bytes: number;
}

export class TsReader {
  private pmtPid: number | undefined;
  private program = false;
  private streams: TsStream[] = [];
  private section = new Map<number, Uint8Array>();

  /** Names the segment in errors. */
  private name = '';

  /** One segment (`name` for errors). */
  read(segment: Uint8Array, name: string): TsRead {
    this.name = name;
    const out: TsRead = { program: false, streams: this.streams, pes: [], discontinuities: [], skipped: 0 };
    const cc = new Map<number, number>();
    const open = new Map<number, Assembly>();
    for (let at = 0; at < segment.byteLength; at += TS_PACKET) {
      if (segment.byteLength - at < TS_PACKET)
        this.fail(at, `a truncated packet: ${segment.byteLength - at} bytes where ${TS_PACKET} are due`);
      if (segment[at] !== SYNC) this.fail(at, `lost sync: 0x${hex(segment[at]!)} where the sync byte 0x47 is due`);
      const pid = ((segment[at + 1]! & 0x1f) << 8) | segment[at + 2]!;
      if (pid === NULL_PID) continue;
      const unitStart = (segment[at + 1]! & 0x40) !== 0;
      const control = segment[at + 3]!;
      const hasPayload = (control & 0x10) !== 0;
      let p = at + 4;
      let flagged = false;
      if (control & 0x20) {
        const length = segment[p]!;
        if (p + 1 + length > at + TS_PACKET)
          this.fail(at, `an adaptation field of ${length} bytes overruns the packet`);
        flagged = length > 0 && (segment[p + 1]! & 0x80) !== 0; // discontinuity_indicator
        p += 1 + length;
      }
      if (!hasPayload) continue; // §2.4.3.3: the counter does not advance
      if (control >> 6 !== 0 && this.streamOf(pid) !== undefined)
        throw this.refuse(pid, 'scrambled packets (transport_scrambling_control)');
      const counter = control & 0x0f;
      const before = cc.get(pid);
      cc.set(pid, counter);
      if (before !== undefined && !flagged) {
        if (counter === before) continue; // a duplicate packet
        if (counter !== ((before + 1) & 0x0f)) {
          const dropped = open.delete(pid);
          out.discontinuities.push({
            pid,
            offset: at,
            message: `continuity counter ${counter} after ${before}${dropped ? ': the PES in progress is dropped' : ''}`,
          });
        }
      }
      const payload = segment.subarray(p, at + TS_PACKET);
      if (pid === 0 || pid === this.pmtPid) this.psi(pid, unitStart, payload, at);
      else if (this.streamOf(pid) === undefined) out.skipped++;
      else if (unitStart) {
        this.finish(pid, open, out);
        open.set(pid, { offset: at, parts: [payload], bytes: payload.byteLength });
      } else {
        const a = open.get(pid);
        if (a === undefined) out.skipped++;
        else {
          a.parts.push(payload);
          a.bytes += payload.byteLength;
          if (a.bytes > MAX_PES_BYTES) this.fail(a.offset, `a PES over ${MAX_PES_BYTES} bytes on PID ${pidName(pid)}`);
        }
      }
      out.streams = this.streams;
    }
    for (const pid of [...open.keys()]) this.finish(pid, open, out);
    out.program = this.program;
    return out;
  }

  private streamOf(pid: number): TsStream | undefined {
    return this.streams.find((s) => s.pid === pid);
  }

  /** A PES whose end is reached (the next unit start, or the segment's end) into `out`. */
  private finish(pid: number, open: Map<number, Assembly>, out: TsRead): void {
    const a = open.get(pid);
    if (a === undefined) return;
    open.delete(pid);
    const bytes = a.parts.length === 1 ? a.parts[0]! : concat(a.parts, a.bytes);
    const pes = this.pes(pid, bytes, a.offset);
    if (typeof pes === 'string') out.discontinuities.push({ pid, offset: a.offset, message: pes });
    else out.pes.push(pes);
  }

  /** §2.4.3.6 PES_packet with the optional header of §2.4.3.7; a string says why it is dropped. */
  private pes(pid: number, b: Uint8Array, offset: number): Pes | string {
    if (b.byteLength < 9 || b[0] !== 0 || b[1] !== 0 || b[2] !== 1)
      this.fail(offset, `PID ${pidName(pid)}: a PES without its start code 00 00 01`);
    const declared = (b[4]! << 8) | b[5]!;
    if ((b[6]! & 0x30) !== 0) throw this.refuse(pid, 'scrambled PES (PES_scrambling_control)');
    const flags = b[7]! >> 6;
    const headerEnd = 9 + b[8]!;
    if (headerEnd > b.byteLength) this.fail(offset, `PID ${pidName(pid)}: a PES header longer than its packet`);
    if (declared !== 0 && declared + 6 > b.byteLength)
      return `a PES cut short: ${b.byteLength - 6} of its ${declared} bytes, dropped`;
    const end = declared === 0 ? b.byteLength : declared + 6;
    const pes: Pes = { pid, data: b.subarray(headerEnd, end), offset };
    if (flags & 2) pes.pts = timestamp(b, 9);
    if (flags === 3) pes.dts = timestamp(b, 14);
    if (flags === 1) this.fail(offset, `PID ${pidName(pid)}: PTS_DTS_flags 01 is forbidden`);
    return pes;
  }

  /** A PSI section, possibly spanning packets (§2.4.4.2 pointer_field on a unit start). */
  private psi(pid: number, unitStart: boolean, payload: Uint8Array, at: number): void {
    let data: Uint8Array;
    if (unitStart) {
      const pointer = payload[0] ?? 0;
      data = payload.subarray(1 + pointer);
    } else {
      const held = this.section.get(pid);
      if (held === undefined) return;
      data = concat([held, payload], held.byteLength + payload.byteLength);
    }
    if (data.byteLength < 3 || data[0] === 0xff) return;
    const length = 3 + (((data[1]! & 0x0f) << 8) | data[2]!);
    if (data.byteLength < length) {
      this.section.set(pid, data);
      return;
    }
    this.section.delete(pid);
    const section = data.subarray(0, length);
    if (length < 12 || crc32Mpeg2(section) !== 0)
      this.fail(at, `PID ${pidName(pid)}: a PSI section whose CRC_32 fails`);
    if (pid === 0 && section[0] === 0x00) this.pat(section);
    else if (pid === this.pmtPid && section[0] === 0x02) this.pmt(section, at);
  }

  /** §2.4.4.3: the first program's PMT PID (program_number 0 is the network PID). */
  private pat(s: Uint8Array): void {
    for (let i = 8; i + 4 <= s.byteLength - 4; i += 4) {
      const program = (s[i]! << 8) | s[i + 1]!;
      if (program === 0) continue;
      this.pmtPid = ((s[i + 2]! & 0x1f) << 8) | s[i + 3]!;
      return;
    }
  }

  /** §2.4.4.8 TS_program_map_section: the streams, each checked against STREAM_TYPES. */
  private pmt(s: Uint8Array, at: number): void {
    const programInfo = ((s[10]! & 0x0f) << 8) | s[11]!;
    const streams: TsStream[] = [];
    for (let i = 12 + programInfo; i + 5 <= s.byteLength - 4;) {
      const streamType = s[i]!;
      const pid = ((s[i + 1]! & 0x1f) << 8) | s[i + 2]!;
      const infoLength = ((s[i + 3]! & 0x0f) << 8) | s[i + 4]!;
      const info = s.subarray(i + 5, i + 5 + infoLength);
      if (i + 5 + infoLength > s.byteLength - 4)
        this.fail(at, `PMT: ES_info of PID ${pidName(pid)} overruns the section`);
      i += 5 + infoLength;
      const kind = STREAM_TYPES.get(streamType);
      if (kind === undefined) continue;
      if (typeof kind !== 'string') throw this.refuse(pid, `${kind.refuse} (stream_type 0x${hex(streamType)})`);
      const language = languageOf(info);
      streams.push({ pid, streamType, codec: kind, ...(language !== undefined ? { language } : {}) });
    }
    this.streams = streams;
    this.program = true;
  }

  private fail(offset: number, message: string): never {
    throw originError('corrupt-media', `byte ${offset}: ${message}`, { subject: this.name });
  }

  private refuse(pid: number, feature: string): Error {
    return originError('unsupported-media', `PID ${pidName(pid)}: ${feature} is not supported`, {
      subject: this.name,
    });
  }
}

/** §2.6.18 ISO_639_language_descriptor (tag 0x0A): the first language code. */
function languageOf(info: Uint8Array): string | undefined {
  for (let i = 0; i + 2 <= info.byteLength; i += 2 + info[i + 1]!) {
    if (info[i] === 0x0a && info[i + 1]! >= 4 && i + 5 <= info.byteLength)
      return String.fromCharCode(info[i + 2]!, info[i + 3]!, info[i + 4]!);
  }
  return undefined;
}

/** §2.4.3.7: a 33-bit time in five bytes with marker bits. */
function timestamp(b: Uint8Array, at: number): number {
  return (
    ((b[at]! >> 1) & 0x07) * 2 ** 30 +
    (((b[at + 1]! << 8) | b[at + 2]!) >> 1) * 2 ** 15 +
    (((b[at + 3]! << 8) | b[at + 4]!) >> 1)
  );
}

function concat(parts: Uint8Array[], bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export function pidName(pid: number): string {
  return `0x${pid.toString(16).padStart(4, '0')}`;
}

function hex(v: number): string {
  return v.toString(16).padStart(2, '0').toUpperCase();
}
