// Random TTML documents (timing in every form, several lines, styled words, characters that
// need escaping, untidy white space) against a model of what must come out: exactly the
// paragraphs that overlap the window, with their times and text, in start order, in a document
// webvtt-parser reads without a single error.

import fc from 'fast-check';
import { webvttSegment } from '../../../../origin/segments/webvtt/webvtt';
import { cueText, judge, plainText } from './webvtt-support';

type Style = '' | 'i' | 'b' | 'u';
interface Word {
  text: string;
  style: Style;
}
interface Para {
  begin: number; // ms
  duration: number; // ms, may be ≤ 0 (then nothing is shown)
  form: number; // which time expression form
  useDur: boolean;
  lines: Word[][];
  gap: string; // white space written between words (collapses to one space)
}

const ATTR: Record<Style, string> = {
  '': '',
  i: ' tts:fontStyle="italic"',
  b: ' tts:fontWeight="bold"',
  u: ' tts:textDecoration="underline"',
};
const xmlEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A time in ms written in one of the TTML forms (the document sets frame and tick rate 1000). */
function expression(ms: number, form: number): string {
  const hh = String(Math.floor(ms / 3600000)).padStart(2, '0');
  const mm = String(Math.floor(ms / 60000) % 60).padStart(2, '0');
  const ss = String(Math.floor(ms / 1000) % 60).padStart(2, '0');
  const fff = String(ms % 1000).padStart(3, '0');
  switch (form) {
    case 0:
      return `${hh}:${mm}:${ss}.${fff}`;
    case 1:
      return `${hh}:${mm}:${ss}:${fff}`; // frames at 1000 fps
    case 2:
      return `${ms}ms`;
    case 3:
      return `${Math.floor(ms / 1000)}.${fff}s`;
    case 4:
      return `${ms}t`; // ticks at 1000 Hz
    default:
      return `${ms}f`;
  }
}

function documentOf(paras: Para[]): string {
  const ps = paras.map((p, i) => {
    const begin = `begin="${expression(p.begin, p.form)}"`;
    const end = p.useDur
      ? `dur="${expression(Math.max(p.duration, 0), p.form)}"`
      : `end="${expression(Math.max(p.begin + p.duration, 0), p.form)}"`;
    const words = (line: Word[]): string[] =>
      line.map((w) => (w.style === '' ? xmlEscape(w.text) : `<span${ATTR[w.style]}>${xmlEscape(w.text)}</span>`));
    const lines = p.lines.map((line, l) => (l === 0 ? [`p${i}`] : []).concat(words(line)).join(p.gap));
    return `<p ${begin} ${end}>${p.gap}${lines.join(`${p.gap}<br/>${p.gap}`)}${p.gap}</p>`;
  });
  return `<tt xmlns="http://www.w3.org/ns/ttml" xmlns:tts="http://www.w3.org/ns/ttml#styling" xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:frameRate="1000" ttp:tickRate="1000"><body><div>${ps.join('\n')}</div></body></tt>`;
}

const word = fc.record({
  text: fc.stringMatching(/^[a-zA-Z0-9&<>é'"-]{1,6}$/),
  style: fc.constantFrom<Style>('', 'i', 'b', 'u'),
});
const para = fc.record({
  begin: fc.integer({ min: 0, max: 20000 }),
  duration: fc.integer({ min: -500, max: 5000 }),
  form: fc.integer({ min: 0, max: 5 }),
  useDur: fc.boolean(),
  lines: fc.array(fc.array(word, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  gap: fc.constantFrom(' ', '  ', '\n  ', '\t'),
});

test('random documents convert to exactly the expected cues', () => {
  fc.assert(
    fc.property(
      fc.array(para, { maxLength: 6 }),
      fc.integer({ min: 0, max: 26000 }),
      fc.integer({ min: 0, max: 8000 }),
      (paras, start, length) => {
        const xml = documentOf(paras);
        const sample = { data: new TextEncoder().encode(xml), sourceTime: 0n, time: 0n, duration: 30000n };
        const vtt = webvttSegment([sample], 1000, 900000, { start: BigInt(start), end: BigInt(start + length) });
        const judged = judge(vtt);
        expect(judged.errors).toEqual([]);
        const expected = paras
          .map((p, i) => ({ p, i }))
          .filter(({ p }) => p.duration > 0 && p.begin < start + length && p.begin + p.duration > start && length > 0)
          // The judge lists cues in HTML's text track cue order: start time, then the later end
          // first, then document order (webvtt-parser sorts that way).
          .sort((a, b) => a.p.begin - b.p.begin || b.p.begin + b.p.duration - (a.p.begin + a.p.duration) || a.i - b.i)
          .map(({ p, i }) => ({
            start: p.begin,
            end: p.begin + p.duration,
            plain: p.lines
              .map((line, l) => (l === 0 ? [`p${i}`] : []).concat(line.map((w) => w.text)).join(' '))
              .join('\n'),
            markup: p.lines
              .map((line, l) =>
                (l === 0 ? [`p${i}`] : [])
                  .concat(line.map((w) => (w.style === '' ? w.text : `<${w.style}>${w.text}</${w.style}>`)))
                  .join(' '),
              )
              .join('\n'),
          }));
        const got = judged.cues.map((c) => ({
          start: Math.round(c.startTime * 1000),
          end: Math.round(c.endTime * 1000),
          plain: plainText(c.tree.children),
          markup: cueText(c.tree.children),
        }));
        expect(got).toEqual(expected);
      },
    ),
    { numRuns: 300 },
  );
});
