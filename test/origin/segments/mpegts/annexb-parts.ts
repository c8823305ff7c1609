// The old MPEG-TS writer's Annex B conversion, kept as the oracle of writeAccessUnit
// (origin/segments/mpegts/avc-annexb.ts): the access unit as a list of parts, no copy of the
// sample, each NAL unit behind a start code of its length field's size (ITU-T H.264 Annex B;
// ISO/IEC 14496-15 §5.3.2).

import { OriginError, originError } from '../../../../origin/errors';
import type { AvcConfig } from '../../../../origin/model/media';
import { ACCESS_UNIT_DELIMITER } from '../../../../origin/segments/mpegts/avc-annexb';

const START_CODE_4 = Uint8Array.of(0, 0, 0, 1);
const START_CODE_3 = Uint8Array.of(0, 0, 1);

/**
 * The access unit as parts (no copy of the sample's bytes): AUD, the parameter sets on keyframes,
 * then each NAL unit behind a start code. `where` names the sample in errors (file and offset).
 */
export function accessUnitParts(
  sample: Uint8Array,
  keyframe: boolean,
  c: AvcConfig,
  parameterSets: Uint8Array,
  where: { file: string; offset: number },
): Uint8Array[] {
  const parts: Uint8Array[] = [ACCESS_UNIT_DELIMITER];
  if (keyframe) parts.push(parameterSets);
  const n = c.lengthSize;
  const startCode = n === 4 ? START_CODE_4 : START_CODE_3;
  let at = 0;
  while (at < sample.byteLength) {
    if (at + n > sample.byteLength)
      throw bad(where, at, `${sample.byteLength - at} bytes left, a NAL length field needs ${n}`);
    let length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + sample[at + i]!;
    if (length === 0) throw bad(where, at, 'NAL unit of length 0');
    if (at + n + length > sample.byteLength)
      throw bad(
        where,
        at,
        `NAL unit of ${length} bytes runs past the sample's end (${sample.byteLength - at - n} bytes left)`,
      );
    parts.push(startCode, sample.subarray(at + n, at + n + length));
    at += n + length;
  }
  return parts;
}

function bad(where: { file: string; offset: number }, at: number, what: string): OriginError {
  return originError(
    'corrupt-media',
    `H.264 sample at file offset ${where.offset}: ${what} (at file offset ${where.offset + at})`,
    { subject: where.file },
  );
}
