// Shared by the DASH and HLS writer tests: the fixture presentations, the expectations computed
// independently of the origin's own reader (fixtures/media/facts.json for times, a top-level box
// walk for fragment sizes), the schema validator and typed wrappers of the npm parsers.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Presentation } from '../../../origin/model/presentation';
import { trackKey, PlayoutView } from '../../../origin/model/view';
import { MEDIA, ROOT } from '../../helpers/fixtures';
import { loadPresentation, packageFixtures, PLAYABLE } from '../../helpers/presentations';

/** The H.264 + AAC tracks the players play (PLAYABLE without its text tracks). */
export const AVC_AAC = PLAYABLE.filter((f) => !f.startsWith('text_'));

const presentations = new Map<string, Promise<Presentation>>();

/** One packaged presentation per file list, shared by the tests of a file. */
export function presentationOf(files: readonly string[]): Promise<Presentation> {
  const key = files.join(',');
  let p = presentations.get(key);
  if (p === undefined) {
    p = packageFixtures(files).then(loadPresentation);
    presentations.set(key, p);
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Expectations from the fixture facts

export interface FactTrack {
  timescale: number;
  /** Source decode times (tfxd for ismv, tfdt for the packager's text), exact. */
  times: bigint[];
  durations: bigint[];
  /** moof + mdat bytes of each fragment, from a top-level box walk of the file. */
  bytes: number[];
}

interface FactFragment {
  tfxd_time?: string;
  tfxd_duration?: string;
  tfdt?: string;
  trun_duration: string;
}
interface FactFile {
  file: string;
  box: { timescale: number; fragments: FactFragment[] };
}

const FACTS = JSON.parse(readFileSync(path.join(MEDIA, 'facts.json'), 'utf8')) as FactFile[];

export function facts(file: string): FactTrack {
  const f = FACTS.find((x) => x.file === file);
  if (f === undefined) throw new Error(`no facts for ${file}`);
  const frags = f.box.fragments;
  return {
    timescale: f.box.timescale,
    times: frags.map((x) => BigInt(x.tfxd_time ?? x.tfdt!)),
    durations: frags.map((x) => BigInt(x.tfxd_duration ?? x.trun_duration)),
    bytes: fragmentBytes(file),
  };
}

/** Sizes from each `moof` to the next `moof`, `mfra` or the end of the file (ISO/IEC 14496-12 §4.2 headers). */
function fragmentBytes(file: string): number[] {
  const data = readFileSync(path.join(MEDIA, file));
  const starts: number[] = [];
  let end = data.length;
  for (let at = 0; at + 8 <= data.length;) {
    let size = data.readUInt32BE(at);
    const type = data.toString('latin1', at + 4, at + 8);
    if (size === 1) size = Number(data.readBigUInt64BE(at + 8));
    if (size === 0) size = data.length - at;
    if (type === 'moof') starts.push(at);
    if (type === 'mfra') end = at;
    at += size;
  }
  return starts.map((s, i) => (starts[i + 1] ?? end) - s);
}

/** The presentation origin of a set of files: the earliest first fragment, as (ticks, timescale). */
export function originOf(files: readonly string[]): { ticks: bigint; timescale: number } {
  let best: { ticks: bigint; timescale: number } | undefined;
  for (const f of files) {
    const t = facts(f);
    const c = { ticks: t.times[0]!, timescale: t.timescale };
    if (best === undefined || c.ticks * BigInt(best.timescale) < best.ticks * BigInt(c.timescale)) best = c;
  }
  return best!;
}

/** Output times of a file's fragments in a presentation of `files`: source time minus the origin (rounded down into the track's timescale). */
export function outputTimes(files: readonly string[], file: string): bigint[] {
  const o = originOf(files);
  const t = facts(file);
  const num = o.ticks * BigInt(t.timescale);
  const den = BigInt(o.timescale);
  const shift = num / den - (num % den !== 0n && num < 0n ? 1n : 0n);
  return t.times.map((x) => x - shift);
}

/** Source file of each track key of a view (the packager names tracks; the tests know files). */
export function filesByKey(view: PlayoutView): Map<string, string> {
  return new Map(view.tracks.map((t) => [trackKey(t.track), path.basename(t.track.src)]));
}

// ---------------------------------------------------------------------------------------------
// DASH

/** MPEG's MPD schema, vendored in test/schemas/ (from MPEGGroup/DASHSchema: see test/schemas/README.md). */
export const MPD_SCHEMA = path.resolve(ROOT, 'test', 'schemas', 'DASH-MPD.xsd');

const scratch = mkdtempSync(path.join(tmpdir(), 'origin-mpd-'));
let scratchCount = 0;

/** xmllint's verdict on an MPD: { ok, output } (output names the line of any error). */
export function validateMpd(xml: string): { ok: boolean; output: string } {
  const file = path.join(scratch, `manifest-${++scratchCount}.mpd`);
  writeFileSync(file, xml);
  const r = spawnSync('xmllint', ['--noout', '--nonet', '--schema', MPD_SCHEMA, file], { encoding: 'utf8' });
  if (r.error) throw r.error;
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

export interface MpdSegment {
  uri: string;
  duration: number;
  presentationTime: number;
  map: { uri: string };
}
export interface MpdPlaylist {
  attributes: {
    NAME: string;
    BANDWIDTH: number;
    CODECS?: string;
    RESOLUTION?: { width: number; height: number };
    'FRAME-RATE'?: number;
  };
  segments: MpdSegment[];
}
interface MpdGroup {
  language?: string;
  playlists: MpdPlaylist[];
}
export interface ParsedMpd {
  duration: number;
  playlists: MpdPlaylist[];
  mediaGroups: { AUDIO: Record<string, Record<string, MpdGroup>>; SUBTITLES: Record<string, Record<string, MpdGroup>> };
}

const mpdParser = require('mpd-parser') as { parse(text: string, opts: { manifestUri: string }): ParsedMpd };

export function parseMpd(xml: string): ParsedMpd {
  return mpdParser.parse(xml, { manifestUri: 'http://origin.test/p/presentation.ism/.mpd' });
}

/** Every Representation of a parsed MPD (video playlists, audio and subtitle groups), by id. */
export function representations(m: ParsedMpd): Map<string, MpdPlaylist> {
  const out = new Map<string, MpdPlaylist>();
  const all = [...m.playlists];
  for (const kind of [m.mediaGroups.AUDIO, m.mediaGroups.SUBTITLES]) {
    for (const group of Object.values(kind)) for (const g of Object.values(group)) all.push(...g.playlists);
  }
  for (const p of all) out.set(p.attributes.NAME, p);
  return out;
}

// ---------------------------------------------------------------------------------------------
// HLS

export interface M3u8Segment {
  duration: number;
  uri: string;
  map?: { uri: string };
}
export interface M3u8Variant {
  uri: string;
  attributes: Record<string, unknown> & {
    BANDWIDTH: number;
    CODECS: string;
    AUDIO?: string;
    SUBTITLES?: string;
    RESOLUTION?: { width: number; height: number };
  };
}
export interface M3u8 {
  version: number;
  independentSegments?: boolean;
  targetDuration?: number;
  mediaSequence?: number;
  playlistType?: string;
  endList?: boolean;
  segments: M3u8Segment[];
  playlists?: M3u8Variant[];
  mediaGroups: {
    AUDIO: Record<string, Record<string, { default: boolean; autoselect: boolean; language?: string; uri: string }>>;
    SUBTITLES: Record<
      string,
      Record<string, { default: boolean; autoselect: boolean; language?: string; uri: string }>
    >;
  };
}
interface ParserEvent {
  type: string;
  tagType?: string;
  attributes?: Record<string, string>;
}
interface M3u8ParserClass {
  new (): {
    push(text: string): void;
    end(): void;
    manifest: M3u8;
    parseStream: { on(event: 'data', f: (e: ParserEvent) => void): void };
  };
}

const m3u8Parser = require('m3u8-parser') as { Parser: M3u8ParserClass };

/** The parsed playlist plus the raw attribute lists of its EXT-X-MEDIA tags (m3u8-parser drops CHANNELS from mediaGroups). */
export function parseM3u8(text: string): { manifest: M3u8; media: Array<Record<string, string>> } {
  const parser = new m3u8Parser.Parser();
  const media: Array<Record<string, string>> = [];
  parser.parseStream.on('data', (e) => {
    if (e.type === 'tag' && e.tagType === 'media' && e.attributes !== undefined) media.push(e.attributes);
  });
  parser.push(text);
  parser.end();
  return { manifest: parser.manifest, media };
}

/** RFC 8216 §4.3.4.2 peak segment bit rate, by brute force over every contiguous set. */
export function rfcPeak(bytes: number[], durations: bigint[], timescale: number, target: number): number {
  let peak = 0;
  for (let i = 0; i < bytes.length; i++) {
    for (let j = i; j < bytes.length; j++) {
      const b = bytes.slice(i, j + 1).reduce((x, y) => x + y, 0);
      const secs = Number(durations.slice(i, j + 1).reduce((x, y) => x + y, 0n)) / timescale;
      if (secs >= 0.5 * target && secs <= 1.5 * target) peak = Math.max(peak, (b * 8) / secs);
    }
  }
  return Math.ceil(peak);
}

/** The `<trackName>=<bitrate>` key of a fixture file's track in a view. */
export function keyOf(view: PlayoutView, file: string): string {
  const k = [...filesByKey(view)].find(([, f]) => f === file)?.[0];
  if (k === undefined) throw new Error(`${file} is not in the view`);
  return k;
}
