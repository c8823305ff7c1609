// LL-HLS on the serving port (draft-pantos-hls-rfc8216bis §6.2.5-6.2.6): the delivery directives
// of a playlist request, the blocking reload, the LL playlist reply and the part URLs. The
// playlist is written by manifests/hls-low-latency.ts, the parts are laid out by
// model/live-parts.ts; live-playout.ts calls this around the VOD handlers.
//
// Blocking (§6.2.5.2): a request with `_HLS_msn` (and `_HLS_part`) whose part the channel does not
// hold yet waits in the channel's waiter list (live/part-waiters.ts), woken by the publish message
// every serving process already gets (live/fragment-table.ts LivePublished); the request then
// reads the channel again and answers, or waits again. No timer and no thread per request: a
// waiting request is a promise and an entry in a set. The RFC's limits:
// - `_HLS_msn` more than two segments past the last whole one, or `_HLS_part` more than the
//   Advance Part Limit (three seconds of parts) past the newest part: 400 at once;
// - `_HLS_part` without `_HLS_msn`, a value that is not a decimal integer, `_HLS_skip` other than
//   YES or v2, a directive given twice: 400 (bad-delivery-directive);
// - the part not there within three target durations: 503 (reload-timeout), as §6.2.5.2 says;
// - a channel that has ended, or a playlist that is not LL-HLS: the directives are ignored.
// `_HLS_*` parameters are taken out of the query before anything reads it, so no URL the origin
// writes carries them and every blocking request of one version shares one view and one rendered
// playlist. The rendered-playlist cache is per presentation version, and a blocking request
// answers from a version that holds its part: the cache key needs the skip only (msn and part
// select the version, not the text).

import { originError } from '../errors';
import { isLowLatency, writeLowLatencyPlaylist } from '../manifests/hls-low-latency';
import { holdsTarget, partAt, partLayout, PartLayout } from '../model/live-parts';
import { findRendition } from '../model/rendition';
import { Segment } from '../model/timeline';
import { PlayoutView, trackKey, ViewTrack } from '../model/view';
import { canonicalViewKey } from '../cache/manifest-cache';
import { partsCost, readSegmentParts } from '../segments/fmp4/segment-parts';
import { PartWaiters } from '../live/part-waiters';
import { sourceSegmentEtag } from './etag';
import type { Reply, RouteCall, RouteHandler } from './route-handler';
import type { PresentationRequest } from './routes';

/** The delivery directives of a request, and its query without any `_HLS_` parameter. */
export interface DeliveryDirectives {
  query: string;
  msn?: number;
  part?: number;
  skip: boolean;
}

/** Largest `_HLS_msn`/`_HLS_part` read (a number beyond is 400, never rounded). */
const MAX_DIRECTIVE = Number.MAX_SAFE_INTEGER;

/** Splits the `_HLS_*` parameters from a raw query (§6.2.5); unknown `_HLS_` names are dropped. */
export function deliveryDirectives(rawQuery: string): DeliveryDirectives {
  if (!rawQuery.includes('_HLS_')) return { query: rawQuery, skip: false };
  const kept: string[] = [];
  const seen = new Map<string, string>();
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (!name.startsWith('_HLS_')) {
      kept.push(pair);
      continue;
    }
    if (seen.has(name)) throw bad(`${name} is given twice`);
    seen.set(name, eq < 0 ? '' : pair.slice(eq + 1));
  }
  const d: DeliveryDirectives = { query: kept.join('&'), skip: false };
  const msn = seen.get('_HLS_msn');
  const part = seen.get('_HLS_part');
  const skip = seen.get('_HLS_skip');
  if (msn !== undefined) d.msn = integer('_HLS_msn', msn);
  if (part !== undefined) {
    if (msn === undefined) throw bad('_HLS_part needs _HLS_msn (rfc8216bis §6.2.5.2)');
    d.part = integer('_HLS_part', part);
  }
  if (skip !== undefined) {
    if (skip !== 'YES' && skip !== 'v2') throw bad(`_HLS_skip is YES or v2, not "${skip.slice(0, 16)}"`);
    d.skip = true;
  }
  return d;
}

function integer(name: string, text: string): number {
  const n = /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n > MAX_DIRECTIVE)
    throw bad(`${name} is a decimal integer, not "${text.slice(0, 24)}"`, name);
  return n;
}

function bad(message: string, subject = '_HLS_'): Error {
  return originError('bad-delivery-directive', message, { subject });
}

/** The LL-HLS rendition a playlist or part request names, when the view writes LL-HLS for it. */
export function lowLatencyTrack(view: PlayoutView, req: PresentationRequest): ViewTrack | undefined {
  const stem = req.groups.stem;
  if (stem === undefined) return undefined;
  const r = findRendition(view, stem);
  return r !== undefined && isLowLatency(view, r) ? r.tracks[0] : undefined;
}

/** What a request waits for: a part, or (no part) a whole segment. */
export interface BlockTarget {
  msn: number;
  part: number | undefined;
}

/** Where a blocking request waits. */
export interface BlockWait {
  waiters: PartWaiters;
  channel: string;
  /** The channel's publish count (LiveChannels.generation). */
  generation: () => number;
  now: () => number;
  signal?: AbortSignal;
}

/**
 * The view once it holds `target` for the track `track(view)` names: at once when it does (or
 * the track is not LL-HLS, or the channel has ended), else after as many publish messages as it
 * takes; 400 when the target is too far ahead, 503 after three target durations.
 */
export async function untilTarget(
  load: () => Promise<PlayoutView>,
  track: (view: PlayoutView) => ViewTrack | undefined,
  target: BlockTarget,
  wait: BlockWait,
): Promise<PlayoutView> {
  let deadline: number | undefined;
  for (;;) {
    const seen = wait.generation();
    const view = await load();
    const t = track(view);
    if (t === undefined) return view;
    const layout = partLayout(t);
    if (holdsTarget(layout, target.msn, target.part)) return view;
    tooFar(t, layout, target);
    const seconds = Math.max(1, Number(t.segments.longest) / t.track.properties.TimeScale);
    deadline ??= wait.now() + 3 * Math.ceil(seconds) * 1000;
    // A publish while the channel was read: read it again rather than wait for the next one.
    if (wait.generation() !== seen) continue;
    const outcome = await wait.waiters.wait(wait.channel, deadline, wait.signal);
    if (outcome === 'timeout')
      throw originError(
        'reload-timeout',
        `${trackKey(t.track)} segment ${target.msn}${target.part === undefined ? '' : ` part ${target.part}`} did not arrive within three target durations`,
      );
    if (outcome === 'gone') throw originError('client-gone', 'every client of this blocking request has gone');
  }
}

/** §6.2.5.2: more than two segments, or the Advance Part Limit of parts, past the newest: 400. */
function tooFar(t: ViewTrack, layout: PartLayout, target: BlockTarget): void {
  if (target.msn > layout.lastWhole + 2)
    throw bad(`_HLS_msn ${target.msn} is more than two segments past the last (${layout.lastWhole})`, '_HLS_msn');
  if (target.part === undefined) return;
  const partSeconds = Number(layout.longestPart) / t.track.properties.TimeScale;
  // "three divided by the Part Target Duration if [it] is less than one second, or three otherwise"
  const limit = partSeconds > 0 && partSeconds < 1 ? Math.ceil(3 / partSeconds) : 3;
  const ahead = target.msn === layout.last.msn ? target.part - layout.last.part : target.part + 1;
  if (target.msn > layout.last.msn + 1 || ahead > limit)
    throw bad(
      `_HLS_part ${target.part} of segment ${target.msn} is past the Advance Part Limit (${limit} parts after ${layout.last.msn}.${layout.last.part})`,
      '_HLS_part',
    );
}

/** The LL-HLS media playlist of `t`, through the rendered-manifest cache (keyed by the skip too). */
export async function lowLatencyPlaylist(call: RouteCall, t: ViewTrack, skip: boolean): Promise<Reply> {
  const { ctx, req, presentation: p, view } = call;
  const r = findRendition(view, req.groups.stem!)!;
  const tail = `${req.tail}\nskip=${skip}`;
  // The text is a function of (view, rendition, skip) only: every spelling of the URL (a virtual
  // directory, a token in the query) shares one rendering per version, and every request woken for
  // a part shares its bytes.
  const { doc, outcome } = await ctx.manifests.get(
    p,
    `${req.route.kind}\n${tail}\n${call.rawQuery}`,
    canonicalViewKey(view, req.route.kind, `${req.groups.stem!}\nskip=${skip}`),
    () => writeLowLatencyPlaylist(view, r, skip),
    view,
  );
  return {
    contentType: req.route.contentType,
    body: { type: 'text', text: doc.text, bytes: doc.bytes },
    lastModified: new Date(p.mtimeMs),
    etag: doc.etag,
    cacheClass: 'manifest',
    cache: outcome,
  };
}

/** Part `<i>` of segment `<n>` (`hls/<name>-<key>-<n>.part<i>.m4s`): one fragment as moof+mdat. */
export const hlsPart: RouteHandler = async (call) => {
  const { ctx, req, view, presentation: p } = call;
  const t = lowLatencyTrack(view, req);
  const what = `part ${req.groups.n}.${req.groups.i} of "${(req.groups.stem ?? '').slice(0, 128)}"`;
  if (t === undefined)
    throw originError('unknown-url', `no LL-HLS rendition has a ${what} (hls_low_latency, hls_fmp4)`);
  const part = partAt(t, { msn: Number(req.groups.n), part: Number(req.groups.i) });
  if (part === undefined) throw originError('unknown-time', `the channel holds no ${what}`);
  const f = t.track.fragments;
  const time = f.times[part.fragment]!;
  const segment: Segment = {
    sourceTime: time,
    smoothTime: time,
    time: time - BigInt(p.live!.anchorSeconds) * BigInt(t.track.properties.TimeScale),
    duration: part.duration,
    first: part.fragment,
    count: 1,
    bytes: f.sizes[part.fragment]!,
  };
  const key = `${t.track.index}\nfmp4\n${segment.first}\n1\n`;
  const read = await ctx.segments.getAsync(
    p,
    key,
    () => readSegmentParts(ctx.open, t.track, segment, p, 'fmp4'),
    partsCost,
  );
  return {
    contentType: req.route.contentType,
    body: { type: 'parts', file: t.track.src, parts: read.parts, length: read.length },
    lastModified: new Date(p.mtimeMs),
    etag: sourceSegmentEtag({ presentation: p, track: t.track, mode: 'fmp4', segment, fileSize: read.fileSize }),
    cacheClass: 'segment',
  };
};

/** The part a part URL names, as a blocking target (the preload hint's part may not exist yet). */
export function partTarget(req: PresentationRequest): BlockTarget {
  return { msn: Number(req.groups.n), part: Number(req.groups.i) };
}
