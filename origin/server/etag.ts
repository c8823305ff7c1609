// The ETags of presentation replies: strong validators (RFC 9110 §8.8.3), equal on every origin
// instance for equal bytes, so that caches in front of several origins share one copy. Three kinds:
// - contentEtag: a hash of the bytes themselves (init segments; rendered manifests get the same
//   hash from cache/manifest-cache.ts `rendered`);
// - generatedSegmentEtag: a generated segment (MPEG-TS, packed audio, WebVTT, I-frame, HDS
//   fragment) named by everything its bytes are a function of, without hashing them;
// - sourceSegmentEtag: a segment whose sample bytes are ranges of a source file (Smooth fragments,
//   DASH and HLS fMP4 media segments), named by the source and the fragments it takes.

import { createHash } from 'node:crypto';
import { Presentation, PresentationTrack } from '../model/presentation';
import { PlayoutView, trackKey, ViewTrack } from '../model/view';
import { VERSION } from '../version';

/** A SHA-1 of the content, base64url, cut to 22 characters (132 bits). */
export function contentEtag(content: string | Uint8Array): string {
  return `"${createHash('sha1').update(content).digest('base64url').slice(0, 22)}"`;
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

/** What a generated segment's bytes are a function of (generatedSegmentEtag). */
export interface GeneratedSegment {
  view: PlayoutView;
  /** The view in canonical text (cache/manifest-cache.ts canonicalViewKey): options, clip, tracks, name, queries. */
  viewKey: string;
  /** The kind of segment (`ts`, `aac`, `webvtt`, `iframe-ts`, …). */
  kind: string;
  /** The view tracks whose samples it carries. */
  tracks: readonly ViewTrack[];
  /** The size of each source, by path, when the segment's writer opened it. */
  sourceSizes: ReadonlyMap<string, number>;
  /** The segment's place: rendition, number, fragments, times. */
  segment: string;
}

/**
 * The strong ETag of a generated segment, from its identity rather than its bytes (a SHA-1 of
 * ~1 MB of TS cost about as much as a third of generating it): the bytes are a deterministic
 * function of the origin version (VERSION: a new writer release changes them), the kind of
 * segment, the .ism (path, mtime, size, presentation origin), the view (options, clip, tracks), the rendition's
 * sources (path, size when opened, sourceDigest, the view's fragment range) and the segment's place (`segment`: rendition,
 * number, fragments, times). Equal inputs give equal bytes, so equal ETags on every instance.
 */
export function generatedSegmentEtag(g: GeneratedSegment): string {
  const p = g.view.presentation;
  // The origin depends on every track of the .ism, not just these: a replaced source elsewhere moves it.
  const parts = [
    VERSION,
    g.kind,
    `${p.path}:${p.mtimeMs}:${p.size}:${p.origin.ticks}/${p.origin.timescale}`,
    g.viewKey,
    g.segment,
  ];
  for (const t of g.tracks) {
    // The view's fragment range of each track: where continuity counters start counting.
    const last = t.segments.segment(t.segments.count - 1);
    parts.push(
      `${t.track.src}:${g.sourceSizes.get(t.track.src) ?? -1}:${sourceDigest(t.track)}:${t.segments.first(0)}-${last.first + last.count}:${t.firstNumber}`,
    );
  }
  return contentEtag(parts.join('\n'));
}

/** What a segment cut from a source is: which fragments of which source, boxed how (sourceSegmentEtag). */
export interface SourceSegment {
  presentation: Presentation;
  track: PresentationTrack;
  /** The source's size when its boxes were read. */
  fileSize: number;
  mode: 'smooth' | 'fmp4';
  /** The source fragments it takes (from `first`, `count` of them) and its time. */
  segment: { first: number; count: number; time: bigint };
  /** How its samples are encrypted (`cenc`, `cbcs-clear-lead`, …); undefined: clear. */
  variant?: string;
}

/** The strong ETag of a segment cut from a source: its identity (the .ism, the source, the fragments), not its bytes. */
export function sourceSegmentEtag(s: SourceSegment): string {
  const p = s.presentation;
  const segment = s.segment;
  return contentEtag(
    `${p.path}:${p.mtimeMs}:${p.size}:${s.track.src}:${s.fileSize}:${s.mode}:${trackKey(s.track)}:${segment.first}:${segment.count}:${segment.time}${s.variant === undefined ? '' : `:${s.variant}`}`,
  );
}
