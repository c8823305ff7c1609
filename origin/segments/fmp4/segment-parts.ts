// The Smooth and DASH/HLS fMP4 media segments of a view track as parts: the rewritten boxes
// (styp, moof with the output's sequence numbers and decode times, mdat header) as bytes and the
// sample data as byte ranges of the source, which the HTTP layer streams (server/server.ts). The
// moofs are read through a SourceOpener of the storage seam (io/storage.ts segmentSources).

import { childBoxes, readBoxHeader } from '../../media/boxes';
import { ByteSource, SourceOpener, withSource } from '../../io/source';
import { Presentation, PresentationTrack, ticksIn } from '../../model/presentation';
import { Segment } from '../../model/timeline';
import { mediaSegmentParts, readFragmentMoof, reboxFragment, SegmentPart } from './media-segment';
import { SmoothFragmentTime } from './smooth-live-boxes';
import { fragmentSequenceNumber } from '../../model/live-window';

/**
 * Live Smooth Streaming (MS-SSTR §2.2.4.5): every fragment carries a fresh tfxd and a tfrf with
 * the times of the `next` fragments of its track (the lookahead the manifest promised).
 */
export interface SmoothLiveMode {
  kind: 'smooth-live';
  /** How many successors a tfrf lists (`lookahead_fragments`). */
  lookahead: number;
  /** The fragments after the segment, Smooth times: `lookahead` of them, fewer after the end of stream. */
  next: readonly SmoothFragmentTime[];
}

export type PartsMode = 'smooth' | 'fmp4' | SmoothLiveMode;

export interface SegmentParts {
  parts: SegmentPart[];
  length: number;
  /** The source's size when the boxes were read (part of the ETag). */
  fileSize: number;
}

/** The parts of `segment` of `track`: its moofs read through `open`, rewritten for `mode`. */
export function readSegmentParts(
  open: SourceOpener,
  track: PresentationTrack,
  segment: Segment,
  p: Presentation,
  mode: PartsMode,
): Promise<SegmentParts> {
  return withSource(open, track.src, async (source) => {
    const { parts, length } = await segmentParts(source, track, segment, p, mode);
    return { parts, length, fileSize: source.size };
  });
}

/** Estimated bytes of kept parts (the segment memo's cost). */
export function partsCost(v: SegmentParts): number {
  return v.parts.reduce((n, x) => n + (x.kind === 'bytes' ? x.bytes.byteLength + 64 : 48), 256);
}

async function segmentParts(
  source: ByteSource,
  track: PresentationTrack,
  s: Segment,
  p: Presentation,
  mode: PartsMode,
): Promise<{ parts: SegmentPart[]; length: number }> {
  const f = track.fragments;
  const shift = ticksIn(p.origin, track.properties.TimeScale);
  const smoothShift = s.sourceTime - s.smoothTime;
  const headers = track.headers;
  const smooth = mode !== 'fmp4';
  const live = typeof mode === 'object' ? liveTimes(track, s, mode) : undefined;
  hintFragments(source, track, s);
  const fragments = [];
  for (let i = s.first; i < s.first + s.count; i++) {
    const moof = await readFragmentMoof(source, f.offsets[i]!);
    if (mode === 'smooth' && s.count === 1 && smoothShift === 0n && countTrafs(moof, f.offsets[i]!) === 1) {
      // MS-SSTR §2.2.4: the fragment as the source has it, moof + mdat, byte for byte.
      return { parts: [{ kind: 'file', offset: f.offsets[i]!, length: f.sizes[i]! }], length: f.sizes[i]! };
    }
    const time = smooth ? f.times[i]! - smoothShift : f.times[i]! - shift;
    const k = i - s.first;
    fragments.push(
      reboxFragment(moof, f.offsets[i]!, track.properties.trackID, {
        sequenceNumber: fragmentSequenceNumber(track, i),
        baseMediaDecodeTime: time,
        keepTfxd: smooth,
        ...(smooth ? { tfxdTime: time } : {}),
        ...(live !== undefined
          ? { smoothLive: { self: live.all[k]!, next: live.all.slice(k + 1, k + 1 + live.count) } }
          : {}),
        headers,
        fileSize: source.size,
        fileName: track.src,
      }),
    );
  }
  return mediaSegmentParts(fragments, { styp: mode === 'fmp4' });
}

/**
 * The Smooth times of a live segment's fragments followed by the lookahead: a fragment's tfrf
 * lists the next `count` of them (those of a segment of several fragments first, then the next
 * segment's).
 */
function liveTimes(
  track: PresentationTrack,
  s: Segment,
  mode: SmoothLiveMode,
): { all: SmoothFragmentTime[]; count: number } {
  const f = track.fragments;
  const smoothShift = s.sourceTime - s.smoothTime;
  const all: SmoothFragmentTime[] = [];
  for (let i = s.first; i < s.first + s.count; i++)
    all.push({ time: f.times[i]! - smoothShift, duration: BigInt(f.durations[i]!) });
  return { all: [...all, ...mode.next], count: mode.lookahead };
}

/**
 * Tells the source the segment's fragments (moofs and sample data) are about to be read: a remote
 * source fetches them in one round trip (io/remote/remote-source.ts), and the sample data read for
 * the reply (server/remote-playout.ts) finds them there. Fragments of one track follow each other
 * in the file; a span much wider than them (other tracks' data between) is not hinted.
 */
function hintFragments(source: ByteSource, track: PresentationTrack, s: Segment): void {
  if (source.willNeed === undefined || s.count <= 0) return;
  const f = track.fragments;
  let [start, end, sum] = [Infinity, 0, 0];
  for (let i = s.first; i < s.first + s.count; i++) {
    start = Math.min(start, f.offsets[i]!);
    end = Math.max(end, f.offsets[i]! + f.sizes[i]!);
    sum += f.sizes[i]!;
  }
  if (end - start <= 2 * sum) source.willNeed(start, end - start);
}

/** trafs in a moof read by readFragmentMoof (whose header it has already checked). */
function countTrafs(moof: Uint8Array, offset: number): number {
  const path = `moof@${offset}`;
  const header = readBoxHeader(moof, 0, offset, offset + moof.byteLength, path)!;
  let n = 0;
  for (const c of childBoxes(moof.subarray(header.headerSize), offset + header.headerSize, path))
    if (c.type === 'traf') n++;
  return n;
}
