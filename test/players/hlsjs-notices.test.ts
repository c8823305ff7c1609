// The hls.js notice filter is itself judged: each notice is set aside only in its exact form and
// moment, and the same text at another moment (or in another mode) still counts.

import { withoutHlsjsNotices } from '../support/hlsjs-notices';

const GAP = 'hls.js non-fatal mediaError/bufferSeekOverHole http://h/hls.ism/hls-audio_eng=64113-video_eng=410594-1.ts: fragment loaded with buffer holes, seeking from 0 to 0.121333';
const VTT_ABORT = 'hls.js non-fatal networkError/aborted http://h/hls.ism/hls-textstream_eng=1549-3.webvtt: Aborted';
const AUDIO_ABORT = 'hls.js non-fatal networkError/aborted http://h/hls.ism/hls-audio_eng=64008-4.aac: Aborted';

describe('withoutHlsjsNotices', () => {
  test('a start-gap seek and the WebVTT load it cancels, reported before the test switched the audio (the CI case)', () => {
    expect(withoutHlsjsNotices('ts-muxed', { errors: [GAP, VTT_ABORT], errorTimes: [0.121333, 0.121333] })).toEqual([]);
  });

  test('the same pair after the switch is still that seek', () => {
    expect(withoutHlsjsNotices('ts-muxed', { errors: [GAP, VTT_ABORT], errorTimes: [0.121333, 0.121333], switchedAt: 2.01 })).toEqual([]);
  });

  test('a WebVTT abort away from the seek counts', () => {
    expect(withoutHlsjsNotices('ts-muxed', { errors: [GAP, VTT_ABORT], errorTimes: [0.121333, 3.5] })).toEqual([VTT_ABORT]);
  });

  test('a WebVTT abort without a start-gap seek counts', () => {
    expect(withoutHlsjsNotices('ts-muxed', { errors: [VTT_ABORT], errorTimes: [0.121333] })).toEqual([VTT_ABORT]);
  });

  test('a start-gap seek larger than padding plus one AAC frame counts, and so does its abort', () => {
    const big = GAP.replace('0.121333', '0.5');
    expect(withoutHlsjsNotices('ts-muxed', { errors: [big, VTT_ABORT], errorTimes: [0.5, 0.5] })).toEqual([big, VTT_ABORT]);
  });

  test('the start gap is a multiplexed-TS notice only', () => {
    expect(withoutHlsjsNotices('fmp4', { errors: [GAP, VTT_ABORT], errorTimes: [0.121333, 0.121333] })).toEqual([GAP, VTT_ABORT]);
  });

  test('an English audio load aborted within a second after the switch is the switch; before it, it counts', () => {
    expect(withoutHlsjsNotices('ts-demuxed', { errors: [AUDIO_ABORT], errorTimes: [2.5], switchedAt: 2.01 })).toEqual([]);
    expect(withoutHlsjsNotices('ts-demuxed', { errors: [AUDIO_ABORT], errorTimes: [1.5], switchedAt: 2.01 })).toEqual([AUDIO_ABORT]);
    expect(withoutHlsjsNotices('ts-demuxed', { errors: [AUDIO_ABORT], errorTimes: [1.5] })).toEqual([AUDIO_ABORT]);
  });

  test('any other error counts', () => {
    const fatal = 'hls.js fatal networkError/fragLoadError HTTP 404 http://h/hls.ism/hls-video_eng=410594-2.ts';
    expect(withoutHlsjsNotices('ts-muxed', { errors: [GAP, fatal], errorTimes: [0.12, 0.12] })).toEqual([fatal]);
  });
});
