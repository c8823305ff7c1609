// Hand-built channel presentations for the live writers' tests: a packaged fixture presentation
// as a channel would present it. The fixture's fragments are repeated end to end (a fixture
// holds 5; a channel's window holds more), every time moved onto a UTC anchor (as a channel's
// ingest times are), and cut to a window (as a DVR window and the archive's newest fragment cut
// a channel). The fragment offsets still point into the fixture files, so segment readers read
// real moofs.

import { FragmentTable } from '../../../origin/model/media';
import { Presentation, PresentationTrack } from '../../../origin/model/presentation';

/** A UTC second on a 2 s grid, past 2^53 ticks at 10 MHz (as real channel times are). */
export const UTC_SECONDS = 1_795_686_050;

/**
 * Time and duration of fragment k of the endless repetition of a track's fragments (`times`,
 * `durations` of one pass), shifted by `shift`: pass ⌊k/n⌋ starts where the previous one ended.
 */
export function repeated(
  times: readonly bigint[],
  durations: readonly bigint[],
  k: number,
  shift: bigint,
): { time: bigint; duration: bigint } {
  const n = times.length;
  const span = times[n - 1]! + durations[n - 1]! - times[0]!;
  return { time: times[k % n]! + BigInt(Math.floor(k / n)) * span + shift, duration: durations[k % n]! };
}

function windowOf(f: FragmentTable, shift: bigint, first: number, count: number): FragmentTable {
  const times = Array.from(f.times);
  const durations = Array.from(f.durations, (d) => BigInt(d));
  const at = Array.from({ length: count }, (_, i) => (first + i) % f.count);
  return {
    count,
    times: BigInt64Array.from(at, (_, i) => repeated(times, durations, first + i, shift).time),
    durations: Float64Array.from(at, (k) => f.durations[k]!),
    offsets: Float64Array.from(at, (k) => f.offsets[k]!),
    sizes: Float64Array.from(at, (k) => f.sizes[k]!),
    keyframes: Uint8Array.from(at, (k) => f.keyframes[k]!),
  };
}

/**
 * `p` on the UTC clock (each track shifted by UTC_SECONDS of its timescale), holding fragments
 * [first, first + count) of the repeated fixture in every track.
 */
export function channelWindow(p: Presentation, first: number, count: number): Presentation {
  const tracks: PresentationTrack[] = p.tracks.map((t) => {
    const shift = BigInt(UTC_SECONDS) * BigInt(t.properties.TimeScale);
    return { ...t, fragments: windowOf(t.fragments, shift, first, count) };
  });
  // The earliest first fragment (what the presentation builder computes), on the same clock.
  const firsts = tracks.map((t) => ({ ticks: t.fragments.times[0]!, timescale: t.properties.TimeScale }));
  const origin = firsts.reduce((a, b) => (a.ticks * BigInt(b.timescale) <= b.ticks * BigInt(a.timescale) ? a : b));
  return { ...p, tracks, origin };
}
