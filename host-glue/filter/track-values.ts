// How a track's properties (origin/model/media.ts TrackProperties) become the filter module's
// variables: the kind of each, the values set into the module's track table, and the snapshot
// that tells whether the table still holds a given list of tracks.

import { TrackProperties } from '../../origin/model/media';
import type { RawFilterExports } from './filter-module';

export type Kind = 'string' | 'number' | 'rational';

/**
 * How each filter variable is read from TrackProperties (the names are the same: model/media.ts). A
 * variable added to the module must be added here and to Snapshot below.
 */
export const PROPERTY_KINDS: Readonly<Record<string, Kind>> = {
  type: 'string',
  FourCC: 'string',
  trackID: 'number',
  trackName: 'string',
  AudioTag: 'number',
  Channels: 'number',
  SamplingRate: 'number',
  BitsPerSample: 'number',
  MaxWidth: 'number',
  MaxHeight: 'number',
  DisplayWidth: 'number',
  DisplayHeight: 'number',
  TimeScale: 'number',
  avc_level: 'number',
  avc_profile: 'number',
  systemBitrate: 'number',
  systemLanguage: 'string',
  FrameRate: 'rational',
  ScanType: 'string',
  Roles: 'string',
};

export interface Variable {
  index: number;
  key: keyof TrackProperties;
  kind: Kind;
}

/**
 * The values of a track the module holds, copied in one object shape (so comparing is a run of
 * monomorphic loads). Every key of PROPERTY_KINDS, FrameRate as its two integers.
 */
export interface Snapshot {
  type: unknown;
  FourCC: unknown;
  trackID: unknown;
  trackName: unknown;
  AudioTag: unknown;
  Channels: unknown;
  SamplingRate: unknown;
  BitsPerSample: unknown;
  MaxWidth: unknown;
  MaxHeight: unknown;
  DisplayWidth: unknown;
  DisplayHeight: unknown;
  TimeScale: unknown;
  avc_level: unknown;
  avc_profile: unknown;
  systemBitrate: unknown;
  systemLanguage: unknown;
  frameRateNum: unknown;
  frameRateDen: unknown;
  ScanType: unknown;
  Roles: unknown;
}

export function snapshotOf(t: TrackProperties): Snapshot {
  return {
    type: t.type,
    FourCC: t.FourCC,
    trackID: t.trackID,
    trackName: t.trackName,
    AudioTag: t.AudioTag,
    Channels: t.Channels,
    SamplingRate: t.SamplingRate,
    BitsPerSample: t.BitsPerSample,
    MaxWidth: t.MaxWidth,
    MaxHeight: t.MaxHeight,
    DisplayWidth: t.DisplayWidth,
    DisplayHeight: t.DisplayHeight,
    TimeScale: t.TimeScale,
    avc_level: t.avc_level,
    avc_profile: t.avc_profile,
    systemBitrate: t.systemBitrate,
    systemLanguage: t.systemLanguage,
    frameRateNum: t.FrameRate?.num,
    frameRateDen: t.FrameRate?.den,
    ScanType: t.ScanType,
    Roles: t.Roles,
  };
}

export function sameAsSnapshot(t: TrackProperties, s: Snapshot): boolean {
  return (
    t.type === s.type &&
    t.FourCC === s.FourCC &&
    t.trackID === s.trackID &&
    t.trackName === s.trackName &&
    t.AudioTag === s.AudioTag &&
    t.Channels === s.Channels &&
    t.SamplingRate === s.SamplingRate &&
    t.BitsPerSample === s.BitsPerSample &&
    t.MaxWidth === s.MaxWidth &&
    t.MaxHeight === s.MaxHeight &&
    t.DisplayWidth === s.DisplayWidth &&
    t.DisplayHeight === s.DisplayHeight &&
    t.TimeScale === s.TimeScale &&
    t.avc_level === s.avc_level &&
    t.avc_profile === s.avc_profile &&
    t.systemBitrate === s.systemBitrate &&
    t.systemLanguage === s.systemLanguage &&
    t.FrameRate?.num === s.frameRateNum &&
    t.FrameRate?.den === s.frameRateDen &&
    t.ScanType === s.ScanType &&
    t.Roles === s.Roles
  );
}

export function setValue(r: RawFilterExports, track: number, v: Variable, value: unknown): void {
  // A property the track lacks stays unset: every comparison with it is false.
  if (value === undefined || value === null) return;
  if (v.kind === 'string') {
    if (typeof value === 'string') r.setString(track, v.index, r.__newString(value));
  } else if (v.kind === 'rational' && typeof value === 'object') {
    const q = value as { num: unknown; den: unknown };
    if (Number.isSafeInteger(q.num) && Number.isSafeInteger(q.den) && q.den !== 0) {
      r.setRational(track, v.index, BigInt(q.num as number), BigInt(q.den as number));
    }
  } else if (typeof value === 'number' && Number.isSafeInteger(value)) {
    // Every numeric property is an integer (bit/s, Hz, pixels, ticks); anything else stays unset.
    r.setNumber(track, v.index, BigInt(value));
  }
}
