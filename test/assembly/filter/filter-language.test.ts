// The filter language end to end through build/filter.wasm: operators, precedence, every
// variable and alias, constants, exact rationals, string escapes, count(), missing properties,
// canonical text. Tracks: 0-3 video, 4-6 audio (4 AAC eng, 5 AAC nld, 6 AC-3), 7-8 text.

import { FilterWasm, loadFilterWasm } from './filter-wasm';
import { TRACKS, VARIABLES } from './reference';

let f: FilterWasm;
beforeAll(() => {
  f = loadFilterWasm();
  f.setTracks(TRACKS);
});

const VIDEO = [0, 1, 2, 3];
const AUDIO = [4, 5, 6];
const TEXT = [7, 8];
const ALL = [...VIDEO, ...AUDIO, ...TEXT];

test('true keeps every track, false none', () => {
  expect(f.select('true')).toEqual(ALL);
  expect(f.select('false')).toEqual([]);
  expect(f.select('TRUE')).toEqual(ALL);
});

test.each([
  ['type=="video"', VIDEO],
  ['type!="video"', [...AUDIO, ...TEXT]],
  ['systemBitrate<128000', [5, 7, 8]],
  ['systemBitrate<=128000', [4, 5, 7, 8]],
  ['systemBitrate>800000', [2]],
  ['systemBitrate>=800000', [2, 3]],
  ['type=="audio"&&Channels==2', [4, 5]],
  ['type=="text"||Channels==6', [6]],
  ['!(type=="video")', [...AUDIO, ...TEXT]],
  ['!true', []],
  ['!!true', ALL],
  ['!false', ALL],
])('operator: %s', (text, expected) => {
  expect(f.select(text)).toEqual(expected);
});

test('&& binds tighter than ||; relational tighter than both', () => {
  // a||b&&c is a||(b&&c), not (a||b)&&c
  expect(f.select('type=="textstream"||type=="audio"&&Channels==6')).toEqual([6, 7, 8]);
  expect(f.select('(type=="textstream"||type=="audio")&&Channels==6')).toEqual([6]);
  expect(f.select('type=="audio"&&Channels==6||type=="textstream"')).toEqual([6, 7, 8]);
  expect(f.select('type=="audio"&&(Channels==6||type=="textstream")')).toEqual([6]);
  expect(f.select('!(type=="audio")&&systemBitrate>1000')).toEqual([0, 1, 2, 3, 8]);
});

test.each(VARIABLES.map(([name]) => name))('variable %s selects exactly the tracks with that value', (name) => {
  for (const [i, track] of TRACKS.entries()) {
    const v = track[name];
    const expected = TRACKS.flatMap((t, j) =>
      JSON.stringify(t[name]) === JSON.stringify(v) ||
      (v !== undefined && t[name] !== undefined && sameNumber(t[name], v))
        ? [j]
        : [],
    );
    if (v === undefined) continue;
    const literal = typeof v === 'string' ? JSON.stringify(v) : Array.isArray(v) ? `${v[0]}/${v[1]}` : String(v);
    expect([name, i, f.select(`${name}==${literal}`)]).toEqual([name, i, expected]);
    expect(f.select(`${name.toUpperCase()}==${literal}`)).toEqual(expected);
    expect(f.select(`${name}!=${literal}`)).toEqual(
      TRACKS.flatMap((t, j) => (t[name] !== undefined && !expected.includes(j) ? [j] : [])),
    );
  }
});

function sameNumber(a: unknown, b: unknown): boolean {
  const r = (x: unknown): [bigint, bigint] | null =>
    typeof x === 'number' ? [BigInt(x), 1n] : Array.isArray(x) ? [BigInt(x[0]), BigInt(x[1])] : null;
  const p = r(a);
  const q = r(b);
  return p !== null && q !== null && p[0] * q[1] === q[0] * p[1];
}

test('aliases and case-insensitive names; canonical spelling', () => {
  expect(f.select('SampleRate==44100')).toEqual([5]);
  expect(f.select('samplerate==44100')).toEqual([5]);
  expect(f.canon('SampleRate==44100')).toBe('SamplingRate==44100');
  expect(f.canon('AVC_LEVEL==31&&AVC_PROFILE>=66')).toBe('avc_level==31&&avc_profile>=66');
  expect(f.canon('fourcc=="ac-3"||SYSTEMBITRATE>1')).toBe('FourCC=="ac-3"||systemBitrate>1');
  expect(f.select('fourcc=="ac-3"')).toEqual([6]);
  expect(f.select('FOURCC=="AC-3"')).toEqual([]); // values compare case-sensitively
});

test('the variable table is exported in canonical order', () => {
  expect(f.variables).toEqual(VARIABLES.map(([n]) => n));
  expect(f.raw.variableType(0)).toBe(2);
  expect(f.raw.variableType(17)).toBe(1);
  expect(f.raw.variableType(20)).toBe(-1);
});

test('AVC profile constants', () => {
  expect(f.select('avc_profile==AVC_PROFILE_BASELINE')).toEqual([0]);
  expect(f.select('avc_profile==AVC_PROFILE_MAIN')).toEqual([1, 3]);
  expect(f.select('avc_profile==avc_profile_high')).toEqual([2]);
  expect(f.select('avc_profile<=AVC_PROFILE_MAIN')).toEqual([0, 1, 3]);
  expect(f.canon('avc_profile==avc_profile_high')).toBe('avc_profile==AVC_PROFILE_HIGH');
});

test('rationals compare exactly', () => {
  expect(f.select('FrameRate==30000/1001')).toEqual([1]);
  expect(f.select('FrameRate==2997/100')).toEqual([]);
  expect(f.select('FrameRate>2997/100&&FrameRate<30')).toEqual([1]);
  expect(f.select('FrameRate==25')).toEqual([2, 3]); // 25 and 50/2
  expect(f.select('FrameRate==25/1')).toEqual([2, 3]);
  expect(f.select('FrameRate==24')).toEqual([0]);
  expect(f.select('FrameRate< 30000/1001')).toEqual([0, 2, 3]);
  expect(f.select('25==25/1')).toEqual(ALL);
  expect(f.select('9223372036854775807/9223372036854775806>1')).toEqual(ALL); // 128-bit cross products
  expect(f.select('9223372036854775806/9223372036854775807<1&&1/9223372036854775807>0')).toEqual(ALL);
  expect(f.canon('FrameRate == 25/1')).toBe('FrameRate==25/1');
});

test('string escapes', () => {
  expect(f.select('trackName=="text \\"nld\\" \\\\ x"')).toEqual([8]);
  expect(f.canon('trackName == "text \\"nld\\" \\\\ x"')).toBe('trackName=="text \\"nld\\" \\\\ x"');
  expect(f.select('"video"==type')).toEqual(VIDEO);
  expect(f.select('type==""')).toEqual([]);
  expect(f.select('trackName=="été ✓"')).toEqual([]);
});

test('count() counts the tracks of the whole table', () => {
  expect(f.select('count(FourCC=="ac-3")>0')).toEqual(ALL);
  expect(f.select('count(FourCC=="ec-3")>0')).toEqual([]);
  expect(f.select('type=="audio"&&(FourCC=="ac-3"||count(FourCC=="ac-3")==0)')).toEqual([6]);
  expect(f.select('count(type=="video")==4&&count(count(true)==9)==9&&type=="textstream"')).toEqual(TEXT);
  expect(f.canon('COUNT( type == "video" ) >= 2')).toBe('count(type=="video")>=2');
});

test('a property a track lacks makes every comparison with it false', () => {
  expect(f.select('Channels==2')).toEqual([4, 5]);
  expect(f.select('Channels!=2')).toEqual([6]);
  expect(f.select('Channels<100||Channels>=100')).toEqual(AUDIO);
  expect(f.select('!(Channels==2)')).toEqual([0, 1, 2, 3, 6, 7, 8]);
  expect(f.select('Roles=="subtitle"')).toEqual(TEXT);
  expect(f.select('Roles!="subtitle"')).toEqual([]);
  expect(f.select('MaxWidth==Channels')).toEqual([]);
});

test('canonical form: minimal spaces, && inside || parenthesised, idempotent', () => {
  const cases: Array<[string, string]> = [
    ['Channels==1||Channels==2&&MaxWidth==3', 'Channels==1||(Channels==2&&MaxWidth==3)'],
    [' ( Channels == 1 ) ', 'Channels==1'],
    ['(Channels==1||Channels==2)&&MaxWidth==3', '(Channels==1||Channels==2)&&MaxWidth==3'],
    ['(Channels==1&&Channels==2)&&(MaxWidth==3&&true)', 'Channels==1&&Channels==2&&MaxWidth==3&&true'],
    ['((Channels==1||(Channels==2)))||MaxWidth==3', 'Channels==1||Channels==2||MaxWidth==3'],
    ['!(true)', '!true'],
    ['! ( ! (Channels==1))', '!!(Channels==1)'],
    ['!(Channels==1&&true)', '!(Channels==1&&true)'],
    ['(type)=="video"', 'type=="video"'],
  ];
  for (const [text, canonical] of cases) {
    expect(f.canon(text)).toBe(canonical);
    expect(f.canon(canonical)).toBe(canonical);
  }
});

test('handles: evaluate many tracks per call, release, bad handles', () => {
  const h = f.compile('type=="audio"');
  expect(f.raw.evaluate(h)).toBe(3);
  expect(f.raw.evaluateMask(h)).toBe(0b1110000);
  expect(f.evaluate(h)).toEqual(ALL.map((i) => AUDIO.includes(i)));
  f.raw.release(h);
  expect(f.raw.evaluate(h)).toBe(-1);
  expect(f.canonical(h)).toBe('');
  expect(f.raw.evaluate(0)).toBe(-1);
  expect(f.raw.evaluate(-5)).toBe(-1);
  expect(f.raw.setNumber(99, 2, 1n)).toBe(0);
  expect(f.raw.setNumber(0, 0, 1n)).toBe(0); // type is a string
  expect(f.raw.setString(0, 2, f.raw.__newString('x'))).toBe(0); // trackID is a number
  expect(f.raw.setRational(0, 17, 1n, 0n)).toBe(0);
  expect(f.raw.setNumber(0, 20, 1n)).toBe(0);
});
