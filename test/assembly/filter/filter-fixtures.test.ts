// The filter language against the fixture presentation (13 single-track files + muxed_av.ismv,
// packaged by `origin package`), through the host engine: every variable, alias, constant,
// operator, precedence, rationals, string escapes and count(), each case with the exact set of
// tracks kept, including the reference product's example shapes. Each case also runs through
// applyTrackFilters() as `filter` (same indices, or the "keeps none" error when empty).

import { filterEngine } from '../../../host-glue/filter/filter-engine';
import { applyTrackFilters } from '../../../host-glue/filter/track-filters';
import { TrackProperties } from '../../../origin/model/media';
import { Label, LABELS, labelsOf, packageFixturePresentation } from './fixture-presentation';

let tracks: TrackProperties[];
beforeAll(async () => {
  tracks = (await packageFixturePresentation()).tracks;
});

// Groups of the presentation (labels: fixture-presentation.ts).
const BASE: Label = 'video_baseline_400k';
const MAIN: Label = 'video_main_900k';
const HIGH: Label = 'video_high_1600k';
const SAR: Label = 'video_sar_500k';
const V2997: Label = 'video_2997_600k';
const INTL: Label = 'video_interlaced_800k';
const MUX_V: Label = 'muxed_av:video';
const A64: Label = 'audio_eng_64k';
const A128: Label = 'audio_eng_128k';
const NLD: Label = 'audio_nld_128k';
const AC3: Label = 'audio_ac3_384k';
const EAC3: Label = 'audio_eac3_256k';
const MUX_A: Label = 'muxed_av:audio';
const T_ENG: Label = 'text_eng';
const T_NLD: Label = 'text_nld';
const VIDEO = [BASE, MAIN, HIGH, SAR, V2997, INTL, MUX_V];
const AAC = [A64, A128, NLD, MUX_A];
const AUDIO = [A64, A128, NLD, AC3, EAC3, MUX_A];
const TEXT = [T_ENG, T_NLD];
const ALL = [...LABELS];
const NONE: Label[] = [];

const CASES: Array<[string, Label[]]> = [
  // literals
  ['true', ALL],
  ['false', NONE],
  ['True&&type=="textstream"', TEXT],
  ['FALSE||type=="textstream"', TEXT],
  // type (values compare case-sensitively)
  ['type=="video"', VIDEO],
  ['type=="audio"', AUDIO],
  ['type=="textstream"', TEXT],
  ['type!="video"', [...AUDIO, ...TEXT]],
  ['type=="Video"', NONE],
  ['"video"==type&&1000<MaxWidth', [HIGH]],
  // FourCC and its alias
  ['FourCC=="AVC1"', VIDEO],
  ['FourCC=="AACL"', AAC],
  ['fourcc=="ac-3"', [AC3]],
  ['FOURCC=="ec-3"', [EAC3]],
  ['FourCC=="TTML"', TEXT],
  ['FourCC=="AC-3"', NONE],
  // trackID, trackName
  ['trackID==2', [MUX_A]],
  ['trackID==1&&type=="audio"', [A64, A128, NLD, AC3, EAC3]],
  ['trackName=="video_eng"', VIDEO],
  ['trackName=="audio_eng"', [A64, A128, MUX_A]],
  ['trackName=="audio_eng_ac3"||trackName=="audio_eng_ec3"', [AC3, EAC3]],
  ['trackName=="textstream_nld"', [T_NLD]],
  // audio properties
  ['AudioTag==255', AAC],
  ['AudioTag==8192', [AC3]],
  ['AudioTag>8192', [EAC3]],
  ['Channels==6', [AC3, EAC3]],
  ['Channels<6', AAC],
  ['Channels>=1', AUDIO],
  ['!(Channels==2)', [...VIDEO.slice(0, 6), AC3, EAC3, T_ENG, T_NLD, MUX_V]],
  ['Channels<100||Channels>=100', AUDIO],
  ['SamplingRate==48000', AUDIO],
  ['SampleRate==48000', AUDIO],
  ['samplerate!=48000', NONE],
  ['SampleRate==44100', NONE],
  ['BitsPerSample==16', AUDIO],
  // video sizes
  ['MaxWidth==640', [MAIN, V2997]],
  ['MaxWidth>=720', [HIGH, INTL]],
  ['MaxHeight==360', [MAIN, SAR, V2997]],
  ['MaxHeight<=288', [BASE, MUX_V]],
  ['MaxWidth<640&&MaxHeight==360', [SAR]],
  ['DisplayWidth==640', [MAIN, SAR, V2997]],
  ['DisplayWidth!=MaxWidth', [SAR]],
  ['DisplayHeight>=576', [HIGH, INTL]],
  ['MaxWidth==Channels', NONE],
  // TimeScale
  ['TimeScale==1000', TEXT],
  ['TimeScale==10000000', [...VIDEO.slice(0, 6), ...AUDIO.slice(0, 5), MUX_V, MUX_A]],
  // AVC level and profile, aliases and constants
  ['avc_level==31', [HIGH]],
  ['AVC_LEVEL>=31', [HIGH]],
  ['avc_level==30', [BASE, MAIN, SAR, V2997, INTL, MUX_V]],
  ['avc_profile==66', [BASE, MUX_V]],
  ['AVC_PROFILE==AVC_PROFILE_MAIN', [MAIN, SAR, V2997]],
  ['avc_profile==AVC_PROFILE_HIGH', [HIGH, INTL]],
  ['avc_profile>AVC_PROFILE_BASELINE', [MAIN, HIGH, SAR, V2997, INTL]],
  ['avc_profile==avc_profile_baseline', [BASE, MUX_V]],
  ['AVC_PROFILE_HIGH==100', ALL],
  ['AVC_PROFILE_BASELINE==66&&AVC_PROFILE_MAIN==77&&AVC_PROFILE_HIGH==100&&type=="textstream"', TEXT],
  ['AVC_PROFILE_MAIN<AVC_PROFILE_BASELINE', NONE],
  // systemBitrate and its aliases
  ['systemBitrate>1000000', [HIGH]],
  ['systembitrate<10000', TEXT],
  ['SYSTEMBITRATE==384000', [AC3]],
  ['systemBitrate>=618174&&systemBitrate<=925835', [MAIN, V2997, INTL]],
  // systemLanguage
  ['systemLanguage=="nld"', [NLD, T_NLD]],
  ['systemLanguage!="eng"', [NLD, T_NLD]],
  ['TYPE=="audio"&&CHANNELS==2&&SYSTEMLANGUAGE=="nld"', [NLD]],
  // FrameRate: exact rationals
  ['FrameRate==30000/1001', [V2997]],
  ['FrameRate==2997/100', NONE],
  ['FrameRate==24', [BASE, MAIN, HIGH, SAR, MUX_V]],
  ['FrameRate==25/1', [INTL]],
  ['FrameRate==50/2', [INTL]],
  ['FrameRate>24&&FrameRate<30', [V2997, INTL]],
  ['FrameRate<30000/1001', [BASE, MAIN, HIGH, SAR, INTL, MUX_V]],
  ['FrameRate>=30000/1001', [V2997]],
  ['FrameRate>2997/100&&FrameRate<2998/100', [V2997]],
  ['25==25/1&&FrameRate==25', [INTL]],
  // ScanType, Roles (a property a track lacks makes every comparison false)
  ['ScanType=="interlaced"', [INTL]],
  ['ScanType!="interlaced"', [BASE, MAIN, HIGH, SAR, V2997, MUX_V]],
  ['Roles=="subtitle"', TEXT],
  ['Roles!="subtitle"', NONE],
  // string escapes
  ['"a\\"b"=="a\\"b"', ALL],
  ['"a\\\\b"=="a\\\\b"&&type=="audio"', AUDIO],
  ['"\\\\"!="\\""', ALL],
  ['trackName=="video_eng\\""', NONE],
  ['trackName!="video_eng\\\\"&&type=="video"', VIDEO],
  // operators and precedence: relational > ! > && > ||
  ['type=="textstream"||type=="audio"&&Channels==6', [AC3, EAC3, T_ENG, T_NLD]],
  ['(type=="textstream"||type=="audio")&&Channels==6', [AC3, EAC3]],
  ['type=="audio"&&Channels==6||type=="textstream"', [AC3, EAC3, T_ENG, T_NLD]],
  ['!(type=="video")&&systemBitrate>100000', [A128, NLD, AC3, EAC3]],
  ['!!(type=="video")', VIDEO],
  ['!false&&!!true&&type=="textstream"', TEXT],
  ['systemBitrate<100000||systemBitrate>1000000&&type=="video"', [HIGH, A64, T_ENG, T_NLD, MUX_A]],
  ['(systemBitrate<100000||systemBitrate>1000000)&&type=="video"', [HIGH]],
  ['type=="video"&&(avc_profile==66||avc_profile==100)&&MaxHeight>=576', [HIGH, INTL]],
  [' type == "video"\t&&\n MaxWidth  >  1000 ', [HIGH]],
  ['((((type=="audio"))))&&((Channels==6))', [AC3, EAC3]],
  // the reference's example shapes
  ['type!="video"||systemBitrate<800000', [BASE, SAR, V2997, ...AUDIO.slice(0, 5), T_ENG, T_NLD, MUX_V, MUX_A]],
  ['type=="video"||systemLanguage=="nld"', [...VIDEO.slice(0, 6), NLD, T_NLD, MUX_V]],
  ['type!="video"||AVC_PROFILE==AVC_PROFILE_BASELINE', [BASE, ...AUDIO.slice(0, 5), T_ENG, T_NLD, MUX_V, MUX_A]],
  ['(FourCC=="AACL"&&SampleRate==48000)||(FourCC=="AVC1"&&AVC_LEVEL>=31)', [HIGH, A64, A128, NLD, MUX_A]],
  ['(type=="video"&&ScanType=="progressive")', [BASE, MAIN, HIGH, SAR, V2997, MUX_V]],
  ['systemBitrate>100000&&systemBitrate<1000000', [BASE, MAIN, SAR, V2997, INTL, A128, NLD, AC3, EAC3, MUX_V]],
  // count(): over the whole presentation, whatever the track being evaluated
  ['count(type=="video")==7', ALL],
  ['count(type=="video")==6', NONE],
  ['type=="audio"&&(FourCC=="ac-3"||count(FourCC=="ac-3")==0)', [AC3]],
  ['type=="audio"&&(FourCC=="ac-4"||count(FourCC=="ac-4")==0)', AUDIO],
  ['count(Channels==6)>=2&&Channels==6', [AC3, EAC3]],
  ['count(systemLanguage=="nld")==2&&systemLanguage=="nld"', [NLD, T_NLD]],
  ['count(count(true)==15)==15&&type=="textstream"', TEXT],
  ['trackID==count(type=="textstream")', [MUX_A]],
  ['COUNT(FrameRate==30000/1001)<=1&&FrameRate==30000/1001', [V2997]],
];

test('the table has at least 80 cases and no duplicate expression', () => {
  expect(CASES.length).toBeGreaterThanOrEqual(80);
  expect(new Set(CASES.map(([e]) => e)).size).toBe(CASES.length);
});

test('the labels name the tracks in server-manifest order (track names repeat: one ladder, one name)', () => {
  expect(tracks.map((t) => t.trackName)).toEqual([
    'video_eng',
    'video_eng',
    'video_eng',
    'video_eng',
    'video_eng',
    'video_eng',
    'audio_eng',
    'audio_eng',
    'audio_nld',
    'audio_eng_ac3',
    'audio_eng_ec3',
    'textstream_eng',
    'textstream_nld',
    'video_eng',
    'audio_eng',
  ]);
  expect(tracks.map((t) => `${t.type}:${t.trackID}:${t.systemBitrate}`)).toEqual([
    'video:1:410594',
    'video:1:925835',
    'video:1:1651699',
    'video:1:514358',
    'video:1:618174',
    'video:1:808789',
    'audio:1:64113',
    'audio:1:127962',
    'audio:1:127958',
    'audio:1:384000',
    'audio:1:256000',
    'textstream:1:1549',
    'textstream:1:1598',
    'video:1:437970',
    'audio:2:63941',
  ]);
});

test.each(CASES)('%s', (expression, expected) => {
  // Expected sets are written in any order; the engine answers in track order.
  const sorted = LABELS.filter((l) => expected.includes(l));
  expect(sorted.length).toBe(new Set(expected).size);
  expect(labelsOf(filterEngine().select(expression, tracks))).toEqual(sorted);
  const indices = LABELS.flatMap((l, i) => (expected.includes(l) ? [i] : []));
  if (indices.length > 0) {
    expect(applyTrackFilters(tracks, undefined, expression)).toEqual(indices);
  } else {
    expect(() => applyTrackFilters(tracks, undefined, expression)).toThrow(
      `filter: ${expression} keeps none of the 15 tracks`,
    );
  }
});

test.each([
  ['fourcc=="ac-3"||SYSTEMBITRATE>1', 'FourCC=="ac-3"||systemBitrate>1'],
  ['SampleRate==48000', 'SamplingRate==48000'],
  ['AVC_LEVEL>=31&&AVC_PROFILE==avc_profile_high', 'avc_level>=31&&avc_profile==AVC_PROFILE_HIGH'],
  [' type == "video"\t&&\n MaxWidth  >  1000 ', 'type=="video"&&MaxWidth>1000'],
  ['type=="textstream"||type=="audio"&&Channels==6', 'type=="textstream"||(type=="audio"&&Channels==6)'],
  ['((((type=="audio"))))&&((Channels==6))', 'type=="audio"&&Channels==6'],
  ['TRUE||False', 'true||false'],
  ['COUNT(FrameRate==30000/1001)<=1', 'count(FrameRate==30000/1001)<=1'],
  ['"a\\"b"=="a\\\\b"', '"a\\"b"=="a\\\\b"'],
])('canonical form of %s', (expression, canonical) => {
  expect(filterEngine().canonical(expression)).toBe(canonical);
  expect(filterEngine().canonical(canonical)).toBe(canonical);
});
