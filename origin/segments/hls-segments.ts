// The HLS segments that are generated rather than reboxed: MPEG-TS (multiplexed or video only),
// packed audio and WebVTT (I-frame segments: iframe-segments.ts). This module reads the samples a
// segment needs (samples.ts) and hands them to the pure writers (mpegts.ts, packed-audio.ts);
// the route handler (server/handlers.ts) only picks the rendition and the number.
//
// Which samples a segment holds (the playlist writer's EXTINF follows the same rule):
// - a rendition with video: segment i is the video track's view segment i; the audio of a
//   multiplexed rendition is cut at the video segment starts on the output timeline: an audio
//   frame belongs to segment i when its output decode time t satisfies
//   video[i].time ≤ t < video[i+1].time (exact, across the two timescales), the first segment also
//   takes what comes before it and the last one the rest;
// - an audio-only rendition: the audio track's own view segment i.
// Times on the TS clock: output time (source − presentation origin) at 90 kHz + TS_TIME_OFFSET.

import { OriginError, originError } from '../errors';
import { tsId3Input, writeTsWithId3 } from './mpegts/id3-stream';
import { openFile, SourceOpener, withSource } from '../io/source';
import { segmentNumber, ViewTrack, PlayoutView } from '../model/view';
import { Presentation } from '../model/presentation';
import { adtsConfigOf } from './mpegts/adts';
import { carriedConfig } from '../media/codec-config';
import {
  PCR_LEAD,
  planTsSegment,
  to90k,
  TS_TIME_OFFSET,
  TsSample,
  TsSegmentInput,
  writeTsSegment,
} from './mpegts/mpegts';
import { packedAudioSegment, PackedCodec } from './packed-audio';
import { overlappingFragments } from './mpegts/audio-window';
import { readSegmentSamples } from './segment-samples';
import { keepContinuity, sampleAesStreamInput } from './mpegts/sample-aes-streams';
import { audioSetupInformation, encryptAudioFrames, SampleAesKey } from '../drm/sample-aes-ts';
import { ReadLease } from '../io/buffers';
import { audioOf, Rendition, videoOf } from '../model/rendition';
import { TextSample, webvttSegment } from './webvtt/webvtt';
import {
  outputShift,
  readFragmentRange,
  readFragmentSamples,
  readSampleBytes,
  SourceSample,
  withFragmentSpan,
} from '../media/samples';
import { trackHeaderOf } from '../media/moov';
import {
  audioCounter,
  audioGroups,
  audioPieces,
  audioTsSamples,
  streamOf,
  videoCounter,
  videoScan,
  videoTsSamples,
} from './mpegts/ts-continuity';

/** Largest segment we generate in memory (a 4 s segment is a few MB even at high bitrates). */
export const MAX_GENERATED_SEGMENT_BYTES = 64 << 20;

/** The track whose segments number the rendition's: the video, else the one track. */
export function numberingTrack(r: Rendition): ViewTrack {
  return videoOf(r) ?? r.tracks[0]!;
}

function tooLarge(what: string, bytes: number): OriginError {
  return originError(
    'segment-too-large',
    `${what} would be ${bytes} bytes, over the ${MAX_GENERATED_SEGMENT_BYTES}-byte limit of one generated segment`,
  );
}

/** View fragment range [first, end) of a view track. */
export function fragmentRange(t: ViewTrack): { first: number; end: number } {
  const s = t.segments;
  return { first: s.first(0), end: s.first(s.count - 1) + s.fragments(s.count - 1) };
}

function attach(ts: TsSample[], data: readonly Uint8Array[]): void {
  for (let i = 0; i < ts.length; i++) ts[i]!.data = data[i]!;
}

/** How a TS or packed audio segment is made beyond its samples. */
export interface TsSegmentOptions {
  /** Gives the output buffer (writeTsSegment, packedAudioSegment); by default a new one. */
  allocate?: (size: number) => Uint8Array;
  /** SAMPLE-AES (origin/drm/sample-aes-ts.ts): the key and this segment's IV; undefined: clear. */
  sampleAes?: SampleAesKey;
}

/**
 * MPEG-TS segment `index` (0-based) of a rendition with video. Each source is opened once and its
 * fragments' byte range read once (withFragmentSpan): moofs and sample data come from that read.
 */
export async function tsSegment(
  view: PlayoutView,
  r: Rendition,
  index: number,
  open: SourceOpener = openFile,
  { allocate, sampleAes }: TsSegmentOptions = {},
): Promise<Uint8Array> {
  const p = view.presentation;
  const v = videoOf(r);
  if (v === undefined) throw originError('internal', `rendition ${r.key} has no video`, { subject: 'tsSegment' });
  const seg = v.segments.segment(index);
  const last = index === v.segments.count - 1;
  const a = audioOf(r);
  // A live segment is the same bytes wherever the sliding window puts it (model/live-window.ts):
  // its audio is exactly that of its video's time window, its continuity counters start at 0
  // (a discontinuity between segments that demuxers take segment by segment), PAT/PMT count by
  // its media sequence number. VOD segments take the audio before the first and after the last.
  const live = p.live !== undefined;
  const lo = index === 0 && !live ? undefined : seg.first;
  const hi = last ? undefined : v.segments.first(index + 1);
  // The live edge segment: its audio ends with its video (source ticks), not with the archive.
  const until = last && live ? seg.sourceTime + seg.duration : undefined;
  const tableCc = live ? seg.first : fragmentRange(v).first;
  const psiCc = (live ? segmentNumber(v, index) : index) & 0x0f;
  // The video and the audio are read concurrently (two sources, or two ranges of one): the
  // segment waits for one round of reads, not two in turn. Both reads go into pooled buffers
  // (io/buffers.ts) that return to the pool once the segment is written: the output is a copy.
  // allSettled, not all: on a failure the other read may still be filling its buffer, which must
  // not go back to the pool (and to another request) before it is done.
  const lease = new ReadLease();
  const reads: SegmentReads = { p, open, lease };
  try {
    const [videoRead, audioRead, piecesRead] = await Promise.allSettled([
      videoScan(v.track, p, open).then(
        async (scan) => [scan, await readVideo(v, seg, scan.decodeDelay, reads)] as const,
      ),
      a === undefined ? undefined : readMuxedAudio(a, v, { lo, hi, until }, reads),
      a === undefined ? undefined : audioPieces(a.track, v.track, p, open),
    ]);
    if (videoRead.status === 'rejected') throw videoRead.reason;
    if (audioRead.status === 'rejected') throw audioRead.reason;
    if (piecesRead.status === 'rejected') throw piecesRead.reason;
    const [scan, video] = videoRead.value;
    const muxed =
      audioRead.value === undefined || piecesRead.value === undefined
        ? undefined
        : ([audioRead.value, piecesRead.value] as const);
    const input: TsSegmentInput = {
      streams: [{ stream: streamOf(v.track), samples: video, cc: videoCounter(scan, tableCc, seg.first) }],
      patCc: psiCc,
      pmtCc: psiCc,
      // Live: the PCR runs to the segment's own end, which is the next one's start, whether or not
      // that is archived yet.
      ...(last && !live
        ? {}
        : {
            nextPcr:
              to90k(
                (last ? seg.time + seg.duration : v.segments.time(index + 1)) - scan.decodeDelay,
                v.track.properties.TimeScale,
              ) +
              BigInt(TS_TIME_OFFSET) -
              PCR_LEAD,
          }),
    };
    if (a !== undefined && muxed !== undefined) {
      const [audio, pieces] = muxed;
      const range = fragmentRange(a);
      input.streams.push({
        stream: streamOf(a.track),
        samples: audio,
        cc: audioCounter(pieces, range.first, range.end, live || index === 0 ? undefined : seg.first),
      });
    }
    // SAMPLE-AES changes samples (and sizes) and PMT entries before the plan, and pads the plan to
    // the clear one's continuity counters (mpegts/sample-aes-streams.ts); the clear path skips it.
    let plan = planTsSegment(input);
    if (sampleAes !== undefined) {
      const clear = plan;
      input.streams = input.streams.map((s) =>
        sampleAesStreamInput(s, sampleAes, s.stream.role === 'video' ? v.track.src : a!.track.src),
      );
      plan = planTsSegment(input);
      keepContinuity(plan, clear);
    }
    if (plan.size > MAX_GENERATED_SEGMENT_BYTES) throw tooLarge(`TS segment ${index + 1} of ${r.key}`, plan.size);
    // Timed ID3 (timed_metadata): the one extension of the muxer's output, in its own module.
    const id3 = tsId3Input(view, v, index);
    if (id3 !== undefined) return writeTsWithId3(input, plan, id3, allocate ?? ((n) => new Uint8Array(n)));
    return writeTsSegment(input, plan, allocate);
  } finally {
    lease.release();
  }
}

/** What the reads of one TS segment share: the presentation, the sources' opener, the segment's pooled buffers. */
interface SegmentReads {
  p: Presentation;
  open: SourceOpener;
  lease: ReadLease;
}

/** The video samples of fragments [first, first + count) with their bytes. */
async function readVideo(
  v: ViewTrack,
  { first, count }: { first: number; count: number },
  decodeDelay: bigint,
  { p, open, lease }: SegmentReads,
): Promise<TsSample[]> {
  return withSource(open, v.track.src, async (source) => {
    const span = await withFragmentSpan(source, v.track, first, first + count - 1, {
      maxBytes: MAX_GENERATED_SEGMENT_BYTES,
      lease,
    });
    const samples = await readFragmentRange(span, v.track, first, count, outputShift(v.track, p.origin));
    const ts = videoTsSamples(samples, v.track, decodeDelay);
    attach(ts, await readSampleBytes(span, samples, MAX_GENERATED_SEGMENT_BYTES));
    return ts;
  });
}

/**
 * The audio frames of the segment whose video fragments are [lo, hi) (undefined: open ended),
 * ending before `until` (video source ticks) when given, with their bytes, from the audio view
 * track's fragments that overlap that time window.
 */
async function readMuxedAudio(
  a: ViewTrack,
  v: ViewTrack,
  { lo, hi, until }: { lo: number | undefined; hi: number | undefined; until: bigint | undefined },
  { p, open, lease }: SegmentReads,
): Promise<TsSample[]> {
  const fv = v.track.fragments;
  // Live: any archived audio of the segment's time window, not only the window's (which slides).
  const range = p.live === undefined ? fragmentRange(a) : { first: 0, end: a.track.fragments.count };
  const tsA = BigInt(a.track.properties.TimeScale);
  const tsV = BigInt(v.track.properties.TimeScale);
  const shiftA = outputShift(a.track, p.origin);
  const shiftV = outputShift(v.track, p.origin);
  // Compared as audio ticks × tsV against video ticks × tsA (mpegts/audio-window.ts).
  const overlapping = overlappingFragments(a.track.fragments, range.first, range.end, {
    shift: shiftA,
    tsV,
    from: lo === undefined ? undefined : (fv.times[lo]! - shiftV) * tsA,
    to: hi === undefined ? (until === undefined ? undefined : (until - shiftV) * tsA) : (fv.times[hi]! - shiftV) * tsA,
  });
  const picked: SourceSample[] = [];
  const groups: number[] = [];
  const ts = await withSource(open, a.track.src, async (source) => {
    const span =
      overlapping.length === 0
        ? source
        : await withFragmentSpan(source, a.track, overlapping[0]!, overlapping[overlapping.length - 1]!, {
            maxBytes: MAX_GENERATED_SEGMENT_BYTES,
            lease,
          });
    for (const i of overlapping) {
      const samples = await readFragmentSamples(span, a.track, i, shiftA);
      const g = audioGroups(samples, a.track, v.track, p);
      samples.forEach((s, j) => {
        const k = g.interval[j]!;
        const before = until === undefined || s.time * tsV < (until - shiftV) * tsA;
        if ((lo === undefined || k >= lo) && (hi === undefined || k < hi) && before) {
          picked.push(s);
          groups.push(g.group[j]!);
        }
      });
    }
    const out = audioTsSamples(picked, a.track, groups);
    attach(out, await readSampleBytes(span, picked, MAX_GENERATED_SEGMENT_BYTES));
    return out;
  });
  return ts;
}

/**
 * Packed audio segment `index` (0-based) of an audio-only rendition; with `sampleAes`, its frames
 * encrypted and the audio setup information in its ID3 tag (origin/drm/sample-aes-ts.ts).
 */
export async function packedAudio(
  view: PlayoutView,
  r: Rendition,
  index: number,
  open: SourceOpener = openFile,
  { allocate, sampleAes }: TsSegmentOptions = {},
): Promise<Uint8Array> {
  const t = r.tracks[0]!;
  const seg = t.segments.segment(index);
  const what = `${t.track.src} track ${t.track.properties.trackID}`;
  const config = carriedConfig(trackHeaderOf(t.track), what);
  let codec: PackedCodec;
  if (config.kind === 'aac') codec = { kind: 'aac', adts: adtsConfigOf(config.asc, what) };
  else if (config.kind === 'ac3' || config.kind === 'ec3') codec = { kind: config.kind };
  else throw originError('unsupported-media', 'packed audio carries AAC, AC-3 or E-AC-3 only', { subject: what });
  const shift = outputShift(t.track, view.presentation.origin);
  // The frames are read into a pooled buffer (io/buffers.ts): packedAudioSegment copies them
  // into the segment, so the buffer goes back once it returns (one read: nothing else in flight).
  const lease = new ReadLease();
  try {
    const samples = await readSegmentSamples(t, seg, { shift, open, maxBytes: MAX_GENERATED_SEGMENT_BYTES, lease });
    const first = samples[0];
    if (first === undefined)
      throw originError('corrupt-media', `segment ${index + 1} has no samples`, { subject: what });
    const pts =
      to90k(first.time + BigInt(first.compositionOffset), t.track.properties.TimeScale) + BigInt(TS_TIME_OFFSET);
    const frames = samples.map((s) => s.data);
    if (sampleAes === undefined) return packedAudioSegment(codec, pts, frames, undefined, allocate);
    const setup = audioSetupInformation(config, first.data, what);
    const where = samples.map((s) => ({ file: t.track.src, offset: s.offset }));
    return packedAudioSegment(codec, pts, encryptAudioFrames(codec.kind, frames, sampleAes, where), setup, allocate);
  } finally {
    lease.release();
  }
}

/**
 * WebVTT segment `index` (0-based) of a text track (RFC 8216 §3.5), converted by webvtt.ts from
 * the samples of the text track's own view segment; the window is that segment's output time
 * range. X-TIMESTAMP-MAP maps LOCAL 0 to TS_TIME_OFFSET on the TS clock, or to 0 with fMP4
 * segments (whose times are the output times themselves).
 */
export async function webvttText(
  view: PlayoutView,
  r: Rendition,
  index: number,
  open: SourceOpener = openFile,
): Promise<string> {
  const t = r.tracks[0]!;
  const seg = t.segments.segment(index);
  const shift = outputShift(t.track, view.presentation.origin);
  const samples = await readSegmentSamples(t, seg, { shift, open, maxBytes: MAX_GENERATED_SEGMENT_BYTES });
  const text: TextSample[] = samples.map((s) => ({
    data: s.data,
    sourceTime: s.sourceTime,
    time: s.time,
    duration: BigInt(s.duration),
  }));
  const mpegts = view.options.bool('hls_fmp4') ? 0 : TS_TIME_OFFSET;
  return webvttSegment(text, t.track.properties.TimeScale, mpegts, { start: seg.time, end: seg.time + seg.duration });
}
