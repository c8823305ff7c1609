// Live numbers on the epoch grid whatever the archive's first fragment (docs/design/live.md,
// "Two origins"): an encoder whose fragments do not divide the minimum segment length (ffmpeg's
// 1.92-s fragments at 25 fps, 4-s HLS segments: 3.84 s and 5.76 s long) numbered from two
// starting points, as two origins, or one before and after a purge, see it.

import { Presentation, PresentationTrack } from '../../../origin/model/presentation';
import { liveNumbering } from '../../../origin/model/live-window';
import { placeSegments } from '../../../origin/model/timeline';
import { rational } from '../../../origin/rational';
import { presentationOf } from '../manifests/format-support';

const TS = 10_000_000;
/** 2020-01-01T00:00:00Z, a multiple of 4 s. */
const START = 1577836800n * BigInt(TS);
const FRAGMENT = 19_200_000; // 1.92 s

let p: Presentation;
beforeAll(async () => {
  p = await presentationOf(['video_baseline_400k.ismv']);
});

/** The video track holding fragments [first, first + count) of an endless 1.92-s stream. */
function stream(first: number, count: number): PresentationTrack {
  const t = p.tracks[0]!;
  const f = t.fragments;
  return {
    ...t,
    fragments: {
      count,
      times: BigInt64Array.from({ length: count }, (_, i) => START + BigInt((first + i) * FRAGMENT)),
      durations: new Float64Array(count).fill(FRAGMENT),
      offsets: new Float64Array(count).fill(f.offsets[0]!),
      sizes: new Float64Array(count).fill(f.sizes[0]!),
      keyframes: new Uint8Array(count).fill(1),
    },
  };
}

/** Segment output time (s since 1970) → its live number, for HLS's 4-s minimum length. */
function numbers(first: number, count: number): Map<number, number> {
  const track = stream(first, count);
  const placed = placeSegments(track, { ticks: 0n, timescale: 1 }, undefined, rational(4, 1), true)!;
  // The minimum length in ticks, as model/view.ts buildView passes it.
  const live = liveNumbering(placed.segments, track, 4n * BigInt(TS));
  const out = new Map<number, number>();
  for (let i = 0; i < placed.segments.count; i++) out.set(Number(placed.segments.time(i)) / TS, live.numbers[i]!);
  return out;
}

test('every segment two archives both hold has one number, whatever fragment each starts at', () => {
  const whole = numbers(0, 400);
  const starts = [...whole.keys()];
  const durations = new Set(starts.slice(1).map((t, i) => (t - starts[i]!).toFixed(2)));
  expect([...durations].sort()).toEqual(['3.84', '5.76']);
  for (const first of [1, 2, 7, 40, 123, 250]) {
    const later = numbers(first, 400 - first);
    for (const [t, n] of later) if (whole.has(t)) expect({ first, t, n: whole.get(t) }).toEqual({ first, t, n });
  }
  // On the 4-s epoch grid (HLS's), within the slot tolerance.
  for (const [t, n] of whole) expect({ t, n }).toEqual({ t, n: Math.floor((t + 0.5) / 4) });
  // Contiguous numbers: no slot left empty (which HLS would write as a false EXT-X-GAP).
  const list = [...whole.values()];
  for (let i = 1; i < list.length; i++) expect(list[i]! - list[i - 1]!).toBe(1);
});
