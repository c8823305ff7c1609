// Turns a matched presentation URL into a reply: manifests through the pure writers, segments as
// a list of byte parts (small rewritten boxes + file ranges that the HTTP layer streams). No HTTP
// types here: the same code answers `origin serve` and the CLI dry run. handlePlayout loads the
// presentation and the view, then calls the route's handler (routes.ts ROUTES names one a route).

import { OriginError, originError } from '../errors';
import { writeMpd } from '../manifests/dash';
import { writeIFramePlaylist, writeMasterPlaylist, writeMediaPlaylist } from '../manifests/hls';
import { liveIFrameFragment } from '../manifests/hls-rates';
import { writeSmoothManifest } from '../manifests/smooth';
import { writeHdsManifest } from '../manifests/hds';
import { hdsFragmentRequest } from '../segments/f4f/fragment-samples';
import { presentationDecodeDelay } from '../media/decode-delay';
import { writeInitSegment } from '../segments/fmp4/init-segment';
import { partsCost, readSegmentParts } from '../segments/fmp4/segment-parts';
import { segmentEmsg, withEmsg } from '../segments/fmp4/emsg';
import { encryptedSegmentCost, inClearLead, trackEncryption } from '../segments/fmp4/encrypted-segment';
import { checkFormatProtected, checkHlsProtected } from '../drm/refusals';
import { aes128, aes128Of, cencOf, sampleAesOf } from './protection-of';
import { isEncryptedTrack } from '../drm/encrypted-tracks';
import { assembleSegment } from '../segments/fmp4/media-segment';
import { SourceOpener, withSource } from '../io/source';
import { trackHeaderOf } from '../media/moov';
import { canonicalViewKey, ManifestOutcome, RenderedManifest } from '../cache/manifest-cache';
import { Presentation } from '../model/presentation';
import { liveSegmentIndex, PlayoutView, segmentNumber, trackKey, viewForQuery, ViewTrack } from '../model/view';
import { derived } from '../model/view-derived';
import { findRendition, SegmentKind, segmentKind, videoOf } from '../model/rendition';
import { numberingTrack, packedAudio, tsSegment, webvttText } from '../segments/hls-segments';
import { keyframeFmp4, keyframeTs } from '../segments/iframe-segments';
import { BufferLoan, segmentReadBuffers } from '../io/buffers';
import type { PresentationRequest } from './routes';
import { PlayoutContext, Reply, RouteCall, RouteHandler } from './route-handler';

// The entry for callers without HTTP (the server, the CLI dry run, the warm-up, the benches): the
// context to make once, handlePlayout, and what it gives.
export { newPlayoutContext } from './route-handler';
export type { Part, PlayoutContext, Reply, RouteHandler } from './route-handler';
import { contentEtag, generatedSegmentEtag, sourceSegmentEtag } from './etag';
import { onceMoreIfChanged, pinnedPlayout } from './remote-playout';

/** Estimated bytes of a view: its segment objects dominate. */
function viewCost(view: PlayoutView): number {
  return 1024 + view.tracks.reduce((n, t) => n + 64 + t.segments.count * 160, 0);
}

/** The request line as the manifest cache's first key (the presentation is keyed by identity). */
function requestKey(req: PresentationRequest, rawQuery: string): string {
  return `${req.route.kind}\n${req.tail}\n${rawQuery}`;
}

/**
 * The reply to a manifest request answered before, synchronously, when everything it rests on is
 * known and current (PresentationStore.peek: the stats within their TTL, the presentation and its
 * indexes loaded) and the rendered-manifest cache holds this request line; else undefined and the
 * caller goes through handlePlayout. The same reply handlePlayout would give, without a promise.
 */
export function cachedManifest(
  ctx: PlayoutContext,
  req: PresentationRequest,
  absoluteIsm: string,
  rawQuery: string,
): Reply | undefined {
  if (req.route.cacheClass !== 'manifest') return undefined;
  const p = ctx.store.peek(absoluteIsm);
  if (p === undefined) return undefined;
  const hit = ctx.manifests.forRequest(p, requestKey(req, rawQuery));
  return hit === undefined ? undefined : manifestReply(req, p, hit, 'hit');
}

/** `absoluteIsm` is the file; `req.ismPath` the URL path shown in messages. */
export function handlePlayout(
  ctx: PlayoutContext,
  req: PresentationRequest,
  absoluteIsm: string,
  rawQuery: string,
  signal?: AbortSignal,
): Promise<Reply> {
  if (ctx.store.storage.remote === undefined) return playout(ctx, req, absoluteIsm, rawQuery, signal);
  return onceMoreIfChanged(ctx, absoluteIsm, () => playout(ctx, req, absoluteIsm, rawQuery, signal));
}

async function playout(
  ctx: PlayoutContext,
  req: PresentationRequest,
  absoluteIsm: string,
  rawQuery: string,
  signal: AbortSignal | undefined,
): Promise<Reply> {
  const p =
    ctx.store.peek(absoluteIsm) ??
    (await ctx.store.presentation(absoluteIsm).catch((e: unknown) => {
      if (e instanceof OriginError && e.kind === 'not-found' && e.subject === absoluteIsm) {
        throw originError('unknown-presentation', `no presentation at ${req.ismPath}`);
      }
      throw e;
    }));
  checkFormatProtected(p, req.route.format);
  // Fast path: this exact request line was answered before (no query parse, no filter, no render).
  const hit = req.route.cacheClass === 'manifest' ? ctx.manifests.forRequest(p, requestKey(req, rawQuery)) : undefined;
  if (hit !== undefined) return manifestReply(req, p, hit, 'hit');
  const view = ctx.views.get(
    p,
    `${req.route.format}\n${rawQuery}`,
    () => viewForQuery(p, req.route.format, rawQuery, ctx.select),
    viewCost,
  );
  if (req.route.format === 'hls') checkHlsProtected(view, req.route.kind);
  // Remote storage (server/remote-playout.ts): sources pinned to their indexed versions, read whole.
  const versions = ctx.store.sourceVersions(p);
  const handle = (c: PlayoutContext): Promise<Reply> =>
    req.route.handler({ ctx: c, req, presentation: p, view, rawQuery, signal });
  return versions === undefined ? handle(ctx) : pinnedPlayout(ctx, versions, handle);
}

export const smoothManifest: RouteHandler = (call) => manifest(call, () => writeSmoothManifest(call.view));

export const dashMpd: RouteHandler = (call) => manifest(call, () => writeMpd(call.view));

/** The master playlist, or the media playlist of the rendition the stem names. */
export const hlsPlaylist: RouteHandler = (call) => {
  const view = call.view;
  const r = findRendition(view, call.req.groups.stem!);
  return manifest(call, () => (r === undefined ? writeMasterPlaylist(view) : writeMediaPlaylist(view, r)));
};

export const hlsIFramePlaylist: RouteHandler = async (call) => {
  const { view, req } = call;
  const r = findRendition(view, req.groups.stem!);
  if (r === undefined) throw unknownTrack(`in "${req.groups.stem!.slice(0, 128)}"`);
  return manifest(call, () => writeIFramePlaylist(view, r));
};

export const hdsManifest: RouteHandler = (call) =>
  manifest(call, () => writeHdsManifest(call.view, call.req.groups.stem!));

/** HDS fragments, identity ETag (etag.ts) with the presentation's decode delay D (f4f/fragment.ts). */
export const hdsFragment: RouteHandler = ({ ctx, req, view, signal }) =>
  ctx.generation.run(async () => {
    const g = req.groups;
    const sources = new SourceSizes(ctx.open);
    const { bytes, media, fragment } = await hdsFragmentRequest(view, g.stem!, g.segment!, g.fragment!, sources.open);
    const d = media.video === undefined ? undefined : await presentationDecodeDelay(view.presentation, ctx.open);
    const tracks = [media.video, media.audio].filter((t): t is ViewTrack => t !== undefined);
    return generatedReplyWithEtag(
      req,
      view,
      bytes,
      generatedSegmentEtag({
        view,
        viewKey: viewKeyOf(view),
        kind: 'hds',
        tracks,
        sourceSizes: sources.sizes,
        segment: `${media.key}:${fragment}/${media.timeline.segments.count}:${d === undefined ? '-' : `${d.ticks}/${d.timescale}`}`,
      }),
    );
  }, signal);

/** DASH init and media segments, media by `$Time$` or (`mpd_segment_template=number`) `$Number$`. */
export const dashSegment: RouteHandler = (call) =>
  fmp4InitOrMediaSegment(call, call.view.options.str('mpd_segment_template') === 'number' ? 'number' : 'time');

export const hlsFmp4Segment: RouteHandler = (call) => fmp4InitOrMediaSegment(call, 'hls-number');

/** MPEG-TS, packed audio or WebVTT segments: the route's extension names the kind it serves. */
export function hlsSegment(kind: SegmentKind): RouteHandler {
  return (call) => call.ctx.generation.run(() => generatedHlsSegment(call, kind), call.signal);
}

/** I-frame segments as MPEG-TS or as moof+mdat. */
export function iframeSegment(kind: 'ts' | 'm4s'): RouteHandler {
  return (call) => call.ctx.generation.run(() => generatedIFrameSegment(call, kind), call.signal);
}

async function manifest(call: RouteCall, render: () => string): Promise<Reply> {
  const { ctx, req, presentation: p, view, rawQuery } = call;
  // Keys and their correctness: cache/manifest-cache.ts.
  // A view's canonical key per (route, tail): the sort and join once per view, not per request.
  const canonical = derived(view, `canonical key\n${req.route.kind}\n${req.tail}`, () =>
    canonicalViewKey(view, req.route.kind, req.tail),
  );
  const { doc, outcome } = await ctx.manifests.get(p, requestKey(req, rawQuery), canonical, render, view);
  return manifestReply(req, p, doc, outcome);
}

function manifestReply(
  req: PresentationRequest,
  p: Presentation,
  doc: RenderedManifest,
  cache: ManifestOutcome,
): Reply {
  return {
    contentType: req.route.contentType,
    body: { type: 'text', text: doc.text, bytes: doc.bytes },
    lastModified: new Date(p.mtimeMs),
    etag: doc.etag,
    cacheClass: 'manifest',
    cache,
  };
}

/** The view track whose key ends the stem (`<name>-<key>` or exactly `<key>`). */
function findKeySuffix(view: PlayoutView, stem: string): ViewTrack | undefined {
  return view.tracks.find((t) => {
    const key = trackKey(t.track);
    return stem === key || stem.endsWith(`-${key}`);
  });
}

function unknownTrack(what: string): OriginError {
  return originError('unknown-track', `no track ${what} in this presentation (or the filter removed it)`);
}

export const smoothFragment: RouteHandler = async (call) => {
  const g = call.req.groups;
  const view = call.view;
  const t = view.tracks.find(
    (x) => x.track.properties.trackName === g.track && String(x.track.properties.systemBitrate) === g.bitrate,
  );
  if (t === undefined) throw unknownTrack(`${g.track} at bitrate ${g.bitrate}`);
  const time = BigInt(g.time!);
  const index = t.segments.indexOfTime(time, 'smooth');
  if (index < 0) throw originError('unknown-time', `no fragment of ${g.track} starts at ${time}`);
  return segmentReply(call, t, index, 'smooth');
};

/**
 * fMP4 media segments by `$Time$`, by DASH `$Number$` (from 1 in every view) or by HLS number
 * (the unclipped presentation's, ViewTrack firstNumber), and init segments.
 */
async function fmp4InitOrMediaSegment(call: RouteCall, numbering: 'time' | 'number' | 'hls-number'): Promise<Reply> {
  const { req, view } = call;
  const stem = req.groups.stem!;
  const init = findKeySuffix(view, stem);
  if (init !== undefined) return initReply(call, init);
  const m = /^(.*)-(\d{1,20})$/.exec(stem);
  const t = m === null ? undefined : findKeySuffix(view, m[1]!);
  if (m === null || t === undefined) throw unknownTrack(`in "${stem.slice(0, 128)}"`);
  if (numbering === 'hls-number') return segmentReply(call, t, segmentIndex(m[2]!, t, trackKey(t.track)), 'fmp4');
  // `$Number$` counts from 1 per view, a live channel's on its grid (manifests/dash.ts gapSlots).
  if (numbering === 'number' && t.live !== undefined)
    return segmentReply(call, t, liveSegmentIndex(t, m[2]!, trackKey(t.track)), 'fmp4');
  const n = BigInt(m[2]!);
  const index = numbering === 'number' ? Number(n) - 1 : t.segments.indexOfTime(n);
  if (index < 0 || index >= t.segments.count) {
    const what = numbering === 'number' ? `segment ${n} (there are ${t.segments.count})` : `segment at time ${n}`;
    throw originError('unknown-time', `no ${what} for ${trackKey(t.track)}`);
  }
  return segmentReply(call, t, index, 'fmp4');
}

/**
 * An HLS segment number `<n>` as an index into a view track's segments, or 404 unknown-time: as the
 * unclipped presentation numbers them (firstNumber), a live channel on its grid (liveSegmentIndex).
 */
function segmentIndex(nText: string, t: ViewTrack, what: string): number {
  if (t.live !== undefined) return liveSegmentIndex(t, nText, what);
  return numberIndex(nText, t.firstNumber, t.segments.count, 'segment', what);
}

/** `<n>` among `count` items numbered from `first`, as an index from 0, or 404 unknown-time. */
function numberIndex(nText: string, first: number, count: number, noun: string, what: string): number {
  const n = Number(nText);
  if (!Number.isSafeInteger(n) || n < first || n >= first + count) {
    const range =
      first === 1 ? `there are ${count}, numbered from 1` : `this request has ${first} to ${first + count - 1}`;
    throw originError('unknown-time', `no ${noun} ${nText} for ${what} (${range})`);
  }
  return n - first;
}

/**
 * MPEG-TS, packed audio and WebVTT segments: generated bytes (segments/hls-segments.ts). `wanted`:
 * the kind the route serves, which must be the rendition's (model/rendition.ts segmentKind).
 */
async function generatedHlsSegment(call: RouteCall, wanted: SegmentKind): Promise<Reply> {
  const { ctx, req, view } = call;
  const { stem, n: nText } = req.groups as { stem: string; n: string };
  const r = findRendition(view, stem);
  if (r === undefined) throw unknownTrack(`in "${stem.slice(0, 128)}"`);
  const kind = segmentKind(view, r);
  if (kind !== wanted) {
    const mode = view.options.bool('hls_fmp4') ? 'hls_fmp4=true' : 'hls_fmp4=false';
    throw originError('unknown-url', `${r.key} has .${kind} segments with ${mode}, not .${wanted}`);
  }
  const numbering = numberingTrack(r);
  const index = segmentIndex(nText, numbering, r.key);
  const sources = new SourceSizes(ctx.open);
  const open = sources.open;
  // TS and packed audio output is lent from the segment buffer pool (io/buffers.ts BufferLoan).
  let loan: BufferLoan | undefined;
  const lend = (size: number): Uint8Array => (loan = BufferLoan.take(segmentReadBuffers, size)).bytes;
  // SAMPLE-AES (drm/sample-aes-ts.ts) is written by the segment writers; WebVTT stays clear.
  const sampleAes = kind === 'webvtt' ? undefined : sampleAesOf(view);
  const generated =
    kind === 'webvtt'
      ? await webvttText(view, r, index, open)
      : kind === 'ts'
        ? await tsSegment(view, r, index, open, { allocate: lend, sampleAes })
        : await packedAudio(view, r, index, open, { allocate: lend, sampleAes });
  // AES-128 (drm/aes128.ts): the segment encrypted into a new buffer; the lent one goes back.
  let content = generated;
  if (kind !== 'webvtt' && aes128Of(view) !== undefined && typeof generated !== 'string') {
    content = aes128(view, Number(nText), generated);
    loan?.share(0);
    loan = undefined;
  }
  const s = numbering.segments.segment(index);
  return generatedReplyWithEtag(
    req,
    view,
    content,
    generatedSegmentEtag({
      view,
      viewKey: viewKeyOf(view),
      kind,
      tracks: r.tracks,
      sourceSizes: sources.sizes,
      segment: `${r.key}:${index}/${numbering.segments.count}:${s.first}:${s.count}:${s.time}:${s.duration}`,
    }),
    loan,
  );
}

/**
 * I-frame segments: the keyframe starting source fragment `<n>` (from 1, the unclipped
 * presentation's numbering, as writeIFramePlaylist writes it) of a video track; a fragment
 * outside the view's is 404 unknown-time.
 */
async function generatedIFrameSegment(call: RouteCall, kind: 'ts' | 'm4s'): Promise<Reply> {
  const { ctx, req, view } = call;
  const { stem, n: nText } = req.groups as { stem: string; n: string };
  const r = findRendition(view, stem);
  const video = r !== undefined && r.tracks.length === 1 ? videoOf(r) : undefined;
  if (video === undefined)
    throw unknownTrack(`with keyframes in "${stem.slice(0, 128)}" (I-frame segments exist for video tracks)`);
  const segments = video.segments;
  const first = segments.first(0);
  const last = segments.segment(segments.count - 1);
  // keyframeTs/keyframeFmp4 count the view's fragments from 1; a live entry's n is on the epoch grid.
  const live = video.live === undefined ? undefined : liveIFrameFragment(video, nText) - first + 1;
  const n =
    live ?? numberIndex(nText, first + 1, last.first + last.count - first, 'keyframe', trackKey(video.track)) + 1;
  const sources = new SourceSizes(ctx.open);
  // SAMPLE-AES: fMP4 only (drm/refusals.ts), the keyframe encrypted as in its media segment.
  // AES-128: the I-frame segment whole, IV its number (the one its I-frame playlist's key line gives).
  const protection = kind === 'm4s' ? cencOf(call, video.track) : undefined;
  let loan: BufferLoan | undefined;
  const lend = (size: number): Uint8Array => (loan = BufferLoan.take(segmentReadBuffers, size)).bytes;
  let content =
    kind === 'ts'
      ? await keyframeTs(view, video, n, sources.open, lend)
      : await keyframeFmp4(view, video, n, sources.open, protection);
  if (aes128Of(view) !== undefined && isEncryptedTrack(video.track)) {
    content = aes128(view, Number(nText), content);
    loan?.share(0);
    loan = undefined;
  }
  return generatedReplyWithEtag(
    req,
    view,
    content,
    generatedSegmentEtag({
      view,
      viewKey: viewKeyOf(view),
      kind: `iframe-${kind}`,
      tracks: [video],
      sourceSizes: sources.sizes,
      segment: `${trackKey(video.track)}:${first}:${n}`,
    }),
    loan,
  );
}

/** The sizes of the sources a segment writer opened (part of its segment's ETag), at no extra I/O. */
class SourceSizes {
  readonly sizes = new Map<string, number>();
  constructor(private readonly opener: SourceOpener) {}
  readonly open: SourceOpener = async (path) => {
    const source = await this.opener(path);
    this.sizes.set(path, source.size);
    return source;
  };
}

/** canonicalViewKey's every view input (options, clip, tracks, name, queries), once per view (model/view-derived.ts). */
function viewKeyOf(view: PlayoutView): string {
  return derived(view, 'canonical key\ngenerated-segment\n', () => canonicalViewKey(view, 'generated-segment', ''));
}

/**
 * A generated segment's reply with the ETag its caller made (etag.ts generatedSegmentEtag). `loan`:
 * where `content`'s bytes are lent from (the server lets go of it as its responses close).
 */
function generatedReplyWithEtag(
  req: PresentationRequest,
  view: PlayoutView,
  content: Uint8Array | string,
  etag: string,
  loan?: BufferLoan,
): Reply {
  return {
    contentType: req.route.contentType,
    body:
      typeof content === 'string'
        ? { type: 'text', text: content }
        : { type: 'bytes', bytes: content, ...(loan === undefined ? {} : { loan }) },
    lastModified: new Date(view.presentation.mtimeMs),
    etag,
    cacheClass: 'segment',
  };
}

function initReply(call: RouteCall, t: ViewTrack): Reply {
  const { req, view } = call;
  const protection = cencOf(call, t.track);
  const encryption = protection === undefined ? undefined : trackEncryption(t.track, protection);
  const init = writeInitSegment(trackHeaderOf(t.track), encryption === undefined ? {} : { encryption });
  const aesInit = req.route.format === 'hls' && aes128Of(view) !== undefined && isEncryptedTrack(t.track);
  const bytes = aesInit ? aes128(view, 0, init) : init;
  const p = view.presentation;
  return {
    contentType: req.route.contentType,
    body: { type: 'bytes', bytes },
    lastModified: new Date(p.mtimeMs),
    etag: contentEtag(bytes),
    cacheClass: 'segment',
  };
}

async function segmentReply(call: RouteCall, t: ViewTrack, index: number, mode: 'smooth' | 'fmp4'): Promise<Reply> {
  const { ctx, req, view } = call;
  const segment = t.segments.segment(index);
  const p = view.presentation;
  // HLS fMP4 and live DASH carry timed metadata as emsg boxes (segments/fmp4/emsg.ts); VOD DASH
  // lists it in the MPD (manifests/dash-events.ts), so its segments stay as they are.
  const hls = mode === 'fmp4' && req.route.format === 'hls';
  const { events, etag: withEvents } = segmentEmsg(view, t, index, mode === 'fmp4' ? req.route.format : undefined);
  const identity = { presentation: p, track: t.track, mode, segment };
  if (hls && aes128Of(view) !== undefined && isEncryptedTrack(t.track)) {
    // AES-128: the whole segment, read and encrypted (one segment in memory, like TS).
    const read = await readSegmentParts(ctx.open, t.track, segment, p, mode);
    const { parts } = withEmsg(read.parts, read.length, events);
    const clear = await withSource(ctx.open, t.track.src, (source) => assembleSegment(source, parts));
    return {
      contentType: req.route.contentType,
      body: { type: 'bytes', bytes: aes128(view, segmentNumber(t, index), clear) },
      lastModified: new Date(p.mtimeMs),
      etag: sourceSegmentEtag({ ...identity, fileSize: read.fileSize, variant: `aes-128${withEvents}` }),
      cacheClass: 'segment',
    };
  }
  const protection = mode === 'fmp4' ? cencOf(call, t.track) : p.protection?.smooth;
  // isEncryptedTrack: whether trackEncryption gives one, without building it per request.
  if (protection !== undefined && isEncryptedTrack(t.track)) {
    // Encrypted bytes are made per request, as parts in memory (the new boxes and views of the one
    // buffer read and encrypted), or taken from the encrypted-segment cache when it has a bound:
    // keyed by everything the bytes depend on besides the presentation object (whose keys and
    // sources a change of the .ism or a source replaces), concurrent misses encrypting once.
    const key = `${req.route.format}\n${mode}\n${t.track.index}\n${segment.first}\n${segment.count}\n${segment.time}\n${segment.sourceTime - segment.smoothTime}`;
    // Without the cache the read buffer is lent from the segment pool and comes back once the
    // responses are written (coalesce.ts), as a TS segment's output does.
    const pool = ctx.encrypted.maxBytes === 0 ? segmentReadBuffers : undefined;
    const read = await ctx.encrypted.getAsync(
      p,
      key,
      () => ctx.encryptedLayouts.read(ctx.open, t.track, segment, p, { protection, mode, pool }),
      encryptedSegmentCost,
    );
    const { parts, length } = withEmsg(read.parts, read.length, events);
    const variant = `${protection.scheme}${inClearLead(t.track, segment, protection) ? '-clear-lead' : ''}${withEvents}`;
    const loan = read.loan === undefined ? {} : { loan: read.loan };
    return {
      contentType: req.route.contentType,
      body: { type: 'parts', file: t.track.src, parts, length, ...loan },
      lastModified: new Date(p.mtimeMs),
      etag: sourceSegmentEtag({ ...identity, fileSize: read.fileSize, variant }),
      cacheClass: 'segment',
    };
  }
  // The boxes depend on the track, the fragments, the mode and (Smooth) the time shift; nothing
  // else of the view. Kept per presentation object; concurrent misses read the moofs once.
  const key = `${t.track.index}\n${mode}\n${segment.first}\n${segment.count}\n${mode === 'smooth' ? segment.sourceTime - segment.smoothTime : ''}`;
  const read = await ctx.segments.getAsync(
    p,
    key,
    () => readSegmentParts(ctx.open, t.track, segment, p, mode),
    partsCost,
  );
  // The cached parts are shared by every view: the emsg boxes go into a copy of them.
  const { parts, length } = withEmsg(read.parts, read.length, events);
  return {
    contentType: req.route.contentType,
    body: { type: 'parts', file: t.track.src, parts, length },
    lastModified: new Date(p.mtimeMs),
    etag: sourceSegmentEtag({ ...identity, fileSize: read.fileSize, variant: withEvents || undefined }),
    cacheClass: 'segment',
  };
}
