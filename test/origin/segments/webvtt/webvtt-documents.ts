// Hand-written TTML documents for the WebVTT tests and their conversion: every produced
// document is checked by the judge (webvtt-support.ts) and read back as cues.

import { TextSample, webvttSegment } from '../../../../origin/segments/webvtt/webvtt';
import { judge } from './webvtt-support';

export const NS =
  'xmlns="http://www.w3.org/ns/ttml" xmlns:tts="http://www.w3.org/ns/ttml#styling" xmlns:ttp="http://www.w3.org/ns/ttml#parameter"';

export function doc(body: string, o: { head?: string; tt?: string } = {}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<tt ${NS} xml:lang="en"${o.tt ? ` ${o.tt}` : ''}><head>${o.head ?? ''}</head><body>${body}</body></tt>`;
}

export const HOUR = 3600000n;

export function sample(
  xml: string | Uint8Array,
  sourceTime = 0n,
  duration = 10n * HOUR,
  time = sourceTime,
): TextSample {
  return { data: typeof xml === 'string' ? new TextEncoder().encode(xml) : xml, sourceTime, time, duration };
}

export interface Cue {
  from: string;
  to: string;
  settings: string;
  text: string;
}

/** Converts and checks the result with the judge; returns the cues as written. */
export function convert(
  samples: TextSample[],
  window = { start: 0n, end: 100n * HOUR },
  timescale = 1000,
  mpegts = 900000,
): Cue[] {
  const vtt = webvttSegment(samples, timescale, mpegts, window);
  const judged = judge(vtt);
  expect(judged.errors).toEqual([]);
  expect(judged.mpegts).toBe(mpegts);
  const cues = cuesIn(vtt);
  expect(judged.cues).toHaveLength(cues.length);
  return cues;
}

export function cuesIn(vtt: string): Cue[] {
  const body = vtt.split('\n').slice(3).join('\n');
  if (body === '') return [];
  return body
    .replace(/\n$/, '')
    .split('\n\n')
    .map((block) => {
      const [timing, ...text] = block.split('\n');
      const m = /^(\S+) --> (\S+)(?: (.*))?$/.exec(timing!);
      if (m === null) throw new Error(`not a cue timing line: ${timing}`);
      return { from: m[1]!, to: m[2]!, settings: m[3] ?? '', text: text.join('\n') };
    });
}

/** Cues as `from --> to text` lines, for compact expectations. */
export const brief = (cues: Cue[]): string[] => cues.map((c) => `${c.from} --> ${c.to} ${c.text}`);

export const one = (body: string, o: { head?: string; tt?: string } = {}): Cue[] => convert([sample(doc(body, o))]);
