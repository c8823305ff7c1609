// Live Smooth fragments, and why a live Smooth or HDS fragment URL is refused. A live Smooth
// fragment is always reboxed with a fresh tfxd and a tfrf of the next `lookahead_fragments`
// fragments (segments/fmp4/segment-parts.ts SmoothLiveMode); it is served only once those
// successors exist, which is the rule the manifest lists chunks by (model/lookahead.ts), so a
// client never asks for a fragment whose tfrf would promise less than the manifest did.
// live-playout.ts calls these for a channel; VOD keeps the route table's handlers.

import { LiveFragmentCode } from '../error-codes';
import { liveFragmentError, OriginError, originError } from '../errors';
import { smoothLiveOf } from '../manifests/smooth';
import { findMedia } from '../model/hds-media';
import { listedChunks, lookaheadOf } from '../model/lookahead';
import type { SegmentList } from '../model/segment-list';
import { PlayoutView, trackKey, ViewTrack } from '../model/view';
import { partsCost, readSegmentParts } from '../segments/fmp4/segment-parts';
import type { RouteHandler } from './route-handler';
import type { PresentationRequest } from './routes';

function smoothTrack(view: PlayoutView, req: PresentationRequest): ViewTrack {
  const g = req.groups;
  const t = view.tracks.find(
    (x) => x.track.properties.trackName === g.track && String(x.track.properties.systemBitrate) === g.bitrate,
  );
  if (t === undefined)
    throw originError(
      'unknown-track',
      `no track ${g.track} at bitrate ${g.bitrate} in this channel (or the filter removed it)`,
    );
  return t;
}

/** `QualityLevels(<bitrate>)/Fragments(<track>=<time>)` of a channel: a listed chunk, with its tfrf. */
export const liveSmoothFragment: RouteHandler = async ({ ctx, req, view }) => {
  const p = view.presentation;
  // Live Smooth encryption (PIFF with a tfrf) is not built: never serve clear what should not be.
  if (p.protection !== undefined) throw originError('unsupported-media', 'live Smooth output is not encrypted yet');
  const t = smoothTrack(view, req);
  const look = smoothLiveOf(view)!;
  const s = t.segments;
  const index = chunkAt(s, BigInt(req.groups.time!), listedChunks(s, look));
  if (index < 0 || index >= listedChunks(s, look)) throw smoothRefusal(t, look, BigInt(req.groups.time!));
  const segment = s.segment(index);
  const next = lookaheadOf(s, index, look);
  // The bytes depend on the fragment and on its successors (the tfrf), known once listed.
  const key = `${t.track.index}\nsmooth-live\n${segment.first}\n${segment.count}\n${next.map((x) => x.time).join(',')}`;
  const mode = { kind: 'smooth-live' as const, lookahead: look.count, next };
  const read = await ctx.segments.getAsync(
    p,
    key,
    () => readSegmentParts(ctx.open, t.track, segment, p, mode),
    partsCost,
  );
  return {
    contentType: req.route.contentType,
    body: { type: 'parts', file: t.track.src, parts: read.parts, length: read.length },
    lastModified: new Date(p.mtimeMs),
    // live-playout.ts gives live segments their ETag.
    etag: '',
    cacheClass: 'segment',
  };
};

/**
 * The listed chunk a requested time names: exactly, or within the spacing of doubles at that
 * magnitude. A UTC time at 10 MHz is past 2^53, and dash.js keeps a time it learns from a tfrf
 * (codem-isoboxer reads 64-bit fields into a Number) rounded to a double; the next fragment's
 * URL then names a time a few ticks off, which is still that fragment and no other.
 */
function chunkAt(s: SegmentList, time: bigint, listed: number): number {
  const exact = s.indexOfTime(time, 'smooth');
  if (exact >= 0 || time < 2n ** 53n) return exact;
  const ulp = 1n << BigInt(time.toString(2).length - 53);
  let lo = 0;
  let hi = listed;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (s.smoothTime(mid) + ulp < time) lo = mid + 1;
    else hi = mid;
  }
  return lo < listed && s.smoothTime(lo) - time <= ulp ? lo : -1;
}

/** A Smooth time the listed chunks do not hold: older than the window, past the listed edge, or a gap. */
function smoothRefusal(t: ViewTrack, look: { count: number; ended: boolean }, time: bigint): OriginError {
  const s = t.segments;
  const listed = listedChunks(s, look);
  const what = `${trackKey(t.track)} time ${time}`;
  let code: LiveFragmentCode = 'fragment-missing';
  if (time < s.smoothTime(0)) code = 'fragment-expired';
  else if (listed === 0 || time > s.smoothTime(listed - 1)) code = 'fragment-not-yet';
  const why = {
    'fragment-expired': 'is older than the DVR window',
    'fragment-not-yet': 'is past the live edge (or its lookahead is not archived yet)',
    'fragment-missing': 'is not in the archive (a gap)',
  };
  return liveFragmentError(code, 'smooth', `${what} ${why[code]}`);
}

/** An HDS `Seg1-Frag<n>` the channel's bootstrap does not list, by the channel's numbering. */
export function hdsRefusal(view: PlayoutView, req: PresentationRequest, e: OriginError): OriginError {
  const m = findMedia(view, req.groups.stem ?? '');
  const n = Number(req.groups.fragment);
  if (m === undefined || req.groups.segment !== '1' || !Number.isSafeInteger(n)) return e;
  const first = m.timeline.firstNumber;
  const last = first + m.timeline.segments.count - 1;
  const what = `${m.key} fragment ${n}`;
  if (n < first) return liveFragmentError('fragment-expired', 'hds', `${what} is older than the DVR window`);
  if (n > last) return liveFragmentError('fragment-not-yet', 'hds', `${what} is past the live edge`);
  return e;
}
