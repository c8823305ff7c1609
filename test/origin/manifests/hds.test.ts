// HDS manifests (F4M 1.0/2.0): well-formed XML in the F4M namespace with the elements a client
// needs, the media the origin pairs, every bootstrap field against the fixture facts (the whole
// presentation, sub-clips, joined fragments), the options, and goldens of the three documents.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { OriginError } from '../../../origin/errors';
import { F4M_NAMESPACE, writeHdsManifest } from '../../../origin/manifests/hds';
import { hdsMedia } from '../../../origin/model/hds-media';
import { PlayoutView, viewForQuery } from '../../../origin/model/view';
import { wasmTrackSelector } from '../../../origin/server/select';
import { FIXTURE_FILES } from '../../helpers/fixtures';
import { expectGolden } from '../../helpers/golden';
import { viewOf } from '../../helpers/presentations';
import { Abst, parseAbst, parseAmf0 } from '../segments/f4f/f4f-reader';
import { AVC_AAC, facts, filesByKey, outputTimes, presentationOf } from './format-support';
import { thrown } from '../../helpers/errors';

const FULL = FIXTURE_FILES;
const AUDIO_ONLY = ['audio_eng_64k.isma', 'audio_nld_128k.isma'];

async function hdsView(files: readonly string[], query = ''): Promise<PlayoutView> {
  return viewOf(await presentationOf(files), 'hds', query);
}

// ---------------------------------------------------------------------------------------------
// Reading a manifest back

type Attrs = Record<string, string>;
interface F4m {
  xmlns: string;
  id?: string;
  mimeType?: string;
  streamType?: string;
  deliveryType?: string;
  duration?: string;
  bootstrapInfo?: Array<Attrs & { '#text': string }>;
  media: Array<Attrs & { metadata?: string }>;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => name === 'media' || name === 'bootstrapInfo',
  parseTagValue: false,
  parseAttributeValue: false,
});

const scratch = mkdtempSync(path.join(tmpdir(), 'origin-f4m-'));
let scratchCount = 0;

/** xmllint says well-formed, then the parsed root. */
function readF4m(xml: string): F4m {
  const file = path.join(scratch, `m${++scratchCount}.f4m`);
  writeFileSync(file, xml);
  const r = spawnSync('xmllint', ['--noout', '--nonet', file], { encoding: 'utf8' });
  expect(`${r.stdout}${r.stderr}`).toBe('');
  expect(r.status).toBe(0);
  const doc = parser.parse(xml) as { manifest?: F4m };
  expect(Object.keys(doc)).toEqual(['?xml', 'manifest']);
  return doc.manifest!;
}

/** A single-level or stream-level manifest: the required elements, each media's bootstrap and metadata resolved. */
function readDocument(xml: string, ns: string) {
  const m = readF4m(xml);
  expect(m.xmlns).toBe(ns);
  expect(m.streamType).toBe('recorded');
  expect(m.deliveryType).toBe('streaming');
  expect(m.id).toMatch(/^[A-Za-z0-9]+$/);
  expect(Number(m.duration)).toBeGreaterThan(0);
  const bootstraps = new Map((m.bootstrapInfo ?? []).map((b) => [b.id!, b]));
  expect(m.media.length).toBeGreaterThan(0);
  return {
    manifest: m,
    media: m.media.map((media) => {
      const b = bootstraps.get(media.bootstrapInfoId!);
      expect(b).toBeDefined();
      expect(b!.profile).toBe('named');
      expect(b!.url).toBeUndefined(); // inline
      return {
        url: media.url!,
        bitrate: Number(media.bitrate),
        width: media.width === undefined ? undefined : Number(media.width),
        height: media.height === undefined ? undefined : Number(media.height),
        abst: parseAbst(Buffer.from(b!['#text'], 'base64')),
        metadata: parseAmf0(Buffer.from(media.metadata!, 'base64')),
      };
    }),
  };
}

/** Every fragment of an afrt, expanded from its runs (each run lasts until the next one's first fragment). */
function expand(abst: Abst): Array<{ n: number; time: bigint; duration: bigint }> {
  const afrt = abst.fragmentRunTables[0]!;
  const count = abst.segmentRunTables[0]!.segmentRuns[0]!.fragmentsPerSegment;
  const out: Array<{ n: number; time: bigint; duration: bigint }> = [];
  afrt.entries.forEach((e, i) => {
    const next = afrt.entries[i + 1]?.firstFragment ?? count + 1;
    for (let n = e.firstFragment; n < next; n++)
      out.push({
        n,
        time: e.firstFragmentTimestamp + BigInt(n - e.firstFragment) * BigInt(e.fragmentDuration),
        duration: BigInt(e.fragmentDuration),
      });
  });
  return out;
}

/** The fields of an abst the origin fixes, whatever the content (F4V: Bootstrap Info box). */
function expectFixedFields(abst: Abst, name: string, timescale: number, fragments: number): void {
  expect(abst).toMatchObject({
    version: 0,
    flags: 0,
    bootstrapinfoVersion: 1,
    profile: 0,
    live: 0,
    update: 0,
    reserved: 0,
    timeScale: timescale,
    smpteTimeCodeOffset: 0n,
    movieIdentifier: name,
    serverEntries: [],
    qualityEntries: [],
    drmData: '',
    metaData: '',
  });
  expect(abst.segmentRunTables).toEqual([
    {
      version: 0,
      flags: 0,
      qualitySegmentUrlModifiers: [],
      segmentRuns: [{ firstSegment: 1, fragmentsPerSegment: fragments }],
    },
  ]);
  expect(abst.fragmentRunTables).toHaveLength(1);
  const afrt = abst.fragmentRunTables[0]!;
  expect([afrt.version, afrt.flags, afrt.timeScale, afrt.qualitySegmentUrlModifiers]).toEqual([0, 0, timescale, []]);
  expect(afrt.entries[0]!.firstFragment).toBe(1);
  expect(afrt.entries.every((e) => e.fragmentDuration > 0 && e.discontinuityIndicator === undefined)).toBe(true);
}

// ---------------------------------------------------------------------------------------------

describe('the full fixture presentation', () => {
  test('one media per H.264 rendition, ascending, each with the default AAC audio; AC-3, E-AC-3 and text left out', async () => {
    const view = await hdsView(FULL);
    const files = filesByKey(view);
    const media = hdsMedia(view);
    expect(media.map((m) => files.get(m.key.split('-')[1]!))).toEqual([
      'video_baseline_400k.ismv',
      'video_sar_500k.ismv',
      'video_2997_600k.ismv',
      'video_interlaced_800k.ismv',
      'video_main_900k.ismv',
      'video_high_1600k.ismv',
    ]);
    // The first AAC track's language is English; of English, the highest bitrate.
    expect(new Set(media.map((m) => files.get(m.key.split('-')[0]!)))).toEqual(new Set(['audio_eng_128k.isma']));
  });

  test('every media: url, bitrate, display size, bootstrap fields and metadata from the facts', async () => {
    const view = await hdsView(FULL);
    const files = filesByKey(view);
    const { media } = readDocument(writeHdsManifest(view, ''), F4M_NAMESPACE[1]);
    expect(media).toHaveLength(6);
    const FACTS = JSON.parse(
      readFileSync(path.join(__dirname, '../../../fixtures/media/facts.json'), 'utf8'),
    ) as Array<{
      file: string;
      display_width?: number;
      display_height?: number;
      sample_rate?: number;
      channels?: number;
    }>;
    for (const m of media) {
      const key = m.url.replace(/^presentation-/, '');
      const [audioKey, videoKey] = key.split('-') as [string, string];
      const videoFile = files.get(videoKey)!;
      const f = facts(videoFile);
      const fact = FACTS.find((x) => x.file === videoFile)!;
      expect(m.bitrate).toBe(Math.round((Number(videoKey.split('=')[1]) + Number(audioKey.split('=')[1])) / 1000));
      expect([m.width, m.height]).toEqual([fact.display_width, fact.display_height]);
      expectFixedFields(m.abst, 'presentation', f.timescale, f.times.length);
      // afrt: the source fragments on the output timeline, exactly (DASH's $Time$ values).
      const fragments = expand(m.abst);
      expect(fragments.map((x) => x.time)).toEqual(outputTimes(FULL, videoFile));
      expect(fragments.map((x) => x.duration)).toEqual(f.durations);
      expect(m.abst.currentMediaTime).toBe(
        fragments[fragments.length - 1]!.time + fragments[fragments.length - 1]!.duration,
      );
      const [name, props] = m.metadata as [string, Array<[string, unknown]>];
      expect(name).toBe('onMetaData');
      const meta = new Map(props);
      const audio = FACTS.find((x) => x.file === 'audio_eng_128k.isma')!;
      expect(meta.get('duration')).toBeCloseTo(Number(f.durations.reduce((a, b) => a + b, 0n)) / f.timescale, 6);
      expect([meta.get('width'), meta.get('height'), meta.get('videocodecid'), meta.get('audiocodecid')]).toEqual([
        fact.display_width,
        fact.display_height,
        7,
        10,
      ]);
      expect([meta.get('audiosamplerate'), meta.get('stereo'), meta.get('audiosamplesize')]).toEqual([
        audio.sample_rate,
        audio.channels === 2,
        16,
      ]);
    }
  });

  test('media with the same timeline share one bootstrapInfo; the 29.97 fps rendition has its own', async () => {
    const m = readF4m(writeHdsManifest(await hdsView(FULL), ''));
    expect(m.bootstrapInfo).toHaveLength(2);
    const ids = m.media.map((x) => x.bootstrapInfoId);
    expect(ids.filter((id) => id === 'bootstrap2')).toHaveLength(1);
  });

  test('the manifest duration is the longest media timeline (the 29.97 fps video: 5 × 2.002 s)', async () => {
    expect(readF4m(writeHdsManifest(await hdsView(FULL), '')).duration).toBe('10.01');
  });
});

describe('sub-clips and joined fragments', () => {
  test.each([
    ['t=2-6', 1, 3, '4'],
    ['t=0-0:00:06', 0, 3, '6'],
    ['vbegin=0:00:04', 2, 5, '6'],
  ])(
    '%s: the fragments whose midpoint is in the clip, numbered from 1, every field',
    async (query, first, end, duration) => {
      const view = await hdsView(AVC_AAC, query);
      const files = filesByKey(view);
      const { manifest, media } = readDocument(writeHdsManifest(view, ''), F4M_NAMESPACE[1]);
      expect(manifest.duration).toBe(duration);
      for (const m of media) {
        const videoFile = files.get(m.url.replace(/\?.*$/, '').split('-').pop()!)!;
        const f = facts(videoFile);
        expectFixedFields(m.abst, 'presentation', f.timescale, end - first);
        const fragments = expand(m.abst);
        expect(fragments.map((x) => x.n)).toEqual(Array.from({ length: end - first }, (_, i) => i + 1));
        expect(fragments.map((x) => x.time)).toEqual(outputTimes(AVC_AAC, videoFile).slice(first, end));
        expect(fragments.map((x) => x.duration)).toEqual(f.durations.slice(first, end));
        expect(m.url).toContain(`?${query}`);
      }
    },
  );

  test('hds_minimum_fragment_length=4 joins source fragments at the same 4 s boundaries as every format', async () => {
    const { media } = readDocument(
      writeHdsManifest(
        await hdsView(['video_baseline_400k.ismv', 'audio_eng_64k.isma'], 'hds_minimum_fragment_length=4'),
        '',
      ),
      F4M_NAMESPACE[1],
    );
    const fragments = expand(media[0]!.abst);
    const t = outputTimes(['video_baseline_400k.ismv', 'audio_eng_64k.isma'], 'video_baseline_400k.ismv');
    expect(fragments.map((x) => [x.time, x.duration])).toEqual([
      [t[0], 40000000n],
      [t[2], 40000000n],
      [t[4], 20000000n],
    ]);
    expect(media[0]!.abst.fragmentRunTables[0]!.entries).toHaveLength(2);
  });
});

describe('audio only', () => {
  test('one media per AAC track, ascending, on the audio timeline, mimeType audio/mp4', async () => {
    const view = await hdsView(AUDIO_ONLY);
    const { manifest, media } = readDocument(writeHdsManifest(view, ''), F4M_NAMESPACE[1]);
    expect(manifest.mimeType).toBe('audio/mp4');
    expect(media.map((m) => m.url)).toEqual(['presentation-audio_eng=64113', 'presentation-audio_nld=127958']);
    for (const [m, file] of media.map((x, i) => [x, AUDIO_ONLY[i]!] as const)) {
      expect([m.width, m.height]).toEqual([undefined, undefined]);
      const f = facts(file);
      expectFixedFields(m.abst, 'presentation', f.timescale, 5);
      expect(expand(m.abst).map((x) => x.time)).toEqual(outputTimes(AUDIO_ONLY, file));
      expect(expand(m.abst).map((x) => x.duration)).toEqual(f.durations);
      expect(new Map(m.metadata[1] as Array<[string, unknown]>).has('width')).toBe(false);
    }
  });

  test('a request HDS cannot carry (AC-3 only, text only) is a 415 naming what it keeps', async () => {
    for (const files of [['audio_ac3_384k.isma'], ['text_eng.ismt']]) {
      const view = viewOf(await presentationOf(files), 'hds');
      const e = thrown(() => writeHdsManifest(view, ''));
      expect(e).toBeInstanceOf(OriginError);
      expect((e as OriginError).kind).toBe('unsupported-media');
      expect((e as OriginError).message).toMatch(/HDS carries H\.264 video and AAC audio; the request keeps none: /);
    }
  });
});

describe('the audio of every media', () => {
  test('the language of the first AAC track, its highest bitrate', async () => {
    const view = await hdsView([
      'video_baseline_400k.ismv',
      'audio_nld_128k.isma',
      'audio_eng_64k.isma',
      'audio_eng_128k.isma',
    ]);
    expect(hdsMedia(view).map((m) => m.key)).toEqual(['audio_nld=127958-video_eng=410594']);
  });

  test('a filter picks another', async () => {
    const p = await presentationOf(AVC_AAC);
    const view = viewForQuery(
      p,
      'hds',
      `filter=${encodeURIComponent('type!="audio"||systemBitrate<100000')}`,
      wasmTrackSelector,
    );
    expect(new Set(hdsMedia(view).map((m) => m.key.split('-')[0]))).toEqual(new Set(['audio_eng=64113']));
    const noAudio = viewForQuery(p, 'hds', `filter=${encodeURIComponent('type=="video"')}`, wasmTrackSelector);
    expect(hdsMedia(noAudio).map((m) => m.key)).toEqual(['video_eng=410594', 'video_eng=925835', 'video_eng=1651699']);
  });
});

describe('versions, multi-level and URLs', () => {
  test('hds_client_manifest_version=2 writes the F4M 2.0 namespace, the same elements', async () => {
    const v1 = writeHdsManifest(await hdsView(AVC_AAC), '');
    const v2 = writeHdsManifest(await hdsView(AVC_AAC, 'hds_client_manifest_version=2'), '');
    readDocument(v2, F4M_NAMESPACE[2]);
    expect(v2.replace(F4M_NAMESPACE[2], F4M_NAMESPACE[1]).replace(/\?hds_client_manifest_version=2/g, '')).toBe(v1);
  });

  test.each(['hds_multi_level', 'hds_multi_level=true&hds_client_manifest_version=2'])(
    '%s: a set-level manifest (always F4M 2.0) listing every stream-level manifest by href with its bitrate',
    async (query) => {
      const view = await hdsView(AVC_AAC, query);
      const set = readF4m(writeHdsManifest(view, ''));
      expect(set.xmlns).toBe(F4M_NAMESPACE[2]);
      expect(set.bootstrapInfo).toBeUndefined();
      const single = readDocument(writeHdsManifest(await hdsView(AVC_AAC), ''), F4M_NAMESPACE[1]).media;
      expect(set.media.map((m) => [Number(m.bitrate), Number(m.width), Number(m.height)])).toEqual(
        single.map((m) => [m.bitrate, m.width, m.height]),
      );
      for (const [i, m] of set.media.entries()) {
        expect(m.url).toBeUndefined();
        expect(m.href).toBe(`${single[i]!.url}.f4m?${query}`);
        // The stream-level manifest the href names describes exactly that one media.
        const stream = readDocument(
          writeHdsManifest(view, m.href!.replace(/\.f4m\?.*$/, '')),
          view.options.int('hds_client_manifest_version') === 2 ? F4M_NAMESPACE[2] : F4M_NAMESPACE[1],
        );
        expect(stream.media).toHaveLength(1);
        expect({ ...stream.media[0]!, url: stream.media[0]!.url.replace(/\?.*$/, '') }).toEqual(single[i]);
      }
    },
  );

  test('presentation_name, the carried query and suppress_query_parameters', async () => {
    const named = readF4m(writeHdsManifest(await hdsView(AVC_AAC, 'presentation_name=show&token=a%26b'), ''));
    expect(named.id).toBe('show');
    expect(named.media[0]!.url).toBe('show-audio_eng=127962-video_eng=410594?presentation_name=show&token=a%26b');
    const suppressed = await hdsView(
      AVC_AAC,
      'presentation_name=show&token=x&t=2-6&suppress_query_parameters&hds_multi_level',
    );
    const set = readF4m(writeHdsManifest(suppressed, ''));
    // Stream-level manifests write URLs, so their href keeps presentation_name, as HLS media playlists.
    expect(set.media[0]!.href).toBe('show-audio_eng=127962-video_eng=410594.f4m?presentation_name=show&t=2-6');
    const stream = readF4m(writeHdsManifest(suppressed, 'show-audio_eng=127962-video_eng=410594'));
    expect(stream.media[0]!.url).toBe('show-audio_eng=127962-video_eng=410594?t=2-6');
  });

  test('a stem that names no media is the manifest itself (any name, as for .mpd and .m3u8)', async () => {
    const view = await hdsView(AVC_AAC);
    const manifest = writeHdsManifest(view, '');
    expect(writeHdsManifest(view, 'another-name')).toBe(manifest);
    expect(writeHdsManifest(view, 'presentation-video_eng=410594')).toBe(manifest); // no media without its audio
  });
});

describe('goldens', () => {
  test('single-level manifest (H.264 + AAC)', async () => {
    expectGolden('formats/hds-avc-aac.f4m', writeHdsManifest(await hdsView(AVC_AAC), ''));
  });

  test('set-level manifest', async () => {
    expectGolden(
      'formats/hds-avc-aac-set.f4m',
      writeHdsManifest(await hdsView(AVC_AAC, 'hds_multi_level=true&hds_client_manifest_version=2'), ''),
    );
  });

  test('stream-level manifest', async () => {
    const view = await hdsView(AVC_AAC, 'hds_multi_level=true&hds_client_manifest_version=2');
    expectGolden('formats/hds-avc-aac-stream.f4m', writeHdsManifest(view, `presentation-${hdsMedia(view)[1]!.key}`));
  });
});
