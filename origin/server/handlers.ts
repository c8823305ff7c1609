// Turns a matched presentation URL into a reply: manifests through the pure writers, segments as
// a list of byte parts (small rewritten boxes + file ranges that the HTTP layer streams). No HTTP
// types here: the same code answers `origin serve` and the CLI dry run.

import { createHash } from 'node:crypto';
import { OriginError, originError } from '../errors';
import { writeMpd } from '../manifests/dash';
import { writeIFramePlaylist, writeMasterPlaylist, writeMediaPlaylist } from '../manifests/hls';
import { writeSmoothManifest } from '../manifests/smooth';
import { writeHdsManifest } from '../manifests/hds';
import { hdsFragmentRequest } from '../segments/f4f/fragment-samples';
import { writeInitSegment } from '../segments/fmp4/init-segment';
import { SegmentPart } from '../segments/fmp4/media-segment';
import { partsCost, readSegmentParts, SegmentParts } from '../segments/fmp4/segment-parts';
import { trackHeaderOf } from '../media/track-header';
import { SourceOpener } from '../io/source';
import { segmentSources } from '../io/storage';
import { PresentationStore } from '../cache/presentation-store';
import { canonicalViewKey, ManifestCache, RenderedManifest } from '../cache/manifest-cache';
import { PresentationIds, PresentationMemo } from '../cache/request-caches';
import { Presentation, PresentationTrack } from '../model/presentation';
import { PlayoutView, TrackSelector, trackKey, viewForQuery, ViewTrack } from '../model/view';
import { derived } from '../model/view-derived';
import { findRendition, SegmentKind, segmentKind, videoOf } from '../model/rendition';
import { keyframeFmp4, keyframeTs, numberingTrack, packedAudio, tsSegment, webvttText } from '../segments/hls-segments';
import { BufferLoan, segmentReadBuffers } from '../io/buffers';
import { PresentationRequest, RouteKind } from './routes';
import { FileHandles } from '../io/file-handles';
import { VERSION } from '../version';

export type { SegmentPart as Part } from '../segments/fmp4/media-segment';

export type ReplyBody =
  | { type: 'text'; text: string; /** `text` in UTF-8 when already encoded */ bytes?: Uint8Array }
  | {
      type: 'bytes';
      bytes: Uint8Array;
      /** `bytes` are lent from a pool: the server shares the loan among its responses and lets go as each closes */ loan?: BufferLoan;
    }
  | { type: 'parts'; file: string; parts: SegmentPart[]; length: number };

export interface Reply {
  contentType: string;
  body: ReplyBody;
  /** The .ism's mtime (origin-reference §8b: manifests and segments alike). */
  lastModified: Date;
  /** Strong validator: a hash of the manifest text, or of the segment's identity. */
  etag: string;
  cacheClass: 'manifest' | 'segment';
}

export interface PlayoutContext {
  store: PresentationStore;
  select: TrackSelector;
  /** Rendered manifests by request line and by canonical view (a byte bound; 0 disables). */
  manifests: ManifestCache;
  /** Views by (presentation, format, raw query): no re-selection or re-segmentation per request. */
  views: PresentationMemo<PlayoutView>;
  /** The rewritten boxes and file ranges of a segment: no re-read or re-parse of its moofs. */
  segments: PresentationMemo<SegmentParts>;
  /** Source handles kept for the store's stat TTL: segment streaming and the segment writers read through them. */
  files: FileHandles;
  /** How every segment reader opens sources: the store's storage, through `files` on the file system (io/storage.ts). */
  open: SourceOpener;
}

export function newPlayoutContext(
  store: PresentationStore,
  select: TrackSelector,
  manifestCacheBytes = 64 << 20,
): PlayoutContext {
  const ids = new PresentationIds();
  const files = new FileHandles(store.statTtlMs);
  return {
    store,
    select,
    manifests: new ManifestCache(manifestCacheBytes),
    views: new PresentationMemo(ids, 32 << 20),
    segments: new PresentationMemo(ids, 32 << 20),
    files,
    open: segmentSources(store.storage, files),
  };
}

/** Estimated bytes of a view: its segment objects dominate. */
function viewCost(view: PlayoutView): number {
  return 1024 + view.tracks.reduce((n, t) => n + 64 + t.segments.count * 160, 0);
}

const MANIFEST_ROUTES: ReadonlySet<RouteKind> = new Set<RouteKind>([
  'smooth-manifest',
  'dash-mpd',
  'hls-playlist',
  'hls-iframe-playlist',
  'hds-manifest',
]);

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
  if (!MANIFEST_ROUTES.has(req.route.kind)) return undefined;
  const p = ctx.store.peek(absoluteIsm);
  if (p === undefined) return undefined;
  const hit = ctx.manifests.forRequest(p, requestKey(req, rawQuery));
  return hit === undefined ? undefined : manifestReply(req, p, hit);
}

/** `absoluteIsm` is the file; `req.ismPath` the URL path shown in messages. */
export async function handlePlayout(
  ctx: PlayoutContext,
  req: PresentationRequest,
  absoluteIsm: string,
  rawQuery: string,
): Promise<Reply> {
  const p =
    ctx.store.peek(absoluteIsm) ??
    (await ctx.store.presentation(absoluteIsm).catch((e: unknown) => {
      if (e instanceof OriginError && e.kind === 'not-found' && e.subject === absoluteIsm) {
        throw originError('unknown-presentation', `no presentation at ${req.ismPath}`);
      }
      throw e;
    }));
  // Fast path: this exact request line was answered before (no query parse, no filter, no render).
  const hit = MANIFEST_ROUTES.has(req.route.kind) ? ctx.manifests.forRequest(p, requestKey(req, rawQuery)) : undefined;
  if (hit !== undefined) return manifestReply(req, p, hit);
  const view = ctx.views.get(
    p,
    `${req.route.format}\n${rawQuery}`,
    () => viewForQuery(p, req.route.format, rawQuery, ctx.select),
    viewCost,
  );
  const { groups } = req;
  switch (req.route.kind) {
    case 'smooth-manifest':
      return manifest(ctx, req, p, view, rawQuery, () => writeSmoothManifest(view));
    case 'dash-mpd':
      return manifest(ctx, req, p, view, rawQuery, () => writeMpd(view));
    case 'hls-playlist': {
      const r = findRendition(view, groups.stem!);
      return manifest(ctx, req, p, view, rawQuery, () =>
        r === undefined ? writeMasterPlaylist(view) : writeMediaPlaylist(view, r),
      );
    }
    case 'hls-iframe-playlist': {
      const r = findRendition(view, groups.stem!);
      if (r === undefined) throw unknownTrack(`in "${groups.stem!.slice(0, 128)}"`);
      return manifest(ctx, req, p, view, rawQuery, () => writeIFramePlaylist(view, r));
    }
    case 'hls-ts':
    case 'hls-aac':
    case 'hls-ac3':
    case 'hls-ec3':
    case 'hls-webvtt':
      return hlsSegment(ctx, req, view, groups.stem!, groups.n!, req.route.kind);
    case 'hls-iframe-ts':
    case 'hls-iframe-m4s':
      return iframeSegment(ctx, req, view, groups.stem!, groups.n!, req.route.kind === 'hls-iframe-ts' ? 'ts' : 'm4s');
    case 'smooth-fragment':
      return smoothFragment(ctx, req, view, groups);
    case 'dash-init-or-media':
      return fmp4(
        ctx,
        req,
        view,
        groups.stem!,
        view.options.str('mpd_segment_template') === 'number' ? 'number' : 'time',
      );
    case 'hls-fmp4':
      return fmp4(ctx, req, view, groups.stem!, 'hls-number');
    case 'hds-manifest':
      return manifest(ctx, req, p, view, rawQuery, () => writeHdsManifest(view, groups.stem!));
    case 'hds-fragment':
      return generatedReply(
        req,
        view,
        await hdsFragmentRequest(view, groups.stem!, groups.segment!, groups.fragment!, ctx.open),
      );
  }
}

async function manifest(
  ctx: PlayoutContext,
  req: PresentationRequest,
  p: Presentation,
  view: PlayoutView,
  rawQuery: string,
  render: () => string,
): Promise<Reply> {
  // Keys and their correctness: cache/manifest-cache.ts.
  // A view's canonical key per (route, tail): the sort and join once per view, not per request.
  const canonical = derived(view, `canonical key\n${req.route.kind}\n${req.tail}`, () =>
    canonicalViewKey(view, req.route.kind, req.tail),
  );
  const doc = await ctx.manifests.get(p, requestKey(req, rawQuery), canonical, render, view);
  return manifestReply(req, p, doc);
}

function manifestReply(req: PresentationRequest, p: Presentation, doc: RenderedManifest): Reply {
  return {
    contentType: req.route.contentType,
    body: { type: 'text', text: doc.text, bytes: doc.bytes },
    lastModified: new Date(p.mtimeMs),
    etag: doc.etag,
    cacheClass: 'manifest',
  };
}

function etagOf(text: string | Uint8Array): string {
  return `"${createHash('sha1').update(text).digest('base64url').slice(0, 22)}"`;
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

async function smoothFragment(
  ctx: PlayoutContext,
  req: PresentationRequest,
  view: PlayoutView,
  g: Record<string, string>,
): Promise<Reply> {
  const t = view.tracks.find(
    (x) => x.track.properties.trackName === g.track && String(x.track.properties.systemBitrate) === g.bitrate,
  );
  if (t === undefined) throw unknownTrack(`${g.track} at bitrate ${g.bitrate}`);
  const time = BigInt(g.time!);
  const index = t.segments.indexOfTime(time, 'smooth');
  if (index < 0) throw originError('unknown-time', `no fragment of ${g.track} starts at ${time}`);
  return segmentReply(ctx, req, view, t, index, 'smooth');
}

/**
 * fMP4 media segments by `$Time$`, by DASH `$Number$` (from 1 in every view) or by HLS number
 * (the unclipped presentation's, ViewTrack firstNumber), and init segments.
 */
async function fmp4(
  ctx: PlayoutContext,
  req: PresentationRequest,
  view: PlayoutView,
  stem: string,
  numbering: 'time' | 'number' | 'hls-number',
): Promise<Reply> {
  const init = findKeySuffix(view, stem);
  if (init !== undefined) return initReply(req, view, init);
  const m = /^(.*)-(\d{1,20})$/.exec(stem);
  const t = m === null ? undefined : findKeySuffix(view, m[1]!);
  if (m === null || t === undefined) throw unknownTrack(`in "${stem.slice(0, 128)}"`);
  if (numbering === 'hls-number')
    return segmentReply(ctx, req, view, t, segmentIndex(m[2]!, t, trackKey(t.track)), 'fmp4');
  const n = BigInt(m[2]!);
  const index = numbering === 'number' ? Number(n) - 1 : t.segments.indexOfTime(n);
  if (index < 0 || index >= t.segments.count) {
    const what = numbering === 'number' ? `segment ${n} (there are ${t.segments.count})` : `segment at time ${n}`;
    throw originError('unknown-time', `no ${what} for ${trackKey(t.track)}`);
  }
  return segmentReply(ctx, req, view, t, index, 'fmp4');
}

/** The segment kind each generated-segment route serves (model/rendition.ts segmentKind). */
const SEGMENT_ROUTE_KIND: Partial<Record<RouteKind, SegmentKind>> = {
  'hls-ts': 'ts',
  'hls-aac': 'aac',
  'hls-ac3': 'ac3',
  'hls-ec3': 'ec3',
  'hls-webvtt': 'webvtt',
};

/**
 * An HLS segment number `<n>` as an index into a view track's segments, or 404 unknown-time. HLS
 * numbers segments as the unclipped presentation does (ViewTrack firstNumber): segment n of a
 * clip is unclipped segment n cut to the clip, and a number outside the clip names no segment.
 */
function segmentIndex(nText: string, t: ViewTrack, what: string): number {
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

/** MPEG-TS, packed audio and WebVTT segments: generated bytes (segments/hls-segments.ts). */
async function hlsSegment(
  ctx: PlayoutContext,
  req: PresentationRequest,
  view: PlayoutView,
  stem: string,
  nText: string,
  route: RouteKind,
): Promise<Reply> {
  const r = findRendition(view, stem);
  if (r === undefined) throw unknownTrack(`in "${stem.slice(0, 128)}"`);
  const wanted = SEGMENT_ROUTE_KIND[route]!;
  const kind = segmentKind(view, r);
  if (kind !== wanted) {
    const mode = view.options.bool('hls_fmp4') ? 'hls_fmp4=true' : 'hls_fmp4=false';
    throw originError('unknown-url', `${r.key} has .${kind} segments with ${mode}, not .${wanted}`);
  }
  const numbering = numberingTrack(r);
  const index = segmentIndex(nText, numbering, r.key);
  const sources = new SourceSizes(ctx.open);
  const open = sources.open;
  // TS output (hundreds of kB to MB a segment) is lent from the segment buffer pool; packed audio
  // and WebVTT are small.
  let loan: BufferLoan | undefined;
  const lend = (size: number): Uint8Array => (loan = BufferLoan.take(segmentReadBuffers, size)).bytes;
  const content =
    kind === 'webvtt'
      ? await webvttText(view, r, index, open)
      : kind === 'ts'
        ? await tsSegment(view, r, index, open, lend)
        : await packedAudio(view, r, index, open);
  const s = numbering.segments.segment(index);
  return generatedSegmentReply(
    req,
    view,
    content,
    generatedEtag(
      view,
      kind,
      r.tracks,
      sources,
      `${r.key}:${index}/${numbering.segments.count}:${s.first}:${s.count}:${s.time}:${s.duration}`,
    ),
    loan,
  );
}

/**
 * I-frame segments: the keyframe starting source fragment `<n>` (from 1, the unclipped
 * presentation's numbering, as writeIFramePlaylist writes it) of a video track; a fragment
 * outside the view's is 404 unknown-time.
 */
async function iframeSegment(
  ctx: PlayoutContext,
  req: PresentationRequest,
  view: PlayoutView,
  stem: string,
  nText: string,
  kind: 'ts' | 'm4s',
): Promise<Reply> {
  const r = findRendition(view, stem);
  const video = r !== undefined && r.tracks.length === 1 ? videoOf(r) : undefined;
  if (video === undefined)
    throw unknownTrack(`with keyframes in "${stem.slice(0, 128)}" (I-frame segments exist for video tracks)`);
  const segments = video.segments;
  const first = segments.first(0);
  const last = segments.segment(segments.count - 1);
  // keyframeTs/keyframeFmp4 count the view's fragments from 1.
  const n = numberIndex(nText, first + 1, last.first + last.count - first, 'keyframe', trackKey(video.track)) + 1;
  const sources = new SourceSizes(ctx.open);
  const content =
    kind === 'ts' ? await keyframeTs(view, video, n, sources.open) : await keyframeFmp4(view, video, n, sources.open);
  return generatedSegmentReply(
    req,
    view,
    content,
    generatedEtag(view, `iframe-${kind}`, [video], sources, `${trackKey(video.track)}:${first}:${n}`),
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

/**
 * Per source index (a track's fragment table, rebuilt whenever its source changes, and its moov):
 * a digest of everything a generated segment takes from the source besides the sample bytes
 * themselves (sample descriptions, fragment times, offsets and sizes, which also fix continuity
 * counters and audio cuts). Computed once per loaded index; the same on every origin instance.
 */
const sourceDigests = new WeakMap<PresentationTrack['fragments'], string>();

function sourceDigest(track: PresentationTrack): string {
  const f = track.fragments;
  let digest = sourceDigests.get(f);
  if (digest === undefined) {
    const bytes = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const h = createHash('sha1')
      .update(track.moov)
      .update(`:${track.properties.trackID}:${track.properties.TimeScale}:${f.count}:`);
    for (const a of [f.times, f.durations, f.offsets, f.sizes, f.keyframes]) h.update(bytes(a.subarray(0, f.count)));
    digest = h.digest('base64url');
    sourceDigests.set(f, digest);
  }
  return digest;
}

/** canonicalViewKey's every view input (options, clip, tracks, name, queries), once per view (model/view-derived.ts). */
function viewKeyOf(view: PlayoutView): string {
  return derived(view, 'canonical key\ngenerated-segment\n', () => canonicalViewKey(view, 'generated-segment', ''));
}

/**
 * The strong ETag of a generated segment, from its identity rather than its bytes (a SHA-1 of
 * ~1 MB of TS cost about as much as a third of generating it): the bytes are a deterministic
 * function of the origin version (VERSION: a new writer release changes them), the kind of
 * segment, the .ism (path, mtime, size, presentation origin), the view (options, clip, tracks), the rendition's
 * sources (path, size when opened, sourceDigest, the view's fragment range) and the segment's place (`segment`: rendition,
 * number, fragments, times). Equal inputs give equal bytes, so equal ETags on every instance.
 */
function generatedEtag(
  view: PlayoutView,
  kind: string,
  tracks: readonly ViewTrack[],
  sources: SourceSizes,
  segment: string,
): string {
  const p = view.presentation;
  // The origin depends on every track of the .ism, not just these: a replaced source elsewhere moves it.
  const parts = [
    VERSION,
    kind,
    `${p.path}:${p.mtimeMs}:${p.size}:${p.origin.ticks}/${p.origin.timescale}`,
    viewKeyOf(view),
    segment,
  ];
  for (const t of tracks) {
    // The view's fragment range of each track: where continuity counters start counting.
    const last = t.segments.segment(t.segments.count - 1);
    parts.push(
      `${t.track.src}:${sources.sizes.get(t.track.src) ?? -1}:${sourceDigest(t.track)}:${t.segments.first(0)}-${last.first + last.count}:${t.firstNumber}`,
    );
  }
  return etagOf(parts.join('\n'));
}

/** `loan`: where `content`'s bytes are lent from (the server lets go of it as its responses close). */
function generatedSegmentReply(
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

function generatedReply(req: PresentationRequest, view: PlayoutView, content: Uint8Array | string): Reply {
  return generatedSegmentReply(req, view, content, etagOf(content));
}

function initReply(req: PresentationRequest, view: PlayoutView, t: ViewTrack): Reply {
  const bytes = writeInitSegment(trackHeaderOf(t.track));
  const p = view.presentation;
  return {
    contentType: req.route.contentType,
    body: { type: 'bytes', bytes },
    lastModified: new Date(p.mtimeMs),
    etag: etagOf(bytes),
    cacheClass: 'segment',
  };
}

async function segmentReply(
  ctx: PlayoutContext,
  req: PresentationRequest,
  view: PlayoutView,
  t: ViewTrack,
  index: number,
  mode: 'smooth' | 'fmp4',
): Promise<Reply> {
  const segment = t.segments.segment(index);
  const p = view.presentation;
  // The boxes depend on the track, the fragments, the mode and (Smooth) the time shift; nothing
  // else of the view. Kept per presentation object; concurrent misses read the moofs once.
  const key = `${t.track.index}\n${mode}\n${segment.first}\n${segment.count}\n${mode === 'smooth' ? segment.sourceTime - segment.smoothTime : ''}`;
  const { parts, length, fileSize } = await ctx.segments.getAsync(
    p,
    key,
    () => readSegmentParts(ctx.open, t.track, segment, p, mode),
    partsCost,
  );
  return {
    contentType: req.route.contentType,
    body: { type: 'parts', file: t.track.src, parts, length },
    lastModified: new Date(p.mtimeMs),
    etag: etagOf(
      `${p.path}:${p.mtimeMs}:${p.size}:${t.track.src}:${fileSize}:${mode}:${trackKey(t.track)}:${segment.first}:${segment.count}:${segment.time}`,
    ),
    cacheClass: 'segment',
  };
}
