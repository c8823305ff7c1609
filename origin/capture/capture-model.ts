// What the capture reads from a client manifest, whatever its format: streams (one init segment
// and its media segments; an init may describe several tracks, as a multiplexed HLS variant's
// does) with segment times on the presentation's timeline, in seconds as the manifest states them.
// Exact times come later from the segments' own `tfdt` (ISO/IEC 14496-12 §8.8.12); these only
// choose which segments to fetch.

import { originError } from '../errors';
import type { TrackProperties, TrackType } from '../model/media';

export interface SegmentRef {
  url: string;
  /** Seconds on the presentation timeline (DASH: (t − presentationTimeOffset) / timescale + Period@start). */
  start: number;
  /** Seconds. */
  duration: number;
  /** Identifies the segment across reloads of a live manifest (its time, number or media sequence). */
  key: string;
}

export interface CaptureStream {
  /** For messages: the Representation id or the playlist URI. */
  id: string;
  /** What the manifest says it holds: the filter of a third-party manifest sees these. */
  properties: TrackProperties;
  /** '' for MPEG-TS segments, whose tracks come from the segments themselves (ts-segments.ts). */
  initUrl: string;
  segments: SegmentRef[];
}

export interface ManifestView {
  /** A live manifest: reloaded every `reloadSeconds` until the range's end is reached. */
  dynamic: boolean;
  /** Wall-clock ms of timeline 0, when the manifest gives it (ISO 8601 ranges need it). */
  anchorMs?: number;
  reloadSeconds: number;
  streams: CaptureStream[];
}

/** A feature the capture does not take: exit 1, naming it (the issue: "refused, naming the feature"). */
export function refuse(feature: string, where: string): Error {
  return originError('unsupported-media', `${where}: ${feature} is not supported by origin capture`, {
    subject: where,
  });
}

/** The codecs the capture takes: H.264 video and AAC audio (RFC 6381 names). */
export function checkCodecs(codecs: string, where: string): void {
  for (const c of codecs.split(',').map((s) => s.trim())) {
    if (c === '' || /^avc[13]\./.test(c) || /^mp4a\.40\.\d+$/.test(c) || c === 'mp4a') continue;
    if (/^(hvc1|hev1)/.test(c)) throw refuse(`HEVC (${c})`, where);
    throw refuse(`the codec ${c} (H.264 and AAC only)`, where);
  }
}

/** Properties as the filter language names them (docs/reference/filter-language.md), from manifest attributes. */
export function manifestProperties(p: {
  type: TrackType;
  name: string;
  bandwidth: number;
  codecs: string;
  language?: string;
  width?: number;
  height?: number;
}): TrackProperties {
  const fourcc = p.type === 'video' ? 'AVC1' : 'AACL';
  return {
    type: p.type,
    FourCC: fourcc,
    trackID: 0,
    trackName: p.name,
    systemBitrate: p.bandwidth,
    systemLanguage: p.language ?? 'und',
    TimeScale: 0,
    CodecPrivateData: '',
    codecs: p.codecs,
    sampleEntry: p.type === 'video' ? 'avc1' : 'mp4a',
    ...(p.width !== undefined ? { MaxWidth: p.width, DisplayWidth: p.width } : {}),
    ...(p.height !== undefined ? { MaxHeight: p.height, DisplayHeight: p.height } : {}),
  } as TrackProperties;
}
