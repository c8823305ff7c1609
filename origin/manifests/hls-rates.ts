// Bit rates of HLS renditions: the figures of BANDWIDTH and AVERAGE-BANDWIDTH (RFC 8216
// §4.3.4.2), which must cover the bytes a client actually downloads. The source's fragment sizes
// (moof + mdat, exact) are the base; what a segment format adds to them is estimated here, in
// one place, from the frame counts (frame rate × duration):
//
// - fMP4: the source bytes (the segments are the source's moof + mdat, re-boxed).
// - MPEG-TS (ISO/IEC 13818-1), as origin/segments/mpegts/mpegts.ts writes it: every 188-byte packet carries
//   184 bytes of payload after its 4-byte header (§2.4.3.2); each PES packet starts a packet and
//   its last packet is padded by an adaptation field (92 bytes on average: half a payload). Video
//   is one PES per frame with a 19-byte header (PTS and DTS, §2.4.3.6), a 6-byte access unit
//   delimiter, the SPS and PPS before each IDR (one per source fragment) and an 8-byte PCR
//   adaptation field (§2.4.3.5; the muxer puts one in every PES of the PCR stream). Audio frames
//   share a PES for up to 100 ms (counted as ten PES a second plus one, 14-byte header with PTS);
//   AAC frames get a 7-byte ADTS header (ISO/IEC 14496-3 Annex 1.A). PAT and PMT start every
//   segment (RFC 8216 §3.2: two packets). Frame counts come from the frame rate (video) and
//   the sample rate (AAC 1024 samples per frame, AC-3 and E-AC-3 1536).
// - Packed audio (RFC 8216 §3.4): ADTS headers for AAC (AC-3 and E-AC-3 frames carry their own
//   sync info) and the ID3 PRIV timestamp tag that starts each segment (73 bytes).
// - WebVTT: the source bytes (an estimate: TTML in fMP4 is usually larger than its WebVTT).
//
// A multiplexed TS segment holds the video segment and the audio between its start and its end
// (the muxer cuts audio at video segment times): audio bytes are apportioned to video segments
// by time overlap, the first and last video segment taking everything before and after them.

import { audioOf, Rendition, SegmentKind, videoOf } from '../model/rendition';
import { SegmentList } from '../model/segment-list';
import { trackKey, ViewTrack } from '../model/view';
import { liveFragmentNumbers } from '../model/live-window';
import { liveFragmentError, originError } from '../errors';
import { TrackProperties } from '../model/media';

/** Per-segment durations (seconds) and bytes of a media playlist as the client downloads it. */
export interface ByteSeries {
  seconds: number[];
  bytes: number[];
}

export interface Rates {
  /** RFC 8216 §4.3.4.2 peak segment bit rate, bits per second. */
  peak: number;
  average: number;
}

const TS_PACKET = 188;
const TS_PAYLOAD = 184;
const PSI_BYTES = 2 * TS_PACKET;
const VIDEO_PES_HEADER = 19;
const AUDIO_PES_HEADER = 14;
const ACCESS_UNIT_DELIMITER = 6;
const PCR_ADAPTATION = 8;
const PES_STUFFING = TS_PAYLOAD / 2;
/** Audio PES packets per second (frames share one for up to 100 ms). */
const AUDIO_PES_PER_SECOND = 10;
const ADTS_HEADER = 7;
const ID3_TIMESTAMP_TAG = 73;
/** Frame rate assumed for video that does not state one (a high guess: more overhead). */
const UNKNOWN_FRAME_RATE = 60;

export function ratesOf(series: ByteSeries, target: number): Rates {
  return { peak: peakBitrate(series, target), average: averageBitrate(series) };
}

/**
 * §4.3.4.2: "the largest bit rate of any contiguous set of segments whose total duration is
 * between 0.5 and 1.5 times the target duration" (segment bit rate = size / EXTINF duration).
 * The longest segment always qualifies (its rounded duration is the target duration).
 */
export function peakBitrate(s: ByteSeries, target: number): number {
  let peak = 0;
  for (let i = 0; i < s.bytes.length; i++) {
    let bytes = 0;
    let secs = 0;
    for (let j = i; j < s.bytes.length; j++) {
      bytes += s.bytes[j]!;
      secs += s.seconds[j]!;
      if (secs > 1.5 * target) break;
      if (secs >= 0.5 * target) peak = Math.max(peak, (bytes * 8) / secs);
    }
  }
  return Math.ceil(peak);
}

export function averageBitrate(s: ByteSeries): number {
  const secs = s.seconds.reduce((a, b) => a + b, 0);
  const bytes = s.bytes.reduce((a, b) => a + b, 0);
  return secs > 0 ? Math.ceil((bytes * 8) / secs) : 0;
}

/**
 * §4.3.3.1: every EXTINF duration "when rounded to the nearest integer, MUST be less than or
 * equal to the target duration": the longest duration rounded to nearest (halves up), not its
 * ceiling (4.0107 s of AAC is target 4). At least 1.
 */
export function targetSeconds(durations: readonly bigint[], timescale: number): number {
  const ts = BigInt(timescale);
  let longest = 0n;
  for (const d of durations) if (d > longest) longest = d;
  return Math.max(1, Number((2n * longest + ts) / (2n * ts)));
}

/** The series of a rendition's media playlist: its main track's segments (the video when multiplexed). */
export function renditionSeries(r: Rendition, kind: SegmentKind): ByteSeries {
  const video = videoOf(r);
  const audio = audioOf(r);
  const main = video ?? r.tracks[0]!;
  const seconds = perSegment(main, (s, i) => Number(s.duration(i)) / main.track.properties.TimeScale);
  switch (kind) {
    case 'm4s':
    case 'webvtt':
      return { seconds, bytes: perSegment(main, (s, i) => s.bytes(i)) };
    case 'aac':
    case 'ac3':
    case 'ec3': {
      const p = main.track.properties;
      const perFrame = isAac(p) ? ADTS_HEADER : 0;
      return {
        seconds,
        bytes: perSegment(
          main,
          (s, i) => s.bytes(i) + Math.ceil(seconds[i]! * audioFrameRate(p)) * perFrame + ID3_TIMESTAMP_TAG,
        ),
      };
    }
    case 'ts': {
      if (video === undefined)
        return {
          seconds,
          bytes: perSegment(main, (s, i) =>
            tsBytes(undefined, undefined, { bytes: s.bytes(i), seconds: seconds[i]! }, main.track.properties),
          ),
        };
      const shares = audio === undefined ? undefined : audioShares(video, audio);
      const ap = audio?.track.properties;
      return {
        seconds,
        bytes: perSegment(video, (s, i) =>
          tsBytes(
            video.track.properties,
            { bytes: s.bytes(i), seconds: seconds[i]!, keyframes: s.fragments(i) },
            shares?.[i],
            ap,
          ),
        ),
      };
    }
  }
}

/** f(segments, i) for each segment of a view track, in order. */
function perSegment<T>(t: ViewTrack, f: (s: SegmentList, i: number) => T): T[] {
  const out: T[] = [];
  for (let i = 0; i < t.segments.count; i++) out.push(f(t.segments, i));
  return out;
}

/** One entry of an I-frame playlist: source fragment `fragment`, listed as `n`, lasting `duration` ticks. */
export interface IFrameEntry {
  n: number;
  fragment: number;
  duration: bigint;
}

/**
 * The I-frame playlist's series, as an upper bound: each entry counted as its whole source
 * fragment (the view knows fragment sizes, not keyframe sizes), as one TS frame or fMP4.
 */
export function iframeSeries(video: ViewTrack, entries: readonly IFrameEntry[], kind: 'ts' | 'm4s'): ByteSeries {
  const f = video.track.fragments;
  const p = video.track.properties;
  return {
    seconds: entries.map((e) => Number(e.duration) / p.TimeScale),
    bytes: entries.map((e) => {
      const size = f.sizes[e.fragment]!;
      return kind === 'm4s'
        ? size
        : tsBytes(p, { bytes: size, seconds: 1 / frameRate(p), keyframes: 1 }, undefined, undefined);
    }),
  };
}

/**
 * Entries of an I-frame playlist: source fragments of the view, n = fragment index + 1 (see
 * writeIFramePlaylist); a live track's n is the fragment's number on the epoch grid instead
 * (model/live-window.ts liveFragmentNumbers), which does not depend on where the archive starts.
 */
export function iframeEntries(video: ViewTrack): IFrameEntry[] {
  const f = video.track.fragments;
  const entries: IFrameEntry[] = [];
  const indices = fragmentIndices(video);
  const live = video.live === undefined ? undefined : liveFragmentNumbers(video.segments, video.track, indices);
  indices.forEach((fragment, k) => {
    const d = BigInt(f.durations[fragment]!);
    const previous = entries[entries.length - 1];
    if (f.keyframes[fragment] !== 1 && previous !== undefined) previous.duration += d;
    else if (f.keyframes[fragment] === 1) entries.push({ n: live?.[k] ?? fragment + 1, fragment, duration: d });
  });
  return entries;
}

/**
 * The source fragment of the live I-frame entry numbered `nText` (iframeEntries). Another number
 * is refused as a live media segment's is (server/live-playout.ts refusal), on the entries' grid:
 * before the first entry `fragment-expired`, past the last `fragment-not-yet`, between them
 * `fragment-missing` (an EXT-X-GAP entry's URL, hls-live.ts liveIFrameBreak); not a number, or
 * no entries: 404 unknown-time.
 */
export function liveIFrameFragment(video: ViewTrack, nText: string): number {
  const entries = iframeEntries(video);
  const entry = entries.find((e) => String(e.n) === nText);
  if (entry !== undefined) return entry.fragment;
  const n = /^\d{1,15}$/.test(nText) ? Number(nText) : NaN;
  const what = `keyframe ${nText.slice(0, 20)} of ${trackKey(video.track)}`;
  if (entries.length === 0 || Number.isNaN(n)) throw originError('unknown-time', `no ${what} in this live window`);
  if (n < entries[0]!.n) throw liveFragmentError('fragment-expired', 'hls', `${what} is older than the DVR window`);
  if (n > entries[entries.length - 1]!.n)
    throw liveFragmentError('fragment-not-yet', 'hls', `${what} is past the live edge`);
  throw liveFragmentError('fragment-missing', 'hls', `${what} is not in the archive (a gap)`);
}

/** Source fragment indices of a view track, in order (the view's segments are runs of them). */
export function fragmentIndices(t: ViewTrack): number[] {
  const out: number[] = [];
  const s = t.segments;
  for (let k = 0; k < s.count; k++) for (let i = s.first(k); i < s.first(k) + s.fragments(k); i++) out.push(i);
  return out;
}

interface Part {
  bytes: number;
  /** Seconds of media in the part (frame counts are estimated from it). */
  seconds: number;
  /** Video: IDR frames, each preceded by SPS and PPS. */
  keyframes?: number;
}

/** One MPEG-TS segment of a video part and/or an audio part (see the header). */
function tsBytes(
  vp: TrackProperties | undefined,
  video: Part | undefined,
  audio: Part | undefined,
  ap: TrackProperties | undefined,
): number {
  let payload = 0;
  if (vp !== undefined && video !== undefined) {
    const frames = Math.ceil(video.seconds * frameRate(vp));
    const parameterSets = (vp.CodecPrivateData.length / 2) * (video.keyframes ?? 0);
    payload +=
      video.bytes + frames * (VIDEO_PES_HEADER + ACCESS_UNIT_DELIMITER + PCR_ADAPTATION + PES_STUFFING) + parameterSets;
  }
  if (ap !== undefined && audio !== undefined) {
    const frames = Math.ceil(audio.seconds * audioFrameRate(ap));
    const pes = Math.ceil(audio.seconds * AUDIO_PES_PER_SECOND) + 1;
    const pcr = video === undefined ? PCR_ADAPTATION : 0;
    payload += audio.bytes + frames * (isAac(ap) ? ADTS_HEADER : 0) + pes * (AUDIO_PES_HEADER + PES_STUFFING + pcr);
  }
  return Math.ceil((payload * TS_PACKET) / TS_PAYLOAD) + PSI_BYTES;
}

/** The audio bytes and seconds falling into each video segment (by time overlap). */
function audioShares(video: ViewTrack, audio: ViewTrack): Part[] {
  const vts = video.track.properties.TimeScale;
  const ats = audio.track.properties.TimeScale;
  const shares: Part[] = perSegment(video, () => ({ bytes: 0, seconds: 0 }));
  const last = shares.length - 1;
  // Each video segment's span in seconds, converted once (the loop below reads them repeatedly).
  const starts = perSegment(video, (s, i) => (i === 0 ? -Infinity : Number(s.time(i)) / vts));
  const ends = perSegment(video, (s, i) => (i === last ? Infinity : Number(s.time(i) + s.duration(i)) / vts));
  const from = (i: number): number => starts[i]!;
  const to = (i: number): number => ends[i]!;
  let first = 0; // both lists ascend in time: the first video segment that can still overlap
  const a = audio.segments;
  for (let k = 0; k < a.count; k++) {
    const start = Number(a.time(k)) / ats;
    const length = Number(a.duration(k)) / ats;
    if (length <= 0) continue;
    while (first < last && to(first) <= start) first++;
    for (let i = first; i <= last && from(i) < start + length; i++) {
      const overlap = Math.min(to(i), start + length) - Math.max(from(i), start);
      if (overlap <= 0) continue;
      shares[i]!.bytes += (a.bytes(k) * overlap) / length;
      shares[i]!.seconds += overlap;
    }
  }
  return shares.map((s) => ({ bytes: Math.ceil(s.bytes), seconds: s.seconds }));
}

function frameRate(p: TrackProperties): number {
  return p.FrameRate !== undefined && p.FrameRate.den > 0 ? p.FrameRate.num / p.FrameRate.den : UNKNOWN_FRAME_RATE;
}

/** AAC frames hold 1024 samples, AC-3 and E-AC-3 syncframes (of six blocks) 1536. */
function audioFrameRate(p: TrackProperties): number {
  const rate = p.SamplingRate ?? 48000;
  return isAac(p) ? rate / 1024 : rate / 1536;
}

function isAac(p: TrackProperties): boolean {
  return p.codecs.startsWith('mp4a.');
}
