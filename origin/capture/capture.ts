// `origin capture`: a client manifest's streams for a time range, into one fragmented MP4 that
// `origin package` takes. The rule of the range: it starts at the first keyframe of the reference
// stream (the first video stream, else the first) at or before the start, on its segment
// boundaries (DASH and HLS segments start with a keyframe: ISO/IEC 23009-1 §5.3.9.6 with
// startWithSAP, RFC 8216 §4.3.2.6 INDEPENDENT-SEGMENTS); the other streams are cut to the
// reference's times sample by sample. Media goes to the file one segment at a time, in time order
// across the streams: memory holds one segment, whatever the range. Live manifests are reloaded
// until the range's end (or, with no end, the time the capture began) is captured.

import { promises as fs } from 'node:fs';
import { originError } from '../errors';
import type { TrackHeader } from '../model/media';
import { writeMultiTrackInit } from '../segments/fmp4/init-segment';
import { CaptureStream, ManifestView, SegmentRef } from './capture-model';
import { captureInput, loadView } from './capture-input';
import { DEFAULT_FETCH, fetchBytes, FetchOptions, shownUrl } from './fetcher';
import { CapturedSample, readInit, segmentSamples, writeFragment } from './fragments';
import { parseTimeRange, secondsOf } from './time-range';

export interface CaptureRequest {
  url: string;
  output: string;
  /** Keep the source times instead of starting at 0. */
  copyTs: boolean;
  progress: (line: string) => void;
  fetch?: Partial<Omit<FetchOptions, 'onRetry'>>;
  now?: () => number;
}

export interface CaptureResult {
  tracks: number;
  fragments: number;
  /** Seconds of the reference stream written. */
  seconds: number;
  /** Decode time of the first reference sample, its timescale; the output's first time with copyTs. */
  start: { time: bigint; timescale: number };
}

interface OutTrack {
  stream: CaptureStream;
  header: TrackHeader;
  outId: number;
  done: Set<string>;
}

export async function capture(req: CaptureRequest): Promise<CaptureResult> {
  const now = req.now ?? Date.now;
  const fetch: FetchOptions = { ...DEFAULT_FETCH, ...req.fetch, onRetry: req.progress };
  const input = captureInput(req.url);
  let view = await loadView(input, fetch, now());
  if (view.streams.length === 0) throw originError('empty-clip', `${shownUrl(req.url)}: no stream is selected`);
  const tracks = await readTracks(view.streams, fetch);
  const range = rangeOf(input.t, view, now());
  const ref = tracks.find((t) => t.header.handler === 'vide') ?? tracks[0]!;
  const file = await fs.open(req.output, 'w');
  const started = Date.now();
  const state = { sequence: 1, startClock: undefined as number | undefined, written: 0, refEnd: range.start };
  let first: { time: bigint; timescale: number } | undefined;
  try {
    await file.write(writeMultiTrackInit(tracks.map((t) => ({ header: t.header, trackId: t.outId }))));
    for (;;) {
      const work = pending(tracks, range, ref);
      // The reference's first segment fixes the start every other stream is cut to: it goes first.
      const firstRef = work.findIndex((w) => w.track === ref);
      if (state.startClock === undefined && firstRef > 0) work.unshift(...work.splice(firstRef, 1));
      for (const { track, segment } of work) {
        const bytes = await fetchBytes(segment.url, fetch);
        let samples = segmentSamples(bytes, track.header, shownUrl(segment.url));
        const ts = track.header.timescale;
        if (track === ref && state.startClock === undefined) {
          // The snapped start: the first keyframe of the reference's first segment.
          const k = samples.findIndex((s) => s.sync);
          if (k < 0) throw originError('corrupt-media', `${shownUrl(segment.url)}: a segment without a keyframe`);
          samples = samples.slice(k);
          first = { time: samples[0]!.time, timescale: ts };
          state.startClock = Number(samples[0]!.time) / ts;
        }
        if (state.startClock === undefined)
          throw originError('internal', 'the reference stream is written first', { subject: 'capture' });
        if (track !== ref)
          samples = trimmed(
            samples,
            ts,
            state.startClock,
            state.startClock + (range.snappedEnd(ref) - range.snappedStart(ref)),
          );
        track.done.add(segment.key);
        if (samples.length === 0) continue;
        const shift = req.copyTs ? 0n : BigInt(Math.round(state.startClock * ts));
        const base = samples[0]!.time - shift;
        if (base < 0n) throw originError('internal', `negative time in ${track.stream.id}`, { subject: 'capture' });
        await file.write(writeFragment(state.sequence++, track.outId, base, samples));
        if (track === ref) {
          state.refEnd = segment.start + segment.duration;
          state.written += samples.reduce((n, s) => n + s.duration, 0) / ts;
          report(req.progress, state.written, range.total(ref), started);
        }
      }
      if (!view.dynamic || state.refEnd >= range.end - 1e-6) break;
      await new Promise((r) => setTimeout(r, view.reloadSeconds * 1000));
      view = await loadView(input, fetch, now());
      for (const t of tracks) t.stream = view.streams.find((s) => s.id === t.stream.id) ?? t.stream;
    }
  } finally {
    await file.close();
  }
  if (first === undefined) throw originError('empty-clip', `${shownUrl(req.url)}: the range selects no media`);
  return { tracks: tracks.length, fragments: state.sequence - 1, seconds: state.written, start: first };
}

async function readTracks(streams: CaptureStream[], fetch: FetchOptions): Promise<OutTrack[]> {
  const out: OutTrack[] = [];
  for (const stream of streams) {
    const headers = readInit(await fetchBytes(stream.initUrl, fetch), shownUrl(stream.initUrl));
    for (const header of headers) out.push({ stream, header, outId: out.length + 1, done: new Set() });
  }
  return out;
}

interface Range {
  /** Seconds on the manifest's timeline; Infinity when open. */
  start: number;
  end: number;
  snappedStart(ref: OutTrack): number;
  snappedEnd(ref: OutTrack): number;
  total(ref: OutTrack): number;
}

/** The range on the manifest timeline, and its snapping to the reference's segments. */
function rangeOf(t: string | undefined, view: ManifestView, nowMs: number): Range {
  const parsed = t === undefined ? undefined : parseTimeRange(t);
  const start = parsed === undefined ? -Infinity : secondsOf(parsed.start, view.anchorMs);
  // Live with no end: until now (the seed: "a range with only a start captures until the current time").
  const liveNow = view.anchorMs !== undefined ? (nowMs - view.anchorMs) / 1000 : lastEnd(view);
  const end = parsed?.end !== undefined ? secondsOf(parsed.end, view.anchorMs) : view.dynamic ? liveNow : Infinity;
  const chosen = (ref: OutTrack): SegmentRef[] => refSegments(ref.stream.segments, start, end);
  return {
    start,
    end,
    snappedStart: (ref) => chosen(ref)[0]?.start ?? start,
    snappedEnd: (ref) => {
      const c = chosen(ref);
      const last = c[c.length - 1];
      return last === undefined ? start : last.start + last.duration;
    },
    total(ref) {
      return this.snappedEnd(ref) - this.snappedStart(ref);
    },
  };
}

/**
 * The reference's segments of the range: from the one holding the start, up to the last that ends
 * by the end (the origin's own rule for `t`: a clip never runs past its end), at least one.
 */
function refSegments(all: SegmentRef[], start: number, end: number): SegmentRef[] {
  const eps = 1e-6;
  const i = all.findIndex((s) => s.start + s.duration > start + eps);
  if (i < 0) return [];
  const out = [all[i]!];
  for (let k = i + 1; k < all.length && all[k]!.start + all[k]!.duration <= end + eps; k++) out.push(all[k]!);
  return out;
}

/** Segments not written yet, in time order across the streams, the reference first at equal times. */
function pending(tracks: OutTrack[], range: Range, ref: OutTrack) {
  const from = range.snappedStart(ref);
  const to = range.snappedEnd(ref);
  const refKeys = new Set(refSegments(ref.stream.segments, range.start, range.end).map((s) => s.key));
  const work: Array<{ track: OutTrack; segment: SegmentRef }> = [];
  for (const track of tracks) {
    for (const segment of track.stream.segments) {
      if (track.done.has(segment.key)) continue;
      const wanted =
        track.stream === ref.stream
          ? refKeys.has(segment.key)
          : segment.start < to - 1e-6 && segment.start + segment.duration > from + 1e-6;
      if (wanted) work.push({ track, segment });
    }
  }
  return work.sort(
    (a, b) =>
      a.segment.start - b.segment.start ||
      Number(b.track.stream === ref.stream) - Number(a.track.stream === ref.stream),
  );
}

/** Samples of a non-reference stream that start within [from, to) seconds of the media clock. */
function trimmed(samples: CapturedSample[], timescale: number, from: number, to: number): CapturedSample[] {
  const lo = BigInt(Math.ceil(from * timescale - 1e-6));
  const hi = BigInt(Math.ceil(to * timescale - 1e-6));
  return samples.filter((s) => s.time >= lo && s.time < hi);
}

function lastEnd(view: ManifestView): number {
  return Math.max(...view.streams.flatMap((s) => s.segments.map((g) => g.start + g.duration)));
}

function report(progress: (line: string) => void, done: number, total: number, startedMs: number): void {
  const elapsed = Math.max((Date.now() - startedMs) / 1000, 1e-3);
  const pct = total > 0 && Number.isFinite(total) ? ` (${Math.min(100, (100 * done) / total).toFixed(0)}%)` : '';
  const of = Number.isFinite(total) ? ` / ${total.toFixed(1)} s` : '';
  progress(`captured ${done.toFixed(1)} s${of}${pct}, ${(done / elapsed).toFixed(1)}x real time`);
}
