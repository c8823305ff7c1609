// The decode delay D of a track: −(smallest composition offset) over every sample of the track,
// 0 when no offset is negative. ISO BMFF sources with B-frames written with signed composition
// offsets (trun version 1, ISO/IEC 14496-12 §8.8.8) present some frames before they are decoded;
// the outputs that need decode times never later than presentation times shift by D:
// - MPEG-TS (segments/mpegts/ts-continuity.ts videoScan): DTS = decode time − D of the video,
//   so that DTS never passes PTS;
// - HDS (segments/f4f/fragment.ts): FLV's CompositionTime is meant to be ≥ 0 (decoders take
//   pts < dts as an error), so HDS output presents everything D later, with D the largest over
//   every H.264 track of the .ism (presentationDecodeDelay), not the request's (as the
//   presentation origin is): every media of a presentation, and every filter, shares it, bitrate
//   switches stay seamless and a fragment's bytes never depend on a filter.
//
// Finding D reads every moof of the track once (the sample tables, not the media data): the one
// scan of a track (scanFragments), which the MPEG-TS continuity counters need too. D is computed
// there and kept per track for the life of the loaded presentation, whichever output scans first.

import { SourceOpener, withSource } from '../io/source';
import { Instant, Presentation, PresentationTrack, compareInstants } from '../model/presentation';
import { outputShift, readFragmentSamples, SourceSample } from './samples';
import { isHdsVideo } from '../model/hds-media';

/** Moofs read at once by the one-time scans (their reads are independent; visits stay in order). */
const SCAN_BATCH = 16;

const delays = new WeakMap<PresentationTrack, Promise<bigint>>();

/**
 * Reads every fragment of a track (metadata only, output times of `p`), SCAN_BATCH moofs at a
 * time, visiting them in order; returns the track's decode delay D, which it keeps for
 * trackDecodeDelay.
 */
export async function scanFragments(
  track: PresentationTrack,
  p: Presentation,
  open: SourceOpener,
  visit: (index: number, samples: SourceSample[]) => void,
): Promise<bigint> {
  let smallest = 0;
  await withSource(open, track.src, async (source) => {
    const shift = outputShift(track, p.origin);
    for (let i = 0; i < track.fragments.count; i += SCAN_BATCH) {
      const batch = Array.from({ length: Math.min(SCAN_BATCH, track.fragments.count - i) }, (_, k) =>
        readFragmentSamples(source, track, i + k, shift),
      );
      // Every read settles before an error is thrown: none is left running on a closed source.
      const settled = await Promise.allSettled(batch);
      settled.forEach((r, k) => {
        if (r.status === 'rejected') throw r.reason;
        for (const s of r.value) if (s.compositionOffset < smallest) smallest = s.compositionOffset;
        visit(i + k, r.value);
      });
    }
  });
  const delay = BigInt(-smallest);
  if (!delays.has(track)) delays.set(track, Promise.resolve(delay));
  return delay;
}

/** D of one track in its ticks (see the header): one scan of its moofs, kept per track. */
export function trackDecodeDelay(track: PresentationTrack, p: Presentation, open: SourceOpener): Promise<bigint> {
  const hit = delays.get(track);
  if (hit !== undefined) return hit;
  const value = scanFragments(track, p, open, () => undefined);
  delays.set(track, value);
  // A failed scan is not kept: the next request tries again.
  value.catch(() => {
    if (delays.get(track) === value) delays.delete(track);
  });
  return value;
}

/** The HDS D of `p` (see the header); sources are opened with `open` (io/storage.ts segmentSources). */
export async function presentationDecodeDelay(p: Presentation, open: SourceOpener): Promise<Instant> {
  let best: Instant = { ticks: 0n, timescale: 1 };
  for (const t of p.tracks) {
    if (!isHdsVideo(t)) continue;
    const d: Instant = { ticks: await trackDecodeDelay(t, p, open), timescale: t.properties.TimeScale };
    if (compareInstants(d, best) > 0) best = d;
  }
  return best;
}
