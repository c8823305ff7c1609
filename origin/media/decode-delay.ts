// The decode delay D of a presentation's HDS output (fragment.ts uses it): the largest
// −(composition offset) over every sample of every H.264 track of the .ism, 0 when no offset is
// negative. ISO BMFF sources with B-frames written with signed composition offsets (trun version
// 1, ISO/IEC 14496-12 §8.8.8) present some frames before they are decoded; FLV's CompositionTime
// is meant to be ≥ 0 (decoders take pts < dts as an error), so HDS output presents everything D
// later. D is over all tracks, not the request's (as the presentation origin is), so that every
// media of a presentation, and every filter, shares it: bitrate switches stay seamless and a
// fragment's bytes never depend on a filter.
//
// Finding it reads every moof of every H.264 track once (the sample tables, not the media data);
// the result is kept per track for the life of the loaded presentation.

import { SourceOpener, withSource } from '../io/source';
import { Instant, Presentation, PresentationTrack, compareInstants } from '../model/presentation';
import { readFragmentSamples } from './samples';
import { isHdsVideo } from '../model/hds-media';

const delays = new WeakMap<PresentationTrack, Promise<bigint>>();

/** −(smallest composition offset) of one track in its ticks, or 0. */
function trackDelay(track: PresentationTrack, open: SourceOpener): Promise<bigint> {
  const hit = delays.get(track);
  if (hit !== undefined) return hit;
  const value = withSource(open, track.src, async (source) => {
    let smallest = 0;
    for (let i = 0; i < track.fragments.count; i++) {
      for (const s of await readFragmentSamples(source, track, i, 0n))
        if (s.compositionOffset < smallest) smallest = s.compositionOffset;
    }
    return BigInt(-smallest);
  });
  delays.set(track, value);
  // A failed scan is not kept: the next request tries again.
  value.catch(() => {
    if (delays.get(track) === value) delays.delete(track);
  });
  return value;
}

/** D of `p` (see the header); sources are opened with `open` (io/storage.ts segmentSources). */
export async function presentationDecodeDelay(p: Presentation, open: SourceOpener): Promise<Instant> {
  let best: Instant = { ticks: 0n, timescale: 1 };
  for (const t of p.tracks) {
    if (!isHdsVideo(t)) continue;
    const d: Instant = { ticks: await trackDelay(t, open), timescale: t.properties.TimeScale };
    if (compareInstants(d, best) > 0) best = d;
  }
  return best;
}
