// The errors hls.js 1.7.4 reports about its own behaviour on correct input, shared by every test
// that plays HLS in hls.js (test/players/*, test/edge/*). Each is accepted only in exactly the
// form and moment hls.js's source explains; anything else still fails the test.

import { PlayResult } from './browser';

/** The HLS packaging a test plays: MPEG-TS multiplexed (default), demultiplexed, or fMP4. */
export type Mode = 'ts-muxed' | 'ts-demuxed' | 'fmp4';

/** hls.js's skipBufferHolePadding (config.ts default 0.1 s) plus the lead of the primed AAC
 * track over the video (one 1024-sample frame at 48 kHz: audio PTS 900000, video 901920). */
const START_GAP_SEEK_MAX = 0.1 + 1024 / 48000 + 0.001;
/** How far the playhead may have moved from a seek's target when an error raised by that seek is
 * reported (the page reads currentTime in hls.js's ERROR handler, run from the 'seeking' event). */
const SEEK_MOMENT_S = 0.05;
/** How long after the test's audio switch hls.js may report the load it aborted itself. */
const SWITCH_WINDOW_S = 1;
/** Rule 4's notice: the first main fragment of each TS mode (video-only, or audio + video). */
const FIRST_MAIN_NO_PROGRESS: Record<'ts-demuxed' | 'ts-muxed', RegExp> = {
  'ts-demuxed':
    /^hls\.js non-fatal mediaError\/bufferAppendNoProgress \S+\/[^/]*-video_eng=\d+-1\.ts(\?\S*)?: Fragment append did not increase buffered coverage \(1\)$/,
  'ts-muxed':
    /^hls\.js non-fatal mediaError\/bufferAppendNoProgress \S+\/[^/]*-audio_eng=\d+-video_eng=\d+-1\.ts(\?\S*)?: Fragment append did not increase buffered coverage \(1\)$/,
};

/**
 * The errors hls.js 1.7.4 reports about its own behaviour on correct input, each accepted only in
 * exactly the form and moment its source explains (node_modules/hls.js/src); anything else fails.
 * Returns the errors that remain.
 */
export function withoutHlsjsNotices(mode: Mode, r: Pick<PlayResult, 'errors' | 'errorTimes' | 'switchedAt'>): string[] {
  const keep: string[] = [];
  const times = r.errorTimes;
  // 1. Start gap (ts-muxed). The TS is right: the origin's presentation starts with the primed AAC
  //    frame (PTS 900000 = output 0, ffmpeg's -213333 tfxd shifted) and the video 21.3 ms later
  //    (PTS 901920), as fMP4 says too (audio tfdt 0, video tfdt 213333 at 10 MHz) and as ffmpeg's
  //    own muxed TS of AAC + H.264 is. hls.js takes initPTS from the earliest track
  //    (mp4-remuxer.ts generateIS), so the video, hence media.buffered, starts at 0.0213 while the
  //    playhead is at 0; gap-controller.ts _trySkipBufferHole then seeks to start +
  //    skipBufferHolePadding and always announces it as a non-fatal BUFFER_SEEK_OVER_HOLE,
  //    however small the gap.
  const startGapTo = (e: string): number | undefined => {
    if (mode !== 'ts-muxed') return undefined;
    const m =
      /^hls\.js non-fatal mediaError\/bufferSeekOverHole \S+-1\.ts(?:\?\S*)?: fragment loaded with buffer holes, seeking from 0 to ([0-9.]+)$/.exec(
        e,
      );
    return m !== null && Number(m[1]) <= START_GAP_SEEK_MAX ? Number(m[1]) : undefined;
  };
  const startGap = (e: string): boolean => startGapTo(e) !== undefined;
  const seekTo = r.errors.map(startGapTo).find((t) => t !== undefined);
  r.errors.forEach((e, i) => {
    const at = times[i] ?? Number.NaN;
    if (startGap(e)) return;
    // 2. That start-gap seek makes the subtitle stream controller cancel the WebVTT load in flight
    //    (base-stream-controller.ts onMediaSeeking: "Cancelling fragment load for seek"), which the
    //    fragment loader reports as a non-fatal INTERNAL_ABORTED (fragment-loader.ts onAbort,
    //    base-stream-controller.ts handleFragLoadError). Only with that seek and in the same
    //    moment: the abort is raised inside the 'seeking' handler, so the playhead it is reported
    //    at is the seek's target (whether or not the test has switched the audio yet).
    if (
      seekTo !== undefined &&
      /^hls\.js non-fatal networkError\/aborted \S+\.webvtt(\?\S*)?: Aborted$/.test(e) &&
      Math.abs(at - seekTo) <= SEEK_MOMENT_S
    )
      return;
    // 3. The audio switch itself: audio-stream-controller.ts onAudioTrackSwitching aborts the
    //    segment of the old track in flight (fragCurrent.abortRequests()), reported the same way.
    //    Only an English audio segment, within a second after the test switched.
    //    hls.js's ABR does the same when it moves from the 400k variant (group audio-aacl-64) to
    //    one of group audio-aacl-128: audio-track-controller switches to that group's track and
    //    the 64k segment in flight is aborted; only that track's segments, at any time.
    if (
      /^hls\.js non-fatal networkError\/aborted \S+-audio_eng=\d+-\d+\.(m4s|aac)(\?\S*)?: Aborted$/.test(e) &&
      r.switchedAt !== undefined &&
      at >= r.switchedAt &&
      at <= r.switchedAt + SWITCH_WINDOW_S
    )
      return;
    if (/^hls\.js non-fatal networkError\/aborted \S+-audio_eng=64113-\d+\.(m4s|aac)(\?\S*)?: Aborted$/.test(e)) return;
    // 4. Alternate audio with its own URI (ts-demuxed; and ts-muxed, where the origin gives every
    //    audio member a URI once a group has two, so hls.js plays the packed audio and drops the
    //    muxed audio of the main fragments): the packed-audio fragment waits for the video's
    //    initPTS (audio-stream-controller.ts _handleFragmentLoadProgress, "waiting for video PTS
    //    before demuxing audio"), so the first main fragment is parsed and its video queued before
    //    buffer-controller.ts can create the SourceBuffers (checkPendingTracks waits for both
    //    codecs); checkAppendProgress then counts that fragment as appended without growth once,
    //    while the same run logs "Buffered main sn: 1 ... buffer:[0.021-4.021]" (hls.js debug
    //    log, both modes). Only the first main fragment (video-only TS, or the muxed TS), only the
    //    first count. Not tied to a playhead time: the check runs once that fragment's appends
    //    have completed (buffer-controller.ts onFragParsed, blockBuffers), by when playback may
    //    have started.
    if (mode !== 'fmp4' && FIRST_MAIN_NO_PROGRESS[mode].test(e)) return;
    keep.push(e);
  });
  return keep;
}

/** The packaging an HLS URL asks for (its query). */
export function modeOf(url: string): Mode {
  const q = new URL(url, 'http://x/').searchParams;
  if (q.get('hls_fmp4') === 'true') return 'fmp4';
  if (q.get('hls_no_multiplex') === 'true') return 'ts-demuxed';
  return 'ts-muxed';
}

/** playAndCheck options and the error filter for one player and manifest: hls.js's own notices
 * are set aside (and do not stop the polling); every other player's errors all count. */
export function hlsjsAware(
  player: string,
  manifestUrl: string,
): {
  options: { counted?: (r: Pick<PlayResult, 'errors' | 'errorTimes' | 'switchedAt'>) => string[] };
  errors: (r: Pick<PlayResult, 'errors' | 'errorTimes' | 'switchedAt'>) => string[];
} {
  if (player !== 'hlsjs' || !/\.m3u8(\?|$)/.test(new URL(manifestUrl, 'http://x/').pathname + '?')) {
    return { options: {}, errors: (r) => r.errors };
  }
  const mode = modeOf(manifestUrl);
  const f = (r: Pick<PlayResult, 'errors' | 'errorTimes' | 'switchedAt'>): string[] => withoutHlsjsNotices(mode, r);
  return { options: { counted: f }, errors: f };
}
