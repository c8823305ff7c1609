// The DASH writer's helpers on their own: ISO 8601 durations, RFC 5646 language tags and the
// SegmentTimeline of a segment list.

import { isoDuration, rfc5646Language, timeline } from '../../../origin/manifests/dash';
import { Segment } from '../../../origin/model/timeline';
import { segmentListOf } from '../../helpers/segments';

describe('helpers', () => {
  test('isoDuration', () => {
    expect([0n, 6000n, 2500n, 2016n, 10032n, 733979n, 3723456n, 3600000n].map(isoDuration)).toEqual([
      'PT0S',
      'PT6S',
      'PT2.5S',
      'PT2.016S',
      'PT10.032S',
      'PT12M13.979S',
      'PT1H2M3.456S',
      'PT1H',
    ]);
  });

  test('rfc5646Language: ISO 639-2 T and B codes to ISO 639-1, tags kept, und dropped', () => {
    expect(
      ['eng', 'nld', 'dut', 'deu', 'ger', 'ENG', 'zho', 'ace', 'zh-Hans', 'en', 'und', '', 'e n'].map(rfc5646Language),
    ).toEqual(['en', 'nl', 'nl', 'de', 'de', 'en', 'zh', 'ace', 'zh-Hans', 'en', undefined, undefined, undefined]);
  });

  test('timeline: @t again after a gap, @r only over contiguous equal durations', () => {
    const seg = (time: number, duration: number): Segment => ({
      sourceTime: BigInt(time),
      smoothTime: BigInt(time),
      time: BigInt(time),
      duration: BigInt(duration),
      first: 0,
      count: 1,
      bytes: 0,
    });
    expect(timeline(segmentListOf([seg(0, 2), seg(2, 2), seg(5, 2), seg(7, 2), seg(9, 3)]))).toEqual([
      '<S t="0" d="2" r="1" />',
      '<S t="5" d="2" r="1" />',
      '<S d="3" />',
    ]);
    expect(timeline(segmentListOf([seg(-10, 4)]))).toEqual(['<S t="-10" d="4" />']);
  });
});
