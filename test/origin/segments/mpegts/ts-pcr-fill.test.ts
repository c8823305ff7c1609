// The PCR-only packets of one MPEG-TS segment (origin/segments/mpegts/mpegts.ts planTsSegment,
// ISO/IEC 13818-1 §2.7.2: PCRs at most 100 ms apart) are bounded before they are made. Found by the
// hardening corpus (test/hardening/): a source whose mdhd timescale was 1 instead of 10 MHz put
// its second frame 416 666 s after the first, and the fill loop grew until the process held
// gigabytes.

import { OriginError } from '../../../../origin/errors';
import type { AvcConfig } from '../../../../origin/model/media';
import { planTsSegment, TsSample, tsStream, TsSegmentInput } from '../../../../origin/segments/mpegts/mpegts';

const AVC: AvcConfig = {
  kind: 'avc',
  lengthSize: 4,
  parameterSets: [Uint8Array.of(0x67, 0x42, 0xc0, 0x1e, 0xda, 0x02, 0x00), Uint8Array.of(0x68, 0xce, 0x3c, 0x80)],
  spsCount: 1,
  record: new Uint8Array(0),
};
const video = tsStream(AVC, undefined, 'v');

/** A keyframe of 300 bytes (one length-prefixed NAL unit) at 90 kHz time `t`. */
function frame(t: number): TsSample {
  const data = new Uint8Array(300);
  new DataView(data.buffer).setUint32(0, 296);
  return { dts: BigInt(t), pts: BigInt(t), size: 300, keyframe: true, group: 0, data, file: 'test.mp4', offset: 0 };
}

const HOUR = 3600 * 90000;

function input(gap: number, nextPcr?: bigint): TsSegmentInput {
  return {
    streams: [{ stream: video, samples: [frame(900000), frame(900000 + gap)], cc: 0 }],
    patCc: 0,
    pmtCc: 0,
    nextPcr,
  };
}

test('a gap of just under an hour is filled with PCR packets', () => {
  expect(planTsSegment(input(HOUR - 9000)).items.filter((i) => i.kind === 'pcr').length).toBeGreaterThan(35_000);
});

test('a gap of 416 666 s is refused as segment-too-large before any packet is made', () => {
  let error: unknown;
  try {
    planTsSegment(input(416_666 * 90000));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(OriginError);
  expect([(error as OriginError).code, (error as Error).message]).toEqual([
    'segment-too-large',
    expect.stringMatching(/a gap of 416666 s without samples/),
  ]);
});

test("so is a gap of two hours to the next segment's first PCR", () => {
  expect(() => planTsSegment(input(9000, 900000n + 2n * BigInt(HOUR)))).toThrow(/PCR-only packets/);
});
