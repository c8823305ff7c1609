// Timed metadata in every format, through a real origin on loopback (issue 27). With
// timed_metadata off a presentation with a metadata track answers byte for byte what the same
// presentation without it answers (manifests and segments of every format); on, DASH lists the
// events in MPD EventStreams (valid against the schema, segments unchanged), HLS writes
// EXT-X-DATERANGE with the SCTE-35 sections byte for byte (m3u8-parser reads every playlist
// without a warning), fMP4 segments carry emsg and TS segments an ID3 stream ffprobe calls
// timed_id3; Smooth and HDS leave the metadata out (documented refusal).

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { RunningServer, startServer } from '../../../origin/server/server';
import { runSync } from '../../helpers/process';
import { EVENTS, ID3_SCHEME, id3Pes, META_URIM, SCTE35_SCHEME } from '../../helpers/timed-metadata';
import { IsoBox, isoBoxes, readDateRanges } from '../../helpers/metadata-readers';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
import { get, testServerOptions } from '../server/server-helpers';
import { validateMpd } from './format-support';

const section = (id: number): Buffer => Buffer.from(EVENTS.find((e) => e.id === id)!.data, 'hex');
const hexValue = (v: string | undefined): Buffer => Buffer.from(v!.replace(/^0x/i, ''), 'hex');
/** Output seconds of a fixture event: the presentation starts with the audio's priming, 21.3333 ms before the video. */
const outputSeconds = (ms: number): number => ms / 1000 + 213333 / 1e7;

let server: RunningServer;
let base: string;
const PLAIN = '/plain/p.ism';

const withOption = (ism: string, tail: string): string =>
  ism + tail + (tail.includes('?') ? '&' : '?') + 'timed_metadata=true';

/** A manifest carries the query into its URLs: the body with it taken out again (segments as they are). */
function withoutQuery(b: Buffer, tail: string): Buffer {
  if (!/(Manifest|\.mpd|\.m3u8|\.f4m)(\?|$)/.test(tail)) return b;
  const text = b
    .toString('utf8')
    .replace(/\?timed_metadata=true&/g, '?')
    .replace(/(\?|&|&amp;)timed_metadata=true/g, '');
  return Buffer.from(text, 'utf8');
}
const META = '/meta/p.ism';

beforeAll(async () => {
  const root = tempDir('origin-tm-root-');
  const inputs = [media('video_baseline_400k.ismv'), media('audio_eng_64k.isma')];
  for (const [dir, extra] of [
    ['plain', []],
    ['meta', [META_URIM]],
  ] as const) {
    mkdirSync(path.join(root, dir));
    const r = await runOrigin(['package', '-q', '-o', path.join(root, dir, 'p.ism'), ...inputs, ...extra]);
    expect([r.code, r.stderr]).toEqual([0, '']);
  }
  server = await startServer(testServerOptions(root, []));
  base = server.url;
});

afterAll(async () => {
  await server.close();
});

async function body(url: string): Promise<Buffer> {
  const r = await get(base, url);
  expect([url, r.status]).toEqual([url, 200]);
  return r.body;
}

/** Every manifest and a segment of each kind a player of each format reads, by path after the .ism. */
const OUTPUTS = [
  '/Manifest',
  '/QualityLevels(410594)/Fragments(video_eng=213333)',
  '/.mpd',
  '/dash/p-video_eng=410594.dash',
  '/dash/p-video_eng=410594-213333.dash',
  '/.m3u8',
  '/p-audio_eng=64113-video_eng=410594.m3u8',
  '/p-audio_eng=64113-video_eng=410594-1.ts',
  '/p-audio_eng=64113-video_eng=410594-3.ts',
  '/p-video_eng=410594.m3u8?hls_fmp4=true',
  '/hls/p-video_eng=410594-1.m4s?hls_fmp4=true',
  '/.f4m',
];

describe('timed_metadata off', () => {
  it.each(OUTPUTS)('%s: the metadata track changes no byte', async (tail) => {
    expect((await body(META + tail)).equals(await body(PLAIN + tail))).toBe(true);
  });

  it.each(OUTPUTS)('%s: ?timed_metadata=true on a presentation without metadata changes no byte', async (tail) => {
    expect(withoutQuery(await body(withOption(PLAIN, tail)), tail)).toEqual(await body(PLAIN + tail));
  });
});

describe('timed_metadata on', () => {
  const on = (tail: string): string => withOption(META, tail);

  it('DASH: EventStreams of ID3 and SCTE-35 (xml+bin), valid against the schema; segments unchanged', async () => {
    const mpd = (await body(on('/.mpd'))).toString('utf8');
    const v = validateMpd(mpd);
    expect([v.ok, v.output]).toEqual([true, expect.any(String)]);
    expect(mpd).toContain('<EventStream schemeIdUri="https://aomedia.org/emsg/ID3" value="" timescale="10000000">');
    expect(mpd).toContain('<EventStream schemeIdUri="urn:scte:scte35:2014:xml+bin" value="" timescale="10000000">');
    for (const e of EVENTS) {
      const m = new RegExp(
        `<Event presentationTime="(\\d+)"[^>]* id="${e.id}"[^>]*>\\s*(?:<scte35:Signal>\\s*<scte35:Binary>)?([A-Za-z0-9+/=]+)<`,
      ).exec(mpd);
      expect(m).not.toBeNull();
      expect(Number(m![1]) / 1e7).toBeCloseTo(outputSeconds(e.time), 6);
      expect(Buffer.from(m![2]!, 'base64').toString('hex')).toBe(e.data);
    }
    for (const tail of ['/dash/p-video_eng=410594.dash', '/dash/p-video_eng=410594-213333.dash'])
      expect((await body(on(tail))).equals(await body(PLAIN + tail))).toBe(true);
  });

  it.each([
    // The first segment's output time, ms: the video's starts 21.3 ms after the audio's.
    ['TS', '/p-audio_eng=64113-video_eng=410594.m3u8?timed_metadata=true', 21],
    ['fMP4 video', '/p-video_eng=410594.m3u8?hls_fmp4=true&timed_metadata=true', 21],
    ['fMP4 audio', '/p-audio_eng=64113.m3u8?hls_fmp4=true&timed_metadata=true', 0],
  ] as const)(
    'HLS %s: DATERANGE per SCTE-35 cue, the section byte for byte; PROGRAM-DATE-TIME; no warning',
    async (_k, tail, first) => {
      const text = (await body(META + tail)).toString('utf8');
      const { manifest, warnings } = readDateRanges(text);
      expect(warnings).toEqual([]);
      expect(manifest.segments[0]!.programDateTime).toBe(first);
      const ranges = manifest.dateRanges!;
      // The OUT and IN of splice_event_id 1001 are one range (the same ID), then the time_signal.
      expect(ranges.map((r) => r.id)).toEqual(['splice-000003E9', 'scte35-12']);
      const [brk, signal] = ranges;
      expect(hexValue(brk!.scte35Out).equals(section(10))).toBe(true);
      expect(hexValue(brk!.scte35In).equals(section(11))).toBe(true);
      expect(hexValue(signal!.scte35Cmd).equals(section(12))).toBe(true);
      expect(brk!.startDate.getTime()).toBe(Math.round(outputSeconds(4000) * 1000));
      expect([brk!.plannedDuration, brk!.duration]).toEqual([2, 2]);
      expect(signal!.startDate.getTime()).toBe(Math.round(outputSeconds(8500) * 1000));
    },
  );

  it('HLS: hls_program_date_time moves every date; a bad value is refused', async () => {
    const tail =
      '/p-audio_eng=64113-video_eng=410594.m3u8?timed_metadata=true&hls_program_date_time=2026-01-01T12:00:00Z';
    const { manifest, warnings } = readDateRanges((await body(META + tail)).toString('utf8'));
    expect(warnings).toEqual([]);
    const anchor = Date.parse('2026-01-01T12:00:00Z');
    expect(manifest.dateRanges![0]!.startDate.getTime()).toBe(anchor + Math.round(outputSeconds(4000) * 1000));
    const bad = await get(base, `${META}/.m3u8?hls_program_date_time=yesterday`);
    expect(bad.status).toBe(400);
    const noDate = await get(base, `${META}${tail.replace('2026-01-01', '2026-13-45')}`);
    expect([noDate.status, noDate.headers['x-origin-error']]).toEqual([400, 'bad-option']);
  });

  it('HLS fMP4: each event as emsg v1 before the moof of the video segment it falls in, none in audio', async () => {
    const found: IsoBox[] = [];
    for (const n of [1, 2, 3]) {
      const b = await body(on(`/hls/p-video_eng=410594-${n}.m4s?hls_fmp4=true`));
      const parsed = isoBoxes(b);
      const types = parsed.boxes.map((x) => x.type);
      expect(types.slice(0, 2)).toEqual(parsed.fetchAll('emsg').length > 0 ? ['styp', 'emsg'] : ['styp', 'moof']);
      for (const e of parsed.fetchAll('emsg')) {
        const t = e.presentation_time! / e.timescale!;
        expect(t).toBeGreaterThanOrEqual((n - 1) * 4);
        expect(t).toBeLessThan(n * 4 + 0.1);
        found.push(e);
      }
      const audio = await body(on(`/hls/p-audio_eng=64113-${n}.m4s?hls_fmp4=true`));
      expect(audio.includes(Buffer.from('emsg'))).toBe(false);
    }
    expect(found.map((e) => e.id).sort((a, b) => a! - b!)).toEqual(EVENTS.map((e) => e.id).sort((a, b) => a - b));
    for (const e of found) {
      const x = EVENTS.find((y) => y.id === e.id)!;
      expect(e.presentation_time! / e.timescale!).toBeCloseTo(outputSeconds(x.time), 6);
      expect(e.scheme_id_uri).toBe(x.scheme);
      const m = e.message_data!;
      expect(Buffer.from(m.buffer, m.byteOffset, m.byteLength).toString('hex')).toBe(x.data);
    }
  });

  it('HLS TS: an ID3 stream ffprobe calls timed_id3, one PES per tag at its time on the video clock, the tag byte for byte', async () => {
    const dir = tempDir('origin-tm-ts-');
    const id3 = EVENTS.filter((e) => e.scheme === ID3_SCHEME);
    const tags: Array<{ pts: number; tag: string }> = [];
    for (const n of [1, 2, 3]) {
      const file = path.join(dir, `s${n}.ts`);
      const bytes = await body(on(`/p-audio_eng=64113-video_eng=410594-${n}.ts`));
      writeFileSync(file, bytes);
      const r = runSync('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', file]);
      const streams = (
        JSON.parse(r.stdout) as { streams: Array<{ codec_name?: string; codec_tag_string: string; id: string }> }
      ).streams;
      expect(streams.map((s) => [s.id, s.codec_name ?? s.codec_tag_string])).toEqual([
        ['0x100', 'h264'],
        ['0x101', 'aac'],
        ['0x102', 'timed_id3'],
      ]);
      const decode = runSync('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:v', '-map', '0:a', '-f', 'null', '-']);
      expect([decode.code, decode.stderr]).toEqual([0, '']);
      tags.push(...id3Pes(readFileSync(file)));
    }
    expect(tags).toEqual(id3.map((e) => ({ pts: 900000 + Math.round(outputSeconds(e.time) * 90000), tag: e.data })));
    // One continuity counter over the rendition's segments (§2.4.3.3), and every packet of the
    // other PIDs where the muxer alone put it: the segment with its PAT, PMT and ID3 packets taken
    // out is the one written without timed metadata, the PMT aside.
    const counters: number[] = [];
    for (const n of [1, 2, 3]) {
      const withId3 = readFileSync(path.join(dir, `s${n}.ts`));
      const plain = await body(`${PLAIN}/p-audio_eng=64113-video_eng=410594-${n}.ts`);
      const others = (b: Buffer, skip: number[]): Buffer[] => {
        const out: Buffer[] = [];
        for (let at = 0; at < b.length; at += 188) {
          const pid = b.readUInt16BE(at + 1) & 0x1fff;
          if (pid === 0x102) counters.push(b[at + 3]! & 0x0f);
          if (!skip.includes(pid)) out.push(b.subarray(at, at + 188));
        }
        return out;
      };
      expect(Buffer.concat(others(withId3, [0x102, 0x1000]))).toEqual(Buffer.concat(others(plain, [0x102, 0x1000])));
    }
    expect(counters).toEqual([0, 1, 2]);
  });

  it.each(['/.m3u8', '/.m3u8?hls_fmp4=true'])(
    'HLS %s: m3u8-parser reads the master and every playlist it names without a warning',
    async (master) => {
      const text = (await body(on(master))).toString('utf8');
      const uris = [...text.matchAll(/^([^#\n].*)$|URI="([^"]+)"/gm)].map((m) => m[1] ?? m[2]!);
      expect(uris.length).toBeGreaterThanOrEqual(2);
      for (const [name, playlist] of [
        [master, text],
        ...(await Promise.all(uris.map(async (u) => [u, (await body(`${META}/${u}`)).toString('utf8')]))),
      ]) {
        expect([name, readDateRanges(playlist!).warnings]).toEqual([name, []]);
      }
    },
  );

  it('a filter never removes the metadata: a filter that names only audio, or excludes data tracks, keeps every event', async () => {
    for (const filter of ['type=="audio"', 'type!="data"&&FourCC!="urim"']) {
      const q = `&filter=${encodeURIComponent(filter)}`;
      const mpd = (await body(on('/.mpd') + q)).toString('utf8');
      for (const e of EVENTS) expect([filter, mpd.includes(` id="${e.id}"`)]).toEqual([filter, true]);
    }
    // Audio only: the audio segments carry the emsg boxes (segments/fmp4/emsg.ts).
    const q = `&filter=${encodeURIComponent('type=="audio"')}`;
    const ids: number[] = [];
    for (const n of [1, 2, 3]) {
      const b = await body(on(`/hls/p-audio_eng=64113-${n}.m4s?hls_fmp4=true`) + q);
      const parsed = isoBoxes(b);
      ids.push(...parsed.fetchAll('emsg').map((e) => e.id!));
    }
    expect(ids.sort((a, b) => a - b)).toEqual(EVENTS.map((e) => e.id).sort((a, b) => a - b));
  });

  it('Smooth and HDS leave the metadata out: the same bytes as with it off', async () => {
    for (const tail of ['/Manifest', '/.f4m', '/QualityLevels(410594)/Fragments(video_eng=213333)'])
      expect(withoutQuery(await body(on(tail)), tail)).toEqual(await body(PLAIN + tail));
  });

  it('SCTE-35 and ID3 schemes are the ones the fixtures carry', () => {
    expect(new Set(EVENTS.map((e) => e.scheme))).toEqual(new Set([ID3_SCHEME, SCTE35_SCHEME]));
  });
});
