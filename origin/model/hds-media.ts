// HDS media: what one F4M `<media>` (and its fragments) carries. FLV multiplexes, and an HDS
// client plays one media at a time with no separate audio, so a media is a video track with the
// audio multiplexed into it, or an audio track alone when the request has no video. The manifest
// writer, the fragment handler and the route all name and find media through this module only.
//
// - Which tracks: H.264 video (avc1, avc3) and AAC audio (mp4a), the codecs FLV carries of those
//   the origin packages. Text, AC-3 and E-AC-3 tracks are left out of HDS output.
// - Which audio goes with the video: one audio track for every bitrate, so that switching
//   bitrates never switches the language or the sound: the language of the request's first AAC
//   track (server-manifest order, the rule that picks HLS's DEFAULT=YES), and of that language
//   the highest bitrate (the first on a tie). A `filter` picks another.
// - Without video: one media per AAC track.
// - Order: ascending bitrate (video bitrate, or audio for audio-only media).
// - Key: the HLS multiplexed rendition's, audio key first: `audio_eng=128000-video_eng=400000`;
//   the media's URL is `<name>-<key>` and its fragments `<name>-<key>Seg1-Frag<n>` (F4M: a
//   client requests `<media url>Seg<segment>-Frag<fragment>`, placing it in the URL's path before
//   any query, so the carried query stays on the fragment URLs).

import { originError } from '../errors';
import { PresentationTrack } from './presentation';
import { PlayoutView, trackKey, ViewTrack } from './view';

export interface HdsMedia {
  key: string;
  video: ViewTrack | undefined;
  audio: ViewTrack | undefined;
  /** The track whose segments are the fragments: the video, else the audio. */
  timeline: ViewTrack;
}

export function isHdsVideo(t: PresentationTrack): boolean {
  return t.properties.type === 'video' && (t.properties.sampleEntry === 'avc1' || t.properties.sampleEntry === 'avc3');
}

export function isHdsAudio(t: PresentationTrack): boolean {
  return t.properties.type === 'audio' && t.properties.sampleEntry === 'mp4a';
}

function byBitrate(a: ViewTrack, b: ViewTrack): number {
  return a.track.properties.systemBitrate - b.track.properties.systemBitrate;
}

/** The audio of every video media (see the header); undefined when the request has no AAC. */
export function defaultAudio(audio: readonly ViewTrack[]): ViewTrack | undefined {
  const language = audio[0]?.track.properties.systemLanguage;
  let best: ViewTrack | undefined;
  for (const a of audio) {
    if (a.track.properties.systemLanguage !== language) continue;
    if (best === undefined || a.track.properties.systemBitrate > best.track.properties.systemBitrate) best = a;
  }
  return best;
}

function mediaOf(video: ViewTrack | undefined, audio: ViewTrack | undefined): HdsMedia {
  const keys = [audio, video].filter((t): t is ViewTrack => t !== undefined).map((t) => trackKey(t.track));
  return { key: keys.join('-'), video, audio, timeline: (video ?? audio)! };
}

/** The media of a request, in manifest order; 415 when it keeps nothing HDS can carry. */
export function hdsMedia(view: PlayoutView): HdsMedia[] {
  // Array.prototype.sort is stable: equal bitrates keep server-manifest order.
  const video = view.tracks.filter((t) => isHdsVideo(t.track)).sort(byBitrate);
  const audio = view.tracks.filter((t) => isHdsAudio(t.track));
  if (video.length > 0) {
    const a = defaultAudio(audio);
    return video.map((v) => mediaOf(v, a));
  }
  if (audio.length > 0) return [...audio].sort(byBitrate).map((a) => mediaOf(undefined, a));
  const kept = view.tracks.map((t) => `${trackKey(t.track)} (${t.track.properties.sampleEntry})`).join(', ');
  throw originError('unsupported-media', `HDS carries H.264 video and AAC audio; the request keeps none: ${kept}`);
}

/**
 * The media a URL stem names: `<name>-<key>` or `<key>` (the `<name>` prefix is not checked, as
 * for the other formats). The longest key that ends the stem wins (track names may contain `-`).
 * A stem whose prefix still ends with a track key of the presentation names a track this media
 * does not carry (an audio the request's filter removed: `…-audio_eng=64008-video_eng=401000`
 * against the media `video_eng=401000`), so it names no media.
 */
export function findMedia(view: PlayoutView, stem: string): HdsMedia | undefined {
  let best: HdsMedia | undefined;
  for (const m of hdsMedia(view)) {
    if ((stem === m.key || stem.endsWith(`-${m.key}`)) && (best === undefined || m.key.length > best.key.length))
      best = m;
  }
  if (best === undefined) return undefined;
  const prefix = stem.slice(0, stem.length - best.key.length - 1);
  const namesAnother = view.presentation.tracks.some(
    (t) => prefix === trackKey(t) || prefix.endsWith(`-${trackKey(t)}`),
  );
  return namesAnother ? undefined : best;
}

/** F4M `bitrate` (kbit/s): the media's tracks' average bitrates summed. */
export function mediaKbps(m: HdsMedia): number {
  const bits = (m.video?.track.properties.systemBitrate ?? 0) + (m.audio?.track.properties.systemBitrate ?? 0);
  return Math.round(bits / 1000);
}

/** URLs relative to the manifest's directory, as the route table parses them back. */
export const hdsUrls = {
  /** A stream-level manifest: it writes URLs itself, so it keeps presentation_name (view.playlistQuery). */
  streamManifest: (view: PlayoutView, m: HdsMedia): string =>
    `${view.name}-${m.key}.f4m${view.playlistQuery ?? view.carriedQuery}`,
  /** `<media url>`: the client appends `Seg1-Frag<n>` to its path. */
  media: (view: PlayoutView, m: HdsMedia): string => `${view.name}-${m.key}${view.carriedQuery}`,
  /** What a client requests for fragment n (from 1) of a media. */
  fragment: (view: PlayoutView, m: HdsMedia, n: number): string =>
    `${view.name}-${m.key}Seg1-Frag${n}${view.carriedQuery}`,
};

/**
 * A live HDS time's period, seconds: 2^22 s (48.5 days). FLV tag timestamps are 32-bit
 * milliseconds (FLV 10.1 E.4.1, Timestamp + TimestampExtended), and a channel's output times are
 * seconds since 1970, so live HDS times (FLV tags, bootstrap) are taken modulo this period: below
 * 2^32 ms with a day of margin for a fragment that crosses it, and a whole number of ticks in any
 * timescale. Stable as the window slides and the same on every origin; the timeline steps back
 * once per period.
 */
export const LIVE_HDS_PERIOD_SECONDS = 2 ** 22;

/** Ticks (of `timescale`) to subtract from a live HDS time at `time`: whole periods; 0 for VOD. */
export function liveHdsBase(live: boolean, time: bigint, timescale: number): bigint {
  if (!live) return 0n;
  const period = BigInt(LIVE_HDS_PERIOD_SECONDS) * BigInt(timescale);
  const q = time / period;
  return (time < 0n && time % period !== 0n ? q - 1n : q) * period;
}
