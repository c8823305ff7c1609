// LL-DASH: the segment being ingested, answered chunk by chunk (issue 23; ISO/IEC 23009-1
// §5.3.9.5.3 availabilityTimeComplete="false", manifests/dash-low-latency.ts). A DASH media URL
// that names the growing segment of a low-latency view (listed from its first chunk, or the next
// one before it has any) gets a reply whose body is the process's shared GrowingSegment
// (live/chunked-segment.ts); http.ts streams it with chunked transfer coding, no Content-Length,
// no ETag and `Cache-Control: no-store`, ending when the segment is whole.
//
// One feeder per growing segment, not per client: it waits in the channel's waiter set
// (live/part-waiters.ts), woken by the publish message every serving process gets, reads the
// channel again (one shared load per version), appends the fragments that arrived, and waits
// again; the segment is whole when the view lists it. Without a new fragment for three segment
// durations it fails: the responses still open are cut (the client sees a truncated body, as
// from a lost connection, and asks again).

import { GrowingSegment, GrowingSegments } from '../live/chunked-segment';
import { withSource, SourceOpener } from '../io/source';
import { isDashLowLatency } from '../manifests/dash-low-latency';
import { partLayout } from '../model/live-parts';
import { gridDuration } from '../model/live-window';
import { Presentation, ticksIn } from '../model/presentation';
import { Segment } from '../model/timeline';
import { PlayoutView, trackKey, ViewTrack } from '../model/view';
import { assembleSegment } from '../segments/fmp4/media-segment';
import { readSegmentParts } from '../segments/fmp4/segment-parts';
import { PartWaiters } from '../live/part-waiters';
import type { Reply } from './route-handler';
import type { PresentationRequest } from './routes';

/** What the feeder needs of the channel: its view, waiters, publish count and segment opener. */
export interface GrowingSource {
  load: () => Promise<PlayoutView>;
  /** How a presentation's live track sources open (live-playout.ts liveOpener). */
  openerFor: (p: Presentation) => SourceOpener;
  waiters: PartWaiters;
  channel: string;
  generation: () => number;
  now: () => number;
}

/** Where a segment's fragments stand in a view. */
type Standing = { fragments: number[]; whole: boolean } | 'not-yet' | 'gone';

/**
 * The growing-segment reply for a DASH media segment request, or undefined when the URL names
 * anything else (the caller then refuses it as the live status table says).
 */
export function growingSegmentReply(
  view: PlayoutView,
  req: PresentationRequest,
  segments: GrowingSegments,
  source: GrowingSource,
): Reply | undefined {
  if (req.route.format !== 'dash' || !isDashLowLatency(view)) return undefined;
  const m = /^(.*)-(\d{1,20})$/.exec(req.groups.stem ?? '');
  // As handlers.ts names a track: the stem is `<key>` or `<name>-<key>`.
  const named = (key: string): boolean => m![1] === key || m![1]!.endsWith(`-${key}`);
  const t = m === null ? undefined : view.tracks.find((x) => named(trackKey(x.track)));
  if (m === null || t === undefined || t.segments.count === 0) return undefined;
  const start = nextSegmentStart(view, t, BigInt(m[2]!));
  if (start === undefined) return undefined;
  const key = `${source.channel}\n${req.tail}\n${trackKey(t.track)}\n${start}`;
  const g = segments.get(`${key}\n${view.options.str('mpd_segment_template')}`, (seg) =>
    feed(seg, source, trackKey(t.track), start),
  );
  return {
    contentType: req.route.contentType,
    body: { type: 'bytes', bytes: new Uint8Array(0) },
    growing: g,
    lastModified: new Date(view.presentation.mtimeMs),
    etag: '',
    cacheClass: 'segment',
    cacheControl: 'no-store',
  };
}

/**
 * The output time of the segment after the last whole one, when `n` (a `$Time$`, or a `$Number$`
 * with mpd_segment_template=number) names it: its first fragment's time, or, before it has one,
 * the last whole segment's end.
 */
function nextSegmentStart(view: PlayoutView, t: ViewTrack, n: bigint): bigint | undefined {
  const growing = partLayout(t).growing;
  const ts = t.track.properties.TimeScale;
  const start =
    growing.length > 0
      ? t.track.fragments.times[growing[0]!.fragment]! - ticksIn(view.presentation.origin, ts)
      : t.segments.end;
  const byNumber = view.options.str('mpd_segment_template') === 'number';
  const named = byNumber ? n === BigInt(t.firstNumber + t.segments.count) : n === start;
  return named ? start : undefined;
}

/** Appends the segment's fragments as the channel publishes them, until it is whole or gone. */
async function feed(g: GrowingSegment, source: GrowingSource, key: string, start: bigint): Promise<void> {
  const times: bigint[] = [];
  let deadline: number | undefined;
  for (;;) {
    const seen = source.generation();
    const view = await source.load();
    const t = view.tracks.find((x) => trackKey(x.track) === key);
    const standing = t === undefined ? 'gone' : standingOf(view, t, start);
    if (standing === 'gone') return g.fail();
    if (standing !== 'not-yet') {
      const f = t!.track.fragments;
      // The fragments appended so far must still be the segment's first ones.
      if (standing.fragments.slice(0, times.length).some((i, k) => f.times[i] !== times[k])) return g.fail();
      for (const i of standing.fragments.slice(times.length)) {
        const p = view.presentation;
        g.append(await fragmentBytes(source.openerFor(p), p, t!, i, times.length === 0));
        times.push(f.times[i]!);
        deadline = undefined;
      }
      if (standing.whole) return g.complete();
    }
    const seconds = Math.max(1, Number(gridDuration(t!.segments)) / t!.track.properties.TimeScale);
    deadline ??= source.now() + 3 * Math.ceil(seconds) * 1000;
    if (source.generation() !== seen) continue;
    const outcome = await source.waiters.wait(source.channel, deadline);
    if (outcome !== 'published') return g.fail();
  }
}

/** The segment starting at `start` in the view: whole, growing, not begun yet, or not there. */
function standingOf(view: PlayoutView, t: ViewTrack, start: bigint): Standing {
  const s = t.segments;
  const k = s.indexOfTime(start);
  if (k >= 0) {
    const seg = s.segment(k);
    return { fragments: Array.from({ length: seg.count }, (_, i) => seg.first + i), whole: true };
  }
  if (view.live?.ended === true) return 'gone';
  const growing = partLayout(t).growing;
  const ts = t.track.properties.TimeScale;
  const shift = ticksIn(view.presentation.origin, ts);
  if (growing.length > 0 && t.track.fragments.times[growing[0]!.fragment]! - shift === start)
    return { fragments: growing.map((p) => p.fragment), whole: false };
  return growing.length === 0 && s.end === start ? 'not-yet' : 'gone';
}

/**
 * Fragment `i` of the track as the bytes it adds to its segment: the DASH segment writer's own
 * output for a segment of that one fragment (segments/fmp4/segment-parts.ts), without its styp
 * unless it is the segment's first.
 */
async function fragmentBytes(
  open: SourceOpener,
  p: Presentation,
  t: ViewTrack,
  i: number,
  first: boolean,
): Promise<Uint8Array> {
  const track = t.track;
  const f = track.fragments;
  const time = f.times[i]!;
  const segment: Segment = {
    sourceTime: time,
    smoothTime: time,
    time: time - ticksIn(p.origin, track.properties.TimeScale),
    duration: BigInt(f.durations[i]!),
    first: i,
    count: 1,
    bytes: f.sizes[i]!,
  };
  const read = await readSegmentParts(open, track, segment, p, 'fmp4');
  const bytes = await withSource(open, track.src, (src) => assembleSegment(src, read.parts));
  if (first) return bytes;
  if (String.fromCharCode(...bytes.subarray(4, 8)) !== 'styp') throw new Error('a segment part without its styp');
  return bytes.subarray(Buffer.from(bytes.buffer, bytes.byteOffset, 4).readUInt32BE(0));
}
