// The MPEG-TS segment writer of HLS (RFC 8216 §3.2; ISO/IEC 13818-1). Pure: samples (times
// already on the 90 kHz TS timeline, bytes attached) in, one segment's bytes out.
//
// A segment is: PAT and PMT (§2.4.4), then the PES packets of its streams in decode-time order,
// each PES starting a new TS packet (§2.4.3.6):
// - H.264 (stream_type 0x1B, stream_id 0xE0): one access unit per PES, in Annex B form with an
//   access unit delimiter and, on keyframes, the SPS and PPS (avc-annexb.ts);
// - AAC (0x0F, ADTS, stream_id 0xC0), AC-3 (0x81, registration descriptor "AC-3", ATSC A/52
//   Annex A) and E-AC-3 (0x87 with the E-AC-3 audio descriptor, tag 0xCC, A/52 Annex G and
//   Dolby's HLS delivery guidelines), both stream_id 0xBD (private_stream_1): consecutive frames
//   share a PES up to 100 ms / 16 KiB, never across a `group` boundary the caller sets.
// - PCR (§2.4.3.5) on the video PID (the audio PID without video): in the first packet of every
//   PES of that PID, PCR = DTS − PCR_LEAD; adaptation-only PCR packets fill any gap over 100 ms
//   (§2.7.2 "at most 100 ms"), including a first one at the segment start (unless the first PES
//   carries one) and, when the next segment's first PCR is given, up to it and never past it.
//   So the PCR never passes the DTS of what follows, and a playlist read as one stream has one
//   clock.
// - PTS from the composition time, DTS only when it differs (§2.4.3.7), both modulo 2^33.
// - Continuity counters (§2.4.3.3) start where the caller says: they continue across the
//   segments of a rendition (ts-continuity.ts derives them from the earlier segments' packet
//   counts, which the plan below computes from sample sizes alone).
//
// Everything is sized before it is written: the plan gives every PES's packet count, the output
// is allocated once and the writer checks that it filled it exactly.

import { originError } from '../../errors';
import { ADTS_HEADER_SIZE, AdtsConfig, adtsConfigOf, writeAdtsHeader } from './adts';
import { accessUnitSize, AnnexBTrack, checkLengthSize, parameterSetBytes, writeAccessUnit } from './avc-annexb';
import type { CodecConfig } from '../../model/media';
import {
  firstAdaptationBytes,
  languageDescriptor,
  packetizePes,
  pesHeaderSize,
  pesPacketCount,
  PmtStream,
  registrationDescriptor,
  TS_PACKET_SIZE,
  writePat,
  writePcrPacket,
  writePesHeader,
  writePmt,
} from './ts-packets';

/**
 * The constant added to every PTS, DTS and PCR: output time 0 is 10 s on the TS clock, as in the
 * reference's playlists (`MPEGTS=900000`, docs/specs.md reference §3.2), so that the PCR, which runs
 * ahead of nothing, and DTS values before a B-frame's PTS never go below zero. The WebVTT
 * X-TIMESTAMP-MAP says the same number.
 */
export const TS_TIME_OFFSET = 900000;
export const TS_CLOCK = 90000;

export const PMT_PID = 0x1000;
export const VIDEO_PID = 0x100;
export const AUDIO_PID = 0x101;

/** §2.7.2: PCRs at most 100 ms apart (90 kHz units). */
export const MAX_PCR_INTERVAL = 9000n;

/**
 * PCR-only packets one segment may need to bridge gaps without samples: an hour of them. More means
 * times no stream has (a source whose timescale says 1 Hz for 10 MHz ticks: a 20-million-second gap
 * took 200 million packets and every byte of memory); the plan refuses before it makes them.
 */
export const MAX_PCR_FILL = 36_000n;
/** The PCR runs this far behind the decode time of the PES that carries it (90 kHz units). */
export const PCR_LEAD = 9000n;
/** Audio frames share a PES while their decode times lie within 100 ms of the first, and up to this many bytes. */
const AUDIO_PES_SPAN = 9000n;
const MAX_AUDIO_PES_BYTES = 16384;

/**
 * Ticks of a track timescale to 90 kHz, exactly: round(ticks × 90000 / timescale), halves
 * rounded up (towards +∞), in BigInt so that hours of 10 MHz ticks lose nothing. Every sample is
 * converted from its own exact time (never by adding converted durations), so nothing drifts.
 */
export function to90k(ticks: bigint, timescale: number): bigint {
  return to90kPlus(ticks, timescale, 0);
}

/** to90k(ticks, timescale) + plus (an integer), made as one BigInt where the numbers allow it. */
export function to90kPlus(ticks: bigint, timescale: number, plus: number): bigint {
  // The same arithmetic in numbers while every intermediate is an exact integer (|num| < 2^52,
  // so q × den is exact too): a 10 MHz time up to about 6 h, a 90 kHz or 48 kHz one for decades.
  // The floating division may land one off the floor; the remainder check puts it right.
  if (Number.isInteger(timescale) && timescale > 0 && timescale < 2 ** 32) {
    const t = Number(ticks);
    const num = 2 * t * TS_CLOCK + timescale;
    if (Math.abs(num) < 2 ** 52) {
      const den = 2 * timescale;
      let q = Math.floor(num / den);
      const r = num - q * den;
      if (r < 0) q--;
      else if (r >= den) q++;
      if (Math.abs(q + plus) < 2 ** 53) return BigInt(q + plus);
      return BigInt(q) + BigInt(plus);
    }
  }
  const ts = BigInt(timescale);
  const num = 2n * ticks * BigInt(TS_CLOCK) + ts;
  const den = 2n * ts;
  const q = num / den;
  const rounded = num % den !== 0n && num < 0n ? q - 1n : q;
  return plus === 0 ? rounded : rounded + BigInt(plus);
}

export interface TsSample {
  /** 90 kHz, TS_TIME_OFFSET included, not yet wrapped to 33 bits. */
  dts: bigint;
  pts: bigint;
  size: number;
  keyframe: boolean;
  /** Audio: frames of different groups never share a PES. */
  group: number;
  /** The sample's bytes (needed to write, not to plan). */
  data?: Uint8Array;
  /** Where the sample is, for error messages. */
  file: string;
  offset: number;
}

/** One elementary stream of the program and how its samples become PES payloads. */
export interface TsStream {
  role: 'video' | 'audio';
  codec: CodecConfig;
  pid: number;
  streamId: number;
  pmt: PmtStream;
  /** avc: SPS+PPS with start codes. */
  parameterSets?: Uint8Array;
  /** avc: the track's side of the Annex B conversion (the avcC and parameterSets), one per stream. */
  annexB?: AnnexBTrack;
  /** aac. */
  adts?: AdtsConfig;
}

/** The stream description for a codec; `language` (ISO 639-2) goes into the PMT for audio. */
export function tsStream(codec: CodecConfig, language: string | undefined, what: string): TsStream {
  const lang =
    language !== undefined && /^[a-z]{3}$/.test(language) && language !== 'und' ? languageDescriptor(language) : [];
  // Every stream object has every field (undefined where it does not apply): one shape for the
  // writer's loads of stream.parameterSets / stream.annexB / stream.adts.
  switch (codec.kind) {
    case 'avc': {
      checkLengthSize(codec, what);
      const parameterSets = parameterSetBytes(codec);
      return {
        role: 'video',
        codec,
        pid: VIDEO_PID,
        streamId: 0xe0,
        pmt: { streamType: 0x1b, pid: VIDEO_PID, descriptors: new Uint8Array() },
        parameterSets,
        annexB: { config: codec, parameterSets },
        adts: undefined,
      };
    }
    case 'aac':
      return {
        role: 'audio',
        codec,
        pid: AUDIO_PID,
        streamId: 0xc0,
        pmt: { streamType: 0x0f, pid: AUDIO_PID, descriptors: Uint8Array.from(lang) },
        parameterSets: undefined,
        annexB: undefined,
        adts: adtsConfigOf(codec.asc, what),
      };
    case 'ac3':
      return {
        role: 'audio',
        codec,
        pid: AUDIO_PID,
        streamId: 0xbd,
        pmt: {
          streamType: 0x81,
          pid: AUDIO_PID,
          descriptors: Uint8Array.from([...registrationDescriptor('AC-3'), ...lang]),
        },
        parameterSets: undefined,
        annexB: undefined,
        adts: undefined,
      };
    case 'ec3':
      return {
        role: 'audio',
        codec,
        pid: AUDIO_PID,
        streamId: 0xbd,
        pmt: {
          streamType: 0x87,
          pid: AUDIO_PID,
          descriptors: Uint8Array.from([...eac3Descriptor(codec.channels, codec.bsid), ...lang]),
        },
        parameterSets: undefined,
        annexB: undefined,
        adts: undefined,
      };
  }
}

/**
 * ATSC A/52 Annex G E-AC-3_audio_descriptor, its 3 mandatory bytes: bsid given, no mainid, asvc,
 * mixinfo or substreams; full service, complete main (audio_service_type 0); number_of_channels
 * per its table (mono 0, stereo 2, multichannel up to 5.1 4, beyond 5).
 */
function eac3Descriptor(channels: number, bsid: number): number[] {
  const code = channels === 1 ? 0 : channels === 2 ? 2 : channels <= 6 ? 4 : 5;
  return [0xcc, 3, 0x80 | 0x40, 0x80 | 0x40 | code, 0x20 | (bsid & 0x1f)];
}

/** One PES of a stream: samples [first, first + count). */
export interface PesUnit {
  first: number;
  count: number;
  dts: bigint;
  pts: bigint;
  /** Bytes after the PES header. */
  payload: number;
  withDts: boolean;
  pcr: boolean;
  randomAccess: boolean;
  packets: number;
}

/** How a stream's samples form PES packets, and how many TS packets each takes. Sizes only: no sample bytes needed. */
export function planStream(stream: TsStream, samples: readonly TsSample[], carriesPcr: boolean): PesUnit[] {
  const units: PesUnit[] = [];
  let i = 0;
  while (i < samples.length) {
    const s = samples[i]!;
    let count = 1;
    let payload = sampleBytes(stream, s);
    if (stream.role === 'audio') {
      // One BigInt per PES, not one per frame compared.
      const spanEnd = s.dts + AUDIO_PES_SPAN;
      for (let j = i + 1; j < samples.length; j++) {
        const next = samples[j]!;
        const bytes = sampleBytes(stream, next);
        if (next.group !== s.group || next.dts >= spanEnd || payload + bytes > MAX_AUDIO_PES_BYTES) break;
        payload += bytes;
        count++;
      }
    }
    if (s.pts < s.dts) throw originError('internal', `PTS ${s.pts} before DTS ${s.dts}`, { subject: 'mpegts' });
    const withDts = s.pts !== s.dts;
    const randomAccess = carriesPcr && s.keyframe;
    const packets = pesPacketCount(pesHeaderSize(withDts) + payload, firstAdaptationBytes(carriesPcr, randomAccess));
    units.push({ first: i, count, dts: s.dts, pts: s.pts, payload, withDts, pcr: carriesPcr, randomAccess, packets });
    i += count;
  }
  return units;
}

function sampleBytes(stream: TsStream, s: TsSample): number {
  if (stream.codec.kind === 'avc') return accessUnitSize(s.size, s.keyframe, stream.parameterSets!);
  if (stream.codec.kind === 'aac') return ADTS_HEADER_SIZE + s.size;
  return s.size;
}

export interface TsSegmentInput {
  /** At most one video and one audio stream. */
  streams: Array<{ stream: TsStream; samples: readonly TsSample[]; cc: number }>;
  /** Continuity counters of the PAT and PMT packets. */
  patCc: number;
  pmtCc: number;
  /** First PCR of the next segment (90 kHz), to keep the PCR gap across the boundary ≤ 100 ms. */
  nextPcr?: bigint;
}

type Item = { kind: 'pes'; stream: number; unit: PesUnit } | { kind: 'pcr'; value: bigint };

export interface TsPlan {
  items: Item[];
  /** Packets of each stream's PES (what continuity counters advance by). */
  streamPackets: number[];
  /** Bytes of the whole segment. */
  size: number;
}

/** The order of everything in the segment, and its exact size. */
export function planTsSegment(input: TsSegmentInput): TsPlan {
  const pcrStream = Math.max(
    0,
    input.streams.findIndex((s) => s.stream.role === 'video'),
  );
  const perStream = input.streams.map((s, i) => planStream(s.stream, s.samples, i === pcrStream));
  const pes: Array<{ stream: number; unit: PesUnit }> = [];
  perStream.forEach((units, stream) => units.forEach((unit) => pes.push({ stream, unit })));
  // Decode order; on equal DTS the PCR stream first (stable sort keeps each stream's order).
  pes.sort((a, b) =>
    a.unit.dts < b.unit.dts
      ? -1
      : a.unit.dts > b.unit.dts
        ? 1
        : (a.stream === pcrStream ? 0 : 1) - (b.stream === pcrStream ? 0 : 1),
  );
  const items: Item[] = [];
  let fill = 0n;
  /** Adds the PCR-only packets that keep `last` within 100 ms of `to`; returns the new `last`. */
  const fillTo = (from: bigint, to: bigint): bigint => {
    let at = from;
    if (to - at > MAX_PCR_INTERVAL) {
      fill += (to - at - 1n) / MAX_PCR_INTERVAL;
      if (fill > MAX_PCR_FILL) {
        throw originError(
          'segment-too-large',
          `a gap of ${(to - from) / 90000n} s without samples would take ${fill} PCR-only packets (at most ${MAX_PCR_FILL}): the times are not a stream's`,
        );
      }
    }
    while (to - at > MAX_PCR_INTERVAL) {
      at += MAX_PCR_INTERVAL;
      items.push({ kind: 'pcr', value: at });
    }
    return at;
  };
  let last: bigint | undefined;
  // The next segment starts its clock at its smallest DTS − PCR_LEAD, which can be below the DTS of
  // this segment's last audio (video DTS run behind PTS by the decode delay): no PCR may pass it.
  const cap = input.nextPcr;
  for (const p of pes) {
    const due = p.unit.dts - PCR_LEAD;
    const target = cap !== undefined && !p.unit.pcr && due > cap ? cap : due;
    if (last === undefined) {
      if (!p.unit.pcr) items.push({ kind: 'pcr', value: target });
      last = target;
    }
    last = fillTo(last, target);
    items.push({ kind: 'pes', stream: p.stream, unit: p.unit });
    if (p.unit.pcr) last = target;
  }
  if (input.nextPcr !== undefined && last !== undefined) fillTo(last, input.nextPcr);
  const streamPackets = perStream.map((units) => units.reduce((s, u) => s + u.packets, 0));
  const packets = 2 + items.reduce((s, it) => s + (it.kind === 'pcr' ? 1 : it.unit.packets), 0);
  return { items, streamPackets, size: packets * TS_PACKET_SIZE };
}

/** A new output buffer, not zero-filled (writeTsSegment's default; the server lends pooled ones, io/buffers.ts BufferLoan). */
function freshOutput(size: number): Uint8Array {
  const raw = Buffer.allocUnsafeSlow(size);
  return new Uint8Array(raw.buffer, raw.byteOffset, size);
}

/**
 * Writes the segment planned by planTsSegment (the samples must carry their bytes) into a buffer
 * from `allocate`, which must return exactly `size` bytes (their content does not matter).
 */
export function writeTsSegment(
  input: TsSegmentInput,
  plan: TsPlan = planTsSegment(input),
  allocate: (size: number) => Uint8Array = freshOutput,
): Uint8Array {
  // Not zero-filled: every byte is written below (PSI and PCR packets fill their stuffing, PES
  // packets their header, adaptation field and payload), and the end check proves the count.
  const out = allocate(plan.size);
  if (out.byteLength !== plan.size)
    throw originError('internal', `an output of ${out.byteLength} bytes for a ${plan.size}-byte segment`, {
      subject: 'mpegts',
    });
  const pcrStream = input.streams.findIndex((s) => s.stream.role === 'video');
  const pcrPid = input.streams[Math.max(0, pcrStream)]?.stream.pid ?? VIDEO_PID;
  writePat(out, 0, PMT_PID, input.patCc);
  writePmt(
    out,
    TS_PACKET_SIZE,
    { pmtPid: PMT_PID, pcrPid, streams: input.streams.map((s) => s.stream.pmt) },
    input.pmtCc,
  );
  let at = 2 * TS_PACKET_SIZE;
  const cc = input.streams.map((s) => s.cc & 0x0f);
  for (const item of plan.items) {
    if (item.kind === 'pcr') {
      // Adaptation-only: the counter stays (§2.4.3.3); it repeats the stream's last value.
      writePcrPacket(out, at, pcrPid, (cc[Math.max(0, pcrStream)]! + 15) & 0x0f, item.value);
      at += TS_PACKET_SIZE;
      continue;
    }
    const { stream, samples } = input.streams[item.stream]!;
    const u = item.unit;
    // The PES is written whole at the end of its packets' span, then spread into the packets in
    // place (ts-packets.ts packetizePes): no parts list, no per-packet subarray or allocation.
    const end = at + u.packets * TS_PACKET_SIZE;
    const length = pesHeaderSize(u.withDts) + u.payload;
    const written = writePayload(out, writePesHeader(out, end - length, stream, u), stream, samples, u);
    if (written !== end)
      throw originError('internal', `PES of ${length} bytes wrote ${written - end + length}`, { subject: 'mpegts' });
    // Fields by name, no spread: one object shape per PES, no generic property copy.
    packetizePes(out, at, {
      pid: stream.pid,
      cc: cc[item.stream]!,
      packets: u.packets,
      length,
      pcr: u.pcr ? u.dts - PCR_LEAD : undefined,
      randomAccess: u.randomAccess,
    });
    cc[item.stream] = (cc[item.stream]! + u.packets) & 0x0f;
    at = end;
  }
  if (at !== out.byteLength)
    throw originError('internal', `wrote ${at} bytes of a ${out.byteLength}-byte segment`, { subject: 'mpegts' });
  return out;
}

/** Writes the PES payload of unit `u` (access units, ADTS frames or raw frames) at out[at]; returns the offset after it. */
function writePayload(out: Uint8Array, at: number, stream: TsStream, samples: readonly TsSample[], u: PesUnit): number {
  const codec = stream.codec;
  for (let i = u.first; i < u.first + u.count; i++) {
    const s = samples[i]!;
    const data = s.data;
    if (data === undefined || data.byteLength !== s.size)
      throw originError('internal', `sample ${i} has no bytes or not ${s.size} of them`, { subject: 'mpegts' });
    if (codec.kind === 'avc') at = writeAccessUnit(out, at, data, s, stream.annexB!);
    else {
      if (codec.kind === 'aac') {
        writeAdtsHeader(out, at, stream.adts!, s.size);
        at += ADTS_HEADER_SIZE;
      }
      out.set(data, at);
      at += data.byteLength;
    }
  }
  return at;
}
