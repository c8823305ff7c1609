// The one media model (CONTRIBUTING.md design rule 1). Every output format is written from these types;
// the server-manifest reader, the packager and the filter language all speak this vocabulary.
//
// Property names are the reference product's own: they are at once the `<param name>` in a
// server manifest, the variable in a filter expression, and the attribute in a Smooth manifest.
// One spelling everywhere is worth more than camelCase here.

import { Rational } from '../rational';

export type TrackType = 'video' | 'audio' | 'textstream' | 'data';
export type ScanType = 'progressive' | 'interlaced';

export interface TrackProperties {
  type: TrackType;
  /** Smooth FourCC where Smooth has one (AVC1, AACL, AACH, TTML), else the ISO BMFF sample entry (ac-3, ec-3, hvc1). */
  FourCC: string;
  /** Track id inside its source file: (src, trackID) is the key of a track. */
  trackID: number;
  /** `<type>_<lang>` style, unique within a presentation; used in every output URL. */
  trackName: string;
  /** Average bitrate in bits per second. */
  systemBitrate: number;
  /** ISO 639-2/T code, `und` when unknown. */
  systemLanguage: string;
  /** Ticks per second of every time and duration of this track. */
  TimeScale: number;
  /** Hex: Annex-B SPS+PPS for AVC, AudioSpecificConfig for AAC, dac3/dec3 payload for Dolby. */
  CodecPrivateData: string;
  /** RFC 6381 codecs parameter (avc1.64001F, mp4a.40.2, ac-3, ec-3, stpp.ttml.im1t). */
  codecs: string;
  /** ISO BMFF sample entry type (avc1, mp4a, ac-3, ec-3, stpp, wvtt). */
  sampleEntry: string;
  // Audio (undefined on other types; a filter comparing them is then false).
  AudioTag?: number;
  Channels?: number;
  /** Hz. */
  SamplingRate?: number;
  BitsPerSample?: number;
  /** Bytes per sample frame across channels (WAVEFORMATEX nBlockAlign). */
  PacketSize?: number;
  // Video.
  /** Coded size after SPS cropping, in pixels. */
  MaxWidth?: number;
  MaxHeight?: number;
  /** Size after the sample aspect ratio is applied. */
  DisplayWidth?: number;
  DisplayHeight?: number;
  avc_profile?: number;
  /** level_idc: 31 means level 3.1. */
  avc_level?: number;
  FrameRate?: Rational;
  ScanType?: ScanType;
  /** DASH Role value(s), comma-separated (main, alternate, subtitle, caption, ...). */
  Roles?: string;
}

/** Fragment times of one track, struct-of-arrays to keep an hour of index well under 1 MB. */
export interface FragmentTable {
  readonly count: number;
  /** Decode time of each fragment's first sample, track timescale, exact 64-bit signed. */
  readonly times: BigInt64Array;
  /** Track timescale units. */
  readonly durations: Float64Array;
  /** Absolute file offset of the fragment's `moof`. */
  readonly offsets: Float64Array;
  /** Bytes from the `moof` to the next fragment's `moof` (or the end of the media data): the moof+mdat to read. */
  readonly sizes: Float64Array;
  /** 1 when the fragment starts with a sync sample. */
  readonly keyframes: Uint8Array;
}

/** One track of one source file: what `moov` says plus the fragment table. */
export interface MediaTrack {
  properties: TrackProperties;
  fragments: FragmentTable;
  /** Media payload bytes of all samples, when the index walked every moof (undefined on the mfra fast path). */
  dataBytes: number | undefined;
  sampleCount: number | undefined;
}

export interface MediaFile {
  /** As given to the reader (path or URL). */
  name: string;
  size: number;
  tracks: MediaTrack[];
  /** How the fragment table was built. */
  indexedBy: 'mfra' | 'moof-walk';
  /** The source's `moov` box (a few kB): init segments copy its sample descriptions. */
  moov: Uint8Array;
}

/** Duration of a track in its timescale (last fragment end minus first fragment start). */
export function trackDuration(f: FragmentTable): bigint {
  if (f.count === 0) return 0n;
  return f.times[f.count - 1]! + BigInt(f.durations[f.count - 1]!) - f.times[0]!;
}
