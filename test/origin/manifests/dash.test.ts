// DASH MPD writer: schema validity of every MPD the tests produce, segment lists read back with
// mpd-parser against the fixture facts, the attributes of every AdaptationSet and
// Representation, sub-clips, URL options, escaping, goldens.

import { XMLParser } from 'fast-xml-parser';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { OriginError } from '../../../origin/errors';
import { writeMpd } from '../../../origin/manifests/dash';
import { PlayoutView } from '../../../origin/model/view';
import { FIXTURE_FILES } from '../../helpers/fixtures';
import { expectGolden } from '../../helpers/golden';
import { viewOf } from '../../helpers/presentations';
import {
  AVC_AAC,
  facts,
  filesByKey,
  keyOf,
  MPD_SCHEMA,
  outputTimes,
  parseMpd,
  presentationOf,
  representations,
  validateMpd,
} from './format-support';
import { thrown } from '../../helpers/errors';

const FULL = FIXTURE_FILES;

async function mpdOf(files: readonly string[], query = ''): Promise<{ view: PlayoutView; xml: string }> {
  const view = viewOf(await presentationOf(files), 'dash', query);
  return { view, xml: writeMpd(view) };
}

// ---------------------------------------------------------------------------------------------
// Structure read back with an XML parser

/** Attributes come back as strings; the elements in ARRAYS as arrays. */
type Attrs = Record<string, string>;
interface XmlDoc {
  MPD: Attrs & {
    Period: Attrs & {
      AdaptationSet: Array<
        Attrs & {
          AudioChannelConfiguration?: Attrs[];
          Role: Attrs[];
          SegmentTemplate: Attrs & { SegmentTimeline: { S: Attrs[] } };
          Representation: Array<Attrs & { AudioChannelConfiguration?: Attrs[] }>;
        }
      >;
    };
  };
}
const ARRAYS = new Set(['AdaptationSet', 'Representation', 'S', 'Role', 'AudioChannelConfiguration']);
const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => ARRAYS.has(name),
});

function structure(xml: string): XmlDoc['MPD'] {
  return (xmlParser.parse(xml) as XmlDoc).MPD;
}

type XmlAdaptationSet = XmlDoc['MPD']['Period']['AdaptationSet'][number];

function setOf(mpd: XmlDoc['MPD'], representationId: string): XmlAdaptationSet {
  const s = mpd.Period.AdaptationSet.find((a) => a.Representation.some((r) => r.id === representationId));
  if (s === undefined) throw new Error(`no AdaptationSet holds ${representationId}`);
  return s;
}

/** ms of an `PT…S` duration without hours or minutes (all the fixtures need). */
function durationMs(iso: string): number {
  const m = /^PT(\d+(?:\.\d+)?)S$/.exec(iso);
  if (m === null) throw new Error(`unexpected duration ${iso}`);
  return Math.round(Number(m[1]) * 1000);
}

/** Peak segment bit rate from the box-walk sizes: max over fragments of bits / seconds, rounded up. */
function peak(file: string, first = 0, count = Infinity): number {
  const f = facts(file);
  let best = 0;
  f.bytes.slice(first, first + count).forEach((b, i) => {
    best = Math.max(best, (b * 8) / (Number(f.durations[first + i]!) / f.timescale));
  });
  return Math.ceil(best);
}

// ---------------------------------------------------------------------------------------------

describe('every MPD validates against the MPEG schema', () => {
  const cases: Array<[string, readonly string[], string]> = [
    ['full presentation', FULL, ''],
    ['H.264 + AAC', AVC_AAC, ''],
    ['sub-clip t=0-0:00:06', FULL, 't=0-0:00:06'],
    ['sub-clip t=2-6', FULL, 't=2-6'],
    ['vbegin=0:00:04', FULL, 'vbegin=0:00:04'],
    ['mpd_segment_template=number', FULL, 'mpd_segment_template=number'],
    ['presentation_name=foo', FULL, 'presentation_name=foo'],
    ['carried query', FULL, 'token=a%26b&x=1'],
    ['suppress_query_parameters', FULL, 'suppress_query_parameters=true&token=abc'],
    ['audio only', ['audio_eng_64k.isma', 'audio_nld_128k.isma'], ''],
  ];
  test.each(cases)('%s', async (_name, files, query) => {
    const { xml } = await mpdOf(files, query);
    const r = validateMpd(xml);
    expect(r.output).toContain('validates');
    expect(r.ok).toBe(true);
  });

  test('the validator rejects an MPD without the required minBufferTime (negative control)', async () => {
    const { xml } = await mpdOf(FULL);
    const broken = xml.replace(/ minBufferTime="[^"]*"/, '');
    expect(broken).not.toBe(xml);
    const r = validateMpd(broken);
    expect(r.ok).toBe(false);
    expect(r.output).toContain('minBufferTime');
  });
});

describe('full presentation', () => {
  test('segment times and durations are the fragment tables, exactly, for all 13 tracks', async () => {
    const { view, xml } = await mpdOf(FULL);
    const reps = representations(parseMpd(xml));
    const files = filesByKey(view);
    expect([...reps.keys()].sort()).toEqual([...files.keys()].sort());
    expect(reps.size).toBe(13);
    for (const [key, file] of files) {
      const f = facts(file);
      const segments = reps.get(key)!.segments;
      // $Time$ in each URL is the output time: the source time minus the origin (−213333 at 10 MHz).
      expect(segments.map((s) => /-(-?\d+)\.dash$/.exec(s.uri)?.[1])).toEqual(outputTimes(FULL, file).map(String));
      expect(segments.map((s) => s.duration)).toEqual(f.durations.map((d) => Number(d) / f.timescale));
      expect(segments.every((s) => s.map.uri === `dash/presentation-${key}.dash`)).toBe(true);
    }
  });

  test('AAC starts the period; video starts 213333 ticks later (presentationTimeOffset 0)', async () => {
    const { view, xml } = await mpdOf(FULL);
    const reps = representations(parseMpd(xml));
    expect(reps.get(keyOf(view, 'audio_eng_64k.isma'))!.segments[0]!.presentationTime).toBe(0);
    expect(reps.get(keyOf(view, 'video_high_1600k.ismv'))!.segments[0]!.presentationTime).toBeCloseTo(0.0213333, 7);
    const mpd = structure(xml);
    for (const a of mpd.Period.AdaptationSet) expect(a.SegmentTemplate.presentationTimeOffset).toBeUndefined();
  });

  test('MPD and Period attributes', async () => {
    const { xml } = await mpdOf(FULL);
    const mpd = structure(xml);
    expect(mpd.xmlns).toBe('urn:mpeg:dash:schema:mpd:2011');
    expect(mpd.type).toBe('static');
    expect(mpd.profiles).toBe('urn:mpeg:dash:profile:isoff-live:2011');
    // Longest track: AC-3, −53333 + 5 fragments ending at 100586667 − (−213333) = 10.032 s after the origin.
    const ends = FULL.map((file) => {
      const f = facts(file);
      const t = outputTimes(FULL, file);
      return Math.floor((Number(t[4]! + f.durations[4]!) * 1000) / f.timescale);
    });
    expect(mpd.mediaPresentationDuration).toBe('PT10.032S');
    expect(durationMs(mpd.mediaPresentationDuration!)).toBe(Math.max(...ends));
    const longest = Math.max(
      ...FULL.flatMap((file) =>
        facts(file).durations.map((d) => Math.ceil((Number(d) * 1000) / facts(file).timescale)),
      ),
    );
    expect(mpd.maxSegmentDuration).toBe('PT2.016S');
    expect(durationMs(mpd.maxSegmentDuration!)).toBe(longest);
    expect(mpd.minBufferTime).toBe(mpd.maxSegmentDuration);
    expect(mpd.Period.id).toBe('1');
    expect(mpd.Period.start).toBe('PT0S');
  });

  test('AdaptationSets: audio, text, video (the reference order), split by codec, language and timeline', async () => {
    const { xml } = await mpdOf(FULL);
    const sets = structure(xml).Period.AdaptationSet;
    expect(
      sets.map((a) => [
        a.id,
        a.contentType,
        a.group,
        a.lang,
        a.codecs ?? '(per representation)',
        a.Representation.length,
      ]),
    ).toEqual([
      ['1', 'audio', '1', 'en', 'mp4a.40.2', 2],
      ['2', 'audio', '1', 'nl', 'mp4a.40.2', 1],
      ['3', 'audio', '1', 'en', 'ac-3', 1],
      ['4', 'audio', '1', 'en', 'ec-3', 1],
      ['5', 'text', '3', 'en', 'stpp.ttml.im1t', 1],
      ['6', 'text', '3', 'nl', 'stpp.ttml.im1t', 1],
      ['7', 'video', '2', 'en', '(per representation)', 5],
      ['8', 'video', '2', 'en', 'avc1.4D401E', 1], // 29.97 fps: 2.002 s fragments, not aligned with the others
    ]);
    for (const a of sets) {
      expect(a.segmentAlignment).toBe('true');
      expect(a.startWithSAP).toBe('1');
      expect(a.mimeType).toBe({ audio: 'audio/mp4', video: 'video/mp4', text: 'application/mp4' }[a.contentType!]);
      expect(a.Role).toEqual([
        { schemeIdUri: 'urn:mpeg:dash:role:2011', value: a.contentType === 'text' ? 'subtitle' : 'main' },
      ]);
      expect(a.SegmentTemplate.timescale).toBe(a.contentType === 'text' ? '1000' : '10000000');
      expect(a.SegmentTemplate.initialization).toBe('dash/presentation-$RepresentationID$.dash');
      expect(a.SegmentTemplate.media).toBe('dash/presentation-$RepresentationID$-$Time$.dash');
      expect(a.SegmentTemplate.startNumber).toBeUndefined();
    }
  });

  test('video Representations: coded size on the @sar grid, frame rate, scan type, codecs', async () => {
    const { view, xml } = await mpdOf(FULL);
    const mpd = structure(xml);
    const rep = (file: string): Attrs =>
      setOf(mpd, keyOf(view, file)).Representation.find((r) => r.id === keyOf(view, file))!;
    expect(rep('video_baseline_400k.ismv')).toMatchObject({
      width: '512',
      height: '288',
      sar: '1:1',
      frameRate: '24',
      codecs: 'avc1.42C01E',
      scanType: 'progressive',
    });
    expect(rep('video_high_1600k.ismv')).toMatchObject({
      width: '1280',
      height: '720',
      sar: '1:1',
      frameRate: '24',
      codecs: 'avc1.64001F',
    });
    // 480x360 coded with 4:3 samples: 480 × 4/3 = 640 wide on screen (ISO/IEC 23009-1 §5.3.7.2).
    expect(rep('video_sar_500k.ismv')).toMatchObject({
      width: '480',
      height: '360',
      sar: '4:3',
      codecs: 'avc1.4D401E',
    });
    expect(rep('video_interlaced_800k.ismv')).toMatchObject({
      width: '720',
      height: '576',
      frameRate: '25',
      scanType: 'interlaced',
      codecs: 'avc1.64001E',
    });
    const s2997 = setOf(mpd, keyOf(view, 'video_2997_600k.ismv'));
    expect(s2997).toMatchObject({
      frameRate: '30000/1001',
      sar: '1:1',
      par: '16:9',
      maxWidth: '640',
      maxHeight: '360',
    });
    expect(s2997.SegmentTemplate.SegmentTimeline.S).toEqual([{ t: '213333', d: '20020000', r: '4' }]);
    const main = setOf(mpd, keyOf(view, 'video_main_900k.ismv'));
    expect(main).toMatchObject({ maxWidth: '1280', maxHeight: '720' });
    expect(main.par).toBeUndefined(); // 720x576 (5:4) shares the set with 16:9 pictures
  });

  test('audio: sampling rate, AudioChannelConfiguration (23003:3) with the channel count', async () => {
    const { view, xml } = await mpdOf(FULL);
    const mpd = structure(xml);
    const scheme = 'urn:mpeg:dash:23003:3:audio_channel_configuration:2011';
    for (const [file, channels, codecs] of [
      ['audio_eng_64k.isma', '2', 'mp4a.40.2'],
      ['audio_nld_128k.isma', '2', 'mp4a.40.2'],
      ['audio_ac3_384k.isma', '6', 'ac-3'],
      ['audio_eac3_256k.isma', '6', 'ec-3'],
    ] as const) {
      const set = setOf(mpd, keyOf(view, file));
      expect(set).toMatchObject({ audioSamplingRate: '48000', codecs });
      expect(set.AudioChannelConfiguration).toEqual([{ schemeIdUri: scheme, value: channels }]);
    }
  });

  test('@bandwidth is the peak segment bit rate of the source fragments (box-walk sizes)', async () => {
    const { view, xml } = await mpdOf(FULL);
    const reps = representations(parseMpd(xml));
    for (const [key, file] of filesByKey(view)) {
      expect([key, reps.get(key)!.attributes.BANDWIDTH]).toEqual([key, peak(file)]);
      // Never below the average the packager measured (systemBitrate).
      expect(reps.get(key)!.attributes.BANDWIDTH).toBeGreaterThanOrEqual(Number(key.split('=')[1]));
    }
    const aac = setOf(structure(xml), keyOf(view, 'audio_eng_64k.isma'));
    expect(aac).toMatchObject({
      minBandwidth: String(peak('audio_eng_64k.isma')),
      maxBandwidth: String(peak('audio_eng_128k.isma')),
    });
  });

  test('SegmentTimeline folds equal durations into @r and keeps the AAC 20053334 exactly', async () => {
    const { view, xml } = await mpdOf(FULL);
    const mpd = structure(xml);
    expect(setOf(mpd, keyOf(view, 'audio_eng_64k.isma')).SegmentTemplate.SegmentTimeline.S).toEqual([
      { t: '0', d: '20053333', r: '1' },
      { d: '20053334' },
      { d: '20053333' },
      { d: '20000000' },
    ]);
    expect(setOf(mpd, keyOf(view, 'audio_ac3_384k.isma')).SegmentTemplate.SegmentTimeline.S).toEqual([
      { t: '160000', d: '20160000', r: '3' },
      { d: '19520000' },
    ]);
    // Text: timescale 1000; the origin −21.33 ms rounds down to −22 ms.
    expect(setOf(mpd, keyOf(view, 'text_eng.ismt')).SegmentTemplate.SegmentTimeline.S).toEqual([
      { t: '22', d: '2000', r: '4' },
    ]);
  });
});

describe('sub-clips', () => {
  test('t=0-0:00:06: exactly 3 segments per track, 6 s of 24/25 fps video, period from 0', async () => {
    const { view, xml } = await mpdOf(FULL, 't=0-0:00:06');
    const reps = representations(parseMpd(xml));
    expect(reps.size).toBe(13);
    for (const [key, file] of filesByKey(view)) {
      const f = facts(file);
      const segments = reps.get(key)!.segments;
      expect([key, segments.length]).toEqual([key, 3]);
      expect(segments.map((s) => s.duration)).toEqual(f.durations.slice(0, 3).map((d) => Number(d) / f.timescale));
      expect(segments[0]!.uri).toBe(`dash/presentation-${key}-${outputTimes(FULL, file)[0]}.dash?t=0-0:00:06`);
    }
    for (const file of [
      'video_baseline_400k.ismv',
      'video_main_900k.ismv',
      'video_high_1600k.ismv',
      'video_sar_500k.ismv',
      'video_interlaced_800k.ismv',
    ]) {
      const total = facts(file)
        .durations.slice(0, 3)
        .reduce((a, b) => a + b, 0n);
      expect(total).toBe(60_000_000n);
      expect(reps.get(keyOf(view, file))!.segments.reduce((a, s) => a + s.duration, 0)).toBe(6);
    }
    const mpd = structure(xml);
    // AC-3 is the longest: 160000 + 3 × 20160000 = 60640000 ticks.
    expect(mpd.mediaPresentationDuration).toBe('PT6.064S');
    for (const a of mpd.Period.AdaptationSet) expect(a.SegmentTemplate.presentationTimeOffset).toBeUndefined();
  });

  test('t=2-6: presentationTimeOffset is the clip’s first segment (AAC, 20053333), the same instant in every timescale', async () => {
    const { view, xml } = await mpdOf(FULL, 't=2-6');
    const mpd = structure(xml);
    for (const a of mpd.Period.AdaptationSet) {
      expect(a.SegmentTemplate.presentationTimeOffset).toBe(a.contentType === 'text' ? '2005' : '20053333');
    }
    const reps = representations(parseMpd(xml));
    for (const [key, file] of filesByKey(view)) {
      const times = outputTimes(FULL, file);
      const segments = reps.get(key)!.segments;
      expect(segments.map((s) => /-(\d+)\.dash\?/.exec(s.uri)?.[1])).toEqual([String(times[1]), String(times[2])]);
    }
    expect(reps.get(keyOf(view, 'audio_eng_128k.isma'))!.segments[0]!.presentationTime).toBe(0);
    expect(reps.get(keyOf(view, 'video_main_900k.ismv'))!.segments[0]!.presentationTime).toBeCloseTo(0.016, 7);
    // AC-3 ends at 60640000; (60640000 − 20053333) / 10^7 = 4.0586667 s, rounded down to the ms.
    expect(mpd.mediaPresentationDuration).toBe('PT4.058S');
  });
});

describe('URL options', () => {
  test('mpd_segment_template=number: $Number$ from startNumber 1', async () => {
    const { view, xml } = await mpdOf(FULL, 'mpd_segment_template=number');
    for (const a of structure(xml).Period.AdaptationSet) {
      expect(a.SegmentTemplate.media).toBe(
        'dash/presentation-$RepresentationID$-$Number$.dash?mpd_segment_template=number',
      );
      expect(a.SegmentTemplate.startNumber).toBe('1');
    }
    const reps = representations(parseMpd(xml));
    for (const key of filesByKey(view).keys()) {
      expect(reps.get(key)!.segments.map((s) => s.uri)).toEqual(
        [1, 2, 3, 4, 5].map((n) => `dash/presentation-${key}-${n}.dash?mpd_segment_template=number`),
      );
    }
  });

  test('presentation_name replaces the .ism basename in every URL', async () => {
    const { xml } = await mpdOf(FULL, 'presentation_name=foo');
    for (const a of structure(xml).Period.AdaptationSet) {
      expect(a.SegmentTemplate.initialization).toBe('dash/foo-$RepresentationID$.dash?presentation_name=foo');
    }
    const reps = [...representations(parseMpd(xml)).values()];
    expect(
      reps.flatMap((r) => r.segments).every((s) => s.uri.startsWith('dash/foo-') && s.map.uri.startsWith('dash/foo-')),
    ).toBe(true);
  });

  test('the request query is carried into both templates, XML-escaped', async () => {
    const { xml } = await mpdOf(FULL, 'token=a%26b&x=1');
    expect(xml).toContain('initialization="dash/presentation-$RepresentationID$.dash?token=a%26b&amp;x=1"');
    for (const a of structure(xml).Period.AdaptationSet) {
      expect(a.SegmentTemplate.initialization).toBe('dash/presentation-$RepresentationID$.dash?token=a%26b&x=1');
      expect(a.SegmentTemplate.media).toBe('dash/presentation-$RepresentationID$-$Time$.dash?token=a%26b&x=1');
    }
  });

  test('suppress_query_parameters: no query in any URL', async () => {
    const { xml } = await mpdOf(FULL, 'suppress_query_parameters=true&token=abc');
    for (const a of structure(xml).Period.AdaptationSet) {
      expect(a.SegmentTemplate.initialization).toBe('dash/presentation-$RepresentationID$.dash');
      expect(a.SegmentTemplate.media).toBe('dash/presentation-$RepresentationID$-$Time$.dash');
    }
    expect(xml).not.toMatch(/\.dash\?/);
  });
});

describe('values from the server manifest', () => {
  /** The same view with one track's properties changed (the cached presentation is left alone). */
  function withProperties(view: PlayoutView, file: string, change: Record<string, unknown>): PlayoutView {
    return {
      ...view,
      tracks: view.tracks.map((t) =>
        path.basename(t.track.src) === file
          ? { ...t, track: { ...t.track, properties: { ...t.track.properties, ...change } } }
          : t,
      ),
    };
  }

  test('Roles from the .ism are XML-escaped and each becomes a Role', async () => {
    const { view } = await mpdOf(AVC_AAC);
    const xml = writeMpd(withProperties(view, 'audio_nld_128k.isma', { Roles: 'dub, alternate&"<x>' }));
    expect(xml).toContain('value="alternate&amp;&quot;&lt;x&gt;"');
    expect(validateMpd(xml).ok).toBe(true);
    const set = setOf(structure(xml), keyOf(view, 'audio_nld_128k.isma'));
    expect(set.Role.map((r) => r.value)).toEqual(['dub', 'alternate&"<x>']);
  });

  test('language und leaves @lang out; a malformed language is left out rather than break the schema', async () => {
    const { view } = await mpdOf(AVC_AAC);
    for (const language of ['und', 'en glish']) {
      const xml = writeMpd(withProperties(view, 'audio_nld_128k.isma', { systemLanguage: language }));
      expect(setOf(structure(xml), keyOf(view, 'audio_nld_128k.isma')).lang).toBeUndefined();
      expect(validateMpd(xml).ok).toBe(true);
    }
  });

  test('a timed-metadata track cannot be described: unsupported-media naming it', async () => {
    const { view } = await mpdOf(AVC_AAC);
    const bad = withProperties(view, 'audio_eng_64k.isma', { type: 'data' });
    const error = thrown(() => writeMpd(bad));
    expect(error).toBeInstanceOf(OriginError);
    expect((error as OriginError).kind).toBe('unsupported-media');
    expect((error as OriginError).message).toMatch(/data track audio_eng/);
  });
});

describe('goldens', () => {
  test('full presentation MPD', async () => {
    expectGolden('formats/full.mpd', (await mpdOf(FULL)).xml);
  });
  test('H.264 + AAC MPD', async () => {
    expectGolden('formats/avc-aac.mpd', (await mpdOf(AVC_AAC)).xml);
  });
});

test('the vendored MPD schema is the shared reference copy, unchanged', () => {
  const shared = path.resolve(MPD_SCHEMA, '..', '..', '..', '..', 'shared', 'schemas', 'DASH-MPD.xsd');
  // The shared reference material exists on the development machines, not necessarily in CI.
  if (!existsSync(shared)) return;
  expect(readFileSync(MPD_SCHEMA, 'utf8')).toBe(readFileSync(shared, 'utf8'));
});
