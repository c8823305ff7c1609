// TTML → WebVTT segments from hand-written TTML documents: document framing, text handling,
// styles, windows, whole documents and bad input (timing: webvtt-timing.test.ts). Every produced
// document is also parsed by webvtt-parser (a separate implementation) and must have no errors.

import { OriginError } from '../../../../origin/errors';
import { webvttSegment } from '../../../../origin/segments/webvtt/webvtt';
import { judge } from './webvtt-support';
import { NS, doc, HOUR, sample, convert, brief, one } from './webvtt-documents';
import { thrownOriginError } from '../../../helpers/errors';

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
    expect(thrownOriginError(() => webvttSegment(s, 0, 0, { start: 0n, end: 1n })).kind).toBe('internal');
    expect(thrownOriginError(() => webvttSegment(s, 1000, -1, { start: 0n, end: 1n })).kind).toBe('internal');
    expect(thrownOriginError(() => webvttSegment(s, 1000, 2 ** 33, { start: 0n, end: 1n })).kind).toBe('internal');
    expect(thrownOriginError(() => webvttSegment(s, 1000, 0, { start: 5n, end: 1n })).kind).toBe('internal');
    expect(
      thrownOriginError(() => webvttSegment([sample(doc(''), 0n, -1n)], 1000, 0, { start: 0n, end: 1n })).kind,
    ).toBe('internal');
  });

  test('timestamps past 99 hours keep all hour digits', () => {
    const cues = convert(
      [sample(doc('<div><p begin="100:00:00.000" end="100:00:01.5">Late</p></div>'), 0n, 200n * HOUR)],
      { start: 0n, end: 200n * HOUR },
    );
    expect(brief(cues)).toEqual(['100:00:00.000 --> 100:00:01.500 Late']);
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
    thrownOriginError(() => webvttSegment([sample(data, sourceTime, 2000n)], 1000, 0, { start: 0n, end: HOUR }));

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
