// H.264 sequence parameter set reader (ITU-T H.264 (08/2021) §7.3.2.1.1, VUI Annex E.1.1).
// Gives the coded picture size after cropping, the sample aspect ratio, frame/field coding and
// the VUI frame rate: the track properties MaxWidth/MaxHeight, DisplayWidth/DisplayHeight,
// ScanType, FrameRate, avc_profile and avc_level come from here.

import { originError } from '../errors';
import { Rational, rational } from '../rational';
import { BitReader } from './bit-reader';

export interface SpsInfo {
  profileIdc: number;
  /** constraint_set0..5 flags and reserved bits: the byte between profile and level in `avc1.PPCCLL`. */
  constraintFlags: number;
  /** level_idc: 31 means level 3.1. */
  levelIdc: number;
  chromaFormatIdc: number;
  /** Cropped decoded size in luma samples. */
  width: number;
  height: number;
  /** frame_mbs_only_flag = 0: the stream may code fields (PAFF/MBAFF), i.e. it is interlaced. */
  interlaced: boolean;
  /** Sample aspect ratio (1:1 when the VUI does not say). */
  sar: Rational;
  /** time_scale / (2 * num_units_in_tick) when the VUI carries timing info (§E.2.1). */
  frameRate: Rational | undefined;
  /** What a slice header's length depends on (§7.3.3; media/h264-slice.ts). */
  slice: SpsSliceFields;
}

export interface SpsSliceFields {
  spsId: number;
  separateColourPlane: boolean;
  /** ChromaArrayType (§7.4.2.1.1). */
  chromaArrayType: number;
  log2MaxFrameNum: number;
  pocType: number;
  log2MaxPocLsb: number;
  deltaPicOrderAlwaysZero: boolean;
  frameMbsOnly: boolean;
}

/**
 * §7.4.1: removes emulation_prevention_three_byte (00 00 03 → 00 00). Without one (most slice
 * header prefixes), `nal` itself: the caller only reads it, and a copy per slice is garbage.
 */
export function unescapeRbsp(nal: Uint8Array): Uint8Array {
  // The first 00 00 03 is the first emulation prevention byte (the zeros before it are not a
  // removed byte's). A plain scan for it: a loop carrying the state below costs 8 times as much.
  let at = 2;
  while (at < nal.byteLength && !(nal[at] === 3 && nal[at - 1] === 0 && nal[at - 2] === 0)) at++;
  if (at >= nal.byteLength) return nal;
  const out = new Uint8Array(nal.byteLength);
  let n = 0;
  let zeros = 0;
  for (let i = 0; i < nal.byteLength; i++) {
    const b = nal[i]!;
    if (zeros >= 2 && b === 3) {
      zeros = 0;
      continue;
    }
    zeros = b === 0 ? zeros + 1 : 0;
    out[n++] = b;
  }
  return out.subarray(0, n);
}

/** Table E-1: aspect_ratio_idc 1..16. */
const SAR_TABLE: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [12, 11],
  [10, 11],
  [16, 11],
  [40, 33],
  [24, 11],
  [20, 11],
  [32, 11],
  [80, 33],
  [18, 11],
  [15, 11],
  [64, 33],
  [160, 99],
  [4, 3],
  [3, 2],
  [2, 1],
];
const EXTENDED_SAR = 255;

/** Profiles whose SPS carries chroma_format_idc and friends (§7.3.2.1.1). */
const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

function skipScalingList(r: BitReader, size: number): void {
  // §7.3.2.1.1.1
  let last = 8;
  let next = 8;
  for (let j = 0; j < size; j++) {
    if (next !== 0) next = (last + r.se() + 256) % 256;
    last = next === 0 ? last : next;
  }
}

/** Parses an SPS NAL unit (with its one-byte NAL header). */
export function parseSps(nal: Uint8Array): SpsInfo {
  if (nal.byteLength < 4 || (nal[0]! & 0x1f) !== 7) {
    throw originError('corrupt-media', 'not a sequence parameter set NAL unit', { subject: 'avcC/SPS' });
  }
  const r = new BitReader(unescapeRbsp(nal.subarray(1)), 'avcC/SPS');
  const profileIdc = r.u(8);
  const constraintFlags = r.u(8);
  const levelIdc = r.u(8);
  const spsId = r.ue();
  let chromaFormatIdc = 1;
  let separateColourPlane = false;
  if (HIGH_PROFILES.has(profileIdc)) {
    chromaFormatIdc = r.ue();
    if (chromaFormatIdc === 3) separateColourPlane = r.flag();
    r.ue(); // bit_depth_luma_minus8
    r.ue(); // bit_depth_chroma_minus8
    r.flag(); // qpprime_y_zero_transform_bypass_flag
    if (r.flag()) {
      for (let i = 0; i < (chromaFormatIdc !== 3 ? 8 : 12); i++) {
        if (r.flag()) skipScalingList(r, i < 6 ? 16 : 64);
      }
    }
  }
  const log2MaxFrameNum = r.ue() + 4;
  const pocType = r.ue();
  let log2MaxPocLsb = 0;
  let deltaPicOrderAlwaysZero = false;
  if (pocType === 0) {
    log2MaxPocLsb = r.ue() + 4;
  } else if (pocType === 1) {
    deltaPicOrderAlwaysZero = r.flag();
    r.se();
    r.se();
    const cycle = r.ue();
    if (cycle > 255)
      throw originError('corrupt-media', `num_ref_frames_in_pic_order_cnt_cycle ${cycle} > 255`, {
        subject: 'avcC/SPS',
      });
    for (let i = 0; i < cycle; i++) r.se();
  }
  r.ue(); // max_num_ref_frames
  r.flag(); // gaps_in_frame_num_value_allowed_flag
  const widthMbs = r.ue() + 1;
  const heightMapUnits = r.ue() + 1;
  const frameMbsOnly = r.flag();
  if (!frameMbsOnly) r.flag(); // mb_adaptive_frame_field_flag
  r.flag(); // direct_8x8_inference_flag
  let crop = { left: 0, right: 0, top: 0, bottom: 0 };
  if (r.flag()) crop = { left: r.ue(), right: r.ue(), top: r.ue(), bottom: r.ue() };

  // §7.4.2.1.1, Table 6-1: crop units depend on ChromaArrayType and field coding.
  const chromaArrayType = separateColourPlane ? 0 : chromaFormatIdc;
  const subWidthC = chromaArrayType === 1 || chromaArrayType === 2 ? 2 : 1;
  const subHeightC = chromaArrayType === 1 ? 2 : 1;
  const cropUnitX = chromaArrayType === 0 ? 1 : subWidthC;
  const cropUnitY = (chromaArrayType === 0 ? 1 : subHeightC) * (frameMbsOnly ? 1 : 2);
  const width = widthMbs * 16 - cropUnitX * (crop.left + crop.right);
  const height = (frameMbsOnly ? 1 : 2) * heightMapUnits * 16 - cropUnitY * (crop.top + crop.bottom);

  let sar = rational(1, 1);
  let frameRate: Rational | undefined;
  if (r.flag()) {
    // vui_parameters(), Annex E.1.1
    if (r.flag()) {
      const idc = r.u(8);
      if (idc === EXTENDED_SAR) {
        const w = r.u(16);
        const h = r.u(16);
        if (w > 0 && h > 0) sar = rational(w, h);
      } else if (idc >= 1 && idc <= SAR_TABLE.length) {
        const [w, h] = SAR_TABLE[idc - 1]!;
        sar = rational(w, h);
      }
    }
    if (r.flag()) r.flag(); // overscan_info_present_flag → overscan_appropriate_flag
    if (r.flag()) {
      r.u(3); // video_format
      r.flag(); // video_full_range_flag
      if (r.flag()) r.u(24); // colour_primaries, transfer_characteristics, matrix_coefficients
    }
    if (r.flag()) {
      r.ue();
      r.ue();
    }
    if (r.flag()) {
      const numUnitsInTick = r.u(32);
      const timeScale = r.u(32);
      // §E.2.1: one frame lasts 2 ticks when fields are counted (the usual x264 coding).
      if (numUnitsInTick > 0 && timeScale > 0) frameRate = rational(timeScale, 2 * numUnitsInTick);
    }
  }
  return {
    profileIdc,
    constraintFlags,
    levelIdc,
    chromaFormatIdc,
    width,
    height,
    interlaced: !frameMbsOnly,
    sar,
    frameRate,
    slice: {
      spsId,
      separateColourPlane,
      chromaArrayType,
      log2MaxFrameNum,
      pocType,
      log2MaxPocLsb,
      deltaPicOrderAlwaysZero,
      frameMbsOnly,
    },
  };
}
