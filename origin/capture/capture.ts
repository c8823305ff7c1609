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
import { CaptureStream, SegmentRef } from './capture-model';
import { captureInput, loadView } from './capture-input';
import { Edit, readEdits, withEdits } from './edit-lists';
import { DEFAULT_FETCH, fetchBytes, FetchOptions, shownUrl } from './fetcher';
import { CapturedSample, readInit, segmentSamples, writeFragment } from './fragments';
import { CaptureRange, listedPastEnd, mergeSegments, overlaps, rangeOf, referenceSegments } from './capture-range';
import { TimestampLine } from '../media/mpegts/timestamp-line';
import { TsStreamReader } from './ts-segments';

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
  /** The source's edit list, written into the output (edit-lists.ts). */
  edit?: Edit;
  /** MPEG-TS streams: their demuxer, shared by the tracks of the stream. */
  ts?: TsStreamReader;
}

export async function capture(req: CaptureRequest): Promise<CaptureResult> {
  const now = req.now ?? Date.now;
  const fetch: FetchOptions = { ...DEFAULT_FETCH, ...req.fetch, onRetry: req.progress };
  const input = captureInput(req.url);
  let view = await loadView(input, fetch, now());
  if (view.streams.length === 0) throw originError('empty-clip', `${shownUrl(req.url)}: no stream is selected`);
  const range = rangeOf(input.t, view, now(), input.originLive);
  const tracks = await readTracks(view.streams, fetch, range);
  const ref = tracks.find((t) => t.header.handler === 'vide') ?? tracks[0]!;
  const file = await fs.open(req.output, 'w');
  const run: Run = { req, fetch, range, ref, sequence: 1, written: 0, started: Date.now() };
  try {
    const init = writeMultiTrackInit(tracks.map((t) => ({ header: t.header, trackId: t.outId })));
    await file.write(withEdits(init, new Map(tracks.flatMap((t) => (t.edit ? [[t.outId, t.edit] as const] : [])))));
    for (;;) {
      for (const { track, segment } of pending(tracks, run)) {
        const fragment = await captureSegment(run, track, segment);
        if (fragment !== undefined) await file.write(fragment);
      }
      if (!view.dynamic || listedPastEnd(ref.stream.segments, range)) break;
      await new Promise((r) => setTimeout(r, view.reloadSeconds * 1000));
      view = await loadView(input, fetch, now());
      for (const t of tracks) {
        const fresh = view.streams.find((s) => s.id === t.stream.id);
        if (fresh !== undefined) t.stream = { ...fresh, segments: mergeSegments(t.stream.segments, fresh.segments) };
      }
    }
  } catch (e) {
    // No half capture left behind to be packaged as if it were whole.
    await file.close();
    await fs.rm(req.output, { force: true });
    throw e;
  }
  await file.close();
  if (run.first === undefined) throw originError('empty-clip', `${shownUrl(req.url)}: the range selects no media`);
  return { tracks: tracks.length, fragments: run.sequence - 1, seconds: run.written, start: run.first.exact };
}

interface Run {
  req: CaptureRequest;
  fetch: FetchOptions;
  range: CaptureRange;
  ref: OutTrack;
  sequence: number;
  /** Seconds of the reference written. */
  written: number;
  started: number;
  /** The segment fetched last: the only one held. */
  last?: { url: string; bytes: Uint8Array };
  /** Set by the reference's first segment: every other stream is cut to it. */
  first?: {
    /** Its manifest start, seconds. */
    listed: number;
    /** Its first keyframe's decode time. */
    exact: { time: bigint; timescale: number };
  };
}

/** One segment of one track, as the fragment to append (undefined when the range leaves no sample of it). */
async function captureSegment(run: Run, track: OutTrack, segment: SegmentRef): Promise<Uint8Array | undefined> {
  // The tracks of one multiplexed stream share its segments: asked for once (they come in a row).
  let samples: CapturedSample[];
  if (track.ts !== undefined)
    samples = await track.ts.samples(segment.url, track.header, () => fetchBytes(segment.url, run.fetch));
  else {
    const bytes = run.last?.url === segment.url ? run.last.bytes : await fetchBytes(segment.url, run.fetch);
    run.last = { url: segment.url, bytes };
    samples = segmentSamples(bytes, track.header, shownUrl(segment.url));
  }
  const ts = track.header.timescale;
  track.done.add(segment.key);
  if (track === run.ref && run.first === undefined) {
    // The snapped start: the first keyframe of the reference's first segment.
    const k = samples.findIndex((s) => s.sync);
    if (k < 0) throw originError('corrupt-media', `${shownUrl(segment.url)}: a segment without a keyframe`);
    samples = samples.slice(k);
    const time = samples[0]!.time;
    run.first = { listed: segment.start, exact: { time, timescale: ts } };
  }
  const first = run.first;
  if (first === undefined) throw originError('internal', 'the reference is written first', { subject: 'capture' });
  // In bigint: UTC-anchored times (10 MHz since 1970) are past 2^53, where a double loses ticks.
  const from = ticksAt(first.exact, ts);
  if (track !== run.ref) samples = trimmed(samples, from, from + BigInt(Math.ceil((refEnd(run) - first.listed) * ts)));
  if (samples.length === 0) return undefined;
  const shift = run.req.copyTs ? 0n : from;
  const base = samples[0]!.time - shift;
  if (base < 0n) throw originError('internal', `negative time in ${track.stream.id}`, { subject: 'capture' });
  if (track === run.ref) {
    run.written += samples.reduce((n, s) => n + s.duration, 0) / ts;
    report(run, refEnd(run) - first.listed);
  }
  return writeFragment(run.sequence++, track.outId, base, samples);
}

async function readTracks(streams: CaptureStream[], fetch: FetchOptions, range: CaptureRange): Promise<OutTrack[]> {
  const out: OutTrack[] = [];
  const line = new TimestampLine();
  for (const stream of streams) {
    if (stream.initUrl === '') {
      // MPEG-TS: the tracks are those of the first segment the range selects.
      const first = referenceSegments(stream.segments, range)[0];
      if (first === undefined) throw originError('empty-clip', `${shownUrl(stream.id)}: the range selects no segment`);
      const ts = new TsStreamReader(line);
      const headers = await ts.tracks(first.url, () => fetchBytes(first.url, fetch));
      for (const header of headers) out.push({ stream, header, outId: out.length + 1, done: new Set(), ts });
      continue;
    }
    const bytes = await fetchBytes(stream.initUrl, fetch);
    const edits = readEdits(bytes, shownUrl(stream.initUrl));
    for (const header of readInit(bytes, shownUrl(stream.initUrl))) {
      const edit = edits.get(header.trackID);
      out.push({ stream, header, outId: out.length + 1, done: new Set(), ...(edit ? { edit } : {}) });
    }
  }
  return out;
}

/** The end of the reference's chosen segments, seconds on the manifest timeline. */
function refEnd(run: Run): number {
  const chosen = referenceSegments(run.ref.stream.segments, run.range);
  const last = chosen[chosen.length - 1];
  return last === undefined ? run.range.start : last.start + last.duration;
}

/**
 * Segments not written yet, in time order across the streams, the reference first at equal times;
 * before the start is known, the reference's first segment ahead of everything.
 */
function pending(tracks: OutTrack[], run: Run): Array<{ track: OutTrack; segment: SegmentRef }> {
  const chosen = referenceSegments(run.ref.stream.segments, run.range);
  const keys = new Set(chosen.map((s) => s.key));
  const from = run.first?.listed ?? chosen[0]?.start ?? run.range.start;
  const to = refEnd(run);
  const work: Array<{ track: OutTrack; segment: SegmentRef }> = [];
  for (const track of tracks)
    for (const segment of track.stream.segments) {
      if (track.done.has(segment.key)) continue;
      const isRef = track.stream === run.ref.stream;
      if (isRef ? keys.has(segment.key) : overlaps(segment, from, to)) work.push({ track, segment });
    }
  const rank = (w: { track: OutTrack }): number =>
    w.track === run.ref ? 0 : w.track.stream === run.ref.stream ? 1 : 2;
  work.sort((a, b) => a.segment.start - b.segment.start || rank(a) - rank(b));
  const firstRef = work.findIndex((w) => w.track === run.ref);
  if (run.first === undefined && firstRef > 0) work.unshift(...work.splice(firstRef, 1));
  return work;
}

/** Samples of a non-reference stream that start within [lo, hi) of its timescale. */
function trimmed(samples: CapturedSample[], lo: bigint, hi: bigint): CapturedSample[] {
  return samples.filter((s) => s.time >= lo && s.time < hi);
}

/** The first tick of `timescale` at or after an exact time. */
function ticksAt(t: { time: bigint; timescale: number }, timescale: number): bigint {
  const scaled = t.time * BigInt(timescale);
  const d = BigInt(t.timescale);
  return scaled / d + (scaled % d > 0n ? 1n : 0n);
}

function report(run: Run, total: number): void {
  const done = run.written;
  const elapsed = Math.max((Date.now() - run.started) / 1000, 1e-3);
  const pct = total > 0 && Number.isFinite(total) ? ` (${Math.min(100, (100 * done) / total).toFixed(0)}%)` : '';
  const of = Number.isFinite(total) ? ` / ${total.toFixed(1)} s` : '';
  run.req.progress(`captured ${done.toFixed(1)} s${of}${pct}, ${(done / elapsed).toFixed(1)}x real time`);
}
