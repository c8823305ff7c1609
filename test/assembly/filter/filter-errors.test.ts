// Parse errors (message, exact offset, hint), the 4 KiB and depth-64 limits, and 20 000
// pseudo-random garbage filters that must never trap the module.

import { FilterWasm, loadFilterWasm } from './filter-wasm';
import { TRACKS, prng } from './reference';

let f: FilterWasm;
beforeAll(() => {
  f = loadFilterWasm();
  f.setTracks(TRACKS);
});

function error(text: string): string {
  const h = f.compile(text);
  if (h !== 0) throw new Error(`compiled: ${text}`);
  return f.error().error;
}

test.each([
  ['type="video"', 'unexpected "=" at 4: did you mean "=="?'],
  ['systemBitrate>1 && type="video"', 'unexpected "=" at 23: did you mean "=="?'],
  ['type=="video" & Channels==2', 'unexpected "&" at 14: did you mean "&&"?'],
  ['type=="video" | Channels==2', 'unexpected "|" at 14: did you mean "||"?'],
  ["type=='video'", 'unexpected "\'" at 6: strings are written in double quotes: "..."'],
  ['type=="video', 'unterminated string at 6: close it with "'],
  ['type=="vi\\deo"', 'invalid escape "\\d" at 9: only \\" and \\\\ are escapes; write \\\\ for a backslash'],
  ['bitrate>1', 'unknown variable "bitrate" at 0: did you mean "systemBitrate"?'],
  ['type=="video"&&chanels==2', 'unknown variable "chanels" at 15: did you mean "Channels"?'],
  ['SampleRat==1', 'unknown variable "SampleRat" at 0: did you mean "SamplingRate"?'],
  [
    'type=="video"&&avc_profile==AVC_PROFILE_HIHG',
    'unknown variable "AVC_PROFILE_HIHG" at 28: did you mean "AVC_PROFILE_HIGH"?',
  ],
  ['type==1', 'cannot compare a string with a number at 4: type is a string: quote the value, e.g. "1"'],
  ['Channels=="2"', 'cannot compare a string with a number at 8: Channels is a number: write the value without quotes'],
  [
    'count(true)=="x"',
    'cannot compare a string with a number at 11: compare numbers with numbers and strings with strings',
  ],
  ['type<"video"', 'strings cannot be ordered with "<" at 4: strings take only == and !='],
  ['type && Channels==2', 'type is a string, not a condition at 0: compare it, e.g. type=="video"'],
  ['Channels==2||MaxWidth', 'MaxWidth is a number, not a condition at 13: compare it, e.g. MaxWidth>0'],
  ['!Channels==2', 'Channels is a number, not a condition at 1: compare it, e.g. Channels>0'],
  ['count(type=="audio")', 'count(...) is a number, not a condition at 0: compare it, e.g. count(type=="audio")>0'],
  ['count(type)>1', 'type is a string, not a condition at 6: compare it, e.g. type=="video"'],
  ['"x"', 'a string is not a condition at 0: compare it, e.g. "x"=="..."'],
  ['1', 'a number is not a condition at 0: compare it, e.g. 1>0'],
  ['true==false', 'cannot compare a condition with "==" at 4: combine conditions with &&, || and !'],
  ['Channels==1==true', 'unexpected "==" at 11: comparisons do not chain; join them with &&'],
  ['1<Channels<3', 'unexpected "<" at 10: comparisons do not chain; join them with &&'],
  ['', 'unexpected end of filter at 0: expected a value, a property, "(" or "!"'],
  ['   ', 'unexpected end of filter at 3: expected a value, a property, "(" or "!"'],
  ['type==', 'unexpected end of filter at 6: expected a value, a property, "(" or "!"'],
  ['(type=="video"', 'unexpected end of filter at 14: expected ")" to close "(" at 0'],
  ['type=="video")', 'unexpected ")" at 13: expected "&&", "||" or the end of the filter'],
  ['type=="video" Channels==2', 'unexpected "Channels" at 14: expected "&&", "||" or the end of the filter'],
  ['FrameRate==30000/', 'unexpected end of filter at 17: a rational is written <integer>/<integer>: 30000/1001'],
  ['FrameRate==25/0', 'zero denominator at 14: a rational needs a denominator above 0'],
  ['FrameRate/2==1', 'unexpected "/" at 9: expected "&&", "||" or the end of the filter'],
  ['Channels==9223372036854775808', 'number too large at 10: at most 9223372036854775807'],
  ['count type', 'unexpected "type" at 6: count takes a condition in parentheses: count(type=="audio")'],
  ['type=="a"\u0001', 'unexpected character U+0001 at 9'],
  ['type=="a"&&é', 'unexpected character U+00E9 at 11'],
])('%s', (text, expected) => {
  expect(error(text)).toBe(expected);
});

test('error parts are exported separately', () => {
  expect(f.compile('type="video"')).toBe(0);
  expect(f.error()).toEqual({
    error: 'unexpected "=" at 4: did you mean "=="?',
    message: 'unexpected "="',
    offset: 4,
    hint: 'did you mean "=="?',
  });
  expect(f.compile('true')).toBeGreaterThan(0);
  expect(f.error().error).toBe('');
});

test('4 KiB of text is the limit, counted in UTF-8 bytes', () => {
  const chain = (n: number): string => 'true' + '&&true'.repeat(n);
  const exact = chain(681) + ' '.repeat(4096 - chain(681).length);
  expect(exact.length).toBe(4096);
  expect(f.canon(exact)).toBe(chain(681));
  expect(error(exact + ' ')).toBe('filter longer than 4096 bytes at 4096: shorten the expression');
  // 2-byte characters inside a string: the limit falls at the character that crosses it
  const wide = 'trackName=="' + 'é'.repeat(2040) + '"'; // 12 + 4080 + 1 = 4093 bytes
  expect(f.compile(wide)).toBeGreaterThan(0);
  const over = 'trackName=="' + 'é'.repeat(2042) + '"'; // 4097 bytes
  expect(error(over)).toBe('filter longer than 4096 bytes at 2054: shorten the expression');
});

test('nesting depth 64 is accepted, 65 is refused at the opening that goes past it', () => {
  const nest = (n: number): string => '('.repeat(n) + 'Channels==2' + ')'.repeat(n);
  expect(f.canon(nest(64))).toBe('Channels==2');
  expect(f.select(nest(64))).toEqual([4, 5]);
  expect(error(nest(65))).toBe(
    'nesting deeper than 64 levels at 64: every "(" and "!" opens a level; simplify the expression',
  );
  expect(f.canon('!'.repeat(64) + 'true')).toBe('!'.repeat(64) + 'true');
  expect(error('!'.repeat(65) + 'true')).toMatch(/^nesting deeper than 64 levels at 64:/);
  expect(f.canon('count('.repeat(32) + 'true' + ')>0'.repeat(32))).toBe(
    'count('.repeat(32) + 'true' + ')>0'.repeat(32),
  );
  expect(error('!('.repeat(33) + 'true' + ')'.repeat(33))).toMatch(/^nesting deeper than 64 levels at 64:/);
  // deep input far past the limit (and past the 4 KiB) still fails cleanly
  expect(error('('.repeat(2000) + 'true' + ')'.repeat(2000))).toMatch(/^nesting deeper than 64 levels at 64:/);
  expect(error('('.repeat(5000))).toMatch(/^filter longer than 4096 bytes at 4096/);
});

test('the deepest shapes within the limits compile, evaluate and print without trapping', () => {
  const shapes = [
    'count('.repeat(64) + 'true' + ')>0'.repeat(64),
    '!('.repeat(32) + 'true' + ')'.repeat(32),
    'count(('.repeat(32) + 'true' + '))>0'.repeat(32),
    '(true&&(true||'.repeat(32) + 'true' + '))'.repeat(32),
    '(!(count(Channels==2)>=1&&'.repeat(16) + 'true' + ')||false)'.repeat(16),
    'true' + '||true&&!false'.repeat(200),
  ];
  for (const text of shapes) {
    const h = f.compile(text);
    expect([text, h > 0 ? '' : f.error().error]).toEqual([text, '']);
    f.evaluate(h);
    expect(f.canon(f.canonical(h))).toBe(f.canonical(h));
    f.raw.release(h);
  }
  expect(f.raw.__getString(f.raw.lastAbort())).toBe('');
});

test('a filter whose canonical form would pass the limits is refused (canonical text always compiles)', () => {
  const longer = 'true' + '||true&&!false'.repeat(290); // 4064 bytes; canonical adds 580 parentheses
  expect(longer.length).toBeLessThanOrEqual(4096);
  expect(error(longer)).toBe(
    'canonical form past the limits (filter longer than 4096 bytes) at 0: it parenthesises && inside ||; shorten the filter or nest less',
  );
  const deeper = '('.repeat(63) + 'true||true&&true' + ')'.repeat(63); // depth 63; canonical (true&&true) is 64
  expect(f.canon(deeper)).toBe('true||(true&&true)');
  const deepest = '!(true||'.repeat(32) + 'true||true&&true' + ')'.repeat(32); // depth 64; canonical 65
  expect(f.canon('!(true||'.repeat(31) + 'true||true&&true' + ')'.repeat(31))).toBe(
    '!(true||'.repeat(31) + 'true||(true&&true)' + ')'.repeat(31),
  );
  expect(error(deepest)).toBe(
    'canonical form past the limits (nesting deeper than 64 levels) at 0: it parenthesises && inside ||; shorten the filter or nest less',
  );
});

test('track table: grows past its first capacity, stops at 1024 tracks, count() sees all', () => {
  const g = loadFilterWasm();
  g.setTracks(Array.from({ length: 40 }, (_, i) => ({ trackID: i, type: i % 2 ? 'audio' : 'video' })));
  expect(g.select('trackID>=38||count(type=="audio")!=20')).toEqual([38, 39]);
  g.setTracks([]);
  expect(g.select('true')).toEqual([]);
  expect(g.select('count(true)==0')).toEqual([]);
  for (let i = 0; i < 1024; i++) expect(g.raw.addTrack()).toBe(i);
  expect(g.raw.addTrack()).toBe(-1);
  expect(g.select('count(true)==1024').length).toBe(1024);
  expect(g.raw.evaluateMask(g.compile('true'))).toBe(-1); // all 32 bits
});

test('20 000 random garbage filters never trap, and the module keeps working', () => {
  const rand = prng(20240521);
  const pieces = [
    'type',
    'FourCC',
    'Channels',
    'FrameRate',
    'SampleRate',
    'count',
    'true',
    'false',
    'AVC_PROFILE_MAIN',
    '==',
    '!=',
    '<',
    '<=',
    '>',
    '>=',
    '=',
    '!',
    '&&',
    '||',
    '&',
    '|',
    '(',
    ')',
    '/',
    '"',
    '\\',
    '"video"',
    '"a\\"b"',
    '30000',
    '1001',
    '0',
    '9223372036854775807',
    '99999999999999999999',
    ' ',
    '\t',
    '\n',
    'x',
    '_',
    '.',
    ',',
    '-',
    "'",
    '\u0000',
    '\u00ff',
    'é',
    '✓',
    '\ud83d\ude00',
    '\ud800',
    '\udfff',
    '\uffff',
    '{',
    '}',
    '$',
    '#',
  ];
  let compiled = 0;
  for (let i = 0; i < 20000; i++) {
    const n = Math.floor(rand() * 40);
    let text = '';
    for (let j = 0; j < n; j++) {
      text +=
        rand() < 0.85 ? pieces[Math.floor(rand() * pieces.length)] : String.fromCharCode(Math.floor(rand() * 0x10000));
    }
    if (i % 1000 === 0) text = text.repeat(200); // some long ones
    const h = f.compile(text);
    if (h > 0) {
      compiled++;
      f.evaluate(h);
      const c = f.canonical(h);
      const h2 = f.compile(c);
      expect(h2).toBeGreaterThan(0);
      expect(f.canonical(h2)).toBe(c);
      f.raw.release(h2);
      f.raw.release(h);
    } else {
      const e = f.error();
      expect(e.error).toMatch(/ at \d+/);
      expect(e.offset).toBeGreaterThanOrEqual(0);
      expect(e.offset).toBeLessThanOrEqual(text.length);
    }
  }
  expect(compiled).toBeGreaterThan(0);
  expect(f.raw.__getString(f.raw.lastAbort())).toBe('');
  expect(f.select('type=="audio"&&Channels==2')).toEqual([4, 5]);
});
