// What a live media playlist adds where an encoder's outage left its mark (docs/design/live.md,
// "Restarts and gaps"): the discontinuity sequence, and before a segment that does not follow the
// one before, EXT-X-GAP segments and EXT-X-DISCONTINUITY (every live segment has its own date,
// manifests/hls.ts). Pure: a view track in, lines out.

import { ViewTrack } from '../model/view';

/** EXT-X-DISCONTINUITY-SEQUENCE (RFC 8216 §4.3.3.3, §6.2.2): restarts that slid out of the window, once there are any. */
export function discontinuitySequenceLines(t: ViewTrack): string[] {
  const n = t.live?.discontinuitySequence ?? 0;
  return n > 0 ? [`#EXT-X-DISCONTINUITY-SEQUENCE:${n}`] : [];
}

/**
 * What a live playlist writes before segment i > 0 when the timeline breaks there
 * (docs/design/live.md, "Restarts and gaps"): an EXT-X-GAP segment (RFC 8216bis §4.4.4.7) for each
 * grid number with no media, so the media sequence stays on the epoch grid and a client skips the
 * hole instead of asking for it; EXT-X-DISCONTINUITY (RFC 8216 §4.3.2.3) when segment i starts
 * a new run (an encoder restarted with a new anchor). The EXT-X-PROGRAM-DATE-TIME that §4.3.2.6
 * asks for after a discontinuity is there already: the writer dates every live segment.
 * A GAP segment lasts the hole divided among the missing numbers, at most the grid duration
 * (so never past the target duration); its URL is refused as `fragment-missing`. §7 sets no
 * minimum protocol version for EXT-X-GAP: the playlist's version stays.
 */
export function liveBreak(
  t: ViewTrack,
  i: number,
  url: (n: number) => string,
  extinf: (ticks: bigint) => string,
): string[] {
  const s = t.segments;
  const live = t.live!;
  const out: string[] = [];
  const missing = live.numbers[i]! - live.numbers[i - 1]! - 1;
  if (missing > 0) {
    const hole = s.time(i) - s.time(i - 1) - s.duration(i - 1);
    const each = hole > 0n ? hole / BigInt(missing) : live.grid;
    const d = extinf(each < live.grid && each > 0n ? each : live.grid);
    for (let k = 1; k <= missing; k++) out.push(d, '#EXT-X-GAP', url(live.numbers[i - 1]! + k));
  }
  if (live.restart[i] === 1) out.push('#EXT-X-DISCONTINUITY');
  return out;
}
