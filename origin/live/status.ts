// A channel's status as the serving workers read it: `channel.json` in its archive directory,
// written atomically by the ingest process after every change (channel.ts), and the two answers
// made from it, `<ch>.isml/state` and `<ch>.isml/archive`. Pure: objects in, bytes or JSON out.

import type { ChannelState } from './channel';
import { IndexRecord } from './archive-index';

export interface TrackStatus {
  /** `<stream>-<trackID>`: its archive directory's name. */
  key: string;
  /** The `Streams(<name>)` it is pushed to. */
  stream: string;
  trackId: number;
  type: string;
  timescale: number;
  /** From the Live Server Manifest Box (Smooth ingest), else the track type. */
  trackName: string;
  /** bit/s from the Live Server Manifest Box or the stream name (`…-800k.cmfv`); 0 when unknown. */
  systemBitrate: number;
  fourCC: string;
  /** Fragments in the archive. */
  fragments: number;
  /** Time of the latest fragment, track timescale. */
  lastTime: bigint | undefined;
  /** Fragments that started after the previous one ended (media missing before them). */
  gaps: number;
  /** Fragments dropped because that (track, time) was already archived (redundant encoders, resends). */
  duplicates: number;
  /** Fragments dropped because they were older than the latest one and not a copy of one. */
  late: number;
  /** Timed-metadata events archived: `emsg` boxes ahead of a moof, events in a metadata track's samples. */
  events: number;
  /** Start times of the archive files, oldest first (their names). */
  files: string[];
  /**
   * Encoder restarts with a new anchor this track has seen, ever: fragments whose time broke the
   * track's timeline (docs/design/live.md, "Restarts and gaps"). HLS counts its
   * EXT-X-DISCONTINUITY-SEQUENCE from it; kept here, not in the archive files, so that purging
   * old media never lowers it.
   */
  discontinuities: number;
  /** The times (track timescale) of the latest MAX_RESTARTS of those fragments, oldest first. */
  restarts: string[];
}

/** Restart times kept per track: the DVR window never holds more in practice. */
export const MAX_RESTARTS = 64;

export interface ChannelStatus {
  state: ChannelState;
  /** ISO 8601 time of the last change. */
  updated: string;
  /** Ingest requests open now. */
  encoders: number;
  tracks: TrackStatus[];
}

export function encodeStatus(s: ChannelStatus): Uint8Array {
  return Buffer.from(JSON.stringify(s, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
}

/** The status file's content, or undefined when it is not one (then the channel is idle). */
export function decodeStatus(text: string): ChannelStatus | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const o = raw as Partial<ChannelStatus> & { tracks?: Array<Record<string, unknown>> };
  if (typeof o !== 'object' || o === null || !['idle', 'started', 'stopped'].includes(String(o.state)))
    return undefined;
  if (!Array.isArray(o.tracks)) return undefined;
  const tracks: TrackStatus[] = [];
  for (const t of o.tracks) {
    if (typeof t.key !== 'string' || !/^[A-Za-z0-9._-]{1,300}$/.test(t.key) || t.key.startsWith('.')) return undefined;
    tracks.push({
      key: t.key,
      stream: String(t.stream),
      trackId: Number(t.trackId),
      type: String(t.type),
      timescale: Number(t.timescale),
      trackName: String(t.trackName),
      systemBitrate: Number(t.systemBitrate),
      fourCC: String(t.fourCC),
      fragments: Number(t.fragments),
      lastTime: typeof t.lastTime === 'string' && /^-?\d{1,20}$/.test(t.lastTime) ? BigInt(t.lastTime) : undefined,
      gaps: Number(t.gaps),
      duplicates: Number(t.duplicates),
      late: Number(t.late),
      events: Number(t.events) || 0,
      files: Array.isArray(t.files) ? t.files.map(String).filter((f) => /^-?\d{1,20}$/.test(f)) : [],
      discontinuities: Number(t.discontinuities) || 0,
      restarts: Array.isArray(t.restarts)
        ? t.restarts
            .map(String)
            .filter((f) => /^-?\d{1,20}$/.test(f))
            .slice(-MAX_RESTARTS)
        : [],
    });
  }
  return {
    state: o.state as ChannelState,
    updated: String(o.updated),
    encoders: Number(o.encoders) || 0,
    tracks,
  };
}

/** `GET <ch>.isml/state` as JSON: the state, and per track its health. */
export function stateJson(name: string, s: ChannelStatus): string {
  const body = {
    channel: name,
    state: s.state,
    updated: s.updated,
    encoders: s.encoders,
    tracks: s.tracks.map((t) => ({
      track: t.key,
      stream: t.stream,
      trackName: t.trackName,
      type: t.type,
      systemBitrate: t.systemBitrate,
      timescale: t.timescale,
      fragments: t.fragments,
      lastTime: t.lastTime?.toString() ?? null,
      lastTimeUtc: t.lastTime === undefined ? null : utc(t.lastTime, t.timescale),
      gaps: t.gaps,
      duplicatesDropped: t.duplicates,
      lateDropped: t.late,
      events: t.events,
      restarts: t.discontinuities,
    })),
  };
  return JSON.stringify(body, null, 2) + '\n';
}

/** `GET <ch>.isml/state` as the reference's SMIL (`<meta name="state">`), for tools that read it. */
export function stateSmil(s: ChannelStatus): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?>\n<smil xmlns="http://www.w3.org/2001/SMIL20/Language">\n  <head>\n' +
    `    <meta name="updated" content="${s.updated}" />\n    <meta name="state" content="${s.state}" />\n` +
    '  </head>\n</smil>\n'
  );
}

export interface TimeRange {
  /** Track timescale. */
  start: bigint;
  end: bigint;
}

/** Contiguous runs of fragments (each starts where the previous ended), from records in any order. */
export function timeRanges(records: readonly IndexRecord[]): TimeRange[] {
  const sorted = [...records].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  const out: TimeRange[] = [];
  for (const r of sorted) {
    const end = r.time + BigInt(r.duration);
    const last = out[out.length - 1];
    if (last !== undefined && r.time <= last.end) {
      if (end > last.end) last.end = end;
    } else out.push({ start: r.time, end });
  }
  return out;
}

/** `GET <ch>.isml/archive`: per track, its archived time ranges (ticks and UTC). */
export function archiveJson(name: string, tracks: ReadonlyArray<{ status: TrackStatus; ranges: TimeRange[] }>): string {
  const body = {
    channel: name,
    tracks: tracks.map(({ status: t, ranges }) => ({
      track: t.key,
      trackName: t.trackName,
      type: t.type,
      timescale: t.timescale,
      ranges: ranges.map((r) => ({
        start: r.start.toString(),
        end: r.end.toString(),
        startUtc: utc(r.start, t.timescale),
        endUtc: utc(r.end, t.timescale),
      })),
    })),
  };
  return JSON.stringify(body, null, 2) + '\n';
}

/** A time in ticks as ISO 8601 UTC, to the millisecond (times are seconds since 1970). */
function utc(ticks: bigint, timescale: number): string | null {
  const ms = Number((ticks * 1000n) / BigInt(timescale));
  return Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : null;
}
