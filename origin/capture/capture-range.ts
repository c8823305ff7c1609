// The rule of a capture's range, on the manifest's timeline (seconds): the reference stream's
// segments from the one holding the start up to the last that ends by the end (the origin's own
// rule for `t`: a clip never runs past its end), at least one; the other streams' segments that
// overlap them. Live: a reloaded list is merged into the one known, so a sliding window
// (RFC 8216 §6.2.2, ISO/IEC 23009-1 §5.3.9.5 timeShiftBufferDepth) loses nothing already seen.
// Pure.

import type { ManifestView, SegmentRef } from './capture-model';
import { parseTimeRange, secondsOf } from './time-range';

const EPS = 1e-6;

export interface CaptureRange {
  /** Seconds on the manifest timeline; -Infinity / Infinity when open. */
  start: number;
  end: number;
}

/**
 * `t` of a third-party URL, or `own` (this origin's live end and time_shift, UTC seconds: the
 * origin has applied the range, the end only says when to stop reloading), on the view's timeline.
 */
export function rangeOf(
  t: string | undefined,
  view: ManifestView,
  nowMs: number,
  own?: { end?: number; shift: number },
): CaptureRange {
  const parsed = t === undefined ? undefined : parseTimeRange(t);
  const start = parsed === undefined ? -Infinity : secondsOf(parsed.start, view.anchorMs);
  // Live with no end: until now (the seed: "a range with only a start captures until the current
  // time"), the capture's start; a time-shifted view's now lies that far back.
  const liveNow =
    view.anchorMs !== undefined
      ? (nowMs - view.anchorMs) / 1000 - (own?.shift ?? 0)
      : lastEnd(view.streams.flatMap((s) => s.segments));
  const ownEnd = own?.end !== undefined ? own.end - (view.anchorMs ?? 0) / 1000 : undefined;
  const end =
    parsed?.end !== undefined
      ? secondsOf(parsed.end, view.anchorMs)
      : !view.dynamic
        ? Infinity
        : ownEnd !== undefined
          ? ownEnd
          : liveNow;
  return { start, end };
}

/** The reference's segments of the range (see the header). */
export function referenceSegments(all: readonly SegmentRef[], r: CaptureRange): SegmentRef[] {
  const i = all.findIndex((s) => s.start + s.duration > r.start + EPS);
  if (i < 0) return [];
  const out = [all[i]!];
  for (let k = i + 1; k < all.length && all[k]!.start + all[k]!.duration <= r.end + EPS; k++) out.push(all[k]!);
  return out;
}

/** Whether a segment overlaps [from, to) seconds. */
export function overlaps(s: SegmentRef, from: number, to: number): boolean {
  return s.start < to - EPS && s.start + s.duration > from + EPS;
}

/** Whether the list already reaches past the end: nothing more will be chosen after a reload. */
export function listedPastEnd(all: readonly SegmentRef[], r: CaptureRange): boolean {
  return all.some((s) => s.start + s.duration > r.end + EPS);
}

/**
 * A reloaded list merged into the known one by key. Without a wall clock, HLS times count from the
 * first segment listed, which moves as the window slides: the new list is shifted so that a
 * segment both lists share keeps its known time.
 */
export function mergeSegments(known: readonly SegmentRef[], fresh: readonly SegmentRef[]): SegmentRef[] {
  const byKey = new Map(known.map((s) => [s.key, s]));
  const shared = fresh.find((s) => byKey.has(s.key));
  const shift = shared === undefined ? 0 : byKey.get(shared.key)!.start - shared.start;
  for (const s of fresh) if (!byKey.has(s.key)) byKey.set(s.key, { ...s, start: s.start + shift });
  return [...byKey.values()].sort((a, b) => a.start - b.start);
}

export function lastEnd(all: readonly SegmentRef[]): number {
  return Math.max(...all.map((g) => g.start + g.duration));
}
