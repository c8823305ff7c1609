// TTML → WebVTT timing from hand-written TTML documents: time expressions, time containment and
// nesting, absolute and sample-relative TTML times. Every produced document is also parsed by
// webvtt-parser (a separate implementation) and must have no errors.

import { webvttSegment } from '../../../../origin/segments/webvtt/webvtt';
import { NS, doc, HOUR, sample, convert, brief, one } from './webvtt-documents';
import { thrownOriginError } from '../../../helpers/errors';

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
    const e = thrownOriginError(() =>
      webvttSegment([sample(doc(`<div><p end="${expression}">x</p></div>`), 4000n)], 1000, 0, { start: 0n, end: HOUR }),
    );
    expect(e.kind).toBe('corrupt-media');
    expect(e.subject).toBe('TTML sample at decode time 4000');
    expect(e.message).toContain('is not a TTML time expression');
    if (why !== 'no metric') expect(e.message).toContain(why);
  });

  test.each(['smpte', 'clock'])('ttp:timeBase="%s" is refused with a clear error', (base) => {
    const e = thrownOriginError(() =>
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
      const e = thrownOriginError(() =>
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
    const e = thrownOriginError(() =>
      webvttSegment([sample(doc('<div timeContainer="excl"><p>x</p></div>'))], 1000, 0, { start: 0n, end: HOUR }),
    );
    expect(e.kind).toBe('corrupt-media');
    expect(e.message).toContain('timeContainer="excl" is neither par nor seq');
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
