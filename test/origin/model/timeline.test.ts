// Segmentation and sub-clips over the real fixture presentation: the shared timeline every
// format serialises.

import { OriginError } from '../../../origin/errors';
import { parseClip, parseOffset } from '../../../origin/model/timeline';
import { trackKey, viewDuration } from '../../../origin/model/view';
import { Presentation } from '../../../origin/model/presentation';
import { loadPresentation, packageFixtures, PLAYABLE, viewOf } from '../../helpers/presentations';
import { segmentsOf } from '../../helpers/segments';

let p: Presentation;
beforeAll(async () => {
  p = await loadPresentation(await packageFixtures(PLAYABLE));
});

describe('time offsets', () => {
  test.each([
    ['6', 6],
    ['6.5', 6.5],
    ['0:00:06', 6],
    ['1:02.25', 62.25],
    ['1:00:00', 3600],
    ['0:00:06.04', 6.04],
  ])('%s is %d s', (text, seconds) => {
    expect(parseOffset(text, 't')).toBeCloseTo(seconds, 9);
  });

  test.each(['', 'abc', '-1', '1:60', '0:61:00', '6s', '1e3', '0:00:06,5', ' 6', '99999999'])(
    '"%s" is a 400 naming t',
    (text) => {
      const e = (() => {
        try {
          parseOffset(text, 't');
        } catch (err) {
          return err;
        }
        return undefined;
      })();
      expect(e).toBeInstanceOf(OriginError);
      expect((e as OriginError).kind).toBe('bad-request');
      expect((e as OriginError).code).toBe('bad-time');
      expect((e as OriginError).message).toMatch(/^t: /);
    },
  );

  test('clips', () => {
    expect(parseClip('0-0:00:06', undefined)).toEqual({ start: 0, end: 6 });
    expect(parseClip('4', undefined)).toEqual({ start: 4, end: undefined });
    expect(parseClip('4-', undefined)).toEqual({ start: 4, end: undefined });
    expect(parseClip(undefined, '0:00:02')).toEqual({ start: 2, end: undefined });
    expect(parseClip(undefined, undefined)).toBeUndefined();
    expect(() => parseClip('6-6', undefined)).toThrow(/not after start/);
    expect(() => parseClip('1-2', '1')).toThrow(/either t or vbegin/);
  });

  test('vend: with vbegin, or alone from the start; never with t, never before vbegin', () => {
    expect(parseClip(undefined, '2', '0:00:06')).toEqual({ start: 2, end: 6 });
    expect(parseClip(undefined, undefined, '6')).toEqual({ start: 0, end: 6 });
    expect(() => parseClip('1-2', undefined, '6')).toThrow(/either t or vbegin\/vend/);
    expect(() => parseClip(undefined, '6', '6')).toThrow(/vend: vend=6 is not after vbegin=6/);
    expect(() => parseClip(undefined, undefined, '-1')).toThrow(/^vend: /);
  });
});

describe('the presentation timeline', () => {
  test('the origin is the earliest first fragment over every track (the AAC priming time)', () => {
    expect(p.origin).toEqual({ ticks: -213333n, timescale: 10_000_000 });
    // Output times start at 0 for audio; video starts 213333 ticks (21.3 ms) later.
    const v = viewOf(p, 'dash');
    const audio = v.tracks.find((t) => t.track.properties.type === 'audio')!;
    const video = v.tracks.find((t) => t.track.properties.type === 'video')!;
    expect(segmentsOf(audio)[0]!.time).toBe(0n);
    expect(segmentsOf(audio)[0]!.sourceTime).toBe(-213333n);
    expect(segmentsOf(video)[0]!.time).toBe(213333n);
  });

  test('Smooth and DASH default to the source fragments; HLS joins them to 4 s', () => {
    for (const format of ['smooth', 'dash'] as const) {
      for (const t of viewOf(p, format).tracks)
        expect([trackKey(t.track), t.segments.count]).toEqual([trackKey(t.track), 5]);
    }
    const hls = viewOf(p, 'hls');
    for (const t of hls.tracks) {
      expect(segmentsOf(t).map((s) => s.count)).toEqual([2, 2, 1]);
    }
    const video = hls.tracks.find((t) => t.track.properties.type === 'video')!;
    expect(segmentsOf(video).map((s) => s.duration)).toEqual([40_000_000n, 40_000_000n, 20_000_000n]);
  });

  test('boundaries fall on the same presentation instants in every track', () => {
    for (const format of ['dash', 'hls'] as const) {
      const view = viewOf(p, format, format === 'dash' ? 'mpd_minimum_fragment_length=4' : '');
      const starts = view.tracks.map((t) =>
        segmentsOf(t).map((s) => Math.round((Number(s.time) / t.track.properties.TimeScale) * 10)),
      );
      for (const s of starts) expect(s).toEqual([0, 40, 80]);
    }
  });

  test('a minimum length of 0 keeps the source fragments, 6 joins three', () => {
    expect(segmentsOf(viewOf(p, 'hls', 'hls_minimum_fragment_length=0').tracks[0]!)).toHaveLength(5);
    expect(segmentsOf(viewOf(p, 'hls', 'hls_minimum_fragment_length=6').tracks[0]!).map((s) => s.count)).toEqual([
      3, 2,
    ]);
    expect(segmentsOf(viewOf(p, 'smooth', 'iss_minimum_fragment_length=48/25').tracks[0]!)).toHaveLength(5);
  });

  test('durations are the sum of the exact fragment durations', () => {
    for (const t of viewOf(p, 'hls').tracks) {
      const f = t.track.fragments;
      let sum = 0n;
      for (let i = 0; i < f.count; i++) sum += BigInt(f.durations[i]!);
      expect(viewDuration(t)).toBe(sum);
    }
  });
});

describe('sub-clips', () => {
  test('t=0-0:00:06 keeps exactly three 2 s fragments of every track, in every format', () => {
    for (const format of ['smooth', 'dash', 'hls'] as const) {
      const view = viewOf(p, format, 't=0-0:00:06');
      for (const t of view.tracks) {
        const frags = segmentsOf(t).reduce((n, s) => n + s.count, 0);
        expect([format, trackKey(t.track), frags]).toEqual([format, trackKey(t.track), 3]);
        if (t.track.properties.type === 'video') expect(viewDuration(t)).toBe(60_000_000n);
      }
    }
    // HLS: 4 s + 2 s.
    expect(segmentsOf(viewOf(p, 'hls', 't=0-0:00:06').tracks[0]!).map((s) => s.count)).toEqual([2, 1]);
  });

  test('t=4 and vbegin=4 keep the fragments from 4 s to the end', () => {
    for (const q of ['t=4', 'vbegin=0:00:04', 't=4-']) {
      const video = viewOf(p, 'dash', q).tracks.find((t) => t.track.properties.type === 'video')!;
      expect(segmentsOf(video).map((s) => s.sourceTime)).toEqual([40_000_000n, 60_000_000n, 80_000_000n]);
    }
  });

  test('vbegin/vend and vend alone clip as t does', () => {
    const times = (q: string): bigint[] =>
      segmentsOf(viewOf(p, 'dash', q).tracks.find((t) => t.track.properties.type === 'video')!).map(
        (s) => s.sourceTime,
      );
    expect(times('vbegin=2&vend=6')).toEqual(times('t=2-6'));
    expect(times('vend=0:00:04')).toEqual([0n, 20_000_000n]);
  });

  test('a clip past the end selects nothing: not-found', () => {
    expect(() => viewOf(p, 'dash', 't=100-200')).toThrow(/selects no media: the presentation is 10.022 s long/);
  });

  test('a clip is placed in the unclipped segmentation: its first segment has the unclipped number', () => {
    const whole = viewOf(p, 'hls').tracks;
    for (const [q, numbers] of [
      ['', [1, 1]],
      ['t=0-0:00:06', [1, 1]],
      ['vbegin=0:00:04', [2, 2]],
      ['t=8', [3, 3]],
      ['t=4-10&hls_minimum_fragment_length=0', [3, 3]],
    ] as const) {
      const view = viewOf(p, 'hls', q);
      const video = view.tracks.find((t) => t.track.properties.type === 'video')!;
      const audio = view.tracks.find((t) => t.track.properties.type === 'audio')!;
      expect([q, video.firstNumber, audio.firstNumber]).toEqual([q, ...numbers]);
    }
    // Each clip segment lies inside the unclipped segment of its number.
    for (const t of viewOf(p, 'hls', 't=2-8').tracks) {
      const w = whole.find((x) => x.track === t.track)!;
      segmentsOf(t).forEach((s, i) => {
        const u = segmentsOf(w)[t.firstNumber - 1 + i]!;
        expect([trackKey(t.track), i, s.first >= u.first && s.first + s.count <= u.first + u.count]).toEqual([
          trackKey(t.track),
          i,
          true,
        ]);
      });
    }
  });

  test('HLS under suppress_query_parameters widens a clip to whole unclipped segments; other formats do not', () => {
    const whole = viewOf(p, 'hls').tracks;
    for (const q of ['t=0-0:00:06', 't=2-8', 'vbegin=0:00:04', 't=4-6']) {
      for (const t of viewOf(p, 'hls', `${q}&suppress_query_parameters`).tracks) {
        const w = whole.find((x) => x.track === t.track)!;
        expect([q, trackKey(t.track), segmentsOf(t)]).toEqual([
          q,
          trackKey(t.track),
          segmentsOf(w).slice(t.firstNumber - 1, t.firstNumber - 1 + t.segments.count),
        ]);
      }
      const exact = viewOf(p, 'dash', q).tracks;
      expect(viewOf(p, 'dash', `${q}&suppress_query_parameters`).tracks.map(segmentsOf)).toEqual(exact.map(segmentsOf));
    }
    // t=0-0:00:06: segments 1 and 2 whole (8 s of video), where the exact clip has 6 s.
    const video = viewOf(p, 'hls', 't=0-0:00:06&suppress_query_parameters').tracks.find(
      (t) => t.track.properties.type === 'video',
    )!;
    expect([video.firstNumber, viewDuration(video)]).toEqual([1, 80_000_000n]);
  });
});
