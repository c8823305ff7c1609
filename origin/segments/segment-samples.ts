// The samples of a run of fragments of one view track, with their bytes: the one read that the
// generated segments share (HLS packed audio and WebVTT in hls-segments.ts, HDS fragments in
// f4f/fragment-samples.ts). The fragments' byte range is read once (withFragmentSpan, into the
// caller's pooled buffers when it lends a lease), and the moofs and sample data are answered from
// that read. A live track's source spans its archive files (io/spanning-source.ts): the same read.

import { ReadLease } from '../io/buffers';
import { SourceOpener, withSource } from '../io/source';
import { readFragmentRange, readSampleData, SampleWithData, withFragmentSpan } from '../media/samples';
import { ViewTrack } from '../model/view';

export interface SegmentSamplesRead {
  /** Output shift of the track (media/samples.ts outputShift), track timescale. */
  shift: bigint;
  open: SourceOpener;
  /** The largest read allowed: the caller's bound of one generated segment. */
  maxBytes: number;
  /** Pooled buffers to read into (io/buffers.ts); undefined: a buffer of its own. */
  lease?: ReadLease;
}

/** The samples of fragments [first, first + count) of `t`, with their bytes. */
export function readSegmentSamples(
  t: ViewTrack,
  seg: { first: number; count: number },
  { shift, open, maxBytes, lease }: SegmentSamplesRead,
): Promise<SampleWithData[]> {
  return withSource(open, t.track.src, async (source) => {
    const span = await withFragmentSpan(source, t.track, seg.first, seg.first + seg.count - 1, { maxBytes, lease });
    return readSampleData(span, await readFragmentRange(span, t.track, seg.first, seg.count, shift), maxBytes);
  });
}
