// Reads what one HDS fragment holds and hands it to the pure writer (fragment.ts); the route
// handler (server/handlers.ts) only finds the media and the number. Samples come from the sample
// reader the HLS segments use (media/samples.ts): output decode times, composition offsets, sizes,
// sync flags and the bytes, one read per moof and per contiguous run of sample data.
//
// Which samples fragment n holds (the fragment timeline is the media's timeline track, the video
// when there is one: fragment n is its view segment n, the manifest's afrt says the same):
// - the video: the samples of video segment n;
// - the multiplexed audio is cut at the video segment starts on the FLV clock (fragment.ts: audio
//   times there are output times plus the decode delay D): an audio frame with output time t
//   belongs to fragment n when video[n].time ≤ t + D < video[n+1].time (exact across the
//   timescales), so that no tag of a fragment is earlier than the next fragment's first; the
//   first fragment also takes what comes before it, the last one the rest (the rule of HLS's
//   multiplexed MPEG-TS, on FLV's clock); a live fragment takes exactly its video's window;
// - an audio-only media: the samples of its own segment n.

import { originError } from '../../errors';
import { openFile, SourceOpener, withSource } from '../../io/source';
import { ViewTrack, PlayoutView } from '../../model/view';
import { Instant, Presentation } from '../../model/presentation';
import { carriedConfig } from '../../media/codec-config';
import {
  outputShift,
  readFragmentSamples,
  readSampleData,
  SampleWithData,
  SourceSample,
  withFragmentSpan,
} from '../../media/samples';
import { ReadLease } from '../../io/buffers';
import { firstNotBefore, longestDuration } from '../mpegts/audio-window';
import { readSegmentSamples } from '../segment-samples';
import { trackHeaderOf } from '../../media/moov';
import {
  compareClock,
  delayedClock,
  F4fInput,
  FlvSample,
  FragmentStream,
  MAX_FRAGMENT_BYTES,
  videoClock,
  writeF4fFragment,
} from './fragment';
import { presentationDecodeDelay } from '../../media/decode-delay';
import { findMedia, HdsMedia, liveHdsBase } from '../../model/hds-media';

function describe(t: ViewTrack): string {
  return `${t.track.src} track ${t.track.properties.trackID}`;
}

/**
 * The FLV sequence header of a track: for H.264 the source's own AVCDecoderConfigurationRecord
 * (the avcC payload, ISO/IEC 14496-15 §5.3.3.1, byte for byte: FLV E.4.3.2 carries exactly that
 * record), for AAC the AudioSpecificConfig (E.4.2.2).
 */
export function sequenceHeaderOf(t: ViewTrack): Uint8Array {
  const what = describe(t);
  const config = carriedConfig(trackHeaderOf(t.track), what);
  if (config.kind === 'aac') return config.asc;
  if (config.kind !== 'avc')
    throw originError('unsupported-media', `HDS carries H.264 and AAC, not ${config.kind}`, { subject: what });
  return config.record;
}

/** `shift`: ticks taken off every time (a live channel's whole HDS periods, hds-media.ts liveHdsBase). */
function flvSamples(samples: readonly SampleWithData[], shift: bigint): FlvSample[] {
  return samples.map((s) => ({
    time: s.time - shift,
    compositionOffset: s.compositionOffset,
    duration: s.duration,
    sync: s.sync,
    data: s.data,
  }));
}

/** What a fragment's reads share: the presentation, the sources' opener, the fragment's pooled buffers. */
interface FragmentReads {
  p: Presentation;
  open: SourceOpener;
  lease: ReadLease;
}

/** The samples of view segment `index` with their bytes (segments/segment-samples.ts). */
function readSegment(t: ViewTrack, index: number, { p, open, lease }: FragmentReads): Promise<SampleWithData[]> {
  const shift = outputShift(t.track, p.origin);
  return readSegmentSamples(t, t.segments.segment(index), { shift, open, maxBytes: MAX_FRAGMENT_BYTES, lease });
}

/** The audio frames of fragment `index` of a media with video (see the header). */
async function readMuxedAudio(
  a: ViewTrack,
  v: ViewTrack,
  index: number,
  d: Instant,
  { p, open, lease }: FragmentReads,
): Promise<SampleWithData[]> {
  const tsA = a.track.properties.TimeScale;
  const tsV = v.track.properties.TimeScale;
  // Live: a fragment is the same bytes wherever the sliding window puts it, and after more media
  // or the end of stream (hls-segments.ts does the same for MPEG-TS): its audio is exactly that
  // of its video's time window, looked up in the whole archived audio track.
  const live = p.live !== undefined;
  const from = index === 0 && !live ? undefined : videoClock(v.segments.time(index), tsV);
  const to = live
    ? videoClock(v.segments.time(index) + v.segments.duration(index), tsV)
    : index === v.segments.count - 1
      ? undefined
      : videoClock(v.segments.time(index + 1), tsV);
  const shift = outputShift(a.track, p.origin);
  const f = a.track.fragments;
  const last = a.segments.segment(a.segments.count - 1);
  const begin = live ? 0 : a.segments.first(0);
  const end = live ? f.count : last.first + last.count;
  // Source fragments wholly outside the window are skipped without reading their moof; the walk
  // starts by binary search (mpegts/audio-window.ts): no fragment starting at or before
  // from − (the longest duration) on the FLV clock can reach `from`, and starts ascend.
  const longest = BigInt(longestDuration(f));
  const first =
    from === undefined
      ? begin
      : firstNotBefore(begin, end, (i) => compareClock(delayedClock(f.times[i]! - shift + longest, tsA, d), from) <= 0);
  const overlapping: number[] = [];
  for (let i = first; i < end; i++) {
    const start = f.times[i]! - shift;
    if (to !== undefined && compareClock(delayedClock(start, tsA, d), to) >= 0) continue;
    if (from !== undefined && compareClock(delayedClock(start + BigInt(f.durations[i]!), tsA, d), from) <= 0) continue;
    overlapping.push(i);
  }
  return withSource(open, a.track.src, async (source) => {
    // The overlapping fragments' byte range read once, as for the video.
    const span =
      overlapping.length === 0
        ? source
        : await withFragmentSpan(source, a.track, overlapping[0]!, overlapping[overlapping.length - 1]!, {
            maxBytes: MAX_FRAGMENT_BYTES,
            lease,
          });
    const picked: SourceSample[] = [];
    for (const i of overlapping) {
      for (const s of await readFragmentSamples(span, a.track, i, shift)) {
        const t = delayedClock(s.time, tsA, d);
        if ((from === undefined || compareClock(t, from) >= 0) && (to === undefined || compareClock(t, to) < 0))
          picked.push(s);
      }
    }
    return readSampleData(span, picked, MAX_FRAGMENT_BYTES);
  });
}

/**
 * Fragment `n` (from 1) of a media, as bytes; 404 unknown-time when there is no such fragment.
 * Sources are opened with `open` (the server's: io/storage.ts segmentSources).
 */
export async function hdsFragment(
  view: PlayoutView,
  m: HdsMedia,
  n: number,
  open: SourceOpener = openFile,
): Promise<Uint8Array> {
  const count = m.timeline.segments.count;
  // VOD numbers fragments from 1; a channel by its own numbering (manifests/hds.ts bootstrapOf).
  const first = view.presentation.live === undefined ? 1 : m.timeline.firstNumber;
  if (!Number.isSafeInteger(n) || n < first || n >= first + count) {
    throw originError('unknown-time', `no fragment ${n} for ${m.key} (there are ${count}, numbered from ${first})`);
  }
  const p = view.presentation;
  // The reads go into pooled buffers (io/buffers.ts): writeF4fFragment copies the samples into
  // the fragment, so they go back once it is written.
  const lease = new ReadLease();
  try {
    return await writeFragment(view, m, n, { p, open, lease });
  } finally {
    lease.release();
  }
}

async function writeFragment(view: PlayoutView, m: HdsMedia, n: number, reads: FragmentReads): Promise<Uint8Array> {
  const { p, open } = reads;
  const index = n - (p.live === undefined ? 1 : m.timeline.firstNumber);
  // D matters only when there is video: audio alone keeps its output times.
  const decodeDelay: Instant =
    m.video !== undefined ? await presentationDecodeDelay(p, open) : { ticks: 0n, timescale: 1 };
  const timescale = m.timeline.track.properties.TimeScale;
  const input: F4fInput = { fragmentNumber: n, timescale, decodeDelay };
  // Live: whole HDS periods off every time, by the timeline's fragment start (as the bootstrap does).
  const periods = liveHdsBase(p.live !== undefined, m.timeline.segments.time(index), timescale) / BigInt(timescale);
  const stream = (t: ViewTrack, samples: SampleWithData[]): FragmentStream => ({
    timescale: t.track.properties.TimeScale,
    sequenceHeader: sequenceHeaderOf(t),
    samples: flvSamples(samples, periods * BigInt(t.track.properties.TimeScale)),
  });
  if (m.video !== undefined) input.video = stream(m.video, await readSegment(m.video, index, reads));
  if (m.audio !== undefined) {
    const samples =
      m.video !== undefined
        ? await readMuxedAudio(m.audio, m.video, index, decodeDelay, reads)
        : await readSegment(m.audio, index, reads);
    input.audio = stream(m.audio, samples);
  }
  return writeF4fFragment(input);
}

/**
 * The fragment a `<stem>Seg<segment>-Frag<fragment>` URL names: 404 unknown-track when the stem
 * names no media of the request, unknown-time for a segment other than 1 or a fragment number
 * outside the media's fragments.
 */
export async function hdsFragmentRequest(
  view: PlayoutView,
  stem: string,
  segment: string,
  fragment: string,
  open: SourceOpener = openFile,
): Promise<{ bytes: Uint8Array; media: HdsMedia; fragment: number }> {
  const m = findMedia(view, stem);
  if (m === undefined) {
    throw originError(
      'unknown-track',
      `no HDS media in "${stem.slice(0, 128)}" in this presentation (or the filter removed it)`,
    );
  }
  if (segment !== '1')
    throw originError('unknown-time', `no segment ${segment.slice(0, 16)}: every HDS fragment is in segment 1`);
  const n = Number(fragment);
  return { bytes: await hdsFragment(view, m, n, open), media: m, fragment: n };
}
