// The audio fragments of a multiplexed TS segment (origin/segments/mpegts/audio-window.ts): the
// binary-search start gives exactly the fragments of the plain walk, on regular tables, irregular
// durations, gaps, shifts and windows anywhere (before, inside, after, open ended).

import {
  AudioWindow,
  overlappingFragments,
  overlappingFragmentsPlain,
} from '../../../../origin/segments/mpegts/audio-window';
import type { FragmentTable } from '../../../../origin/model/media';

function table(durations: number[], start = 0n, gaps: number[] = []): FragmentTable {
  const count = durations.length;
  const times = new BigInt64Array(count);
  let t = start;
  durations.forEach((d, i) => {
    times[i] = t;
    t += BigInt(d + (gaps[i] ?? 0));
  });
  return {
    count,
    times,
    durations: Float64Array.from(durations),
    offsets: new Float64Array(count),
    sizes: new Float64Array(count),
    keyframes: new Uint8Array(count),
  };
}

/** A small deterministic generator (no Math.random: failures replay). */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

test('regular 2.005 s AAC fragments cut at 4 s video windows: the same fragments as the plain walk', () => {
  const f = table(Array.from({ length: 900 }, () => 96240)); // 48 kHz
  const tsV = 10_000_000n;
  const tsA = 48_000n;
  for (let k = 0; k < 450; k++) {
    const w: AudioWindow = {
      shift: 0n,
      tsV,
      from: k === 0 ? undefined : BigInt(k * 4) * tsV * tsA,
      to: k === 449 ? undefined : BigInt((k + 1) * 4) * tsV * tsA,
    };
    expect(overlappingFragments(f, 0, f.count, w)).toEqual(overlappingFragmentsPlain(f, 0, f.count, w));
  }
});

test('irregular durations, gaps, a shift, a view range and windows anywhere: the same as the plain walk', () => {
  const rnd = lcg(26);
  for (let trial = 0; trial < 300; trial++) {
    const n = 1 + Math.floor(rnd() * 60);
    const durations = Array.from({ length: n }, () => 1 + Math.floor(rnd() * 5000));
    const gaps = Array.from({ length: n }, () => (rnd() < 0.2 ? Math.floor(rnd() * 3000) : 0));
    const f = table(durations, BigInt(Math.floor(rnd() * 10000)), gaps);
    const shift = BigInt(Math.floor(rnd() * 5000));
    const tsV = BigInt(1 + Math.floor(rnd() * 90000));
    const first = Math.floor(rnd() * n);
    const end = first + Math.floor(rnd() * (n - first + 1));
    const span = Number(f.times[n - 1]! - shift) + durations[n - 1]! + 4000;
    const a = BigInt(Math.floor(rnd() * span) - 2000) * tsV;
    const b = a + BigInt(Math.floor(rnd() * 8000)) * tsV;
    for (const [from, to] of [
      [a, b],
      [undefined, b],
      [a, undefined],
      [undefined, undefined],
    ]) {
      const w: AudioWindow = { shift, tsV, from, to };
      expect(overlappingFragments(f, first, end, w)).toEqual(overlappingFragmentsPlain(f, first, end, w));
    }
  }
});

test('an empty range takes nothing', () => {
  const f = table([10, 10, 10]);
  const w = (from: bigint, to: bigint): AudioWindow => ({ shift: 0n, tsV: 1n, from, to });
  expect(overlappingFragments(f, 2, 2, w(5n, 25n))).toEqual([]);
  expect(overlappingFragments(f, 0, 3, w(5n, 25n))).toEqual([0, 1, 2]);
  expect(overlappingFragments(f, 0, 3, w(10n, 20n))).toEqual([1]);
});
