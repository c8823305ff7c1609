// HLS test helpers: playlists read by m3u8-parser (the video.js reader) with its warnings kept,
// views made with the real filter engine (variant_set, filter), the URIs a playlist writes, and
// the fixture presentation's views, tracks and source rates the HLS playlist tests share.

import { Presentation } from '../../../origin/model/presentation';
import { PlayoutView, viewForQuery, ViewTrack } from '../../../origin/model/view';
import { wasmTrackSelector } from '../../../origin/server/select';
import { facts, keyOf, M3u8, M3u8Segment, M3u8Variant, presentationOf, rfcPeak } from './format-support';
import { ratesOf, renditionSeries, targetSeconds } from '../../../origin/manifests/hls-rates';
import { rendition } from '../../../origin/model/rendition';
import { FIXTURE_FILES } from '../../helpers/fixtures';
import { segmentsOf } from '../../helpers/segments';

export interface IFrameVariant {
  uri: string;
  attributes: Record<string, unknown> & {
    BANDWIDTH: number;
    CODECS?: string;
    RESOLUTION?: { width: number; height: number };
  };
}

export interface ParsedPlaylist {
  manifest: M3u8 & {
    iFramePlaylists?: IFrameVariant[];
    iFramesOnly?: boolean;
    segments: Array<M3u8Segment & { title?: string }>;
    playlists?: M3u8Variant[];
  };
  /** Raw attribute lists of the EXT-X-MEDIA tags, in order (m3u8-parser's mediaGroups drop some). */
  media: Array<Record<string, string>>;
  /** What m3u8-parser warned about (missing required attributes, unknown tags ...). */
  warnings: string[];
}

interface ParserEvent {
  type: string;
  tagType?: string;
  attributes?: Record<string, string>;
}
interface ParserInstance {
  push(text: string): void;
  end(): void;
  on(event: 'warn' | 'info', f: (e: { message: string }) => void): void;
  manifest: ParsedPlaylist['manifest'];
  parseStream: { on(event: 'data', f: (e: ParserEvent) => void): void };
}
const m3u8Parser = require('m3u8-parser') as { Parser: new () => ParserInstance };

export function readPlaylist(text: string): ParsedPlaylist {
  const parser = new m3u8Parser.Parser();
  const media: Array<Record<string, string>> = [];
  const warnings: string[] = [];
  parser.on('warn', (e) => warnings.push(e.message));
  parser.parseStream.on('data', (e) => {
    if (e.type === 'tag' && e.tagType === 'media' && e.attributes !== undefined) media.push(e.attributes);
  });
  parser.push(text);
  parser.end();
  return { manifest: parser.manifest, media, warnings };
}

/** A view as the origin builds it, with the real filter engine (filter, variant_set). */
export function hlsViewOf(p: Presentation, query = ''): PlayoutView {
  return viewForQuery(p, 'hls', query, wasmTrackSelector);
}

/** Every URI a playlist writes: variant lines, EXT-X-MEDIA and I-frame URIs, segments and maps. */
export function urisOf(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (!line.startsWith('#')) out.push(line);
    const m = /URI="([^"]*)"/.exec(line);
    if (m !== null) out.push(m[1]!);
  }
  return out;
}

/** The tag lines of a playlist with a given prefix. */
export function tagLines(text: string, tag: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${tag}:`) || l === tag);
}

export const FULL = FIXTURE_FILES;

/** The fixture videos in ascending systemBitrate (410594, 514358, 618174, 808789, 925835, 1651699; checked below). */
export const VIDEOS_UP = [
  'video_baseline_400k.ismv',
  'video_sar_500k.ismv',
  'video_2997_600k.ismv',
  'video_interlaced_800k.ismv',
  'video_main_900k.ismv',
  'video_high_1600k.ismv',
];

export async function hlsView(files: readonly string[], query = ''): Promise<PlayoutView> {
  return hlsViewOf(await presentationOf(files), query);
}

/** Reads a playlist and fails on any m3u8-parser warning. */
export function read(text: string): ReturnType<typeof readPlaylist> {
  const parsed = readPlaylist(text);
  expect(parsed.warnings).toEqual([]);
  return parsed;
}

/** A file's fragments joined the way the default 4 s HLS segmentation joins them: 2 + 2 + 1. */
export function joined(
  file: string,
  groups: number[][] = [[0, 1], [2, 3], [4]],
): { durations: bigint[]; bytes: number[]; timescale: number } {
  const f = facts(file);
  return {
    timescale: f.timescale,
    durations: groups.map((g) => g.reduce((a, i) => a + f.durations[i]!, 0n)),
    bytes: groups.map((g) => g.reduce((a, i) => a + f.bytes[i]!, 0)),
  };
}

/** RFC 8216 §4.3.4.2 peak and average of a file's source segments (the fMP4 figures), target 4. */
export function sourceRates(file: string): { peak: number; average: number } {
  const j = joined(file);
  const bits = j.bytes.reduce((a, b) => a + b, 0) * 8;
  const secs = Number(j.durations.reduce((a, b) => a + b, 0n)) / j.timescale;
  return { peak: rfcPeak(j.bytes, j.durations, j.timescale, 4), average: Math.ceil(bits / secs) };
}

export function trackOf(view: PlayoutView, file: string): ViewTrack {
  const key = keyOf(view, file);
  return view.tracks.find((t) => `${t.track.properties.trackName}=${t.track.properties.systemBitrate}` === key)!;
}

/** The estimate's peak of a rendition of fixture files (checked against the segment writers in hls-bandwidth.test.ts). */
export function estimatedPeak(view: PlayoutView, files: string[], kind: 'ts' | 'aac' | 'ac3' | 'ec3'): number {
  const r = rendition(files.map((f) => trackOf(view, f)));
  const main = r.tracks.find((t) => t.track.properties.type === 'video') ?? r.tracks[0]!;
  return ratesOf(
    renditionSeries(r, kind),
    targetSeconds(
      segmentsOf(main).map((s) => s.duration),
      main.track.properties.TimeScale,
    ),
  ).peak;
}
