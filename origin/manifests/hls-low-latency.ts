// The LL-HLS media playlist of a live fMP4 rendition (draft-pantos-hls-rfc8216bis, "LL-HLS"):
// what writeMediaPlaylist (hls.ts) writes for a live channel, plus partial segments. Pure: a
// view in, playlist text out. Written when `hls_low_latency` is on, for fMP4 renditions of a
// channel that has not ended (docs/guide/hls.md#low-latency-hls); everything else is hls.ts's.
//
// - Parts are whole ingest fragments, segments the view's grid segments (model/live-parts.ts).
//   EXT-X-PART lines are written for the segments of the last three target durations
//   (§6.2.2: a server MAY remove parts older than that) and for the segment being ingested;
//   INDEPENDENT=YES on parts that start with a sync sample (§4.4.4.9).
// - EXT-X-PART-INF PART-TARGET is the longest fragment of the window, so that every part's
//   DURATION is at most it (§4.4.3.7); PART-HOLD-BACK is three times it (§4.4.3.8 SHOULD).
// - EXT-X-SERVER-CONTROL says CAN-BLOCK-RELOAD=YES (server/live-low-latency.ts blocks) and, at
//   EXT-X-VERSION 9 or more, CAN-SKIP-UNTIL = six target durations (its minimum, §4.4.3.8): a
//   delta update (`_HLS_skip`) replaces the segments older than that by EXT-X-SKIP (§4.4.5.2,
//   which needs version 9, §7). Date ranges are never skipped (no CAN-SKIP-DATERANGES).
// - EXT-X-PRELOAD-HINT names the next part (§4.4.5.3); the part route waits for it.
// - EXT-X-RENDITION-REPORT for every other fMP4 rendition of the view (§4.4.5.4), with its own
//   newest part.
// - EXT-X-PROGRAM-DATE-TIME on the first segment written (after a skip too): anchor + its exact
//   output time, as hls.ts writes it.

import { hlsSegmentUrlParts, hlsUrls } from './urls';
import { dateRangeLines } from './hls-dateranges';
import { header, playlistVersion, quoted, seconds, targetDuration, uri } from './hls';
import { programDateTime } from './live-dates';
import { Part, partLayout, segmentParts } from '../model/live-parts';
import { Rendition, segmentKind } from '../model/rendition';
import { PlayoutView, trackKey, ViewTrack } from '../model/view';

/** §7: EXT-X-SKIP needs EXT-X-VERSION 9. */
export const VERSION_SKIP = 9;

/** Whether a rendition's playlist is written as LL-HLS. */
export function isLowLatency(view: PlayoutView, r: Rendition): boolean {
  const live = view.presentation.live;
  return (
    live !== undefined &&
    !live.ended &&
    view.options.bool('hls_low_latency') &&
    r.tracks.length === 1 &&
    segmentKind(view, r) === 'm4s'
  );
}

/** The LL-HLS media playlist of a one-track fMP4 rendition; `skip`: a delta update was asked for. */
export function writeLowLatencyPlaylist(view: PlayoutView, r: Rendition, skip: boolean): string {
  const main = r.tracks[0]!;
  const ts = main.track.properties.TimeScale;
  const version = playlistVersion(view);
  const target = targetDuration(main);
  const layout = partLayout(main);
  const partTarget = seconds(layout.longestPart, ts);
  const control = [
    'CAN-BLOCK-RELOAD=YES',
    `PART-HOLD-BACK=${seconds(3n * layout.longestPart, ts)}`,
    ...(version >= VERSION_SKIP ? [`CAN-SKIP-UNTIL=${6 * target}`] : []),
  ];
  const lines = [
    ...header(version),
    `#EXT-X-TARGETDURATION:${target}`,
    `#EXT-X-SERVER-CONTROL:${control.join(',')}`,
    `#EXT-X-PART-INF:PART-TARGET=${partTarget}`,
    `#EXT-X-MEDIA-SEQUENCE:${main.firstNumber}`,
    '#EXT-X-INDEPENDENT-SEGMENTS',
    `#EXT-X-MAP:URI="${quoted(hlsUrls.init(view, r.key))}"`,
    ...dateRangeLines(view, main),
  ];
  const s = main.segments;
  const end = s.end;
  const ticks = BigInt(ts);
  const skipped = skip && version >= VERSION_SKIP ? skippable(main, BigInt(6 * target) * ticks) : 0;
  if (skipped > 0) lines.push(`#EXT-X-SKIP:SKIPPED-SEGMENTS=${skipped}`);
  const live = view.presentation.live!;
  lines.push(`#EXT-X-PROGRAM-DATE-TIME:${programDateTime(live.anchorSeconds, s.time(skipped), ts)}`);
  const [before, after] = hlsSegmentUrlParts(view, r.key, 'm4s');
  const partUrl = (n: number, i: number): string => uri(`${before}${n}.part${i}${after}`);
  const partLines = (n: number, parts: Part[]): string[] =>
    parts.map(
      (p, i) =>
        `#EXT-X-PART:DURATION=${seconds(p.duration, ts)},URI="${quoted(partUrl(n, i))}"${p.independent ? ',INDEPENDENT=YES' : ''}`,
    );
  // Parts for the segments that end within three target durations of the end (§6.2.2).
  const partsFrom = end - BigInt(3 * target) * ticks;
  for (let k = skipped; k < s.count; k++) {
    const n = main.firstNumber + k;
    if (s.time(k) + s.duration(k) > partsFrom) lines.push(...partLines(n, segmentParts(main, k)));
    lines.push(`#EXTINF:${seconds(s.duration(k), ts)},`, uri(before + n + after));
  }
  const growing = layout.lastWhole + 1;
  lines.push(...partLines(growing, layout.growing));
  lines.push(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="${quoted(partUrl(growing, layout.growing.length))}"`);
  for (const other of view.tracks) {
    if (other === main || !reported(other)) continue;
    const last = partLayout(other).last;
    const key = trackKey(other.track);
    lines.push(
      `#EXT-X-RENDITION-REPORT:URI="${quoted(hlsUrls.media(view, key))}",LAST-MSN=${last.msn},LAST-PART=${last.part}`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

/**
 * How many leading segments a delta update skips: those that start more than the skip boundary
 * before the end of the last segment (§6.2.5.1), never the last one.
 */
function skippable(t: ViewTrack, boundary: bigint): number {
  const s = t.segments;
  let k = 0;
  while (k < s.count - 1 && s.end - s.time(k) > boundary) k++;
  return k;
}

/** Renditions with parts of their own: the audio and video tracks (subtitles are WebVTT). */
function reported(t: ViewTrack): boolean {
  const type = t.track.properties.type;
  return type === 'video' || type === 'audio';
}
