// The hls.js notice filter is itself judged: each notice is set aside only in its exact form and
// moment, and the same text at another moment (or in another mode) still counts.

import { withoutHlsjsNotices } from '../../helpers/hlsjs-notices';

const GAP =
  'hls.js non-fatal mediaError/bufferSeekOverHole http://h/hls.ism/hls-audio_eng=64113-video_eng=410594-1.ts: fragment loaded with buffer holes, seeking from 0 to 0.121333';
const VTT_ABORT = 'hls.js non-fatal networkError/aborted http://h/hls.ism/hls-textstream_eng=1549-3.webvtt: Aborted';
const AUDIO_ABORT = 'hls.js non-fatal networkError/aborted http://h/hls.ism/hls-audio_eng=64008-4.aac: Aborted';

describe('withoutHlsjsNotices', () => {
  test('a start-gap seek and the WebVTT load it cancels, reported before the test switched the audio (the CI case)', () => {
    expect(withoutHlsjsNotices('ts-muxed', { errors: [GAP, VTT_ABORT], errorTimes: [0.121333, 0.121333] })).toEqual([]);
  });

  test('the same pair after the switch is still that seek', () => {
    expect(
      withoutHlsjsNotices('ts-muxed', { errors: [GAP, VTT_ABORT], errorTimes: [0.121333, 0.121333], switchedAt: 2.01 }),
    ).toEqual([]);
  });

  test('a WebVTT abort away from the seek counts', () => {
    expect(withoutHlsjsNotices('ts-muxed', { errors: [GAP, VTT_ABORT], errorTimes: [0.121333, 3.5] })).toEqual([
      VTT_ABORT,
    ]);
  });

  test('a WebVTT abort without a start-gap seek counts', () => {
    expect(withoutHlsjsNotices('ts-muxed', { errors: [VTT_ABORT], errorTimes: [0.121333] })).toEqual([VTT_ABORT]);
  });

  test('a start-gap seek larger than padding plus one AAC frame counts, and so does its abort', () => {
    const big = GAP.replace('0.121333', '0.5');
    expect(withoutHlsjsNotices('ts-muxed', { errors: [big, VTT_ABORT], errorTimes: [0.5, 0.5] })).toEqual([
      big,
      VTT_ABORT,
    ]);
  });

  test('the start gap is a multiplexed-TS notice only', () => {
    expect(withoutHlsjsNotices('fmp4', { errors: [GAP, VTT_ABORT], errorTimes: [0.121333, 0.121333] })).toEqual([
      GAP,
      VTT_ABORT,
    ]);
  });

  test('an English audio load aborted within a second after the switch is the switch; before it, it counts', () => {
    expect(withoutHlsjsNotices('ts-demuxed', { errors: [AUDIO_ABORT], errorTimes: [2.5], switchedAt: 2.01 })).toEqual(
      [],
    );
    expect(withoutHlsjsNotices('ts-demuxed', { errors: [AUDIO_ABORT], errorTimes: [1.5], switchedAt: 2.01 })).toEqual([
      AUDIO_ABORT,
    ]);
    expect(withoutHlsjsNotices('ts-demuxed', { errors: [AUDIO_ABORT], errorTimes: [1.5] })).toEqual([AUDIO_ABORT]);
  });

  const NO_PROGRESS_MUXED =
    'hls.js non-fatal mediaError/bufferAppendNoProgress http://h/hls.ism/hls-audio_eng=64113-video_eng=410594-1.ts: Fragment append did not increase buffered coverage (1)';
  const NO_PROGRESS_DEMUXED =
    'hls.js non-fatal mediaError/bufferAppendNoProgress http://h/hls.ism/hls-video_eng=410594-1.ts?hls_no_multiplex=true: Fragment append did not increase buffered coverage (1)';

  test('the first main fragment appended before the SourceBuffers existed: ts-muxed (alternate audio with a URI) and ts-demuxed', () => {
    expect(withoutHlsjsNotices('ts-muxed', { errors: [NO_PROGRESS_MUXED, GAP], errorTimes: [0, 0.121333] })).toEqual(
      [],
    );
    expect(withoutHlsjsNotices('ts-demuxed', { errors: [NO_PROGRESS_DEMUXED], errorTimes: [0] })).toEqual([]);
  });

  test('that notice for another fragment, a second time, or in another mode counts', () => {
    // Another fragment (not the start-up race), or the same one counted twice.
    const second = NO_PROGRESS_MUXED.replace('-1.ts', '-2.ts');
    const twice = NO_PROGRESS_MUXED.replace('(1)', '(2)');
    expect(withoutHlsjsNotices('ts-muxed', { errors: [second, twice], errorTimes: [0, 0] })).toEqual([second, twice]);
    // Each mode's own rendition only: a muxed fragment is not the video-only one's, nor the reverse.
    expect(withoutHlsjsNotices('ts-muxed', { errors: [NO_PROGRESS_DEMUXED], errorTimes: [0] })).toEqual([
      NO_PROGRESS_DEMUXED,
    ]);
    // fMP4 has no such race (no transmuxing, no initPTS wait).
    const fmp4 = NO_PROGRESS_DEMUXED.replace('.ts?hls_no_multiplex=true', '.m4s?hls_fmp4=true');
    expect(withoutHlsjsNotices('fmp4', { errors: [fmp4, NO_PROGRESS_MUXED], errorTimes: [0, 0] })).toEqual([
      fmp4,
      NO_PROGRESS_MUXED,
    ]);
  });

  test("hls.js's ABR leaving the 64k group aborts that group's packed audio, in ts-muxed too (the 64k DEFAULT has a URI there)", () => {
    const abr = 'hls.js non-fatal networkError/aborted http://h/hls.ism/hls-audio_eng=64113-2.aac: Aborted';
    expect(withoutHlsjsNotices('ts-muxed', { errors: [abr], errorTimes: [0] })).toEqual([]);
    const other = abr.replace('64113', '127962');
    expect(withoutHlsjsNotices('ts-muxed', { errors: [other], errorTimes: [0] })).toEqual([other]);
  });

  test('any other error counts', () => {
    const fatal = 'hls.js fatal networkError/fragLoadError HTTP 404 http://h/hls.ism/hls-video_eng=410594-2.ts';
    expect(withoutHlsjsNotices('ts-muxed', { errors: [GAP, fatal], errorTimes: [0.12, 0.12] })).toEqual([fatal]);
  });
});
