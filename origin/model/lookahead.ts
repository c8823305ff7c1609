// Live Smooth Streaming's lookahead (MS-SSTR §2.2.2.1 LookaheadCount, §2.2.4.5 TfrfBox): a live
// fragment carries in its tfrf the times of the next `lookahead_fragments` fragments of its
// track, so a fragment can be listed or served only once that many successors exist. dash.js's
// MSS learns of new fragments from the tfrf alone (it never reloads a live manifest) and refuses
// a live fragment without one. After the end of stream no successor is coming: every fragment is
// listed and served, each with the successors it has (MS-SSTR allows fewer than LookaheadCount
// then). A Smooth chunk is a segment of the view (one fragment unless
// `iss_minimum_fragment_length` joins several), and the lookahead counts chunks.
//
// The manifest writer (manifests/smooth.ts) and the fragment route read these two functions, so
// what a manifest lists and what a fragment URL answers never disagree.

import type { SegmentList } from './segment-list';

export interface SmoothLookahead {
  /** `lookahead_fragments`: successors a chunk needs before it is listed. */
  count: number;
  /** The channel has stopped (end of stream): every chunk is listed. */
  ended: boolean;
}

/** How many of a live track's chunks are listed and served: all but the last `count` while live. */
export function listedChunks(s: SegmentList, l: SmoothLookahead): number {
  return l.ended ? s.count : Math.max(0, s.count - l.count);
}

/** The tfrf entries of chunk i: the Smooth times and durations of up to `count` chunks after it. */
export function lookaheadOf(s: SegmentList, i: number, l: SmoothLookahead): Array<{ time: bigint; duration: bigint }> {
  const out: Array<{ time: bigint; duration: bigint }> = [];
  for (let k = i + 1; k < s.count && k <= i + l.count; k++)
    out.push({ time: s.smoothTime(k), duration: s.duration(k) });
  return out;
}
