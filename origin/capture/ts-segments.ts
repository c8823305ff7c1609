// HLS MPEG-TS segments as capture input (RFC 8216 §3.2): there is no init segment, so a stream's
// tracks are learnt from the first segment the range selects (its PMT, SPS/PPS and ADTS header,
// through the demuxer of media/mpegts/), and each segment's samples come out of the same demuxer,
// which carries what TS spreads over segments (the PMT, the timestamp lap). Each stream keeps its
// last demuxed segment, so that the tracks of a multiplexed segment cost one fetch and one demux.
// The capture's policy on what the demuxer reports: a continuity break (lost packets) and
// parameter sets that change mid-capture are errors naming the segment; packets skipped before a
// PAT/PMT are not (a decoder joining the stream does the same). Packed audio (RFC 8216 §3.4) is
// refused by name.

import { originError } from '../errors';
import { parseSps } from '../media/h264-sps';
import { parseAudioSpecificConfig } from '../media/audio-config';
import { DemuxedSegment, DemuxedTrack, TsDemuxer } from '../media/mpegts/ts-demuxer';
import { TimestampLine } from '../media/mpegts/timestamp-line';
import { pidName } from '../media/mpegts/ts-reader';
import type { TrackHeader } from '../model/media';
import { aacStsd, avcStsd } from '../segments/fmp4/sample-entry';
import { refuse } from './capture-model';
import { shownUrl } from './fetcher';
import type { CapturedSample } from './fragments';

const TRACK_DEFAULTS = {
  defaultSampleDescriptionIndex: 1,
  defaultSampleDuration: 0,
  defaultSampleSize: 0,
  defaultSampleFlags: 0,
};

export class TsStreamReader {
  private readonly demuxer: TsDemuxer;
  private last?: { url: string; segment: DemuxedSegment };
  /** Output track id → which of the demuxed tracks (codec and rank among that codec's tracks). */
  private readonly keys = new Map<number, { codec: DemuxedTrack['codec']; nth: number }>();

  /** `line`: shared by every TS stream of one capture (one program clock). */
  constructor(line: TimestampLine) {
    this.demuxer = new TsDemuxer(line);
  }

  /** The tracks of the stream, from its segment at `url` (kept: it is the first to be captured). */
  async tracks(url: string, load: () => Promise<Uint8Array>): Promise<TrackHeader[]> {
    const segment = await this.segment(url, load);
    if (!segment.program)
      throw originError('corrupt-media', `no PAT and PMT (ISO/IEC 13818-1 §2.4.4): no stream is known`, {
        subject: shownUrl(url),
      });
    const headers: TrackHeader[] = [];
    const seen = { h264: 0, aac: 0 };
    for (const t of segment.tracks) {
      const nth = seen[t.codec]++;
      const header = trackHeader(t, headers.length + 1, shownUrl(url));
      this.keys.set(header.trackID, { codec: t.codec, nth });
      headers.push(header);
    }
    if (headers.length === 0) throw refuse('an MPEG-TS segment without H.264 or AAC streams', shownUrl(url));
    return headers;
  }

  async samples(url: string, header: TrackHeader, load: () => Promise<Uint8Array>): Promise<CapturedSample[]> {
    const segment = await this.segment(url, load);
    const key = this.keys.get(header.trackID)!;
    const track = segment.tracks.filter((t) => t.codec === key.codec)[key.nth];
    if (track === undefined) return [];
    if (track.configChanged)
      throw refuse(
        `${track.codec === 'h264' ? 'H.264 parameter sets' : 'an AAC configuration'} changing mid-capture`,
        shownUrl(url),
      );
    return track.samples;
  }

  private async segment(url: string, load: () => Promise<Uint8Array>): Promise<DemuxedSegment> {
    if (this.last?.url === url) return this.last.segment;
    const bytes = await load();
    const name = shownUrl(url);
    if (bytes[0] !== 0x47 && (isId3(bytes) || (bytes[0] === 0xff && (bytes[1]! & 0xf0) === 0xf0)))
      throw refuse('packed-audio segments (MPEG-TS only)', name);
    const segment = this.demuxer.demux(bytes, name);
    const broken = segment.discontinuities[0];
    if (broken !== undefined)
      throw originError(
        'corrupt-media',
        `PID ${pidName(broken.pid)}${broken.offset >= 0 ? `, byte ${broken.offset}` : ''}: ${broken.message}`,
        { subject: name },
      );
    this.last = { url, segment };
    return segment;
  }
}

function isId3(b: Uint8Array): boolean {
  return b[0] === 0x49 && b[1] === 0x44 && b[2] === 0x33;
}

/** A TrackHeader for a demuxed track, as an init segment's moov would give it. */
function trackHeader(t: DemuxedTrack, trackID: number, name: string): TrackHeader {
  const base = { trackID, timescale: t.timescale, language: t.language ?? 'und', trexDefaults: TRACK_DEFAULTS };
  if (t.config?.kind === 'avc') {
    const sps = parseSps(t.config.parameterSets[0]!);
    const width = Math.round((sps.width * sps.sar.num) / sps.sar.den);
    return {
      ...base,
      handler: 'vide',
      width,
      height: sps.height,
      stsd: avcStsd(t.config, width, sps.height),
      sampleEntry: 'avc1',
      codec: t.config,
    };
  }
  if (t.config?.kind === 'aac') {
    const audio = parseAudioSpecificConfig(t.config.asc);
    return {
      ...base,
      handler: 'soun',
      width: 0,
      height: 0,
      stsd: aacStsd(t.config, audio.channels, t.timescale),
      sampleEntry: 'mp4a',
      codec: t.config,
    };
  }
  const what = t.codec === 'h264' ? 'no SPS and PPS' : 'no ADTS frame';
  throw originError(
    'corrupt-media',
    `PID ${pidName(t.pid)}: ${what} in the first segment, the track cannot be described`,
    { subject: name },
  );
}
