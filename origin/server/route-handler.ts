// A route handler's contract (routes.ts Route.handler, handlers.ts): what it gets (RouteCall: the
// request, its presentation and view, the per-server PlayoutContext) and what it gives (Reply, which
// the HTTP layer sends: http.ts). No HTTP types here.

import { PresentationStore } from '../cache/presentation-store';
import { ManifestCache, ManifestOutcome } from '../cache/manifest-cache';
import { PresentationIds, PresentationMemo } from '../cache/request-caches';
import { Presentation } from '../model/presentation';
import { PlayoutView, TrackSelector } from '../model/view';
import { BufferLoan } from '../io/buffers';
import { FileHandles } from '../io/file-handles';
import { SourceOpener } from '../io/source';
import { segmentSources } from '../io/storage';
import type { SegmentPart as Part } from '../segments/fmp4/media-segment';
import type { SegmentParts } from '../segments/fmp4/segment-parts';
import type { EncryptedSegment } from '../segments/fmp4/encrypted-segment';
import { EncryptedSegments } from '../segments/fmp4/encrypted-layout';
import type { PresentationRequest } from './routes';
import { WorkGate } from './work-gate';
import type { GrowingSegment } from '../live/chunked-segment';

export type { Part, SegmentParts };

export type ReplyBody =
  | { type: 'text'; text: string; /** `text` in UTF-8 when already encoded */ bytes?: Uint8Array }
  | {
      type: 'bytes';
      bytes: Uint8Array;
      /** `bytes` are lent from a pool: the server shares the loan among its responses and lets go as each closes */ loan?: BufferLoan;
    }
  | {
      type: 'parts';
      file: string;
      parts: Part[];
      length: number;
      /** The in-memory parts are views of a pooled buffer (an encrypted segment): as for `bytes` */ loan?: BufferLoan;
    };

export interface Reply {
  contentType: string;
  body: ReplyBody;
  /** The .ism's mtime, for manifests and segments alike (Last-Modified, RFC 9110 §8.8.2). */
  lastModified: Date;
  /** Strong validator: a hash of the manifest text, or of the segment's identity. */
  etag: string;
  cacheClass: 'manifest' | 'segment';
  /** Cache-Control instead of the server's for the class (live manifests: half a segment). */
  cacheControl?: string;
  /** How the rendered-manifest cache answered (manifests only): the request log's `cache` field. */
  cache?: ManifestOutcome;
  /**
   * A segment being ingested (LL-DASH, live-chunked.ts), sent instead of `body` (empty) with
   * chunked transfer as it grows.
   */
  growing?: GrowingSegment;
}

/** Per-server state the handlers read: the stores and caches of presentations, views, manifests and segments. */
export interface PlayoutContext {
  store: PresentationStore;
  select: TrackSelector;
  /** Rendered manifests by request line and by canonical view (a byte bound; 0 disables). */
  manifests: ManifestCache;
  /** Views by (presentation, format, raw query): no re-selection or re-segmentation per request. */
  views: PresentationMemo<PlayoutView>;
  /** The rewritten boxes and file ranges of a segment: no re-read or re-parse of its moofs. */
  segments: PresentationMemo<SegmentParts>;
  /**
   * Encrypted segments, whole, by request identity (`--encrypted-segment-cache-bytes`; a bound of
   * 0, the default, keeps none and every request encrypts).
   */
  encrypted: PresentationMemo<EncryptedSegment>;
  /** Encrypted segments made again from their kept layouts (boxes, IVs, subsamples): the read and the AES only. */
  encryptedLayouts: EncryptedSegments;
  /** Source handles kept for the store's stat TTL: segment streaming and the segment writers read through them. */
  files: FileHandles;
  /** How every segment reader opens sources: the store's storage, through `files` on the file system (io/storage.ts). */
  open: SourceOpener;
  /** Generated segments (TS, packed audio, WebVTT, I-frame, HDS) made at once (work-gate.ts). */
  generation: WorkGate;
}

export function newPlayoutContext(
  store: PresentationStore,
  select: TrackSelector,
  manifestCacheBytes = 64 << 20,
  encryptedSegmentCacheBytes = 0,
): PlayoutContext {
  const ids = new PresentationIds();
  const files = new FileHandles(store.statTtlMs);
  return {
    store,
    select,
    manifests: new ManifestCache(manifestCacheBytes),
    views: new PresentationMemo(ids, 32 << 20),
    segments: new PresentationMemo(ids, 32 << 20),
    encrypted: new PresentationMemo(ids, encryptedSegmentCacheBytes),
    encryptedLayouts: new EncryptedSegments(ids, 32 << 20),
    files,
    open: segmentSources(store.storage, files),
    generation: new WorkGate(),
  };
}

/** What a route's handler gets: the request, the presentation it names and the request's view of it. */
export interface RouteCall {
  ctx: PlayoutContext;
  req: PresentationRequest;
  presentation: Presentation;
  view: PlayoutView;
  rawQuery: string;
  /** Aborts when every client waiting for this reply has gone (coalesce.ts); unset: never. */
  signal?: AbortSignal;
}

/** The reply to one kind of presentation URL (routes.ts Route.handler). */
export type RouteHandler = (call: RouteCall) => Promise<Reply>;
