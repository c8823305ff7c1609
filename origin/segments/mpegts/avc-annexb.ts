// H.264 access units in the byte-stream format MPEG-TS carries (ITU-T H.264 Annex B; ISO/IEC
// 13818-1 §2.14 for AVC in transport streams): each NAL unit behind a start code instead of the
// length field it has in MP4 (ISO/IEC 14496-15 §5.3.2), an access unit delimiter first (Apple's
// HLS authoring spec asks for one in every TS access unit; H.264 §7.4.1.2.3 puts it first), and
// the SPS and PPS of the sample entry's avcC before every keyframe, so that every segment and
// every I-frame segment decodes on its own.
//
// The start code has the length field's own size (4 bytes 00 00 00 01 for a 4-byte length,
// 3 bytes 00 00 01 for a 3-byte one), so a converted sample is exactly as long as the source
// sample: the size of every PES, and so the TS packet count that continuity counters are derived
// from, is known from the moof alone. Length fields of 1 or 2 bytes have no start code of their
// size; such tracks are refused (415).

import { OriginError, originError } from '../../errors';
import type { AvcConfig } from '../../model/media';

/** nal_unit_type 9, primary_pic_type 7 (any slice type), then the RBSP stop bit (H.264 §7.3.2.4). */
export const ACCESS_UNIT_DELIMITER = Uint8Array.of(0, 0, 0, 1, 0x09, 0xf0);
const START_CODE_4 = Uint8Array.of(0, 0, 0, 1);

/** Throws unless the track's NAL length size has a start code of the same size. */
export function checkLengthSize(c: AvcConfig, what: string): void {
  if (c.lengthSize !== 4 && c.lengthSize !== 3) {
    throw originError(
      'unsupported-media',
      `H.264 with ${c.lengthSize}-byte NAL lengths cannot be written as MPEG-TS (3 or 4 bytes can)`,
      { subject: what },
    );
  }
}

/** The SPS and PPS, each behind a 4-byte start code. */
export function parameterSetBytes(c: AvcConfig): Uint8Array {
  const size = c.parameterSets.reduce((s, n) => s + 4 + n.byteLength, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const nal of c.parameterSets) {
    out.set(START_CODE_4, at);
    out.set(nal, at + 4);
    at += 4 + nal.byteLength;
  }
  return out;
}

/** Bytes of the Annex B access unit made from a sample of `size` bytes. */
export function accessUnitSize(size: number, keyframe: boolean, parameterSets: Uint8Array): number {
  return ACCESS_UNIT_DELIMITER.byteLength + (keyframe ? parameterSets.byteLength : 0) + size;
}

/** A sample's place (file and offset, for errors) and whether it is a keyframe (the writer's TsSample has these fields). */
export interface AnnexBSample {
  keyframe: boolean;
  file: string;
  offset: number;
}

/** A track's side of the conversion: its avcC (the NAL length size) and parameterSetBytes of it. */
export interface AnnexBTrack {
  config: AvcConfig;
  parameterSets: Uint8Array;
}

/**
 * Writes the Annex B access unit (AUD, the parameter sets on keyframes, then each NAL unit behind
 * a start code) at out[at] and returns the offset after it. The sample is copied whole, then each NAL length field is overwritten in place by the start code of
 * its own size (the sizes match: see above), so the NAL units themselves are one copy.
 */
export function writeAccessUnit(
  out: Uint8Array,
  at: number,
  sample: Uint8Array,
  where: AnnexBSample,
  track: AnnexBTrack,
): number {
  const { config: c, parameterSets } = track;
  out.set(ACCESS_UNIT_DELIMITER, at);
  at += ACCESS_UNIT_DELIMITER.byteLength;
  if (where.keyframe) {
    out.set(parameterSets, at);
    at += parameterSets.byteLength;
  }
  const n = c.lengthSize;
  const size = sample.byteLength;
  out.set(sample, at);
  let i = 0;
  while (i < size) {
    if (i + n > size) throw bad(where, i, `${size - i} bytes left, a NAL length field needs ${n}`);
    let length = 0;
    for (let k = 0; k < n; k++) length = length * 256 + sample[i + k]!;
    if (length === 0) throw bad(where, i, 'NAL unit of length 0');
    if (i + n + length > size)
      throw bad(where, i, `NAL unit of ${length} bytes runs past the sample's end (${size - i - n} bytes left)`);
    const o = at + i;
    out[o] = 0;
    out[o + 1] = 0;
    if (n === 4) {
      out[o + 2] = 0;
      out[o + 3] = 1;
    } else out[o + 2] = 1;
    i += n + length;
  }
  return at + size;
}

function bad(where: { file: string; offset: number }, at: number, what: string): OriginError {
  return originError(
    'corrupt-media',
    `H.264 sample at file offset ${where.offset}: ${what} (at file offset ${where.offset + at})`,
    { subject: where.file },
  );
}
