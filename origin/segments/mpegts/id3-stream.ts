// Timed ID3 in MPEG-TS segments (Apple, "Timed Metadata for HTTP Live Streaming" §3; ISO/IEC
// 13818-1 §2.6.58–2.6.61): an elementary stream of ID3v2 tags next to the video, which hls.js
// and Safari read (hls.js takes ID3 only from this stream in TS).
//
// - the PMT's program_info: metadata_pointer_descriptor (tag 0x25), format 0xFF + 'ID3 ';
// - its ES entry: stream_type 0x15 (metadata in PES), PID ID3_PID, metadata_descriptor (tag 0x26)
//   with metadata_application_format 0xFFFF + 'ID3 ' and metadata_format 0xFF + 'ID3 ' (ffprobe
//   calls the stream timed_id3 only with it);
// - one PES per tag: stream_id 0xBD (private_stream_1), data_alignment_indicator set, a PTS on
//   the video's 90 kHz clock (TS_TIME_OFFSET included), the tag as its payload.
//
// The muxer (mpegts.ts) is not changed for this: it writes the segment as always into the tail
// of a buffer with room for the ID3 packets in front; this module then moves the PAT and PMT to
// the front, writes the PMT again with the ID3 stream, and the ID3 packets after it. So every
// segment of a view with ID3 declares the stream, and the PES of a segment's tags come first
// (a demuxer places them by their PTS). The one change the muxer's files carry is the
// program_info field of writePmt (ts-packets.ts).

import { originError } from '../../errors';
import { isId3 } from '../../model/timed-metadata';
import type { PlayoutView, ViewEvent, ViewTrack } from '../../model/view';
import { PMT_PID, to90kPlus, TS_TIME_OFFSET, TsPlan, TsSegmentInput, VIDEO_PID, writeTsSegment } from './mpegts';
import {
  packetizePes,
  pesHeaderSize,
  pesPacketCount,
  PmtStream,
  TS_PACKET_SIZE,
  writePesHeader,
  writePmt,
} from './ts-packets';

export const ID3_PID = 0x102;
/** Table 2-34: metadata carried in PES packets. */
export const METADATA_STREAM_TYPE = 0x15;
const PRIVATE_STREAM_1 = 0xbd;

/** 'ID3 ' as the format identifiers of both descriptors. */
const ID3_FORMAT = [0x49, 0x44, 0x33, 0x20];

/** §2.6.58 metadata_pointer_descriptor: application format 0xFFFF + 'ID3 ', format 0xFF + 'ID3 ', service 0, no locator, carried in this program (flags 0, program_number 1). */
export const METADATA_POINTER_DESCRIPTOR = Uint8Array.from([
  0x25,
  15,
  0xff,
  0xff,
  ...ID3_FORMAT,
  0xff,
  ...ID3_FORMAT,
  0,
  0x1f,
  0x00,
  0x01,
]);

/** §2.6.60 metadata_descriptor: the same formats, service 0, no decoder config, no DSM-CC. */
export const METADATA_DESCRIPTOR = Uint8Array.from([0x26, 13, 0xff, 0xff, ...ID3_FORMAT, 0xff, ...ID3_FORMAT, 0, 0x0f]);

export const ID3_PMT_STREAM: PmtStream = {
  streamType: METADATA_STREAM_TYPE,
  pid: ID3_PID,
  descriptors: METADATA_DESCRIPTOR,
};

/** One ID3 tag of a segment. */
export interface Id3Tag {
  /** 90 kHz, TS_TIME_OFFSET included. */
  pts: bigint;
  tag: Uint8Array;
}

export interface Id3Input {
  tags: readonly Id3Tag[];
  /** Continuity counter of the first ID3 packet: the packets of the rendition's earlier segments (id3Packets). */
  cc: number;
}

/** TS packets of one tag's PES (PTS only, no adaptation field in its first packet). */
export function id3Packets(tagBytes: number): number {
  return pesPacketCount(pesHeaderSize(false) + tagBytes, 0);
}

/**
 * The segment of `input` (planned as `plan`) with the ID3 stream: its bytes come from
 * `allocate`, `plan.size` plus the ID3 packets.
 */
export function writeTsWithId3(
  input: TsSegmentInput,
  plan: TsPlan,
  id3: Id3Input,
  allocate: (size: number) => Uint8Array,
): Uint8Array {
  const packets = id3.tags.map((t) => id3Packets(t.tag.byteLength));
  const extra = packets.reduce((a, b) => a + b, 0) * TS_PACKET_SIZE;
  const out = allocate(plan.size + extra);
  writeTsSegment(input, plan, () => out.subarray(extra, extra + plan.size));
  const psi = 2 * TS_PACKET_SIZE;
  out.copyWithin(0, extra, extra + psi); // PAT and PMT to the front
  const video = input.streams.find((s) => s.stream.role === 'video');
  writePmt(
    out,
    TS_PACKET_SIZE,
    {
      pmtPid: PMT_PID,
      pcrPid: (video ?? input.streams[0])?.stream.pid ?? VIDEO_PID,
      streams: [...input.streams.map((s) => s.stream.pmt), ID3_PMT_STREAM],
      programInfo: METADATA_POINTER_DESCRIPTOR,
    },
    input.pmtCc,
  );
  let at = psi;
  let cc = id3.cc & 0x0f;
  id3.tags.forEach((t, i) => {
    const n = packets[i]!;
    const length = pesHeaderSize(false) + t.tag.byteLength;
    const end = at + n * TS_PACKET_SIZE;
    const unit = { payload: t.tag.byteLength, pts: t.pts, dts: t.pts, withDts: false };
    // 'audio': a bounded PES_packet_length (only video may leave it 0 in a TS).
    const body = writePesHeader(out, end - length, { streamId: PRIVATE_STREAM_1, role: 'audio' }, unit);
    out.set(t.tag, body);
    packetizePes(out, at, { pid: ID3_PID, cc, packets: n, length, randomAccess: false });
    cc = (cc + n) & 0x0f;
    at = end;
  });
  if (at !== psi + extra)
    throw originError('internal', `ID3 packets end at ${at}, not ${psi + extra}`, { subject: 'id3' });
  return out;
}

/**
 * The ID3 tags of TS segment `index` of a rendition whose segments are video track `v`'s: the
 * view's ID3 events whose output time falls in the segment; undefined when the view has no ID3
 * event at all (the segment is then written as without timed metadata). The continuity counter
 * continues over the tags of the segments before it.
 */
export function tsId3Input(view: PlayoutView, v: ViewTrack, index: number): Id3Input | undefined {
  if (view.presentation.live !== undefined) return liveId3Input(view, v, index);
  if (view.events.length === 0) return undefined;
  const events = view.events.filter((e) => isId3(e.event));
  if (events.length === 0) return undefined;
  const ts = v.track.properties.TimeScale;
  const start = v.segments.time(index);
  const end = index + 1 < v.segments.count ? v.segments.time(index + 1) : undefined;
  // e.time / e.timescale against ticks / ts, exactly.
  const before = (e: ViewEvent, ticks: bigint): boolean => e.time * BigInt(ts) < ticks * BigInt(e.timescale);
  let cc = 0;
  const tags: Id3Tag[] = [];
  for (const e of events) {
    // The first segment takes what lies before it too, the last what lies after it.
    if (index > 0 && before(e, start)) cc += id3Packets(e.event.data.byteLength);
    else if (end === undefined || before(e, end))
      tags.push({ pts: to90kPlus(e.time, e.timescale, TS_TIME_OFFSET), tag: e.event.data });
  }
  return { tags, cc: cc & 0x0f };
}

/**
 * Live: a segment's bytes may not depend on the window that lists it (docs/design/live.md), so
 * with `timed_metadata` on every segment has the ID3 stream (with the tags of its own span, none
 * perhaps), and its continuity counter starts at 0 as the segment's other streams' do.
 */
function liveId3Input(view: PlayoutView, v: ViewTrack, index: number): Id3Input | undefined {
  if (!view.options.bool('timed_metadata')) return undefined;
  const ts = BigInt(v.track.properties.TimeScale);
  const start = v.segments.time(index);
  const end = start + v.segments.duration(index);
  const tags: Id3Tag[] = [];
  for (const e of view.events) {
    // e.time / e.timescale against ticks / ts, exactly.
    const at = e.time * ts;
    const scale = BigInt(e.timescale);
    if (isId3(e.event) && at >= start * scale && at < end * scale)
      tags.push({ pts: to90kPlus(e.time, e.timescale, TS_TIME_OFFSET), tag: e.event.data });
  }
  return { tags, cc: 0 };
}
