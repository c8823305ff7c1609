// The number fast path of the segmentation (timeline.ts segmentColumns, the columns form of a
// SegmentList in segment-list.ts) and of the writers reading it (dash.ts timeline, view.ts
// bitrates) against the BigInt segmentation (segmentTrackExact, the exact form, and the
// SegmentTimeline as it was written from Segment objects): the same segments, field by field, on
// the fixtures and on edge cases (times past 2^32, at and past 2^53, negative times, irregular
// durations, gaps, minimum lengths); and the fallback wherever a number would not be exact. The
// judge of both is the BigInt loop as it was before either (judge below).

import { timeline, writeMpd } from '../../../origin/manifests/dash';
import { TrackProperties } from '../../../origin/model/media';
import { ColumnSegments, ExactSegments } from '../../../origin/model/segment-list';
import { segmentColumns, Segment, segmentList, segmentTrackExact } from '../../../origin/model/timeline';
import { bitrates, ViewTrack } from '../../../origin/model/view';
import { Instant, PresentationTrack, ticksIn } from '../../../origin/model/presentation';
import { Rational } from '../../../origin/rational';
import { loadPresentation, packageFixtures, PLAYABLE, viewOf } from '../../helpers/presentations';
import { segmentListOf, segmentsOf, segmentTrack } from '../../helpers/segments';

const ZERO: Instant = { ticks: 0n, timescale: 1 };
const plain = (s: Segment) => ({
  sourceTime: s.sourceTime,
  smoothTime: s.smoothTime,
  time: s.time,
  duration: s.duration,
  first: s.first,
  count: s.count,
  bytes: s.bytes,
});

function track(times: bigint[], durations: number[], timescale = 10_000_000): PresentationTrack {
  const n = times.length;
  return {
    index: 0,
    properties: { type: 'video', TimeScale: timescale, trackName: 'video', systemBitrate: 1000 } as TrackProperties,
    src: 'synthetic',
    moov: new Uint8Array(0),
    headers: new Map(),
    fragments: {
      count: n,
      times: BigInt64Array.from(times),
      durations: Float64Array.from(durations),
      offsets: Float64Array.from(times, (_, i) => i * 1000),
      sizes: Float64Array.from(times, (_, i) => 1000 + ((i * 7919) % 500)),
      keyframes: new Uint8Array(n).fill(1),
    },
  };
}

/** Contiguous fragments from `start` with the given durations (repeated to `n`). */
function contiguous(start: bigint, pattern: number[], n: number, timescale?: number): PresentationTrack {
  const times: bigint[] = [];
  const durations: number[] = [];
  let t = start;
  for (let i = 0; i < n; i++) {
    const d = pattern[i % pattern.length]!;
    times.push(t);
    durations.push(d);
    t += BigInt(d);
  }
  return track(times, durations, timescale);
}

const LENGTHS: Array<Rational | undefined> = [
  undefined,
  { num: 0, den: 1 },
  { num: 4, den: 1 },
  { num: 5, den: 2 },
  { num: 6, den: 1 },
];

/** The segmentation as it was before the fast paths (the BigInt loop, verbatim): the judge. */
function judge(
  subject: PresentationTrack,
  shift: bigint,
  range: { first: number; end: number },
  minLength: Rational | undefined,
): Segment[] {
  const f = subject.fragments;
  const ts = subject.properties.TimeScale;
  const smoothShift = shift < 0n ? shift : 0n;
  const out: Segment[] = [];
  const lengthTicks = minLength !== undefined && minLength.num > 0 ? (minLength.num * ts) / minLength.den : 0;
  let current: Segment | undefined;
  let currentSlot = -1;
  for (let i = range.first; i < range.end; i++) {
    const time = f.times[i]! - shift;
    const slot = lengthTicks > 0 ? Math.floor((Number(time) + lengthTicks / 8) / lengthTicks) : i;
    if (current === undefined || slot !== currentSlot) {
      current = {
        sourceTime: f.times[i]!,
        smoothTime: f.times[i]! - smoothShift,
        time,
        duration: 0n,
        first: i,
        count: 0,
        bytes: 0,
      };
      currentSlot = slot;
      out.push(current);
    }
    current.duration += BigInt(f.durations[i]!);
    current.count++;
    current.bytes += f.sizes[i]!;
  }
  return out;
}

/** `<S>` elements from Segment objects, as dash.ts wrote them before the columns: the judge of timeline(). */
function judgeTimeline(segments: readonly Segment[]): string[] {
  const out: string[] = [];
  let expected: bigint | undefined;
  for (let i = 0; i < segments.length;) {
    const s = segments[i]!;
    let r = 0;
    for (let j = i + 1; j < segments.length; j++) {
      const next = segments[j]!;
      const prev = segments[j - 1]!;
      if (next.duration !== s.duration || next.time !== prev.time + prev.duration) break;
      r++;
    }
    out.push(`<S${s.time !== expected ? ` t="${s.time}"` : ''} d="${s.duration}"${r > 0 ? ` r="${r}"` : ''} />`);
    const last = segments[i + r]!;
    expected = last.time + last.duration;
    i += r + 1;
  }
  return out;
}

/** The old computeBitrates loop over Segment objects: the peak before rounding, and the bytes. */
function referenceStats(reference: Segment[], timescale: number): { peak: number; bytes: number } {
  let peak = 0;
  let bytes = 0;
  for (const s of reference) {
    bytes += s.bytes;
    const secs = Number(s.duration) / timescale;
    if (secs > 0) peak = Math.max(peak, (s.bytes * 8) / secs);
  }
  return { peak, bytes };
}

/** Columns = reference for every range and minimum length; returns whether the columns took all. */
function expectSame(t: PresentationTrack, origin: Instant): boolean {
  const shift = ticksIn(origin, t.properties.TimeScale);
  let fast = true;
  const n = t.fragments.count;
  const ranges = [
    { first: 0, end: n },
    { first: Math.min(1, n), end: n },
    { first: 0, end: Math.max(0, n - 1) },
    { first: n >> 1, end: n },
    { first: 0, end: 0 },
  ];
  for (const minLength of LENGTHS) {
    for (const range of ranges) {
      const reference = judge(t, shift, range, minLength);
      expect(segmentTrackExact(t, shift, range, minLength)).toEqual(reference);
      expect(segmentTrack(t, origin, range, minLength)).toEqual(reference);
      const columns = segmentColumns(t, shift, range, minLength);
      const list = segmentList(t, shift, range, minLength);
      // The same segments as the other form of the list (its fallback).
      const exact = segmentListOf(reference, t);
      if (columns === undefined) {
        fast = false;
        expect(list).toBeInstanceOf(ExactSegments);
        expect(segmentsOf(list)).toEqual(reference);
        if (reference.length > 0) expect(timeline(list)).toEqual(judgeTimeline(reference));
        continue;
      }
      const c = columns;
      const fields = Array.from({ length: c.count }, (_, k) => [
        c.base + BigInt(c.offsets[k]!),
        BigInt(c.durations[k]!),
        c.firsts[k],
        c.counts[k],
        c.bytes[k],
      ]);
      expect(fields).toEqual(reference.map((s) => [s.time, s.duration, s.first, s.count, s.bytes]));
      expect(c.stats).toEqual({
        ...referenceStats(reference, t.properties.TimeScale),
        startsWithSync: reference.every((s) => t.fragments.keyframes[s.first] === 1),
      });
      if (reference.length > 0) {
        expect(c.offsets[0]).toBe(0);
        expect(timeline(list)).toEqual(judgeTimeline(reference));
        expect(timeline(exact)).toEqual(judgeTimeline(reference));
        // Bit rates from the Segment objects form (stats walked, not taken with the columns): the same.
        const view = (segments: Segment[]): ViewTrack => ({
          track: t,
          segments: segmentListOf(segments, t),
          firstNumber: 1,
        });
        const fromLiterals = reference.map(plain);
        expect(bitrates(view(fromLiterals))).toEqual({
          peak: Math.ceil(c.stats!.peak),
          average: bitrates(view(fromLiterals)).average,
        });
      }
      // The list: the columns, the objects, the count, the statistics, the comparisons and the
      // lookups agree with the objects form.
      expect(list.count).toBe(reference.length);
      expect(list).toBeInstanceOf(ColumnSegments);
      expect(segmentsOf(list)).toEqual(reference);
      expect(list.stats).toEqual(exact.stats);
      expect(list.longest).toBe(exact.longest);
      expect([list.sameShape(exact), exact.sameShape(list)]).toEqual([true, true]);
      for (let i = range.first; i < range.end; i++)
        expect(list.holding(i)).toBe(reference.findIndex((s) => i >= s.first && i < s.first + s.count));
      for (const s of reference) {
        expect(list.indexOfTime(s.time)).toBe(reference.findIndex((x) => x.time === s.time));
        expect(list.indexOfTime(s.smoothTime, 'smooth')).toBe(exact.indexOfTime(s.smoothTime, 'smooth'));
      }
    }
  }
  return fast;
}

describe('segment columns = the BigInt segmentation', () => {
  test('the fixture presentation, every track', async () => {
    const p = await loadPresentation(await packageFixtures(PLAYABLE));
    for (const t of p.tracks) expect(expectSame(t, p.origin)).toBe(true);
  });

  test('an MPD from the columns = from the Segment objects, whichever a view made first', async () => {
    const p = await loadPresentation(await packageFixtures(PLAYABLE));
    for (const q of [
      '',
      't=4-13',
      'vbegin=3',
      'mpd_minimum_fragment_length=5',
      'mpd_segment_template=number&t=2.5-9',
    ]) {
      const fresh = writeMpd(viewOf(p, 'dash', q));
      const made = viewOf(p, 'dash', q);
      for (const t of made.tracks) expect(segmentsOf(t).length).toBeGreaterThan(0);
      expect(writeMpd(made)).toBe(fresh);
      // Tracks of plain objects (another writer's, a test's): the Segment objects form.
      const plainView = viewOf(p, 'dash', q);
      expect(
        writeMpd({
          ...plainView,
          tracks: plainView.tracks.map((t) => ({
            track: t.track,
            segments: segmentListOf(segmentsOf(t).map(plain), t.track),
            firstNumber: t.firstNumber,
          })),
        }),
      ).toBe(fresh);
    }
  });

  test('regular and irregular durations, with gaps', () => {
    expect(expectSame(contiguous(0n, [20_000_000], 50), ZERO)).toBe(true);
    expect(expectSame(contiguous(0n, [20_053_333, 19_946_667, 20_000_000], 60), ZERO)).toBe(true);
    const gaps = track([0n, 20n, 40n, 100n, 120n, 125n, 300n], [20, 20, 20, 20, 5, 30, 20], 10);
    expect(expectSame(gaps, ZERO)).toBe(true);
    expect(expectSame(gaps, { ticks: 3n, timescale: 1 })).toBe(true);
  });

  test('fragments without a sync sample, a zero duration, sizes that set the peak', () => {
    const t = contiguous(0n, [20, 20, 0, 40, 20], 25, 10);
    (t.fragments.keyframes as Uint8Array)[7] = 0;
    (t.fragments.sizes as Float64Array)[12] = 1e6;
    expect(expectSame(t, ZERO)).toBe(true);
  });

  test('negative times (AAC priming) and a presentation origin before 0', () => {
    const audio = contiguous(-213_333n, [20_053_333, 19_946_667], 40);
    expect(expectSame(audio, ZERO)).toBe(true);
    expect(expectSame(audio, { ticks: -213_333n, timescale: 10_000_000 })).toBe(true);
    expect(
      segmentTrack(audio, { ticks: -213_333n, timescale: 10_000_000 }, { first: 0, end: 1 }, undefined)[0]!.smoothTime,
    ).toBe(0n);
  });

  test('times past 2^32 and 64-bit UTC times past 2^53 (offsets stay exact)', () => {
    expect(expectSame(contiguous(2n ** 32n - 40n, [20, 30, 17], 30, 1000), ZERO)).toBe(true);
    // 2026 in 100 ns ticks: 1.8e16 > 2^53; the origin at the first fragment, or at 0.
    const utc = 17_640_000_000_000_000n;
    expect(expectSame(contiguous(utc, [20_000_000, 20_000_001], 30), { ticks: utc, timescale: 10_000_000 })).toBe(true);
    // Absolute output times past 2^53: exact without a minimum length (offsets from a BigInt
    // base), the BigInt path with one (the slot needs the absolute time as a number).
    const far = contiguous(utc, [20_000_000, 20_000_001], 30);
    expectSame(far, ZERO);
    const shift = 0n;
    expect(segmentColumns(far, shift, { first: 0, end: 30 }, undefined)).toBeDefined();
    expect(segmentColumns(far, shift, { first: 0, end: 30 }, { num: 4, den: 1 })).toBeUndefined();
    expect(timeline(segmentList(far, shift, { first: 0, end: 30 }, undefined))[0]).toBe(
      `<S t="${utc}" d="20000000" />`,
    );
  });

  test('at the 2^53 boundary: exact up to it, the BigInt path past it', () => {
    const max = BigInt(Number.MAX_SAFE_INTEGER);
    // Offsets and ends exactly 2^53 − 1: still numbers.
    const edge = track([0n, max - 10n], [10, 10], 1);
    expect(segmentColumns(edge, 0n, { first: 0, end: 2 }, undefined)).toBeDefined();
    expect(expectSame(edge, ZERO)).toBe(true);
    // One tick more: the end is 2^53, the reference takes it.
    const past = track([0n, max - 9n], [10, 10], 1);
    expect(segmentColumns(past, 0n, { first: 0, end: 2 }, undefined)).toBeUndefined();
    expect(expectSame(past, ZERO)).toBe(false);
    // A span past 2^53 (a discontinuity of 2^60 ticks) and negative extremes.
    expect(expectSame(track([0n, 2n ** 60n], [10, 10], 1), ZERO)).toBe(false);
    expect(expectSame(track([-(2n ** 62n), 2n ** 62n], [10, 10], 1), ZERO)).toBe(false);
    // A duration past 2^53 would print differently as a number: the reference takes it.
    expect(expectSame(track([0n], [2 ** 60], 1), ZERO)).toBe(false);
  });

  test('a slice of a list is the list of its range; the objects form of literals', () => {
    const t = contiguous(1000n, [20, 30], 10, 10);
    const shift = 0n;
    const whole = segmentList(t, shift, { first: 0, end: 10 }, { num: 4, den: 1 });
    const sliced = whole.slice(1, whole.count);
    const own = segmentList(t, shift, { first: 2, end: 10 }, { num: 4, den: 1 });
    expect(sliced).toBeInstanceOf(ColumnSegments);
    expect(segmentsOf(sliced)).toEqual(segmentsOf(own));
    expect([sliced.time(0), sliced.sameShape(own), sliced.stats, sliced.longest]).toEqual([
      own.time(0),
      true,
      own.stats,
      own.longest,
    ]);
    expect(segmentsOf(sliced)).toEqual(segmentTrack(t, ZERO, { first: 0, end: 10 }, { num: 4, den: 1 }).slice(1));
    const literal = (time: bigint, duration: bigint): Segment => ({
      sourceTime: time,
      smoothTime: time,
      time,
      duration,
      first: 0,
      count: 1,
      bytes: 0,
    });
    expect(timeline(segmentListOf([literal(5n, 2n), literal(7n, 3n)]))).toEqual(['<S t="5" d="2" />', '<S d="3" />']);
    expect(timeline(segmentListOf([literal(0n, 2n), literal(2n ** 60n, 3n)]))).toEqual([
      '<S t="0" d="2" />',
      `<S t="${2n ** 60n}" d="3" />`,
    ]);
  });
});
