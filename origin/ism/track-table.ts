// The properties of a server manifest's tracks that a filter expression can name, as one row per
// track: what `origin filter` prints (as text or --json) and what the player page's track table
// and filter box show (origin/player/index-page.ts). Pure: no I/O.

import { TrackProperties } from '../model/media';
import { formatRational } from '../rational';

/** Properties shown after the common columns, per track type, in the filter's own spelling. */
export const TRACK_DETAIL: Record<TrackProperties['type'], ReadonlyArray<keyof TrackProperties>> = {
  video: [
    'avc_profile',
    'avc_level',
    'MaxWidth',
    'MaxHeight',
    'DisplayWidth',
    'DisplayHeight',
    'FrameRate',
    'ScanType',
  ],
  audio: ['Channels', 'SamplingRate', 'BitsPerSample', 'AudioTag'],
  textstream: [],
  data: [],
};
export const COMMON_DETAIL: ReadonlyArray<keyof TrackProperties> = ['Roles', 'trackID', 'TimeScale'];

/** One track as a row: the common columns, then its type's details (numbers stay numbers). */
export interface TrackRow {
  /** Position in the server manifest, from 0. */
  index: number;
  trackName: string;
  type: TrackProperties['type'];
  FourCC: string;
  systemBitrate: number;
  systemLanguage: string;
  /** The type's details and the common ones, where the track has them (FrameRate as "30000/1001"). */
  [detail: string]: string | number;
}

export function trackRow(p: TrackProperties, index: number): TrackRow {
  const row: Record<string, string | number> = {
    index,
    trackName: p.trackName,
    type: p.type,
    FourCC: p.FourCC,
    systemBitrate: p.systemBitrate,
    systemLanguage: p.systemLanguage,
  };
  for (const k of [...TRACK_DETAIL[p.type], ...COMMON_DETAIL]) {
    const v = p[k];
    if (v !== undefined) row[k] = typeof v === 'object' ? formatRational(v) : v;
  }
  return row as TrackRow;
}

/** The details of a row as `name=value` pairs, in TRACK_DETAIL's order (empty values left out). */
export function rowDetails(row: TrackRow): string[] {
  return [...TRACK_DETAIL[row.type], ...COMMON_DETAIL].flatMap((k) => {
    const v = row[k];
    return v === undefined || v === '' ? [] : [`${k}=${v}`];
  });
}
