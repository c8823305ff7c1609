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
  /**
   * `emsg` when the source carries timed-metadata events as top-level emsg boxes before this
   * track's moofs (ISO/IEC 23009-1 §5.10.3.3); `origin package` finds them and notes it, so that
   * only such sources are walked for them (media/event-index.ts).
   */
  InbandEvents?: 'emsg';
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
  /** The source's `moov` box (a few kB): part of every ETag of its segments. */
  moov: Uint8Array;
  /** What the moov says of each track, by track id (media/moov.ts). */
  headers: ReadonlyMap<number, TrackHeader>;
}

/** Duration of a track in its timescale (last fragment end minus first fragment start). */
export function trackDuration(f: FragmentTable): bigint {
  if (f.count === 0) return 0n;
  return f.times[f.count - 1]! + BigInt(f.durations[f.count - 1]!) - f.times[0]!;
}

// What a source's `moov` says about each track beyond its properties (read once by media/moov.ts):
// what init segments and the MPEG-TS, packed-audio and FLV writers take from the source.

/** §8.8.3 TrackExtendsBox: the defaults every fragment of the track falls back on. */
export interface TrexDefaults {
  defaultSampleDescriptionIndex: number;
  /** Track timescale units. */
  defaultSampleDuration: number;
  /** Bytes. */
  defaultSampleSize: number;
  /** §8.8.3.1 sample_flags. */
  defaultSampleFlags: number;
}

/** Handler types (§8.4.3.3, §12.*) that an fMP4 output can carry. */
export type HandlerType = 'vide' | 'soun' | 'subt' | 'text' | 'meta';

/** A sample entry's decoder configuration (media/codec-config.ts reads it). */
export interface AvcConfig {
  kind: 'avc';
  /** Bytes of each NAL unit's length field in the samples (lengthSizeMinusOne + 1). */
  lengthSize: 1 | 2 | 3 | 4;
  /** SPS then PPS NAL units, without length or start code. */
  parameterSets: Uint8Array[];
  /** How many of `parameterSets` are SPS (at least one). */
  spsCount: number;
  /** The avcC payload byte for byte: FLV's AVC sequence header carries it as it is. */
  record: Uint8Array;
}

export interface AacConfig {
  kind: 'aac';
  /** The AudioSpecificConfig bytes. */
  asc: Uint8Array;
}

export interface DolbyConfig {
  kind: 'ac3' | 'ec3';
  /** Full channel count (LFE included). */
  channels: number;
  /** Bit stream id of the (first independent sub)stream: 8 or less for AC-3, 16 for E-AC-3. */
  bsid: number;
  /** From fscod (TS 102 366 Table 4.1). */
  sampleRate: number;
  /** The dac3/dec3 payload byte for byte (Smooth's CodecPrivateData is its hex). */
  record: Uint8Array;
}

export type CodecConfig = AvcConfig | AacConfig | DolbyConfig;

export interface TrackHeader {
  trackID: number;
  handler: HandlerType;
  /** Ticks per second of every time of this track (mdhd). */
  timescale: number;
  /** ISO 639-2/T from mdhd, `und` when unset (what an init segment's mdhd carries). */
  language: string;
  /** tkhd width/height (16.16 fixed point), integer part, in pixels; 0 for non-visual tracks. */
  width: number;
  height: number;
  /** The complete source `stsd` box, header included, copied out of the moov. */
  stsd: Uint8Array;
  trexDefaults: TrexDefaults;
  /** Type of the first sample entry (avc1, mp4a, ac-3, ec-3, stpp, wvtt, ...). */
  sampleEntry: string;
  /** Its decoder configuration (H.264, AAC, AC-3, E-AC-3); undefined for text tracks. */
  codec: CodecConfig | undefined;
}
