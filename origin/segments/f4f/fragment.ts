// One HDS fragment (F4F, Adobe Flash Video File Format Specification 10.1, Annex C "HTTP
// Streaming: File Structure"): `afra` + `moof` + `mdat`, the mdat holding FLV tags (flv.ts). Pure:
// the samples of one fragment (with their bytes) in, the fragment's bytes out.
//
// The FLV clock (milliseconds, rounded): a video tag's Timestamp is the sample's output decode time
// (source time minus the presentation origin: the afrt's and DASH's timeline); its
// CompositionTime is the composition offset plus the presentation's decode delay D (how far below
// 0 the composition offsets of its H.264 tracks go, decode-delay.ts), so that it is never
// negative (FLV players and ffmpeg take a presentation time before the decode time as an error,
// while ISO BMFF sources with B-frames have them); an audio tag's Timestamp is its output time
// plus D. Presentation times are therefore the output's plus D for both streams: the sync of
// every other format, and the same D in every media of a presentation, so switching bitrates
// moves nothing.
//
// The tags, in FLV-clock order across the two streams (exact times compared across timescales;
// video first on a tie), so that timestamps never decrease through the fragment nor, since
// fragments cut both streams at the same instants of that clock, through the concatenation of
// fragments:
// - the AVC sequence header (AVCDecoderConfigurationRecord) right before the first video sample
//   and before every later key frame, with that sample's timestamp, so that a client can start
//   decoding at any random access point the afra lists;
// - the AAC sequence header (AudioSpecificConfig) right before the first audio sample;
// - one tag per sample: AVC NAL units as the source stores them (AVCC, length-prefixed) with the
//   composition time, raw AAC frames.
//
// afra (F4V: Fragment Random Access box): LongIDs 0, LongOffsets 0 (a generated fragment is far
// below 4 GiB), no global entries; one local entry per video key frame: its decode time in the
// media's timescale and the byte offset, from the first byte of the fragment, of the sequence
// header tag that precedes it. Audio-only media have one entry, the first audio sample.
//
// moof (ISO/IEC 14496-12 §8.8.4): mfhd with the fragment number; one traf per stream (track_ID 1
// the video, 2 the audio, or 1 for audio alone) with tfhd default-base-is-moof (§8.8.7), tfdt
// version 1 (§8.8.12) and one trun per sample (§8.8.8: a run is contiguous bytes, and tag headers
// separate every two samples) whose data_offset points at the sample's bytes inside its tag. The
// moof keeps the ISO timeline: output decode times and the source's composition offsets.

import { originError } from '../../errors';
import { box, BoxWriter, field, fullBox, serialize, Writable } from '../box-writer';
import { mdatHeaderSize } from '../fmp4/media-segment';
import { TFHD, TRUN } from '../../media/traf-layout';
import { Instant } from '../../model/presentation';
import { AAC_PACKET, AAC_TAG_HEADER, audioTag, AVC_PACKET, AVC_TAG_HEADER, TAG_HEADER_SIZE, videoTag } from './flv';

export interface FlvSample {
  /** Output decode time, ticks of the stream's timescale (≥ 0). */
  time: bigint;
  /** Presentation minus decode time, ticks, signed. */
  compositionOffset: number;
  /** Ticks. */
  duration: number;
  sync: boolean;
  data: Uint8Array;
}

export interface FragmentStream {
  timescale: number;
  /** AVCDecoderConfigurationRecord (video) or AudioSpecificConfig (audio). */
  sequenceHeader: Uint8Array;
  samples: readonly FlvSample[];
}

export interface F4fInput {
  /** 1-based: the `Frag<n>` of the URL and mfhd's sequence_number. */
  fragmentNumber: number;
  /** Timescale of the afra times: the media's fragment timeline (afrt's). */
  timescale: number;
  /** D: added to video composition times and audio timestamps (see the header). */
  decodeDelay: Instant;
  video?: FragmentStream;
  audio?: FragmentStream;
}

/** An instant on the FLV clock as an exact fraction of seconds. */
export interface ClockTime {
  num: bigint;
  den: bigint;
}

/** A video sample's decode time on the FLV clock: its output decode time. */
export function videoClock(time: bigint, timescale: number): ClockTime {
  return { num: time, den: BigInt(timescale) };
}

/** An audio sample's time (or a video presentation time) on the FLV clock: output time + D. */
export function delayedClock(time: bigint, timescale: number, d: Instant): ClockTime {
  return {
    num: time * BigInt(d.timescale) + d.ticks * BigInt(timescale),
    den: BigInt(timescale) * BigInt(d.timescale),
  };
}

export function compareClock(a: ClockTime, b: ClockTime): number {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/**
 * The FLV Timestamp of a clock time: milliseconds rounded to nearest (half up), as ffmpeg's FLV
 * muxer rounds; monotonic, so order survives. Never negative.
 */
export function clockMs(t: ClockTime): number {
  if (t.num < 0n) throw originError('internal', `negative FLV time ${t.num}/${t.den}`, { subject: 'hds' });
  return Number((t.num * 2000n + t.den) / (2n * t.den));
}

/** Largest fragment we generate (a few seconds of video is a few MB). */
export const MAX_FRAGMENT_BYTES = 64 << 20;

/** sample_flags (§8.8.3.1): a key frame depends on nothing; others depend on others and are non-sync. */
const SYNC_FLAGS = 0x02000000;
const NON_SYNC_FLAGS = 0x01010000;

type Kind = 'video' | 'audio';

interface PlacedSample {
  kind: Kind;
  sample: FlvSample;
  /** Offset of the sample's bytes from the first byte of the mdat payload. */
  dataAt: number;
}

interface RandomAccess {
  time: bigint;
  /** Offset of the tag from the first byte of the mdat payload. */
  tagAt: number;
}

/** floor(ticks × to / from), exact. */
function rescale(ticks: bigint, from: number, to: number): bigint {
  return from === to ? ticks : (ticks * BigInt(to)) / BigInt(from);
}

/** Both streams' samples in FLV-clock order; video first when two fall on the same instant. */
function interleave(input: F4fInput): Array<{ kind: Kind; sample: FlvSample }> {
  const v = input.video;
  const a = input.audio;
  const out: Array<{ kind: Kind; sample: FlvSample }> = [];
  let i = 0;
  let j = 0;
  const vs = v?.samples ?? [];
  const as = a?.samples ?? [];
  while (i < vs.length || j < as.length) {
    const vx = vs[i];
    const ax = as[j];
    const videoFirst =
      ax === undefined ||
      (vx !== undefined &&
        compareClock(videoClock(vx.time, v!.timescale), delayedClock(ax.time, a!.timescale, input.decodeDelay)) <= 0);
    if (videoFirst) out.push({ kind: 'video', sample: vs[i++]! });
    else out.push({ kind: 'audio', sample: as[j++]! });
  }
  return out;
}

/** The mdat payload as tags, with where each sample's bytes and each random access point are. */
function layoutTags(input: F4fInput): {
  tags: Writable[];
  size: number;
  placed: PlacedSample[];
  access: RandomAccess[];
} {
  const tags: Writable[] = [];
  const placed: PlacedSample[] = [];
  const access: RandomAccess[] = [];
  let at = 0;
  let videoSeen = false;
  let audioSeen = false;
  const push = (t: Writable): number => {
    const start = at;
    tags.push(t);
    at += t.size;
    return start;
  };
  for (const { kind, sample } of interleave(input)) {
    if (kind === 'video') {
      const v = input.video!;
      const ms = clockMs(videoClock(sample.time, v.timescale));
      if (!videoSeen || sample.sync) {
        const tagAt = push(
          videoTag({
            timestampMs: ms,
            keyframe: true,
            packetType: AVC_PACKET.sequenceHeader,
            compositionMs: 0,
            data: v.sequenceHeader,
          }),
        );
        if (sample.sync) access.push({ time: rescale(sample.time, v.timescale, input.timescale), tagAt });
        videoSeen = true;
      }
      const compositionMs =
        clockMs(delayedClock(sample.time + BigInt(sample.compositionOffset), v.timescale, input.decodeDelay)) - ms;
      if (compositionMs < 0)
        throw originError('internal', `composition offset ${sample.compositionOffset} is below the decode delay`, {
          subject: 'hds',
        });
      const tagAt = push(
        videoTag({
          timestampMs: ms,
          keyframe: sample.sync,
          packetType: AVC_PACKET.nalu,
          compositionMs,
          data: sample.data,
        }),
      );
      placed.push({ kind, sample, dataAt: tagAt + TAG_HEADER_SIZE + AVC_TAG_HEADER });
    } else {
      const a = input.audio!;
      const ms = clockMs(delayedClock(sample.time, a.timescale, input.decodeDelay));
      if (!audioSeen) {
        const tagAt = push(
          audioTag({ timestampMs: ms, packetType: AAC_PACKET.sequenceHeader, data: a.sequenceHeader }),
        );
        if (input.video === undefined) access.push({ time: rescale(sample.time, a.timescale, input.timescale), tagAt });
        audioSeen = true;
      }
      const tagAt = push(audioTag({ timestampMs: ms, packetType: AAC_PACKET.raw, data: sample.data }));
      placed.push({ kind, sample, dataAt: tagAt + TAG_HEADER_SIZE + AAC_TAG_HEADER });
    }
  }
  return { tags, size: at, placed, access };
}

/** A 4-byte field whose value is known only once every box size is. */
function late(write: (w: BoxWriter) => void): Writable {
  return { size: 4, write };
}

export function writeF4fFragment(input: F4fInput): Uint8Array {
  if (!Number.isSafeInteger(input.fragmentNumber) || input.fragmentNumber < 1) {
    throw originError('internal', `fragment number ${input.fragmentNumber} is not 1 or more`, { subject: 'hds' });
  }
  const { tags, size, placed, access } = layoutTags(input);
  const mdatHeader = mdatHeaderSize(size);
  // Filled in once the afra and moof sizes are known (their sizes do not depend on these values).
  let afraSize = 0;
  let moofSize = 0;
  const afra = fullBox(
    'afra',
    0,
    0,
    field.u8(0), // LongIDs 0, LongOffsets 0, GlobalEntries 0, Reserved
    field.u32(input.timescale),
    field.u32(access.length),
    ...access.map((e) =>
      field.group(
        field.u64(e.time),
        late((w) => w.u32(afraSize + moofSize + mdatHeader + e.tagAt)),
      ),
    ),
  );
  const trafs: Writable[] = [];
  const streams: Array<[Kind, FragmentStream | undefined]> = [
    ['video', input.video],
    ['audio', input.audio],
  ];
  let trackId = 0;
  for (const [kind, stream] of streams) {
    if (stream === undefined) continue;
    trafs.push(
      traf(
        ++trackId,
        kind,
        placed.filter((p) => p.kind === kind),
        () => moofSize + mdatHeader,
      ),
    );
  }
  const moof = box('moof', fullBox('mfhd', 0, 0, field.u32(input.fragmentNumber)), ...trafs);
  afraSize = afra.size;
  moofSize = moof.size;
  const total = afraSize + moofSize + mdatHeader + size;
  if (total > MAX_FRAGMENT_BYTES) {
    throw originError(
      'segment-too-large',
      `HDS fragment ${input.fragmentNumber} would be ${total} bytes, over the ${MAX_FRAGMENT_BYTES}-byte limit of one generated fragment`,
    );
  }
  return serialize(afra, moof, box('mdat', ...tags));
}

/** One stream's traf; `payloadBase()` is the mdat payload's offset from the moof's first byte. */
function traf(trackId: number, kind: Kind, samples: PlacedSample[], payloadBase: () => number): Writable {
  const content: Writable[] = [fullBox('tfhd', 0, TFHD.defaultBaseIsMoof, field.u32(trackId))];
  const first = samples[0];
  if (first !== undefined) content.push(fullBox('tfdt', 1, 0, field.u64(first.sample.time)));
  for (const p of samples) {
    const s = p.sample;
    const dataOffset = late((w) => w.i32(payloadBase() + p.dataAt));
    if (kind === 'video') {
      const flags = TRUN.dataOffset | TRUN.duration | TRUN.size | TRUN.flags | TRUN.compositionOffset;
      content.push(
        fullBox(
          'trun',
          1,
          flags,
          field.u32(1),
          dataOffset,
          field.u32(s.duration),
          field.u32(s.data.byteLength),
          field.u32(s.sync ? SYNC_FLAGS : NON_SYNC_FLAGS),
          field.i32(s.compositionOffset),
        ),
      );
    } else {
      content.push(
        fullBox(
          'trun',
          0,
          TRUN.dataOffset | TRUN.duration | TRUN.size,
          field.u32(1),
          dataOffset,
          field.u32(s.duration),
          field.u32(s.data.byteLength),
        ),
      );
    }
  }
  return box('traf', ...content);
}
