// The length of an H.264 slice header (ITU-T H.264 (08/2021) §7.3.3), for subsample encryption:
// ISO/IEC 23001-7 §10.4.2 (cbcs) has the protected range of a video NAL start at the first byte
// after the slice header, and CMAF keeps the slice header clear for cenc too (ISO/IEC 23000-19
// §8.2.3.2). Reads the picture parameter sets (§7.3.2.2) the headers refer to; the sequence
// parameter set fields come from media/h264-sps.ts. Pure: bytes in, numbers out.

import { originError } from '../errors';
import { BitReader } from './bit-reader';
import { parseSps, SpsSliceFields, unescapeRbsp } from './h264-sps';

export interface PpsFields {
  ppsId: number;
  spsId: number;
  entropyCodingMode: boolean;
  bottomFieldPicOrderInFramePresent: boolean;
  numSliceGroups: number;
  numRefIdxL0DefaultActive: number;
  numRefIdxL1DefaultActive: number;
  weightedPred: boolean;
  weightedBipredIdc: number;
  deblockingFilterControlPresent: boolean;
  redundantPicCntPresent: boolean;
}

/** §7.3.2.2: the fields up to redundant_pic_cnt_present_flag (the rest never changes a slice header's length). */
export function parsePps(nal: Uint8Array): PpsFields {
  if (nal.byteLength < 2 || (nal[0]! & 0x1f) !== 8) {
    throw originError('corrupt-media', 'not a picture parameter set NAL unit', { subject: 'avcC/PPS' });
  }
  const r = new BitReader(unescapeRbsp(nal.subarray(1)), 'avcC/PPS');
  const ppsId = r.ue();
  const spsId = r.ue();
  const entropyCodingMode = r.flag();
  const bottomFieldPicOrderInFramePresent = r.flag();
  const numSliceGroups = r.ue() + 1;
  if (numSliceGroups > 1) {
    // Flexible macroblock ordering (Baseline/Extended only): its slice_group_change_cycle needs
    // the slice group map, which no encoder we know of writes in streaming content.
    throw originError('unsupported-media', 'H.264 slice groups (FMO) cannot be encrypted', { subject: 'avcC/PPS' });
  }
  const numRefIdxL0DefaultActive = r.ue() + 1;
  const numRefIdxL1DefaultActive = r.ue() + 1;
  const weightedPred = r.flag();
  const weightedBipredIdc = r.u(2);
  r.se(); // pic_init_qp_minus26
  r.se(); // pic_init_qs_minus26
  r.se(); // chroma_qp_index_offset
  const deblockingFilterControlPresent = r.flag();
  r.flag(); // constrained_intra_pred_flag
  return {
    ppsId,
    spsId,
    entropyCodingMode,
    bottomFieldPicOrderInFramePresent,
    numSliceGroups,
    numRefIdxL0DefaultActive,
    numRefIdxL1DefaultActive,
    weightedPred,
    weightedBipredIdc,
    deblockingFilterControlPresent,
    redundantPicCntPresent: r.flag(),
  };
}

/** The parameter sets of a track (its avcC), by id: what slice headers are read against. */
export class ParameterSets {
  private readonly sps = new Map<number, SpsSliceFields>();
  private readonly pps = new Map<number, PpsFields>();

  constructor(nals: readonly Uint8Array[]) {
    for (const nal of nals) this.add(nal);
  }

  /**
   * A copy to add in-band parameter sets to, the parsed ones shared (they are never changed, only
   * replaced): what a track's avcC gives, parsed once, while each copy follows its own stream.
   */
  fork(): ParameterSets {
    const copy = new ParameterSets([]);
    for (const [id, s] of this.sps) copy.sps.set(id, s);
    for (const [id, p] of this.pps) copy.pps.set(id, p);
    return copy;
  }

  /** Adds an SPS or PPS (in-band ones replace the avcC's of the same id); other NALs are ignored. */
  add(nal: Uint8Array): void {
    const type = nal[0]! & 0x1f;
    if (type === 7) {
      const s = parseSps(nal).slice;
      this.sps.set(s.spsId, s);
    } else if (type === 8) {
      const p = parsePps(nal);
      this.pps.set(p.ppsId, p);
    }
  }

  lookup(ppsId: number): { sps: SpsSliceFields; pps: PpsFields } {
    const pps = this.pps.get(ppsId);
    const sps = pps === undefined ? undefined : this.sps.get(pps.spsId);
    if (pps === undefined || sps === undefined) {
      throw originError('corrupt-media', `slice refers to parameter set ${ppsId}, which the stream does not carry`, {
        subject: 'slice header',
      });
    }
    return { sps, pps };
  }
}

const P = 0;
const B = 1;
const I = 2;
const SP = 3;
const SI = 4;

/**
 * Bytes of a slice NAL unit (types 1 and 5, header byte included, emulation-prevention bytes as
 * stored) up to and including the byte that holds the last bit of its slice header.
 */
export function sliceHeaderBytes(nal: Uint8Array, sets: ParameterSets): number {
  const nalType = nal[0]! & 0x1f;
  if (nalType !== 1 && nalType !== 5) {
    throw originError('internal', `NAL type ${nalType} is not a slice`, { subject: 'sliceHeaderBytes' });
  }
  // The header is short: read it from a small unescaped prefix, a longer one if it runs past.
  try {
    return headerBytes(nal, sets, 64);
  } catch (e) {
    if (nal.byteLength <= 65) throw e;
    return headerBytes(nal, sets, 1024);
  }
}

function headerBytes(nal: Uint8Array, sets: ParameterSets, window: number): number {
  const nalRefIdc = (nal[0]! >> 5) & 3;
  const nalType = nal[0]! & 0x1f;
  const prefix = nal.subarray(1, Math.min(nal.byteLength, 1 + window));
  const r = new BitReader(unescapeRbsp(prefix), 'slice header');
  r.ue(); // first_mb_in_slice
  const sliceType = r.ue() % 5;
  const { sps, pps } = sets.lookup(r.ue());
  if (sps.separateColourPlane) r.u(2); // colour_plane_id
  r.u(sps.log2MaxFrameNum); // frame_num
  let fieldPic = false;
  if (!sps.frameMbsOnly) {
    fieldPic = r.flag();
    if (fieldPic) r.flag(); // bottom_field_flag
  }
  if (nalType === 5) r.ue(); // idr_pic_id
  if (sps.pocType === 0) {
    r.u(sps.log2MaxPocLsb); // pic_order_cnt_lsb
    if (pps.bottomFieldPicOrderInFramePresent && !fieldPic) r.se(); // delta_pic_order_cnt_bottom
  }
  if (sps.pocType === 1 && !sps.deltaPicOrderAlwaysZero) {
    r.se(); // delta_pic_order_cnt[0]
    if (pps.bottomFieldPicOrderInFramePresent && !fieldPic) r.se();
  }
  if (pps.redundantPicCntPresent) r.ue();
  if (sliceType === B) r.flag(); // direct_spatial_mv_pred_flag
  let l0 = pps.numRefIdxL0DefaultActive;
  let l1 = pps.numRefIdxL1DefaultActive;
  if (sliceType === P || sliceType === SP || sliceType === B) {
    if (r.flag()) {
      l0 = r.ue() + 1;
      if (sliceType === B) l1 = r.ue() + 1;
    }
  }
  if (sliceType !== I && sliceType !== SI) refPicListModification(r);
  if (sliceType === B) refPicListModification(r);
  if ((pps.weightedPred && (sliceType === P || sliceType === SP)) || (pps.weightedBipredIdc === 1 && sliceType === B)) {
    predWeightTable(r, sps.chromaArrayType, l0, sliceType === B ? l1 : 0);
  }
  if (nalRefIdc !== 0) decRefPicMarking(r, nalType === 5);
  if (pps.entropyCodingMode && sliceType !== I && sliceType !== SI) r.ue(); // cabac_init_idc
  r.se(); // slice_qp_delta
  if (sliceType === SP || sliceType === SI) {
    if (sliceType === SP) r.flag(); // sp_for_switch_flag
    r.se(); // slice_qs_delta
  }
  if (pps.deblockingFilterControlPresent) {
    if (r.ue() !== 1) {
      r.se(); // slice_alpha_c0_offset_div2
      r.se(); // slice_beta_offset_div2
    }
  }
  const rbspBytes = Math.ceil(r.position / 8);
  return 1 + escapedLength(prefix, rbspBytes);
}

/** Bytes of `escaped` that hold its first `rbspBytes` unescaped bytes (emulation prevention, §7.4.1). */
function escapedLength(escaped: Uint8Array, rbspBytes: number): number {
  let zeros = 0;
  let kept = 0;
  for (let i = 0; i < escaped.byteLength; i++) {
    const b = escaped[i]!;
    if (zeros >= 2 && b === 3) {
      zeros = 0;
      continue;
    }
    zeros = b === 0 ? zeros + 1 : 0;
    if (++kept === rbspBytes) return i + 1;
  }
  return escaped.byteLength;
}

/** §7.3.3.1 */
function refPicListModification(r: BitReader): void {
  if (!r.flag()) return;
  for (let n = 0; ; n++) {
    const idc = r.ue();
    if (idc === 3) return;
    if (idc > 5 || n > 64)
      throw originError('corrupt-media', 'bad ref_pic_list_modification', { subject: 'slice header' });
    r.ue(); // abs_diff_pic_num_minus1 / long_term_pic_num / abs_diff_view_idx_minus1
  }
}

/** §7.3.3.2 */
function predWeightTable(r: BitReader, chromaArrayType: number, l0: number, l1: number): void {
  r.ue(); // luma_log2_weight_denom
  if (chromaArrayType !== 0) r.ue(); // chroma_log2_weight_denom
  for (const count of [l0, l1]) {
    for (let i = 0; i < count; i++) {
      if (r.flag()) {
        r.se();
        r.se();
      }
      if (chromaArrayType !== 0 && r.flag()) {
        for (let j = 0; j < 4; j++) r.se();
      }
    }
  }
}

/** §7.3.3.3 */
function decRefPicMarking(r: BitReader, idr: boolean): void {
  if (idr) {
    r.flag(); // no_output_of_prior_pics_flag
    r.flag(); // long_term_reference_flag
    return;
  }
  if (!r.flag()) return; // adaptive_ref_pic_marking_mode_flag
  for (let n = 0; ; n++) {
    const op = r.ue();
    if (op === 0) return;
    if (op > 6 || n > 66) throw originError('corrupt-media', 'bad dec_ref_pic_marking', { subject: 'slice header' });
    if (op === 1 || op === 3) r.ue(); // difference_of_pic_nums_minus1
    if (op === 2) r.ue(); // long_term_pic_num
    if (op === 3 || op === 6) r.ue(); // long_term_frame_idx
    if (op === 4) r.ue(); // max_long_term_frame_idx_plus1
  }
}
