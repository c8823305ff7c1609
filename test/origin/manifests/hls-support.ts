// HLS test helpers: playlists read by m3u8-parser (the video.js reader) with its warnings kept,
// views made with the real filter engine (variant_set, filter), and the URIs a playlist writes.

import { Presentation } from '../../../origin/model/presentation';
import { PlayoutView, viewForQuery } from '../../../origin/model/view';
import { wasmTrackSelector } from '../../../origin/server/select';
import { M3u8, M3u8Segment, M3u8Variant } from './format-support';

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
