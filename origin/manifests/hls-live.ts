// What a live media or I-frame playlist adds where an encoder's outage left its mark
// (docs/design/live.md, "Restarts and gaps"): the discontinuity sequence, and before a segment
// that does not follow the one before, EXT-X-GAP segments and EXT-X-DISCONTINUITY (every live
// media segment has its own date, manifests/hls.ts). Pure: a view track in, lines out.

import { ViewTrack } from '../model/view';
import { IFrameEntry } from './hls-rates';
import { programDateTime } from './live-dates';
import { outputShift } from '../model/live-window';

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
  const hole = s.time(i) - s.time(i - 1) - s.duration(i - 1);
  const out = gapLines({ after: live.numbers[i - 1]!, before: live.numbers[i]!, hole, grid: live.grid }, url, extinf);
  if (live.restart[i] === 1) out.push('#EXT-X-DISCONTINUITY');
  return out;
}

/**
 * What a live I-frame playlist (EXT-X-I-FRAMES-ONLY, RFC 8216 §4.3.3.6) writes before entry k > 0,
 * as liveBreak does for the media playlists: its entries are numbered on the grid of the
 * fragments (model/live-window.ts liveFragmentNumbers), so an empty slot is an EXT-X-GAP entry
 * (RFC 8216bis §4.4.4.7 applies to any Media Segment, and an I-frame playlist's entries are Media
 * Segments) and each entry's media sequence number (§4.3.3.2: its place) is the number its URL
 * carries, in every window; without them, the entries after a hole had one number while it was
 * listed and another once it slid out. The GAP entries tile the hole, so the EXTINF durations add
 * up to the media playlists' timeline. EXT-X-DISCONTINUITY where the entry holds a restart (a
 * fragment of the track's `restarts` after the entry before it).
 */
export function liveIFrameBreak(
  video: ViewTrack,
  pair: { previous: IFrameEntry; entry: IFrameEntry; grid: bigint },
  url: (n: number) => string,
  extinf: (ticks: bigint) => string,
): string[] {
  const { previous, entry, grid } = pair;
  const times = video.track.fragments.times;
  const from = times[previous.fragment]!;
  const to = times[entry.fragment]!;
  const hole = to - from - previous.duration;
  const out = gapLines({ after: previous.n, before: entry.n, hole, grid }, url, extinf);
  if ((video.track.archive?.restarts ?? []).some((r) => r > from && r <= to)) out.push('#EXT-X-DISCONTINUITY');
  return out;
}

/**
 * The EXT-X-PROGRAM-DATE-TIME (RFC 8216 §4.3.2.6) of a live I-frame entry: anchor + its keyframe's
 * output time, as writeMediaPlaylist (hls.ts) dates each segment, so an entry and the media segment
 * it starts carry the same date. Output time = source time + the view's shift (live-window.ts).
 */
export function liveIFrameDate(video: ViewTrack, anchorSeconds: number): (entry: IFrameEntry) => string {
  const shift = outputShift(video.segments);
  const times = video.track.fragments.times;
  const timescale = video.track.properties.TimeScale;
  return (e) => `#EXT-X-PROGRAM-DATE-TIME:${programDateTime(anchorSeconds, times[e.fragment]! + shift, timescale)}`;
}

/**
 * One EXT-X-GAP segment per number strictly between `after` and `before`, each lasting the hole
 * (ticks) shared among them, at most the grid duration (so never past the target duration).
 */
function gapLines(
  at: { after: number; before: number; hole: bigint; grid: bigint },
  url: (n: number) => string,
  extinf: (ticks: bigint) => string,
): string[] {
  const out: string[] = [];
  const missing = at.before - at.after - 1;
  if (missing <= 0) return out;
  const each = at.hole > 0n ? at.hole / BigInt(missing) : at.grid;
  const d = extinf(each < at.grid && each > 0n ? each : at.grid);
  for (let k = 1; k <= missing; k++) out.push(d, '#EXT-X-GAP', url(at.after + k));
  return out;
}
