// The real text fixtures (shaka-packager TTML in fMP4, made from fixtures/media/src/*.vtt):
// read every sample with the project's readers, convert every segment under several
// segmentations and origins, and check that every cue of the source WebVTT comes out with its
// times and text, that nothing else does, and that webvtt-parser accepts every document.

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { webvttSegment } from '../../../../origin/segments/webvtt/webvtt';
import { MEDIA } from '../../../helpers/fixtures';
import { FixtureText, judge, JudgedCue, judgeFile, readTextSamples } from './webvtt-support';

const FILES = [
  { file: 'text_eng.ismt', src: 'text_eng.vtt' },
  { file: 'text_nld.ismt', src: 'text_nld.vtt' },
];

/** Fragment groupings: one segment per 2 s fragment, the default 4 s HLS joins, everything. */
const GROUPINGS: Record<string, number[][]> = {
  'per fragment': [[0], [1], [2], [3], [4]],
  '4 s segments': [[0, 1], [2, 3], [4]],
  'one segment': [[0, 1, 2, 3, 4]],
};

/** A cue in whole milliseconds (the judge gives float seconds). */
interface Plain {
  start: number;
  end: number;
  text: string;
}
const plain = (c: JudgedCue): Plain => ({
  start: Math.round(c.startTime * 1000),
  end: Math.round(c.endTime * 1000),
  text: c.text,
});
const key = (c: Plain): string => `${c.start}|${c.end}|${c.text}`;

/** The cues of every segment of a grouping, each checked against its window. */
function convertAll(
  f: FixtureText,
  groups: number[][],
  mpegts: number,
): Array<{ window: [number, number]; cues: Plain[]; raw: string }> {
  return groups.map((g) => {
    const samples = g.flatMap((k) => f.samples.slice(f.fragments[k]!.first, f.fragments[k]!.end));
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    const window = { start: first.time, end: last.time + last.duration };
    const raw = webvttSegment(samples, f.timescale, mpegts, window);
    const judged = judge(raw);
    expect(judged.errors).toEqual([]);
    expect(judged.mpegts).toBe(mpegts);
    const toMs = (t: bigint): number => Number((t * 1000n) / BigInt(f.timescale));
    return { window: [toMs(window.start), toMs(window.end)], cues: judged.cues.map(plain), raw };
  });
}

describe.each(FILES)('$file', ({ file, src }) => {
  let fixture: FixtureText;
  let expected: Plain[];

  beforeAll(async () => {
    fixture = await readTextSamples(file);
    expected = judgeFile(readFileSync(path.join(MEDIA, 'src', src), 'utf8')).map(plain);
  });

  test('the track: timescale 1000, five 2 s fragments of one TTML sample each', () => {
    expect(fixture.timescale).toBe(1000);
    expect(fixture.fragments).toEqual([0, 1, 2, 3, 4].map((k) => ({ first: k, end: k + 1 })));
    expect(fixture.samples.map((s) => [s.sourceTime, s.duration])).toEqual(
      [0n, 2000n, 4000n, 6000n, 8000n].map((t) => [t, 2000n]),
    );
    expect(expected).toHaveLength(5);
  });

  test('evidence for the timing decision: each sample holds absolute times (begin = its own decode time)', () => {
    for (const s of fixture.samples) {
      const xml = new TextDecoder().decode(s.data);
      const begins = [...xml.matchAll(/begin="([^"]+)"/g)].map((m) => m[1]);
      const seconds = Number(s.sourceTime) / 1000;
      expect(begins).toEqual([`00:00:0${seconds}.000`]);
    }
  });

  test.each(Object.keys(GROUPINGS))(
    '%s: every source cue overlapping a segment comes out whole, and nothing else',
    (grouping) => {
      for (const mpegts of [900000, 0]) {
        const segments = convertAll(fixture, GROUPINGS[grouping]!, mpegts);
        for (const seg of segments) {
          const [from, to] = seg.window;
          const inWindow = expected.filter((c) => c.start < to && c.end > from);
          expect(seg.cues).toEqual(inWindow);
          for (const line of seg.raw.split('\n').filter((l) => l.includes('-->')))
            expect(line.endsWith(' align:center')).toBe(true);
        }
        const union = new Map(segments.flatMap((s) => s.cues).map((c) => [key(c), c]));
        expect([...union.values()]).toEqual(expected);
      }
    },
  );

  test('windows not on fragment boundaries: the samples overlapping each window give exactly the cues overlapping it', () => {
    for (let start = 0; start < 10000; start += 500) {
      for (const length of [100, 1000, 3000]) {
        const window = { start: BigInt(start), end: BigInt(start + length) };
        const samples = fixture.samples.filter((s) => s.time < window.end && s.time + s.duration > window.start);
        const judged = judge(webvttSegment(samples, fixture.timescale, 900000, window));
        expect(judged.errors).toEqual([]);
        expect(judged.cues.map(plain)).toEqual(expected.filter((c) => c.start < start + length && c.end > start));
      }
    }
  });

  test('two-line cues keep their line break', () => {
    const [seg] = convertAll(fixture, [[0, 1, 2, 3, 4]], 900000);
    const twoLines = seg!.cues.filter((c) => c.text.includes('\n'));
    expect(twoLines.map((c) => c.start)).toEqual([2000, 6000]);
    expect(twoLines).toEqual(expected.filter((c) => c.text.split('\n').length === 2));
  });

  test('a presentation origin of 2 s moves every cue 2 s earlier; the cue before it is dropped', async () => {
    const shifted = await readTextSamples(file, 2000n);
    const [seg] = convertAll(shifted, [[0, 1, 2, 3, 4]], 900000);
    const moved = expected.map((c) => ({ ...c, start: c.start - 2000, end: c.end - 2000 })).filter((c) => c.end > 0);
    expect(seg!.cues).toEqual(moved);
    expect(moved).toHaveLength(4);
  });
});
