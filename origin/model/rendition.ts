// HLS renditions: what one media playlist (and its segments) carries. A rendition is one track,
// or, for MPEG-TS, an audio track multiplexed with a video track as the reference does
// (docs/specs.md, reference §3.1: `<name>-audio_eng=64008-video_eng=401000.m3u8`). The key of a
// rendition is the track keys joined by `-`, audio first; the playlist writer and the segment
// handlers both name and find renditions through this module only.

import { originError } from '../errors';
import { PlayoutView, trackKey, ViewTrack } from './view';

export interface Rendition {
  /** Audio first, then video (a multiplexed rendition), or the one track. */
  tracks: ViewTrack[];
  key: string;
}

/** What the segments of a rendition are, i.e. the segment URL's extension. */
export type SegmentKind = 'ts' | 'aac' | 'ac3' | 'ec3' | 'webvtt' | 'm4s';

const TYPE_ORDER: Record<string, number> = { audio: 0, video: 1, textstream: 2 };

export function rendition(tracks: ViewTrack[]): Rendition {
  const ordered = [...tracks].sort(
    (a, b) => (TYPE_ORDER[a.track.properties.type] ?? 3) - (TYPE_ORDER[b.track.properties.type] ?? 3),
  );
  return { tracks: ordered, key: ordered.map((t) => trackKey(t.track)).join('-') };
}

export function videoOf(r: Rendition): ViewTrack | undefined {
  return r.tracks.find((t) => t.track.properties.type === 'video');
}

export function audioOf(r: Rendition): ViewTrack | undefined {
  return r.tracks.find((t) => t.track.properties.type === 'audio');
}

/**
 * The rendition a URL stem names: `<name>-<key>` or `<key>`, where the key is one track key or an
 * audio key and a video key joined by `-`. The longest key that ends the stem wins (track names
 * may themselves contain `-`). Undefined when no track of the view matches.
 */
export function findRendition(view: PlayoutView, stem: string): Rendition | undefined {
  const ends = (key: string): boolean => stem === key || stem.endsWith(`-${key}`);
  let best: Rendition | undefined;
  const consider = (r: Rendition): void => {
    if (ends(r.key) && (best === undefined || r.key.length > best.key.length)) best = r;
  };
  const audio = view.tracks.filter((t) => t.track.properties.type === 'audio');
  const video = view.tracks.filter((t) => t.track.properties.type === 'video');
  for (const t of view.tracks) consider(rendition([t]));
  for (const a of audio) for (const v of video) consider(rendition([a, v]));
  return best;
}

/**
 * The kind of segment a rendition has in this view (hls_fmp4, track types and codecs):
 * text is always WebVTT; with hls_fmp4 every media track is fMP4 and nothing is multiplexed;
 * otherwise anything with video is MPEG-TS and audio alone is packed audio (RFC 8216 §3.4),
 * ADTS AAC, AC-3 or E-AC-3 by codec.
 */
export function segmentKind(view: PlayoutView, r: Rendition): SegmentKind {
  const types = r.tracks.map((t) => t.track.properties.type);
  if (types.includes('textstream')) {
    if (r.tracks.length > 1)
      throw originError('unknown-track', 'a text track is never multiplexed', { subject: r.key });
    return 'webvtt';
  }
  if (view.options.bool('hls_fmp4')) {
    if (r.tracks.length > 1)
      throw originError('unknown-track', `fMP4 HLS does not multiplex; ask for each track's own playlist (${r.key})`, {
        subject: r.key,
      });
    return 'm4s';
  }
  if (types.includes('video')) return 'ts';
  const fourcc = r.tracks[0]!.track.properties.FourCC.toUpperCase();
  if (fourcc === 'AC-3' || fourcc === 'AC3') return 'ac3';
  if (fourcc === 'EC-3' || fourcc === 'EC3') return 'ec3';
  return 'aac';
}
