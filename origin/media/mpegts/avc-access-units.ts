// H.264 in MPEG-TS (ISO/IEC 13818-1 §2.14, stream_type 0x1B) to ISO BMFF samples (ISO/IEC 14496-15
// §5.3): a PES holds an access unit in Annex B byte-stream form (ITU-T H.264 Annex B: start codes
// 00 00 01 or 00 00 00 01); a sample holds the same NAL units with a 4-byte length before each.
// - Access units: one per PES with a PTS (what HLS muxers write, RFC 8216 §3.2 asks for PES
//   aligned to access units in practice); a PES without a PTS continues the access unit before it.
// - Access unit delimiters (type 9), SPS (7) and PPS (8) leave the sample: the parameter sets go to
//   the avcC (§5.3.3.1) of the track, the first seen of each id; one that changes later is refused
//   by the caller (a new sample entry mid-capture is not written).
// - A keyframe is an access unit with an IDR slice (type 5, §7.4.1.2.4).
// Pure.

import type { AvcConfig } from '../../model/media';

const NAL_IDR = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;
const NAL_AUD = 9;

export interface AccessUnit {
  /** Length-prefixed (4 bytes) NAL units: the sample's bytes. */
  data: Uint8Array;
  sync: boolean;
}

export interface AnnexBUnit {
  nals: Uint8Array[];
  /** SPS and PPS NAL units found in it, in order. */
  sps: Uint8Array[];
  pps: Uint8Array[];
}

/** The NAL units of an Annex B byte stream (§B.1.1: trailing zero bytes belong to the next start code). */
export function splitAnnexB(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = -1;
  let i = 0;
  while (i + 2 < b.byteLength) {
    if (b[i + 2]! > 1) i += 3;
    else if (b[i] === 0 && b[i + 1] === 0 && b[i + 2] === 1) {
      if (start >= 0) out.push(trimZeros(b, start, i));
      start = i + 3;
      i += 3;
    } else i++;
  }
  if (start >= 0 && start < b.byteLength) out.push(trimZeros(b, start, b.byteLength));
  return out.filter((n) => n.byteLength > 0);
}

function trimZeros(b: Uint8Array, from: number, to: number): Uint8Array {
  let end = to;
  while (end > from && b[end - 1] === 0) end--;
  return b.subarray(from, end);
}

/** The NAL units of a PES payload, the parameter sets set apart. */
export function annexBUnit(payload: Uint8Array): AnnexBUnit {
  const unit: AnnexBUnit = { nals: [], sps: [], pps: [] };
  for (const nal of splitAnnexB(payload)) {
    const type = nal[0]! & 0x1f;
    if (type === NAL_SPS) unit.sps.push(nal);
    else if (type === NAL_PPS) unit.pps.push(nal);
    else if (type !== NAL_AUD) unit.nals.push(nal);
  }
  return unit;
}

/** NAL units (without SPS, PPS, AUD) as one length-prefixed sample. */
export function accessUnit(nals: readonly Uint8Array[]): AccessUnit {
  const size = nals.reduce((n, x) => n + 4 + x.byteLength, 0);
  const data = new Uint8Array(size);
  const view = new DataView(data.buffer);
  let at = 0;
  let sync = false;
  for (const nal of nals) {
    view.setUint32(at, nal.byteLength);
    data.set(nal, at + 4);
    at += 4 + nal.byteLength;
    if ((nal[0]! & 0x1f) === NAL_IDR) sync = true;
  }
  return { data, sync };
}

/** §5.3.3.1 AVCDecoderConfigurationRecord of SPS and PPS NAL units, 4-byte lengths. */
export function avcConfigOf(sps: readonly Uint8Array[], pps: readonly Uint8Array[]): AvcConfig {
  const first = sps[0]!;
  const size = 6 + sps.reduce((n, s) => n + 2 + s.byteLength, 0) + 1 + pps.reduce((n, p) => n + 2 + p.byteLength, 0);
  const record = new Uint8Array(size);
  // configurationVersion, AVCProfileIndication, profile_compatibility, AVCLevelIndication (the SPS's bytes 1..3).
  record.set([1, first[1] ?? 0, first[2] ?? 0, first[3] ?? 0, 0xfc | 3, 0xe0 | sps.length]);
  let at = 6;
  const put = (nal: Uint8Array): void => {
    record[at] = nal.byteLength >> 8;
    record[at + 1] = nal.byteLength & 0xff;
    record.set(nal, at + 2);
    at += 2 + nal.byteLength;
  };
  sps.forEach(put);
  record[at++] = pps.length;
  pps.forEach(put);
  return { kind: 'avc', lengthSize: 4, parameterSets: [...sps, ...pps], spsCount: sps.length, record };
}
