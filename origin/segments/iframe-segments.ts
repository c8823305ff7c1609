// The segments of HLS I-frame playlists (RFC 8216 §4.3.3.6 EXT-X-I-FRAMES-ONLY): the keyframe
// that starts a source fragment, as MPEG-TS or as moof+mdat. Reads the keyframe (its bytes into a
// pooled buffer, io/buffers.ts) and hands it to the pure writers (mpegts/mpegts.ts, box-writer.ts).

import { fragmentSequenceNumber } from '../model/live-window';
import { originError } from '../errors';
import { box, field, fullBox, serialize, Writable } from './box-writer';
import { mdatHeaderSize } from './fmp4/media-segment';
import { AuxOffsets, auxInfoBoxes, patchSaio } from './fmp4/encryption-boxes';
import { encryptKeyframe } from './fmp4/encrypted-segment';
import type { CencProtection } from '../model/protection';
import { TFHD, TRUN } from '../media/traf-layout';
import { openFile, SourceOpener, withSource } from '../io/source';
import { ViewTrack, PlayoutView } from '../model/view';
import { planTsSegment, to90k, TS_TIME_OFFSET, TsSample, TsSegmentInput, writeTsSegment } from './mpegts/mpegts';
import { ReadLease } from '../io/buffers';
import { outputShift, readFragmentSamples, readSampleData, SampleWithData, withByteSpan } from '../media/samples';
import { trackHeaderOf } from '../media/moov';
import { streamOf } from './mpegts/ts-continuity';
import { fragmentRange, MAX_GENERATED_SEGMENT_BYTES } from './hls-segments';

/** The first sample of view fragment `n` (1-based) of a video track: the keyframe an I-frame segment holds. */
async function keyframe(
  view: PlayoutView,
  v: ViewTrack,
  n: number,
  { open, lease }: { open: SourceOpener; lease: ReadLease },
): Promise<SampleWithData & { index: number }> {
  const range = fragmentRange(v);
  const index = range.first + n - 1;
  if (!Number.isSafeInteger(index) || n < 1 || index >= range.end) {
    throw originError(
      'unknown-time',
      `no keyframe ${n} for ${v.track.properties.trackName}=${v.track.properties.systemBitrate} (there are ${range.end - range.first})`,
    );
  }
  return withSource(open, v.track.src, async (source) => {
    const samples = await readFragmentSamples(source, v.track, index, outputShift(v.track, view.presentation.origin));
    const first = samples[0];
    if (first === undefined || !first.sync) {
      throw originError(
        'unknown-time',
        `fragment ${n} of ${v.track.properties.trackName} does not start with a keyframe`,
      );
    }
    // Its bytes read into a pooled buffer (io/buffers.ts): the writers copy them into the segment.
    const span = await withByteSpan(source, first.offset, first.offset + first.size, {
      maxBytes: MAX_GENERATED_SEGMENT_BYTES,
      lease,
    });
    const [withData] = await readSampleData(span, [first], MAX_GENERATED_SEGMENT_BYTES);
    return { ...withData!, index };
  });
}

/**
 * An I-frame segment as MPEG-TS: PAT, PMT and the one keyframe (its PTS on the TS clock; a frame
 * decoded alone needs no DTS). Counters start at 0: each I-frame segment is read on its own.
 */
export async function keyframeTs(
  view: PlayoutView,
  v: ViewTrack,
  n: number,
  open: SourceOpener = openFile,
  allocate?: (size: number) => Uint8Array,
): Promise<Uint8Array> {
  const lease = new ReadLease();
  try {
    return await writeKeyframeTs(v, await keyframe(view, v, n, { open, lease }), allocate);
  } finally {
    lease.release();
  }
}

function writeKeyframeTs(
  v: ViewTrack,
  k: SampleWithData,
  allocate: ((size: number) => Uint8Array) | undefined,
): Uint8Array {
  const pts = to90k(k.time + BigInt(k.compositionOffset), v.track.properties.TimeScale) + BigInt(TS_TIME_OFFSET);
  const sample: TsSample = {
    dts: pts,
    pts,
    size: k.size,
    keyframe: true,
    group: 0,
    data: k.data,
    file: v.track.src,
    offset: k.offset,
  };
  const input: TsSegmentInput = {
    streams: [{ stream: streamOf(v.track), samples: [sample], cc: 0 }],
    patCc: 0,
    pmtCc: 0,
  };
  return writeTsSegment(input, planTsSegment(input), allocate);
}

/** sample_flags of a sync sample: sample_depends_on = 2 (does not depend on others), §8.8.3.1. */
const SYNC_SAMPLE_FLAGS = 0x02000000;

/**
 * An I-frame segment as fMP4 (for hls_fmp4; the init segment is the track's `hls/…m4s`): one
 * moof (mfhd, traf with tfhd default-base-is-moof, tfdt v1, a one-sample trun v1) and its mdat
 * (ISO/IEC 14496-12 §8.8.4–8.8.12). With `protection` (SAMPLE-AES), the keyframe encrypted as in
 * its media segment (fmp4/encrypted-segment.ts encryptKeyframe), the tfhd naming the sample entry
 * and the traf carrying its saiz/saio/senc (ISO/IEC 23001-7 §7.2), as a media segment's do.
 */
export async function keyframeFmp4(
  view: PlayoutView,
  v: ViewTrack,
  n: number,
  open: SourceOpener = openFile,
  protection?: CencProtection,
): Promise<Uint8Array> {
  const lease = new ReadLease();
  try {
    return writeKeyframeFmp4(v, await keyframe(view, v, n, { open, lease }), protection);
  } finally {
    lease.release();
  }
}

function writeKeyframeFmp4(
  v: ViewTrack,
  k: SampleWithData & { index: number },
  protection: CencProtection | undefined,
): Uint8Array {
  let data = k.data;
  let encryption: ReturnType<typeof encryptKeyframe>;
  if (protection !== undefined) {
    const at = v.segments.holding(k.index);
    if (at < 0) throw originError('internal', `fragment ${k.index} is in no segment`, { subject: 'keyframeFmp4' });
    // Encrypted in a copy: the bytes read may be a view of a buffer the reader shares.
    data = Uint8Array.from(k.data);
    encryption = encryptKeyframe(v.track, v.segments.segment(at), protection, k.index, data);
  }
  const aux: AuxOffsets = { saioField: 0, sencStart: 0 };
  const sampleAux = encryption?.aux === undefined ? [] : auxInfoBoxes([encryption.aux], aux);
  const trackId = trackHeaderOf(v.track).trackID;
  const mdatHeader = mdatHeaderSize(k.size);
  let moofSize = 0;
  const dataOffset: Writable = { size: 4, write: (w) => w.i32(moofSize + mdatHeader) };
  const trunFlags = TRUN.dataOffset | TRUN.duration | TRUN.size | TRUN.flags | TRUN.compositionOffset;
  const moof = box(
    'moof',
    // VOD: the fragment's position; live: from its time, as every live fragment's (live-window.ts).
    fullBox('mfhd', 0, 0, field.u32(fragmentSequenceNumber(v.track, k.index))),
    box(
      'traf',
      encryption === undefined
        ? fullBox('tfhd', 0, TFHD.defaultBaseIsMoof, field.u32(trackId))
        : fullBox(
            'tfhd',
            0,
            TFHD.defaultBaseIsMoof | TFHD.sampleDescriptionIndex,
            field.u32(trackId),
            field.u32(encryption.sampleDescriptionIndex),
          ),
      fullBox('tfdt', 1, 0, field.u64(k.time)),
      fullBox(
        'trun',
        1,
        trunFlags,
        field.u32(1),
        dataOffset,
        field.u32(k.duration),
        field.u32(k.size),
        field.u32(SYNC_SAMPLE_FLAGS),
        field.i32(k.compositionOffset),
      ),
      ...sampleAux,
    ),
  );
  moofSize = moof.size;
  // The moof comes first: saio's offsets, relative to it, are offsets in the whole.
  const out = serialize(moof, box('mdat', field.bytes(data)));
  if (sampleAux.length > 0) patchSaio(out, [aux]);
  return out;
}
