// TTML → WebVTT segments from hand-written TTML documents: every timing form, nesting, styles,
// text handling, windows, absolute and sample-relative timing, and bad input. Every produced
// document is also parsed by webvtt-parser (a separate implementation) and must have no errors.

import { OriginError } from '../../../../origin/errors';
import { TextSample, webvttSegment } from '../../../../origin/segments/webvtt/webvtt';
import { judge } from './webvtt-support';

const NS =
  'xmlns="http://www.w3.org/ns/ttml" xmlns:tts="http://www.w3.org/ns/ttml#styling" xmlns:ttp="http://www.w3.org/ns/ttml#parameter"';

function doc(body: string, o: { head?: string; tt?: string } = {}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<tt ${NS} xml:lang="en"${o.tt ? ` ${o.tt}` : ''}><head>${o.head ?? ''}</head><body>${body}</body></tt>`;
}

const HOUR = 3600000n;

function sample(xml: string | Uint8Array, sourceTime = 0n, duration = 10n * HOUR, time = sourceTime): TextSample {
  return { data: typeof xml === 'string' ? new TextEncoder().encode(xml) : xml, sourceTime, time, duration };
}

interface Cue {
  from: string;
  to: string;
  settings: string;
  text: string;
}

/** Converts and checks the result with the judge; returns the cues as written. */
function convert(
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

function cuesIn(vtt: string): Cue[] {
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
const brief = (cues: Cue[]): string[] => cues.map((c) => `${c.from} --> ${c.to} ${c.text}`);

const one = (body: string, o: { head?: string; tt?: string } = {}): Cue[] => convert([sample(doc(body, o))]);

function thrown(f: () => unknown): OriginError {
  try {
    f();
  } catch (e) {
    if (e instanceof OriginError) return e;
    throw e;
  }
  throw new Error('expected an OriginError, none was thrown');
}

describe('document framing', () => {
  test('header: WEBVTT, the RFC 8216 §3.5 timestamp map, a blank line', () => {
    const vtt = webvttSegment([sample(doc('<div><p begin="1s" end="2s">Hi</p></div>'))], 1000, 900000, {
      start: 0n,
      end: 10000n,
    });
    expect(vtt).toBe('WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n\n00:00:01.000 --> 00:00:02.000\nHi\n');
    expect(webvttSegment([], 1000, 0, { start: 0n, end: 10000n })).toBe(
      'WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n\n',
    );
  });

  test('several cues are separated by one blank line and the document is valid', () => {
    const cues = one('<div><p begin="1s" end="2s">A</p><p begin="3s" end="4s">B</p></div>');
    expect(brief(cues)).toEqual(['00:00:01.000 --> 00:00:02.000 A', '00:00:03.000 --> 00:00:04.000 B']);
    const vtt = webvttSegment(
      [sample(doc('<div><p begin="1s" end="2s">A</p><p begin="3s" end="4s">B</p></div>'))],
      1000,
      0,
      { start: 0n, end: HOUR },
    );
    expect(vtt.endsWith('\nA\n\n00:00:03.000 --> 00:00:04.000\nB\n')).toBe(true);
  });

  test('mpegts 0 (fMP4 HLS) and 900000 (TS HLS) are written as given', () => {
    const s = [sample(doc('<div><p begin="1s" end="2s">A</p></div>'))];
    expect(convert(s, undefined, 1000, 0)).toEqual(convert(s, undefined, 1000, 900000));
  });

  test('caller mistakes are internal errors', () => {
    const s = [sample(doc(''))];
    expect(thrown(() => webvttSegment(s, 0, 0, { start: 0n, end: 1n })).kind).toBe('internal');
    expect(thrown(() => webvttSegment(s, 1000, -1, { start: 0n, end: 1n })).kind).toBe('internal');
    expect(thrown(() => webvttSegment(s, 1000, 2 ** 33, { start: 0n, end: 1n })).kind).toBe('internal');
    expect(thrown(() => webvttSegment(s, 1000, 0, { start: 5n, end: 1n })).kind).toBe('internal');
    expect(thrown(() => webvttSegment([sample(doc(''), 0n, -1n)], 1000, 0, { start: 0n, end: 1n })).kind).toBe(
      'internal',
    );
  });

  test('timestamps past 99 hours keep all hour digits', () => {
    const cues = convert(
      [sample(doc('<div><p begin="100:00:00.000" end="100:00:01.5">Late</p></div>'), 0n, 200n * HOUR)],
      { start: 0n, end: 200n * HOUR },
    );
    expect(brief(cues)).toEqual(['100:00:00.000 --> 100:00:01.500 Late']);
  });
});

describe('time expressions (TTML1 §10.3.1)', () => {
  const cases: Array<[string, string, string]> = [
    // [end expression, tt parameters, expected end]
    ['00:00:01.500', '', '00:00:01.500'],
    ['00:00:02', '', '00:00:02.000'],
    ['01:02:03.004', '', '01:02:03.004'],
    ['00:00:01.0005', '', '00:00:01.001'], // half a millisecond rounds up
    ['00:00:01.0004999', '', '00:00:01.000'],
    ['00:00:01:15', '', '00:00:01.500'], // frames at the default 30 fps
    ['00:00:01:12', 'ttp:frameRate="25"', '00:00:01.480'],
    ['00:00:01:15.1', 'ttp:frameRate="30" ttp:subFrameRate="2"', '00:00:01.517'], // 1 + 15.5/30
    ['00:00:10:00', 'ttp:frameRate="30" ttp:frameRateMultiplier="1000 1001"', '00:00:10.000'],
    ['300f', 'ttp:frameRate="30" ttp:frameRateMultiplier="1000 1001"', '00:00:10.010'], // 300 × 1001/30000
    ['12.5s', '', '00:00:12.500'],
    ['500ms', '', '00:00:00.500'],
    ['1.5m', '', '00:01:30.000'],
    ['0.5h', '', '00:30:00.000'],
    ['3f', 'ttp:frameRate="25"', '00:00:00.120'],
    ['3f', '', '00:00:00.100'],
    ['100t', 'ttp:tickRate="1000"', '00:00:00.100'],
    ['25000000t', 'ttp:tickRate="10000000"', '00:00:02.500'],
    ['5t', 'ttp:tickRate="10000"', '00:00:00.001'], // 0.5 ms rounds up
    ['100t', 'ttp:frameRate="25" ttp:subFrameRate="2"', '00:00:02.000'], // §6.2.10: ticks are sub-frames
    ['7t', '', '00:00:07.000'], // no frame rate: one tick per second
    [' 2s ', '', '00:00:02.000'],
  ];
  test.each(cases)('end="%s" with [%s] ends at %s', (expression, tt, expected) => {
    const cues = one(`<div><p begin="0s" end="${expression}">x</p></div>`, { tt });
    expect(cues.map((c) => [c.from, c.to])).toEqual([['00:00:00.000', expected]]);
  });

  test('dur counts from begin; with both dur and end the earlier end wins (§10.2.3)', () => {
    expect(brief(one('<div><p begin="1s" dur="2s">a</p></div>'))).toEqual(['00:00:01.000 --> 00:00:03.000 a']);
    expect(brief(one('<div><p begin="1s" dur="2s" end="2.5s">a</p></div>'))).toEqual([
      '00:00:01.000 --> 00:00:02.500 a',
    ]);
    expect(brief(one('<div><p begin="1s" dur="2s" end="5s">a</p></div>'))).toEqual(['00:00:01.000 --> 00:00:03.000 a']);
  });

  test.each([
    ['1.5', 'no metric'],
    ['00:60:00', 'minutes above 59'],
    ['00:00:61', 'seconds above 60'],
    ['0:00:01', 'expected'],
    ['00:00:01:30', 'frame 30 is not below the frame rate 30'],
    ['-1s', 'expected'],
    ['1x', 'expected'],
    [`${'1'.repeat(60)}s`, 'longer than'],
  ])('end="%s" is refused (%s)', (expression, why) => {
    const e = thrown(() =>
      webvttSegment([sample(doc(`<div><p end="${expression}">x</p></div>`), 4000n)], 1000, 0, { start: 0n, end: HOUR }),
    );
    expect(e.kind).toBe('corrupt-media');
    expect(e.subject).toBe('TTML sample at decode time 4000');
    expect(e.message).toContain('is not a TTML time expression');
    if (why !== 'no metric') expect(e.message).toContain(why);
  });

  test.each(['smpte', 'clock'])('ttp:timeBase="%s" is refused with a clear error', (base) => {
    const e = thrown(() =>
      webvttSegment(
        [sample(doc('<div><p begin="0s" end="1s">x</p></div>', { tt: `ttp:timeBase="${base}"` }))],
        1000,
        0,
        { start: 0n, end: HOUR },
      ),
    );
    expect(e.kind).toBe('unsupported-media');
    expect(e.message).toContain(`ttp:timeBase="${base}" is not supported`);
    expect(e.message).toContain('media time base');
  });

  test('ttp:timeBase="media" is accepted; bad parameter values are refused', () => {
    expect(brief(one('<div><p begin="0s" end="1s">x</p></div>', { tt: 'ttp:timeBase="media"' }))).toEqual([
      '00:00:00.000 --> 00:00:01.000 x',
    ]);
    for (const bad of [
      'ttp:frameRate="0"',
      'ttp:tickRate="abc"',
      'ttp:frameRateMultiplier="1000"',
      'ttp:subFrameRate="-2"',
    ]) {
      const e = thrown(() =>
        webvttSegment([sample(doc('<div><p end="1s">x</p></div>', { tt: bad }))], 1000, 0, { start: 0n, end: HOUR }),
      );
      expect(e.kind).toBe('corrupt-media');
    }
  });
});

describe('time containment and nesting (TTML1 §10.2.4, §10.4)', () => {
  test('par: children count from the parent begin and are clipped to the parent', () => {
    const cues = one(
      '<div begin="10s" end="20s"><p begin="1s" end="2s">in</p><p begin="8s" end="15s">clipped</p><p begin="11s" end="12s">outside</p></div>',
    );
    expect(brief(cues)).toEqual(['00:00:11.000 --> 00:00:12.000 in', '00:00:18.000 --> 00:00:20.000 clipped']);
  });

  test('body, div and p offsets add up', () => {
    const cues = convert([
      sample(
        `<tt ${NS}><body begin="1s"><div begin="2s"><div begin="3s"><p begin="4s" dur="1s">deep</p></div></div></body></tt>`,
      ),
    ]);
    expect(brief(cues)).toEqual(['00:00:10.000 --> 00:00:11.000 deep']);
  });

  test('seq: each child begins where the previous one ended', () => {
    const cues = one(
      '<div timeContainer="seq" begin="1s"><p dur="1s">a</p><p dur="2s">b</p><p begin="1s" dur="1s">c</p></div>',
    );
    expect(brief(cues)).toEqual([
      '00:00:01.000 --> 00:00:02.000 a',
      '00:00:02.000 --> 00:00:04.000 b',
      '00:00:05.000 --> 00:00:06.000 c',
    ]);
  });

  test('seq: in a seq p, spans follow one another and text without timing lasts zero time', () => {
    const cues = one(
      '<div><p timeContainer="seq" begin="0s"><span dur="1s">one</span><span dur="1s">two</span>gone</p></div>',
    );
    expect(brief(cues)).toEqual(['00:00:00.000 --> 00:00:01.000 one', '00:00:01.000 --> 00:00:02.000 two']);
    // a span of only text without timing also lasts zero time in a seq parent (§10.4)
    const spans = one(
      '<div><p timeContainer="seq"><span dur="1s">one</span><span>zero</span><span dur="1s">two</span></p></div>',
    );
    expect(brief(spans)).toEqual(['00:00:00.000 --> 00:00:01.000 one', '00:00:01.000 --> 00:00:02.000 two']);
  });

  test('a p without timing lasts as long as its parent; with none anywhere, the whole sample', () => {
    expect(brief(one('<div begin="2s" end="5s"><p>whole div</p></div>'))).toEqual([
      '00:00:02.000 --> 00:00:05.000 whole div',
    ]);
    const cues = convert([sample(doc('<div><p>whole sample</p></div>'), 3000n, 2000n)]);
    expect(brief(cues)).toEqual(['00:00:03.000 --> 00:00:05.000 whole sample']);
  });

  test('a div without end ends with its last child (par endsync all) and clips nothing', () => {
    const cues = one('<div begin="1s"><p begin="0s" end="2s">a</p><p begin="1s" end="4s">b</p></div>');
    expect(brief(cues)).toEqual(['00:00:01.000 --> 00:00:03.000 a', '00:00:02.000 --> 00:00:05.000 b']);
    // seen from a seq parent: the next div begins where the latest child of the previous one ended
    const seq = convert([
      sample(
        `<tt ${NS}><body timeContainer="seq"><div><p begin="0s" end="2s">a</p><p begin="0s" end="3s">b</p></div><div><p dur="1s">c</p></div></body></tt>`,
      ),
    ]);
    expect(brief(seq)).toEqual([
      '00:00:00.000 --> 00:00:02.000 a',
      '00:00:00.000 --> 00:00:03.000 b',
      '00:00:03.000 --> 00:00:04.000 c',
    ]);
  });

  test('spans with their own timing split a paragraph into one cue per change', () => {
    const cues = one(
      '<div><p begin="0s" end="4s">A <span begin="1s" end="2s">B</span> <span begin="1s" end="3s">C</span></p></div>',
    );
    expect(brief(cues)).toEqual([
      '00:00:00.000 --> 00:00:01.000 A',
      '00:00:01.000 --> 00:00:02.000 A B C',
      '00:00:02.000 --> 00:00:03.000 A C',
      '00:00:03.000 --> 00:00:04.000 A',
    ]);
  });

  test('a span timed past its paragraph is clipped; a span that changes nothing visible does not split the cue', () => {
    const cues = one(
      '<div><p begin="1s" end="3s">x<span begin="0s" end="10s">y</span><span begin="1s" end="1.5s"> </span></p></div>',
    );
    expect(brief(cues)).toEqual(['00:00:01.000 --> 00:00:03.000 xy']);
  });

  test('an end before begin makes an empty interval: nothing is shown', () => {
    expect(one('<div><p begin="5s" end="2s">never</p></div>')).toEqual([]);
  });

  test('timeContainer must be par or seq', () => {
    const e = thrown(() =>
      webvttSegment([sample(doc('<div timeContainer="excl"><p>x</p></div>'))], 1000, 0, { start: 0n, end: HOUR }),
    );
    expect(e.kind).toBe('corrupt-media');
    expect(e.message).toContain('timeContainer="excl" is neither par nor seq');
  });
});

describe('text', () => {
  test('<br/> breaks lines; xml:space="default" collapses white space and trims line ends', () => {
    const cues = one('<div><p begin="0s" end="1s">\n   first    line  <br/>\n\t second\nline   </p></div>');
    expect(cues[0]!.text).toBe('first line\nsecond line');
  });

  test('white space collapses across span boundaries', () => {
    expect(one('<div><p end="1s">a <span> b </span> c</p></div>')[0]!.text).toBe('a b c');
  });

  test('xml:space="preserve": spaces are kept and line feeds break lines', () => {
    expect(one('<div><p end="1s" xml:space="preserve">a  b\nc</p></div>')[0]!.text).toBe('a  b\nc');
    // inherited from tt, overridden on a span
    const cues = one('<div><p end="1s">x  y<span xml:space="default">  z   w</span></p></div>', {
      tt: 'xml:space="preserve"',
    });
    expect(cues[0]!.text).toBe('x  y z w');
  });

  test('lines that would be empty are dropped (a blank line would end the cue)', () => {
    expect(one('<div><p end="1s">one<br/><br/>  <br/>two<br/></p></div>')[0]!.text).toBe('one\ntwo');
    expect(one('<div><p end="1s" xml:space="preserve">one\n\n   \ntwo</p></div>')[0]!.text).toBe('one\ntwo');
  });

  test('&, < and > are escaped; entities, character references and CDATA are decoded first', () => {
    const cues = one(
      '<div><p end="1s">Tom &amp; Jerry &lt;3 a&gt;b --&gt; &#233;&#x20AC; <![CDATA[<i>not a tag</i> & more]]></p></div>',
    );
    expect(cues[0]!.text).toBe('Tom &amp; Jerry &lt;3 a&gt;b --&gt; é€ &lt;i&gt;not a tag&lt;/i&gt; &amp; more');
    // and a WebVTT parser reads back the original characters, with no markup
    const vtt = webvttSegment(
      [sample(doc('<div><p end="1s">Tom &amp; Jerry &lt;3 a&gt;b --&gt; <![CDATA[<i>x</i>]]></p></div>'))],
      1000,
      0,
      { start: 0n, end: HOUR },
    );
    const [cue] = judge(vtt).cues;
    expect(cue!.tree.children).toEqual([{ type: 'text', value: 'Tom & Jerry <3 a>b --> <i>x</i>' }]);
  });

  test('empty and white-space-only paragraphs make no cue', () => {
    expect(
      one(
        '<div><p begin="0s" end="1s"></p><p begin="1s" end="2s">   \n  </p><p begin="2s" end="3s"><br/></p><p begin="3s" end="4s"/></div>',
      ),
    ).toEqual([]);
  });

  test('metadata and foreign elements inside a paragraph are not text', () => {
    const cues = convert([
      sample(doc('<div><p end="1s" xmlns:x="urn:x">a<metadata>meta</metadata><x:note>note</x:note>b</p></div>')),
    ]);
    expect(cues[0]!.text).toBe('ab');
  });
});

describe('styles', () => {
  const head = `<styling>
      <style xml:id="it" tts:fontStyle="italic"/>
      <style xml:id="bold" tts:fontWeight="bold"/>
      <style xml:id="both" style="it bold"/>
      <style xml:id="left" tts:textAlign="left"/>
      <style xml:id="loop1" style="loop2" tts:textDecoration="underline"/>
      <style xml:id="loop2" style="loop1"/>
    </styling>
    <layout>
      <region xml:id="bottom" tts:origin="10% 80%" tts:extent="80% 10%" tts:displayAlign="after" tts:textAlign="center"/>
      <region xml:id="top" tts:origin="10% 5%" tts:extent="80% 20%" tts:fontStyle="italic"/>
      <region xml:id="middle" tts:origin="0% 40%" tts:extent="100% 20.5%"><style tts:displayAlign="center"/></region>
      <region xml:id="pixels" tts:origin="10px 20px" tts:extent="100px 20px"/>
    </layout>`;
  const text = (body: string): string[] => one(`<div>${body}</div>`, { head }).map((c) => c.text);
  const settings = (body: string): string[] => one(`<div>${body}</div>`, { head }).map((c) => c.settings);

  test('inline tts:fontStyle, tts:fontWeight and tts:textDecoration become <i>, <b> and <u>', () => {
    expect(
      text(
        '<p end="1s">a <span tts:fontStyle="italic">b</span> <span tts:fontWeight="bold">c</span> <span tts:textDecoration="underline">d</span></p>',
      ),
    ).toEqual(['a <i>b</i> <b>c</b> <u>d</u>']);
    expect(text('<p end="1s" tts:fontStyle="oblique">slanted</p>')).toEqual(['<i>slanted</i>']);
  });

  test('referenced and chained styles apply; later references and inline attributes override', () => {
    expect(text('<p end="1s" style="both">x</p>')).toEqual(['<i><b>x</b></i>']);
    expect(text('<p end="1s" style="both" tts:fontWeight="normal">x</p>')).toEqual(['<i>x</i>']);
    expect(text('<p end="1s" style="it bold">x<span tts:fontStyle="normal">y</span></p>')).toEqual([
      '<i><b>x</b></i><b>y</b>',
    ]);
    expect(text('<p end="1s" style="nosuchstyle">plain</p>')).toEqual(['plain']);
    expect(text('<p end="1s" style="loop1">cycle</p>')).toEqual(['<u>cycle</u>']);
  });

  test('styles inherit from div and body; noUnderline and none switch underline off', () => {
    const cues = convert([
      sample(
        `<tt ${NS}><body tts:textDecoration="underline"><div tts:fontWeight="bold"><p end="1s">u<span tts:textDecoration="noUnderline">n</span><span tts:textDecoration="none">o</span></p></div></body></tt>`,
      ),
    ]);
    expect(cues[0]!.text).toBe('<b><u>u</u></b><b>no</b>');
  });

  test('text styles of the region are inherited by its content', () => {
    expect(text('<p end="1s" region="top">from region</p>')).toEqual(['<i>from region</i>']);
  });

  test('tts:textAlign becomes align:', () => {
    expect(settings('<p end="1s" tts:textAlign="right">r</p>')).toEqual(['align:right']);
    expect(settings('<p end="1s" style="left">l</p>')).toEqual(['align:left']);
    expect(settings('<p end="1s" tts:textAlign="start">s</p>')).toEqual(['align:start']);
    expect(settings('<p end="1s">none</p>')).toEqual(['']);
  });

  test('a region in percentages becomes line:, position: and size:; displayAlign picks the line edge', () => {
    expect(settings('<p end="1s" region="bottom">b</p>')).toEqual([
      'line:90%,end position:10%,line-left size:80% align:center',
    ]);
    expect(settings('<p end="1s" region="top">t</p>')).toEqual(['line:5% position:10%,line-left size:80%']);
    expect(settings('<p end="1s" region="middle">m</p>')).toEqual([
      'line:50.25%,center position:0%,line-left size:100%',
    ]);
    // the region may also be given by an ancestor
    const cues = one('<div region="bottom"><p end="1s">from div</p></div>', { head });
    expect(cues[0]!.settings).toBe('line:90%,end position:10%,line-left size:80% align:center');
  });

  test('regions that are not simple percentages, and unknown regions, place nothing', () => {
    expect(settings('<p end="1s" region="pixels">p</p>')).toEqual(['']);
    expect(settings('<p end="1s" region="nowhere">n</p>')).toEqual(['']);
  });

  test('the judge reads the settings the way they were meant', () => {
    const vtt = webvttSegment([sample(doc('<div><p end="1s" region="bottom">b</p></div>', { head }))], 1000, 0, {
      start: 0n,
      end: HOUR,
    });
    const [cue] = judge(vtt).cues;
    expect(cue).toMatchObject({
      linePosition: 90,
      lineAlign: 'end',
      textPosition: 10,
      positionAlign: 'line-left',
      size: 80,
      alignment: 'center',
    });
  });
});

describe('windows', () => {
  const s = sample(
    doc('<div><p begin="1s" end="3s">one</p><p begin="4s" end="6s">two</p><p begin="6s" end="8s">three</p></div>'),
    0n,
    10000n,
  );
  const texts = (start: bigint, end: bigint): string[] => convert([s], { start, end }).map((c) => c.text);

  test('cues overlapping the window are written with their full times', () => {
    const cues = convert([s], { start: 2000n, end: 5000n });
    expect(brief(cues)).toEqual(['00:00:01.000 --> 00:00:03.000 one', '00:00:04.000 --> 00:00:06.000 two']);
  });

  test('cues wholly outside are dropped; the window is half-open on both sides of a cue', () => {
    expect(texts(3000n, 4000n)).toEqual([]);
    expect(texts(6000n, 6001n)).toEqual(['three']);
    expect(texts(5999n, 6000n)).toEqual(['two']);
    expect(texts(0n, 1000n)).toEqual([]);
    expect(texts(8000n, 10000n)).toEqual([]);
    expect(texts(5000n, 5000n)).toEqual([]);
  });

  test('the window is in output time, which is source time minus the presentation origin', () => {
    const shifted = sample(doc('<div><p begin="11s" end="12s">late</p></div>'), 10000n, 2000n, 4000n);
    expect(brief(convert([shifted], { start: 4000n, end: 6000n }))).toEqual(['00:00:05.000 --> 00:00:06.000 late']);
    expect(convert([shifted], { start: 10000n, end: 12000n })).toEqual([]);
  });

  test('a cue starting before output time 0 starts at 0; one ending by 0 is dropped', () => {
    const early = sample(
      doc('<div><p begin="0s" end="1s">gone</p><p begin="1s" end="3s">cut</p></div>'),
      0n,
      4000n,
      -2000n,
    );
    expect(brief(convert([early], { start: 0n, end: 2000n }))).toEqual(['00:00:00.000 --> 00:00:01.000 cut']);
  });

  test('a cue repeated in consecutive samples is joined into one cue', () => {
    const body = '<div><p begin="1s" end="3s">spans two samples</p></div>';
    const cues = convert([sample(doc(body), 0n, 2000n), sample(doc(body), 2000n, 2000n)], { start: 0n, end: 4000n });
    expect(brief(cues)).toEqual(['00:00:01.000 --> 00:00:03.000 spans two samples']);
    // each segment alone has its own part
    expect(brief(convert([sample(doc(body), 2000n, 2000n)], { start: 2000n, end: 4000n }))).toEqual([
      '00:00:02.000 --> 00:00:03.000 spans two samples',
    ]);
  });

  test('cues are ordered by start time whatever the sample order', () => {
    const a = sample(doc('<div><p begin="5s" end="6s">later</p></div>'), 4000n, 4000n);
    const b = sample(doc('<div><p begin="1s" end="2s">earlier</p></div>'), 0n, 4000n);
    expect(convert([a, b], { start: 0n, end: 8000n }).map((c) => c.text)).toEqual(['earlier', 'later']);
  });

  test('same start: document order; exact duplicates are written once', () => {
    const cues = one(
      '<div><p begin="1s" end="2s">first</p><p begin="1s" end="3s">second</p><p begin="1s" end="2s">first</p></div>',
    );
    expect(brief(cues)).toEqual(['00:00:01.000 --> 00:00:02.000 first', '00:00:01.000 --> 00:00:03.000 second']);
  });

  test('timescale ticks convert exactly: 10 MHz and 90 kHz', () => {
    const hns = sample(doc('<div><p begin="1.0005s" end="2s">x</p></div>'), 0n, 40000000n);
    expect(brief(convert([hns], { start: 0n, end: 40000000n }, 10000000))).toEqual(['00:00:01.001 --> 00:00:02.000 x']);
    const ts = sample(doc('<div><p begin="1s" end="2s">x</p></div>'), 0n, 900000n);
    expect(brief(convert([ts], { start: 0n, end: 900000n }, 90000))).toEqual(['00:00:01.000 --> 00:00:02.000 x']);
    expect(convert([ts], { start: 180000n, end: 270000n }, 90000)).toEqual([]); // [2 s, 3 s): the cue ended at 2 s
  });

  test('the output is deterministic', () => {
    const samples = [s, sample(doc('<div><p begin="2s" end="9s">overlap</p></div>'), 0n, 10000n)];
    const a = webvttSegment(samples, 1000, 900000, { start: 0n, end: 10000n });
    const b = webvttSegment(
      samples.map((x) => ({ ...x, data: Uint8Array.from(x.data) })),
      1000,
      900000,
      { start: 0n, end: 10000n },
    );
    expect(a).toBe(b);
  });
});

describe('absolute and sample-relative TTML times (ISO/IEC 14496-30 §5.3)', () => {
  test('absolute: times are on the track timeline (the standard and the fixtures)', () => {
    const cues = convert([sample(doc('<div><p begin="00:00:10.500" end="00:00:11.500">abs</p></div>'), 10000n, 2000n)]);
    expect(brief(cues)).toEqual(['00:00:10.500 --> 00:00:11.500 abs']);
  });

  test('relative: times counted from the sample start are recognised and placed on the track', () => {
    const cues = convert([sample(doc('<div><p begin="00:00:00.500" end="00:00:01.500">rel</p></div>'), 10000n, 2000n)]);
    expect(brief(cues)).toEqual(['00:00:10.500 --> 00:00:11.500 rel']);
  });

  test('relative with the output origin shifted', () => {
    const cues = convert([sample(doc('<div><p begin="0.5s" end="1.5s">rel</p></div>'), 10000n, 2000n, 6000n)]);
    expect(brief(cues)).toEqual(['00:00:06.500 --> 00:00:07.500 rel']);
  });

  test('the choice is per sample: a track may mix both', () => {
    const cues = convert(
      [
        sample(doc('<div><p begin="2.2s" end="3s">abs</p></div>'), 2000n, 2000n),
        sample(doc('<div><p begin="0.2s" end="1s">rel</p></div>'), 4000n, 2000n),
      ],
      { start: 0n, end: 6000n },
    );
    expect(brief(cues)).toEqual(['00:00:02.200 --> 00:00:03.000 abs', '00:00:04.200 --> 00:00:05.000 rel']);
  });

  test('a sample that starts inside its own duration: whichever reading puts more inside wins', () => {
    // sample [1 s, 3 s): relative cue 0–1.9 → 1–2.9 (1.9 s inside) beats absolute 1–1.9 (0.9 s)
    expect(brief(convert([sample(doc('<div><p begin="0s" end="1.9s">r</p></div>'), 1000n, 2000n)]))).toEqual([
      '00:00:01.000 --> 00:00:02.900 r',
    ]);
    // absolute cue 1–2.9 (1.9 s) beats relative 2–3 (1 s)
    expect(brief(convert([sample(doc('<div><p begin="1s" end="2.9s">a</p></div>'), 1000n, 2000n)]))).toEqual([
      '00:00:01.000 --> 00:00:02.900 a',
    ]);
  });

  test('ties stay absolute; untimed content is the whole sample either way', () => {
    // 1–3 absolute overlaps [2, 4) by 1 s; relative (3–5) also by 1 s: absolute wins
    expect(brief(convert([sample(doc('<div><p begin="1s" end="3s">tie</p></div>'), 2000n, 2000n)]))).toEqual([
      '00:00:02.000 --> 00:00:03.000 tie',
    ]);
    expect(brief(convert([sample(doc('<div><p>all</p></div>'), 2000n, 2000n)]))).toEqual([
      '00:00:02.000 --> 00:00:04.000 all',
    ]);
  });

  test('content is clipped to its sample (the root temporal extent); outside it nothing is shown', () => {
    expect(brief(convert([sample(doc('<div><p begin="1s" end="5s">c</p></div>'), 2000n, 2000n)]))).toEqual([
      '00:00:02.000 --> 00:00:04.000 c',
    ]);
    expect(convert([sample(doc('<div><p begin="30s" end="31s">far</p></div>'), 2000n, 2000n)])).toEqual([]);
    expect(convert([sample(doc('<div><p begin="2s" end="3s">zero</p></div>'), 2000n, 0n)])).toEqual([]);
  });

  test('an empty sample (no bytes) is a gap', () => {
    expect(convert([sample(new Uint8Array(0), 0n, 2000n)])).toEqual([]);
  });
});

describe('documents', () => {
  test('prefixed TTML elements and the 2006 DFXP namespace are read', () => {
    const prefixed = `<tt:tt xmlns:tt="http://www.w3.org/ns/ttml" xmlns:s="http://www.w3.org/ns/ttml#styling"><tt:body><tt:div><tt:p begin="1s" end="2s" s:fontWeight="bold">pre<tt:br/>fixed</tt:p></tt:div></tt:body></tt:tt>`;
    expect(convert([sample(prefixed)]).map((c) => c.text)).toEqual(['<b>pre</b>\n<b>fixed</b>']);
    const dfxp = `<tt xmlns="http://www.w3.org/2006/10/ttaf1" xmlns:tts="http://www.w3.org/2006/10/ttaf1#style"><body><div><p begin="1s" end="2s" tts:fontStyle="italic">old</p></div></body></tt>`;
    expect(convert([sample(dfxp)]).map((c) => c.text)).toEqual(['<i>old</i>']);
  });

  test('a document without body has no cues; a UTF-8 BOM is accepted', () => {
    expect(convert([sample(`<tt ${NS}><head/></tt>`)])).toEqual([]);
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(doc('<div><p end="1s">bom</p></div>'))]);
    expect(convert([sample(bom)]).map((c) => c.text)).toEqual(['bom']);
  });
});

describe('bad input', () => {
  const fail = (data: string | Uint8Array, sourceTime = 6000n): OriginError =>
    thrown(() => webvttSegment([sample(data, sourceTime, 2000n)], 1000, 0, { start: 0n, end: HOUR }));

  test.each([
    [
      '<tt xmlns="http://www.w3.org/ns/ttml"><body><div><p>x</div></body></tt>',
      'end tag </div> does not match start tag <p>',
    ],
    ['<tt xmlns="http://www.w3.org/ns/ttml"><body>', 'is not closed'],
    ['<tt xmlns="http://www.w3.org/ns/ttml"><body><p>&nbsp;</p></body></tt>', 'undefined entity &nbsp;'],
    ['<tt xmlns="http://www.w3.org/ns/ttml"/><tt/>', 'content after the root element'],
    ['<!DOCTYPE tt><tt xmlns="http://www.w3.org/ns/ttml"/>', 'DOCTYPE'],
    [
      '<tt xmlns="http://www.w3.org/ns/ttml"><body><p tts:x="1">x</p></body></tt>',
      'namespace prefix tts is not declared',
    ],
    ['', 'no root element'],
    ['just text', 'text before the root element'],
  ])('malformed XML %#: corrupt-media naming the problem and the sample', (xml, problem) => {
    const e = fail(xml || ' ');
    expect(e.kind).toBe('corrupt-media');
    expect(e.subject).toBe('TTML sample at decode time 6000');
    expect(e.message).toContain('malformed XML');
    expect(e.message).toContain(problem);
    expect(e.message).toMatch(/line \d+, column \d+/);
  });

  test('a root that is not TTML', () => {
    const e = fail('<html><body/></html>');
    expect(e.kind).toBe('corrupt-media');
    expect(e.message).toContain('not tt in the TTML namespace');
  });

  test('a sample over 1 MiB is refused before parsing', () => {
    const big = doc(`<div><p end="1s">${'x'.repeat(1 << 20)}</p></div>`);
    const e = fail(big, 8000n);
    expect(e.kind).toBe('corrupt-media');
    expect(e.subject).toBe('TTML sample at decode time 8000');
    expect(e.message).toContain('1048576-byte limit');
    // exactly 1 MiB is still read
    const exact = doc('<div><p end="1s">y</p></div>');
    const padded = exact.replace('<head>', `<head>${' '.repeat((1 << 20) - exact.length)}`);
    expect(new TextEncoder().encode(padded).byteLength).toBe(1 << 20);
    expect(convert([sample(padded, 0n, 2000n)]).map((c) => c.text)).toEqual(['y']);
  });

  test('nesting deeper than 64 elements is refused; 64 is accepted', () => {
    const nest = (depth: number): string =>
      doc(`<div><p end="1s">${'<span>'.repeat(depth - 4)}deep${'</span>'.repeat(depth - 4)}</p></div>`);
    expect(convert([sample(nest(64), 0n, 2000n)]).map((c) => c.text)).toEqual(['deep']);
    const e = fail(nest(65));
    expect(e.kind).toBe('corrupt-media');
    expect(e.subject).toBe('TTML sample at decode time 6000');
    expect(e.message).toContain('nested deeper than 64 levels');
  });

  test('work is bounded: style chains, cues per sample, changes within a paragraph', () => {
    const chain = (n: number): string =>
      `<styling>${Array.from({ length: n }, (_, i) => `<style xml:id="s${i}"${i > 0 ? ` style="s${i - 1}"` : ' tts:fontStyle="italic"'}/>`).join('')}</styling>`;
    expect(
      convert([sample(doc('<div><p end="1s" style="s62">x</p></div>', { head: chain(63) }))]).map((c) => c.text),
    ).toEqual(['<i>x</i>']);
    expect(fail(doc('<div><p end="1s" style="s69">x</p></div>', { head: chain(70) })).message).toContain(
      'style references chained deeper than 64 levels',
    );
    // shared references are resolved once: 40 levels of two references each would be 2^40 visits
    const diamond = `<styling>${Array.from({ length: 40 }, (_, i) => `<style xml:id="d${i}"${i > 0 ? ` style="d${i - 1} d${i - 1}"` : ' tts:fontWeight="bold"'}/>`).join('')}</styling>`;
    expect(
      convert([sample(doc('<div><p end="1s" style="d39">x</p></div>', { head: diamond }))]).map((c) => c.text),
    ).toEqual(['<b>x</b>']);

    const many = (n: number): string =>
      doc(`<div>${Array.from({ length: n }, (_, i) => `<p begin="${i}ms" end="${i + 1}ms">c</p>`).join('')}</div>`);
    expect(fail(many(10001)).message).toContain('more than 10000 cues in one sample');
    const spans = (n: number, brs = 0): string =>
      doc(
        `<div><p begin="0s" end="100s">${'<br/>'.repeat(brs)}${Array.from({ length: n }, (_, i) => `<span begin="${i}ms" end="${i + 1}ms">s</span>`).join('')}</p></div>`,
      );
    expect(fail(spans(1000)).message).toContain('more than the 1000 accepted');
    expect(fail(spans(500, 10000)).message).toContain('node visits accepted');
  });

  test('bytes that are not UTF-8', () => {
    const e = fail(new Uint8Array([0x3c, 0x74, 0x74, 0xff, 0xfe]));
    expect(e.kind).toBe('corrupt-media');
    expect(e.message).toContain('not valid UTF-8');
  });
});
