// An MPEG-TS demuxer for H.264 and AAC (ISO/IEC 13818-1), fed one segment at a time: the
// transport layer (ts-reader.ts) gives PES packets, the H.264 (avc-access-units.ts) and ADTS
// (adts-frames.ts) layers give ISO BMFF samples with their decoder configurations. Memory holds
// one segment's samples; what carries over between segments is small: the PMT, each stream's
// parameter sets, the expected next audio time, the last frame duration, and the timestamp line.
//
// Times: video on 90 kHz, audio on its sampling rate (so that every AAC frame lasts exactly 1024),
// both from the PES PTS/DTS unwrapped onto one TimestampLine (timestamp-line.ts), which callers
// share between the streams of one program. An audio PES whose PTS lands within half a frame of
// where the previous frames end continues them exactly (the 90 kHz PTS rounds a 44.1 kHz clock);
// further off, its PTS is taken as it is (a gap). A video sample lasts until the next DTS; the last
// of a segment as long as the one before it (the next segment's tfdt puts the timeline right).
// Pure.

import { originError } from '../../errors';
import type { AacConfig, AvcConfig } from '../../model/media';
import { AAC_FRAME_SAMPLES, adtsFrames, audioSpecificConfig } from './adts-frames';
import { accessUnit, annexBUnit, avcConfigOf } from './avc-access-units';
import { TimestampLine } from './timestamp-line';
import { Pes, pidName, TsCodec, TsNotice, TsReader } from './ts-reader';

const VIDEO_TIMESCALE = 90000;
/** A video frame's duration when a segment holds one frame and none came before: 25 fps. */
const DEFAULT_FRAME_TICKS = 3600;

export interface DemuxedSample {
  /** Decode time, track timescale. */
  time: bigint;
  duration: number;
  compositionOffset: number;
  sync: boolean;
  data: Uint8Array;
}

export interface DemuxedTrack {
  pid: number;
  codec: TsCodec;
  language?: string;
  /** 90 000 for video, the sampling rate for audio (0 until the first ADTS header). */
  timescale: number;
  /** The first parameter sets (H.264) or AudioSpecificConfig (AAC) of the stream, once seen. */
  config?: AvcConfig | AacConfig;
  /** Parameter sets or an audio configuration unlike `config` came in this segment. */
  configChanged: boolean;
  samples: DemuxedSample[];
}

export interface DemuxedSegment {
  /** A PMT is known: without one, every packet is skipped. */
  program: boolean;
  tracks: DemuxedTrack[];
  /** Continuity breaks and what they dropped (ts-reader.ts), PES without a time. */
  discontinuities: TsNotice[];
  /** Packets skipped before the PAT/PMT or continuing an unseen PES start. */
  skipped: number;
}

interface StreamState {
  sps: Uint8Array[];
  pps: Uint8Array[];
  config?: AvcConfig | AacConfig;
  timescale: number;
  /** Audio: where the last frame ended, track timescale. */
  next?: bigint;
  /** Video: the last sample's duration. */
  lastDuration?: number;
}

export class TsDemuxer {
  private readonly reader = new TsReader();
  private readonly state = new Map<number, StreamState>();
  /** The segment being read, for errors. */
  private name = '';

  /** `line`: shared with the other streams of the same program clock. */
  constructor(private readonly line: TimestampLine = new TimestampLine()) {}

  /** One segment, in stream order; `name` is what errors name. */
  demux(segment: Uint8Array, name: string): DemuxedSegment {
    this.name = name;
    const read = this.reader.read(segment, name);
    const out: DemuxedSegment = {
      program: read.program,
      tracks: [],
      discontinuities: read.discontinuities,
      skipped: read.skipped,
    };
    for (const s of read.streams) {
      const st = this.stateOf(s.pid, s.codec);
      const pes = read.pes.filter((p) => p.pid === s.pid);
      const track: DemuxedTrack = {
        pid: s.pid,
        codec: s.codec,
        ...(s.language !== undefined ? { language: s.language } : {}),
        timescale: st.timescale,
        configChanged: false,
        samples: [],
      };
      if (s.codec === 'h264') this.video(pes, st, track, out.discontinuities);
      else this.audio(pes, st, track, out.discontinuities);
      track.timescale = st.timescale;
      if (st.config !== undefined) track.config = st.config;
      out.tracks.push(track);
    }
    return out;
  }

  private stateOf(pid: number, codec: TsCodec): StreamState {
    let st = this.state.get(pid);
    if (st === undefined) {
      st = { sps: [], pps: [], timescale: codec === 'h264' ? VIDEO_TIMESCALE : 0 };
      this.state.set(pid, st);
    }
    return st;
  }

  private video(pes: Pes[], st: StreamState, track: DemuxedTrack, notices: TsNotice[]): void {
    const units: Array<{ dts: bigint; pts: bigint; nals: Uint8Array[] }> = [];
    for (const p of pes) {
      const unit = annexBUnit(p.data);
      for (const sps of unit.sps) track.configChanged ||= learn(st.sps, sps, st.config !== undefined);
      for (const pps of unit.pps) track.configChanged ||= learn(st.pps, pps, st.config !== undefined);
      if (st.config === undefined && st.sps.length > 0 && st.pps.length > 0) st.config = avcConfigOf(st.sps, st.pps);
      if (p.pts === undefined) {
        const last = units[units.length - 1];
        if (last !== undefined) last.nals.push(...unit.nals);
        else
          notices.push({
            pid: p.pid,
            offset: p.offset,
            message: 'a video PES without a PTS, no access unit to continue',
          });
        continue;
      }
      const dts = this.line.place(p.dts ?? p.pts);
      const pts = p.dts === undefined ? dts : this.line.place(p.pts);
      units.push({ dts, pts, nals: unit.nals });
    }
    units.forEach((u, i) => {
      const next = units[i + 1];
      const delta = next === undefined ? (st.lastDuration ?? DEFAULT_FRAME_TICKS) : Number(next.dts - u.dts);
      if (delta <= 0)
        throw originError('corrupt-media', `PID ${pidName(track.pid)}: DTS ${next!.dts} after ${u.dts}`, {
          subject: this.name,
        });
      st.lastDuration = delta;
      const au = accessUnit(u.nals);
      if (au.data.byteLength === 0) return;
      track.samples.push({
        time: u.dts,
        duration: delta,
        compositionOffset: Number(u.pts - u.dts),
        sync: au.sync,
        data: au.data,
      });
    });
  }

  private audio(pes: Pes[], st: StreamState, track: DemuxedTrack, notices: TsNotice[]): void {
    let rest: Uint8Array = new Uint8Array(0);
    for (const p of pes) {
      const carried = rest.byteLength;
      const bytes = carried === 0 ? p.data : join(rest, p.data);
      const { frames, rest: left } = adtsFrames(bytes, this.name);
      rest = left;
      if (frames.length === 0) continue;
      const header = frames[0]!.header;
      const asc = audioSpecificConfig(header);
      if (st.config === undefined) {
        st.config = { kind: 'aac', asc };
        st.timescale = header.sampleRate;
      } else if (st.config.kind === 'aac' && !same(st.config.asc, asc)) track.configChanged = true;
      const rate = BigInt(st.timescale);
      let t: bigint | undefined;
      if (p.pts !== undefined) {
        // A carried frame began in the PES before: it sits one frame ahead of this PES's PTS.
        const ticks = this.line.place(p.pts);
        t = (ticks * rate + 45000n) / 90000n - BigInt(carried > 0 ? AAC_FRAME_SAMPLES : 0);
        if (st.next !== undefined && abs(t - st.next) <= BigInt(AAC_FRAME_SAMPLES / 2)) t = st.next;
      } else t = st.next;
      if (t === undefined) {
        notices.push({ pid: p.pid, offset: p.offset, message: 'an audio PES without a PTS, no frame before it' });
        continue;
      }
      for (const f of frames) {
        track.samples.push({ time: t, duration: AAC_FRAME_SAMPLES, compositionOffset: 0, sync: true, data: f.data });
        t += BigInt(AAC_FRAME_SAMPLES);
      }
      st.next = t;
    }
    if (rest.byteLength > 0)
      notices.push({
        pid: track.pid,
        offset: -1,
        message: `an ADTS frame cut at the segment's end (${rest.byteLength} bytes), dropped`,
      });
  }
}

/** Adds a parameter set not known yet; true when it is new after the configuration was fixed. */
function learn(known: Uint8Array[], nal: Uint8Array, fixed: boolean): boolean {
  if (known.some((k) => same(k, nal))) return false;
  if (fixed) return true;
  known.push(nal.slice());
  return false;
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((v, i) => v === b[i]);
}

function join(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

function abs(v: bigint): bigint {
  return v < 0n ? -v : v;
}
