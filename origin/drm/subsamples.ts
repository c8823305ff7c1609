// Which bytes of an H.264 sample common encryption protects (ISO/IEC 23001-7 §9.5 subsample
// encryption of NAL-structured video): every NAL length field, NAL header and slice header stays
// clear, non-VCL NAL units (SPS, PPS, SEI, AUD, ...) stay wholly clear, and the rest of each
// slice is protected.
// - cenc: the protected part of each NAL is a multiple of 16 bytes (ISO/IEC 23000-19 §8.2.3.2,
//   CMAF), the remainder moved to the clear part before it, as shaka-packager does;
// - cbcs: the protected part starts at the first byte after the slice header (ISO/IEC 23001-7
//   §10.4.2); the 1:9 pattern leaves a trailing partial block clear by itself.
// Pure: a sample's bytes in, its subsample list out.

import { originError } from '../errors';
import type { CencScheme } from '../model/protection';
import { ParameterSets, sliceHeaderBytes } from '../media/h264-slice';

/** One entry of a `senc` subsample list (§7.2.2): clear bytes, then protected bytes. */
export interface Subsample {
  clear: number;
  protected: number;
}

const parsedSets = new WeakMap<readonly Uint8Array[], ParameterSets>();

/**
 * The parameter sets of a track's avcC for one run of samples (a fragment): parsed once per track
 * header, handed out as a fork so that the in-band SPS/PPS of one run never reach another.
 */
export function avcParameterSets(avcC: readonly Uint8Array[]): ParameterSets {
  let base = parsedSets.get(avcC);
  if (base === undefined) parsedSets.set(avcC, (base = new ParameterSets(avcC)));
  return base.fork();
}

/** BytesOfClearData is 16 bits (§7.2.2). */
const MAX_CLEAR = 0xffff;

/**
 * The subsamples of one length-prefixed H.264 sample (ISO/IEC 14496-15 §5.3.2). `sets` holds the
 * track's parameter sets; in-band SPS/PPS (avc3) are added to it as they pass.
 */
export function avcSubsamples(
  sample: Uint8Array,
  lengthSize: number,
  sets: ParameterSets,
  scheme: CencScheme,
): Subsample[] {
  const out: Subsample[] = [];
  let clear = 0;
  let at = 0;
  while (at < sample.byteLength) {
    if (at + lengthSize > sample.byteLength) throw corrupt(`NAL length field at byte ${at} is cut short`);
    let length = 0;
    for (let i = 0; i < lengthSize; i++) length = length * 256 + sample[at + i]!;
    const start = at + lengthSize;
    if (length === 0 || start + length > sample.byteLength) {
      throw corrupt(`NAL unit of ${length} bytes at byte ${at} does not fit the ${sample.byteLength}-byte sample`);
    }
    const nal = sample.subarray(start, start + length);
    const type = nal[0]! & 0x1f;
    let protectedBytes = 0;
    if (type === 1 || type === 5) {
      const header = sliceHeaderBytes(nal, sets);
      protectedBytes = Math.max(0, length - header);
      if (scheme === 'cenc') protectedBytes -= protectedBytes % 16;
      // A slice with less than one block after its header has nothing a block cipher can take.
      if (protectedBytes < 16) protectedBytes = 0;
    } else if (type === 7 || type === 8) {
      sets.add(nal);
    }
    clear += lengthSize + length - protectedBytes;
    if (protectedBytes > 0) {
      pushClear(out, clear, protectedBytes);
      clear = 0;
    }
    at = start + length;
  }
  if (clear > 0) pushClear(out, clear, 0);
  return out;
}

/** Appends clear + protected bytes, splitting a clear run longer than 16 bits. */
function pushClear(out: Subsample[], clear: number, protectedBytes: number): void {
  while (clear > MAX_CLEAR) {
    out.push({ clear: MAX_CLEAR, protected: 0 });
    clear -= MAX_CLEAR;
  }
  out.push({ clear, protected: protectedBytes });
}

function corrupt(message: string): Error {
  return originError('corrupt-media', message, { subject: 'H.264 sample' });
}
