// Continuity counters that run on across the MPEG-TS segments of a rendition, while each segment
// stays computable on its own (random access, any order, any origin instance).
//
// A PID's counter at the start of segment i is the number of packets with payload that PID had in
// segments 0..i−1, modulo 16 (ISO/IEC 13818-1 §2.4.3.3). Those counts depend only on sample
// sizes, sync flags and times, all in the moofs: the mdat is never read for them.
// - PAT and PMT: one packet per segment, so i mod 16.
// - Video: one PES per sample, each with a PCR, so a fragment's packet count is fixed; the counts
//   of every fragment of the track are computed once (one pass over its moofs) and cached with the
//   track. Segment i starts at Σ counts of the view's fragments before it.
// - Audio, multiplexed with a video: frames are cut at video segment starts, which are always
//   video fragment starts. Frames share a PES only within one "piece" (same audio fragment, same
//   interval between two consecutive video fragment starts), so every piece's packet count is
//   fixed whatever the segmentation (hls_minimum_fragment_length) or sub-clip, and a segment is a
//   union of whole pieces. The pieces of an audio track are computed once per set of video
//   fragment start times (the renditions of one ladder share theirs) and cached.
// The same one pass gives the video's decode delay (media/decode-delay.ts: largest negative
// composition offset), so that DTS never passes PTS.
//
// The scans are the only I/O here; the arithmetic is mpegts.ts's own planStream, so the counts
// are exactly what the writer produces.

import { originError } from '../../errors';
import { openFile, SourceOpener } from '../../io/source';
import { Presentation, PresentationTrack } from '../../model/presentation';
import { carriedConfig } from '../../media/codec-config';
import { planStream, to90kPlus, TS_TIME_OFFSET, TsSample, tsStream, TsStream } from './mpegts';
import { outputShift, SourceSample } from '../../media/samples';
import { scanFragments } from '../../media/decode-delay';
import { trackHeaderOf } from '../../media/moov';

export interface VideoScan {
  /** Ticks subtracted from every decode time: −(smallest composition offset), or 0. */
  decodeDelay: bigint;
  /** TS packets of the video PID per source fragment. */
  fragmentPackets: Uint32Array;
}

export interface AudioPieces {
  /** Audio fragment of each piece. */
  fragment: Int32Array;
  /** Video fragment interval of each piece: k when vt[k] ≤ t < vt[k+1], −1 before vt[0]. */
  interval: Int32Array;
  /** TS packets of the audio PID in the piece. */
  packets: Uint32Array;
}

const videoScans = new WeakMap<PresentationTrack, Promise<VideoScan>>();
/** By audio track, then by the video fragment starts it is cut at (renditions of one ladder share them). */
const audioScans = new WeakMap<PresentationTrack, Map<string, Promise<AudioPieces>>>();
const cutFingerprints = new WeakMap<PresentationTrack, string>();

/** What the pieces depend on of a video track: its fragment start times on the output timeline. */
function cutFingerprint(video: PresentationTrack, p: Presentation): string {
  let key = cutFingerprints.get(video);
  if (key === undefined) {
    const shift = outputShift(video, p.origin);
    const parts = [String(video.properties.TimeScale)];
    for (let k = 0; k < video.fragments.count; k++) parts.push(String(video.fragments.times[k]! - shift));
    key = parts.join(',');
    cutFingerprints.set(video, key);
  }
  return key;
}

/** Stream descriptions by track (they depend on the track's stsd and language only; never mutated). */
const streams = new WeakMap<PresentationTrack, TsStream>();

export function streamOf(track: PresentationTrack): TsStream {
  let stream = streams.get(track);
  if (stream === undefined) {
    const what = `${track.src} track ${track.properties.trackID}`;
    stream = tsStream(carriedConfig(trackHeaderOf(track), what), track.properties.systemLanguage, what);
    streams.set(track, stream);
  }
  return stream;
}

/** A sample's presentation time (decode time + composition offset), track timescale. */
function presentationTime(s: SourceSample): bigint {
  return s.compositionOffset === 0 ? s.time : s.time + BigInt(s.compositionOffset);
}

/** Video samples on the TS timeline. */
export function videoTsSamples(
  samples: readonly SourceSample[],
  track: PresentationTrack,
  decodeDelay: bigint,
): TsSample[] {
  const ts = track.properties.TimeScale;
  return samples.map((s) => ({
    dts: to90kPlus(decodeDelay === 0n ? s.time : s.time - decodeDelay, ts, TS_TIME_OFFSET),
    pts: to90kPlus(presentationTime(s), ts, TS_TIME_OFFSET),
    size: s.size,
    keyframe: s.sync,
    group: 0,
    // Present from the start (the writer attaches the bytes later): one object shape for every
    // TsSample, so the muxer's property loads stay monomorphic.
    data: undefined,
    file: track.src,
    offset: s.offset,
  }));
}

/** Audio samples on the TS timeline; `group` is set by the caller (the piece). */
export function audioTsSamples(
  samples: readonly SourceSample[],
  track: PresentationTrack,
  groups: readonly number[],
): TsSample[] {
  const ts = track.properties.TimeScale;
  return samples.map((s, i) => {
    const t = to90kPlus(presentationTime(s), ts, TS_TIME_OFFSET);
    return {
      dts: t,
      pts: t,
      size: s.size,
      keyframe: true,
      group: groups[i]!,
      data: undefined,
      file: track.src,
      offset: s.offset,
    };
  });
}

function cached<K extends object, V>(map: WeakMap<K, Promise<V>>, key: K, load: () => Promise<V>): Promise<V> {
  const hit = map.get(key);
  if (hit !== undefined) return hit;
  const value = load();
  map.set(key, value);
  // A failed scan is not kept: the next request tries again.
  value.catch(() => {
    if (map.get(key) === value) map.delete(key);
  });
  return value;
}

export function videoScan(
  track: PresentationTrack,
  p: Presentation,
  open: SourceOpener = openFile,
): Promise<VideoScan> {
  return cached(videoScans, track, async () => {
    const stream = streamOf(track);
    if (stream.role !== 'video')
      throw originError('internal', `${track.properties.trackName} is not video`, { subject: 'videoScan' });
    const all: SourceSample[][] = [];
    const decodeDelay = await scanFragments(track, p, open, (_, samples) => void all.push(samples));
    const fragmentPackets = new Uint32Array(all.length);
    all.forEach((samples, i) => {
      fragmentPackets[i] = planStream(stream, videoTsSamples(samples, track, decodeDelay), true).reduce(
        (s, u) => s + u.packets,
        0,
      );
    });
    return { decodeDelay, fragmentPackets };
  });
}

/**
 * The interval index of each audio sample among the video fragment starts (exact comparison of
 * output times across the two timescales: a·tsV against v·tsA), and the piece group number of
 * each: samples of one audio fragment and one interval share it.
 */
export function audioGroups(
  samples: readonly SourceSample[],
  audio: PresentationTrack,
  video: PresentationTrack,
  p: Presentation,
): { interval: number[]; group: number[] } {
  const f = video.fragments;
  const tsA = BigInt(audio.properties.TimeScale);
  const tsV = BigInt(video.properties.TimeScale);
  const shiftV = outputShift(video, p.origin);
  const videoStart = (k: number): bigint => (f.times[k]! - shiftV) * tsA;
  const interval: number[] = [];
  const group: number[] = [];
  let k = -2;
  for (const s of samples) {
    const t = s.time * tsV;
    if (k === -2 || t < (k >= 0 ? videoStart(k) : t)) k = lastStartAtOrBefore(t, f.count, videoStart);
    while (k + 1 < f.count && t >= videoStart(k + 1)) k++;
    interval.push(k);
    group.push(s.fragment * (f.count + 1) + (k + 1));
  }
  return { interval, group };
}

/** Binary search: the largest k with start(k) ≤ t, or −1. */
function lastStartAtOrBefore(t: bigint, count: number, start: (k: number) => bigint): number {
  let lo = -1;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (start(mid) <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function audioPieces(
  audio: PresentationTrack,
  video: PresentationTrack,
  p: Presentation,
  open: SourceOpener = openFile,
): Promise<AudioPieces> {
  let byCuts = audioScans.get(audio);
  if (byCuts === undefined) {
    byCuts = new Map();
    audioScans.set(audio, byCuts);
  }
  const inner = byCuts;
  const cuts = cutFingerprint(video, p);
  const hit = inner.get(cuts);
  if (hit !== undefined) return hit;
  const value = (async (): Promise<AudioPieces> => {
    const stream = streamOf(audio);
    const fragment: number[] = [];
    const interval: number[] = [];
    const packets: number[] = [];
    await scanFragments(audio, p, open, (a, samples) => {
      const g = audioGroups(samples, audio, video, p);
      const ts = audioTsSamples(samples, audio, g.group);
      for (const u of planStream(stream, ts, false)) {
        const k = g.interval[u.first]!;
        const last = fragment.length - 1;
        if (last >= 0 && fragment[last] === a && interval[last] === k) packets[last]! += u.packets;
        else {
          fragment.push(a);
          interval.push(k);
          packets.push(u.packets);
        }
      }
    });
    return {
      fragment: Int32Array.from(fragment),
      interval: Int32Array.from(interval),
      packets: Uint32Array.from(packets),
    };
  })();
  inner.set(cuts, value);
  value.catch(() => {
    if (inner.get(cuts) === value) inner.delete(cuts);
  });
  return value;
}

/** Video counter at the start of the segment that begins at fragment `segmentFirst`, for a view starting at `viewFirst`. */
export function videoCounter(scan: VideoScan, viewFirst: number, segmentFirst: number): number {
  let n = 0;
  for (let f = viewFirst; f < segmentFirst; f++) n += scan.fragmentPackets[f]!;
  return n & 0x0f;
}

/**
 * Audio counter at the start of a segment beginning at video fragment `segmentFirst` (0 for the
 * view's first segment, which also takes the audio before it): the packets of the pieces of the
 * view's audio fragments [audioFirst, audioEnd) that lie before that fragment's start.
 */
export function audioCounter(
  pieces: AudioPieces,
  audioFirst: number,
  audioEnd: number,
  segmentFirst: number | undefined,
): number {
  if (segmentFirst === undefined) return 0;
  let n = 0;
  for (let i = 0; i < pieces.packets.length; i++) {
    const a = pieces.fragment[i]!;
    if (a >= audioFirst && a < audioEnd && pieces.interval[i]! < segmentFirst) n += pieces.packets[i]!;
  }
  return n & 0x0f;
}
