// Shared by the WebVTT tests: a judge (the npm `webvtt-parser`, a second implementation of the
// WebVTT parsing rules) and a reader of the text samples of a fixture, built from the project's
// own readers (fragment table from media-file.ts, moof layout from traf-layout.ts).

import { readFragmentMoof } from '../../../../origin/segments/fmp4/media-segment';
import { readTrackHeaders } from '../../../../origin/media/moov';
import { locateRuns, parseSourceMoof, TRUN } from '../../../../origin/media/traf-layout';
import { readMediaFile } from '../../../../origin/media/media-file';
import { FileSource } from '../../../../origin/io/source';
import { TextSample } from '../../../../origin/segments/webvtt/webvtt';
import { findMoov } from '../fmp4/fixture-segments';
import { media } from '../../../helpers/fixtures';

export type JudgedNode =
  | { type: 'text'; value: string }
  | { type: 'object'; name: string; children: JudgedNode[] }
  | { type: 'timestamp'; value: number };

export interface JudgedCue {
  tree: { children: JudgedNode[] };
  startTime: number;
  endTime: number;
  text: string;
  alignment: string;
  linePosition: number | 'auto';
  lineAlign: string;
  textPosition: number | 'auto';
  positionAlign: string;
  size: number;
}
interface ParseResult {
  cues: JudgedCue[];
  errors: Array<{ message: string; line: number; col?: number }>;
}
// webvtt-parser ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { WebVTTParser } = require('webvtt-parser') as {
  WebVTTParser: new (entities?: Record<string, string>) => { parse(input: string, mode?: string): ParseResult };
};
// The full HTML entity table, as its README advises for spec behaviour: with the small default
// table `&amp;` decodes to "&;".
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ENTITIES = require('webvtt-parser/html-entities.json') as Record<string, string>;
const parser = () => new WebVTTParser(ENTITIES);

/** The decoded text of a cue without its markup. */
export function plainText(nodes: JudgedNode[]): string {
  return nodes.map((n) => (n.type === 'text' ? n.value : n.type === 'object' ? plainText(n.children) : '')).join('');
}

/** The decoded text of a cue with its markup: `<i>`, `<b>`, `<u>` kept as tags, text unescaped. */
export function cueText(nodes: JudgedNode[]): string {
  return nodes
    .map((n) =>
      n.type === 'text' ? n.value : n.type === 'object' ? `<${n.name}>${cueText(n.children)}</${n.name}>` : '',
    )
    .join('');
}

export const TIMESTAMP_MAP = /^X-TIMESTAMP-MAP=MPEGTS:(\d+),LOCAL:00:00:00\.000$/;

/**
 * Parses a produced segment with webvtt-parser. The RFC 8216 §3.5 header line is checked here
 * and then taken out: the parser follows the current WebVTT spec, where any line between the
 * signature and the first blank line is reported ("No blank line after the signature").
 */
export function judge(vtt: string): { mpegts: number; cues: JudgedCue[]; errors: ParseResult['errors'] } {
  const lines = vtt.split('\n');
  if (lines[0] !== 'WEBVTT') throw new Error(`first line is not WEBVTT: ${JSON.stringify(lines[0])}`);
  const map = TIMESTAMP_MAP.exec(lines[1] ?? '');
  if (map === null) throw new Error(`second line is not an X-TIMESTAMP-MAP header: ${JSON.stringify(lines[1])}`);
  if (lines[2] !== '') throw new Error('no blank line after the header');
  const withoutMap = [lines[0], ...lines.slice(2)].join('\n');
  const parsed = parser().parse(withoutMap, 'subtitles');
  return { mpegts: Number(map[1]), cues: parsed.cues, errors: parsed.errors };
}

/** The cues of a WebVTT file as the judge reads it (the fixtures' sources). */
export function judgeFile(vtt: string): JudgedCue[] {
  const parsed = parser().parse(vtt, 'subtitles');
  if (parsed.errors.length > 0) throw new Error(`source WebVTT has errors: ${JSON.stringify(parsed.errors)}`);
  return parsed.cues;
}

export interface FixtureText {
  timescale: number;
  samples: TextSample[];
  /** [first sample index, end) of each fragment. */
  fragments: Array<{ first: number; end: number }>;
}

/** Every sample of the (only) track of a text fixture, with output time = source time − origin. */
export async function readTextSamples(file: string, origin = 0n): Promise<FixtureText> {
  const source = await FileSource.open(media(file));
  try {
    const moov = await findMoov(source);
    const header = [...readTrackHeaders(moov.bytes, file, moov.offset).values()][0]!;
    const indexed = await readMediaFile(source, 'exact');
    const track = indexed.tracks[0]!;
    const samples: TextSample[] = [];
    const fragments: FixtureText['fragments'] = [];
    for (let k = 0; k < track.fragments.count; k++) {
      const offset = track.fragments.offsets[k]!;
      const moof = await readFragmentMoof(source, offset);
      const trafs = parseSourceMoof(moof, offset);
      const located = locateRuns(
        trafs,
        { offset, length: moof.byteLength },
        () => header.trexDefaults.defaultSampleSize,
        source.size,
      );
      const first = samples.length;
      let time = track.fragments.times[k]!;
      for (const [t, traf] of trafs.entries()) {
        const ranges = located[t];
        if (!Array.isArray(ranges)) throw ranges ?? new Error('no layout');
        for (const [r, run] of traf.truns.entries()) {
          const view = new DataView(run.table.buffer, run.table.byteOffset, run.table.byteLength);
          let at = ranges[r]!.offset;
          for (let i = 0; i < run.sampleCount; i++) {
            const entry = i * run.entrySize;
            const duration =
              run.flags & TRUN.duration
                ? view.getUint32(entry)
                : (traf.tfhd.defaultSampleDuration ?? header.trexDefaults.defaultSampleDuration);
            const sizeAt = entry + (run.flags & TRUN.duration ? 4 : 0);
            const size =
              run.flags & TRUN.size
                ? view.getUint32(sizeAt)
                : (traf.tfhd.defaultSampleSize ?? header.trexDefaults.defaultSampleSize);
            samples.push({
              data: await source.read(at, size),
              sourceTime: time,
              time: time - origin,
              duration: BigInt(duration),
            });
            at += size;
            time += BigInt(duration);
          }
        }
      }
      fragments.push({ first, end: samples.length });
    }
    return { timescale: header.timescale, samples, fragments };
  } finally {
    await source.close();
  }
}
