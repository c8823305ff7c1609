// Timed metadata in live output (issue 27's live part; docs/design/timed-metadata.md): channels
// fed by the test encoder on a fixed clock with the fixture's events (fixtures/make-timed-metadata.cjs:
// ID3 as emsg v0, SCTE-35 as emsg v1 ahead of the video's moofs, or a `urim` metadata stream),
// read back by parsers the origin did not write: codem-isoboxer for the emsg boxes, ffprobe for
// the TS ID3 stream, m3u8-parser for the playlists, the MPD schema. With `timed_metadata` off a
// channel with events answers byte for byte what the channel without them answers.

import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DateRange, IsoBox, isoBoxes, readDateRanges } from '../../helpers/metadata-readers';
import { media, tempDir } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { getBytes, setTimes } from '../../helpers/live-catalogue';
import { run } from '../../helpers/process';
import { Fixture, httpGet, loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { EVENTS, ID3_SCHEME, id3Pes, inbandVideo, META_URIM, SCTE35_SCHEME } from '../../helpers/timed-metadata';
import { validateMpd } from '../manifests/format-support';

const JAN_2020 = 1577836800;
const ANCHOR = JAN_2020;
const video = loadFixture(media('video_baseline_400k.ismv'));
const withEmsg = loadFixture(inbandVideo());
const audio = loadFixture(media('audio_eng_64k.isma'));
const urim = loadFixture(META_URIM);

let origin: LiveOrigin;
// Each channel is `live/<dir>/ch.isml`: one name, so that manifests compare byte for byte.
const url = (dir: string): string => `${origin.serving.url}/live/${dir}/ch.isml`;

async function ok(u: string): Promise<Buffer> {
  const r = await getBytes(u);
  expect([u, r.status]).toEqual([u, 200]);
  return r.body;
}

const encoders = new Map<string, TestEncoder[]>();

/** Pushes fragments [from, to) of every stream of a channel and waits until they are archived. */
async function push(ch: string, from: number, to: number): Promise<void> {
  const list = encoders.get(ch)!;
  for (const e of list) await e.send(from, to);
  await eventually(
    () => origin.state(`${ch}/ch`),
    (s) =>
      s.tracks.length === list.length &&
      s.tracks.every((t) => Date.parse(t.lastTimeUtc ?? '') >= (ANCHOR + 2 * (to - 1)) * 1000 - 100),
  );
}

async function channel(ch: string, streams: Array<[string, Fixture]>, options: string[] = []): Promise<void> {
  mkdirSync(path.join(origin.root, 'live', ch), { recursive: true });
  await createChannel(origin.root, `${ch}/ch`, options);
  const list = streams.map(
    ([stream, fixture]) =>
      new TestEncoder({ channelUrl: origin.channelUrl(`${ch}/ch`), stream, fixture, anchorSeconds: ANCHOR }),
  );
  for (const e of list) await e.open();
  encoders.set(ch, list);
}

beforeAll(async () => {
  origin = await startLiveOrigin({ now: () => (ANCHOR + 60) * 1000 });
  await channel('plain', [
    ['video-400k.cmfv', video],
    ['audio-64k.cmfa', audio],
  ]);
  await channel('inband', [
    ['video-400k.cmfv', withEmsg],
    ['audio-64k.cmfa', audio],
  ]);
  // The option on the publishing point, and the events in a metadata stream of their own.
  await channel(
    'meta',
    [
      ['video-400k.cmfv', video],
      ['audio-64k.cmfa', audio],
      ['meta.cmfm', urim],
    ],
    ['--timed_metadata'],
  );
  for (const ch of ['plain', 'inband', 'meta']) await push(ch, 0, 5);
});
afterAll(async () => {
  for (const list of encoders.values()) for (const e of list) await e.close().catch(() => undefined);
  await origin.close();
});

/** The URLs (after the .isml) of every manifest and segment a player of DASH or HLS reads. */
async function outputs(ch: string, query: string): Promise<string[]> {
  const q = query === '' ? '' : `?${query}`;
  const and = query === '' ? '' : `&${query}`;
  const mpd = (await httpGet(`${url(ch)}/.mpd${q}`)).body;
  const tails = ['/.mpd' + q, '/.m3u8' + q, '/Manifest' + q, '/.f4m' + q];
  tails.push(`/dash/ch-video=400000.dash${q}`, `/dash/ch-audio=64000.dash${q}`);
  for (const t of setTimes(mpd)) tails.push(`/dash/ch-video=400000-${t}.dash${q}`);
  const ts = `/ch-audio=64000-video=400000.m3u8${q}`;
  const fmp4 = `/ch-video=400000.m3u8?hls_fmp4=true${and}`;
  tails.push(ts, fmp4, `/hls/ch-video=400000.m4s?hls_fmp4=true${and}`);
  for (const playlist of [ts, fmp4]) {
    const text = (await httpGet(url(ch) + playlist)).body;
    for (const line of text.split('\n'))
      if (/\.(ts|m4s)(\?|$)/.test(line) && !line.startsWith('#')) tails.push(`/${line}`);
  }
  return tails;
}

const section = (id: number): Buffer => Buffer.from(EVENTS.find((e) => e.id === id)!.data, 'hex');
const hexValue = (v: string | undefined): Buffer => Buffer.from(v!.replace(/^0x/i, ''), 'hex');
/** A fixture event's UTC ms on the channel: its media time after the anchor. */
const utcMs = (ms: number): number => ANCHOR * 1000 + ms;

/** A manifest (text) or a segment (bytes), by its URL. */
const isManifest = (tail: string): boolean => /(Manifest|\.mpd|\.m3u8|\.f4m)(\?|$)/.test(tail);

/** The query `q` taken out of a URL or a manifest's text. */
const withoutQuery = (text: string, q: string): string =>
  q === '' ? text : text.replaceAll(`?${q}&`, '?').replaceAll(new RegExp(`(\\?|&|&amp;)${q}`, 'g'), '');

describe('timed_metadata off', () => {
  test.each(['inband', 'meta'])(
    'channel %s: every manifest and segment is the plain channel’s, byte for byte',
    async (ch) => {
      // The meta channel has the option on in its .isml: the query turns it off.
      const query = ch === 'meta' ? 'timed_metadata=false' : '';
      const tails = await outputs(ch, query);
      expect(tails.length).toBeGreaterThan(15);
      for (const tail of tails) {
        const got = await ok(url(ch) + tail);
        const want = await ok(url('plain') + withoutQuery(tail, query));
        if (isManifest(tail)) expect([tail, withoutQuery(got.toString(), query)]).toEqual([tail, want.toString()]);
        else expect([tail, got.equals(want)]).toEqual([tail, true]);
      }
    },
  );
});

describe.each([
  ['inband', 'timed_metadata=true'],
  ['meta', ''],
])('timed_metadata on, channel %s (query %j)', (ch, query) => {
  const q = query === '' ? '' : `?${query}`;
  const and = query === '' ? '' : `&${query}`;

  test('DASH: InbandEventStream per scheme in the video set, valid MPD; emsg v1 in the video segments at UTC times', async () => {
    const mpd = (await httpGet(`${url(ch)}/.mpd${q}`)).body;
    expect(validateMpd(mpd)).toEqual({ ok: true, output: expect.any(String) });
    expect(mpd).not.toContain('<EventStream');
    const videoSet = mpd.slice(mpd.indexOf('contentType="video"'));
    const audioSet = mpd.slice(mpd.indexOf('contentType="audio"'), mpd.indexOf('contentType="video"'));
    for (const scheme of [ID3_SCHEME, SCTE35_SCHEME])
      expect(videoSet).toContain(`<InbandEventStream schemeIdUri="${scheme}" value="" />`);
    expect(audioSet).not.toContain('InbandEventStream');
    const found: IsoBox[] = [];
    for (const t of setTimes(mpd)) {
      const b = await ok(`${url(ch)}/dash/ch-video=400000-${t}.dash${q}`);
      const parsed = isoBoxes(b);
      const emsg = parsed.fetchAll('emsg');
      const types = parsed.boxes.map((x) => x.type);
      expect(types.slice(0, 2)).toEqual(emsg.length > 0 ? ['styp', 'emsg'] : ['styp', 'moof']);
      // Each in the segment whose span holds it (2-s segments, 10 MHz).
      for (const e of emsg) {
        expect(e.version).toBe(1);
        const at = (BigInt(e.presentation_time!) * 10_000_000n) / BigInt(e.timescale!);
        expect(at >= t && at < t + 20_000_000n).toBe(true);
        found.push(e);
      }
    }
    expect(found.map((e) => e.id).sort((a, b) => a! - b!)).toEqual(EVENTS.map((e) => e.id).sort((a, b) => a - b));
    for (const e of found) {
      const x = EVENTS.find((y) => y.id === e.id)!;
      expect([e.id, e.timescale, e.presentation_time, e.scheme_id_uri, e.value]).toEqual([
        x.id,
        1000,
        utcMs(x.time),
        x.scheme,
        '',
      ]);
      const m = e.message_data!;
      expect(Buffer.from(m.buffer, m.byteOffset, m.byteLength).toString('hex')).toBe(x.data);
    }
    const a = await ok(`${url(ch)}/dash/ch-audio=64000-${setTimes(mpd, 'audio')[0]}.dash${q}`);
    expect(a.includes(Buffer.from('emsg'))).toBe(false);
  });

  test('HLS: DATERANGE per SCTE-35 cue at its UTC START-DATE, the section byte for byte; PROGRAM-DATE-TIME; no warning', async () => {
    for (const playlist of [`/ch-audio=64000-video=400000.m3u8${q}`, `/ch-video=400000.m3u8?hls_fmp4=true${and}`]) {
      const text = (await httpGet(url(ch) + playlist)).body;
      const { manifest, warnings } = readDateRanges(text);
      expect([playlist, warnings]).toEqual([playlist, []]);
      // 4-s segments: the listed ones end at 8 s (the last, 8–10 s, is not whole yet).
      expect(manifest.segments.map((s) => s.programDateTime)).toEqual([utcMs(0), utcMs(4000)]);
      const ranges = manifest.dateRanges!;
      expect(ranges.map((r) => r.id)).toEqual(['splice-000003E9']);
      const brk = ranges[0]!;
      expect(hexValue(brk.scte35Out).equals(section(10))).toBe(true);
      expect(hexValue(brk.scte35In).equals(section(11))).toBe(true);
      expect([brk.startDate.getTime(), brk.duration]).toEqual([utcMs(4000), 2]);
    }
  });

  test('HLS fMP4: emsg v1 in the video segments, none in audio', async () => {
    const text = (await httpGet(`${url(ch)}/ch-video=400000.m3u8?hls_fmp4=true${and}`)).body;
    const ids: number[] = [];
    for (const line of text.split('\n').filter((l) => l.includes('.m4s') && !l.startsWith('#'))) {
      const b = await ok(`${url(ch)}/${line}`);
      const parsed = isoBoxes(b);
      for (const e of parsed.fetchAll('emsg')) {
        const x = EVENTS.find((y) => y.id === e.id)!;
        expect([e.version, e.presentation_time, e.timescale]).toEqual([1, utcMs(x.time), 1000]);
        ids.push(e.id!);
      }
    }
    // In time order (ties by id), those of the listed segments (0–8 s).
    const want = EVENTS.filter((e) => e.time < 8000).sort((a, b) => a.time - b.time || a.id - b.id);
    expect(ids).toEqual(want.map((e) => e.id));
    const audioList = (await httpGet(`${url(ch)}/ch-audio=64000.m3u8?hls_fmp4=true${and}`)).body;
    const lines = audioList.split('\n').filter((l) => l.includes('.m4s') && !l.startsWith('#'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect((await ok(`${url(ch)}/${line}`)).includes(Buffer.from('emsg'))).toBe(false);
  });

  test('HLS TS: an ID3 stream ffprobe calls timed_id3 in every segment; each tag at its time on the video clock', async () => {
    const text = (await httpGet(`${url(ch)}/ch-audio=64000-video=400000.m3u8${q}`)).body;
    const dir = tempDir('origin-live-id3-');
    const tags: Array<{ pts: number; tag: string }> = [];
    for (const line of text.split('\n').filter((l) => l.includes('.ts') && !l.startsWith('#'))) {
      const file = path.join(dir, `s${tags.length}-${line.split('?')[0]}`);
      const bytes = await ok(`${url(ch)}/${line}`);
      writeFileSync(file, bytes);
      const r = await run('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', file]);
      const streams = (JSON.parse(r.stdout) as { streams: Array<{ codec_name?: string; codec_tag_string: string }> })
        .streams;
      expect(streams.map((s) => s.codec_name ?? s.codec_tag_string)).toEqual(['h264', 'aac', 'timed_id3']);
      tags.push(...id3Pes(bytes));
    }
    // The muxer's clock: output time (since the epoch) at 90 kHz plus 10 s, modulo 2^33.
    const pts = (ms: number): number => Number((BigInt(utcMs(ms)) * 90n + 900_000n) % 2n ** 33n);
    const id3 = EVENTS.filter((e) => e.scheme === ID3_SCHEME && e.time < 8000);
    expect(tags).toEqual(id3.map((e) => ({ pts: pts(e.time), tag: e.data })));
  });

  test('HLS: m3u8-parser reads both masters and every playlist they name without a warning', async () => {
    for (const master of [`/.m3u8${q}`, `/.m3u8?hls_fmp4=true${and}`]) {
      const text = (await httpGet(url(ch) + master)).body;
      const uris = [...text.matchAll(/^([^#\n].*)$|URI="([^"]+)"/gm)].map((m) => m[1] ?? m[2]!);
      expect(uris.length).toBeGreaterThanOrEqual(2);
      expect([master, readDateRanges(text).warnings]).toEqual([master, []]);
      for (const u of uris)
        expect([u, readDateRanges((await httpGet(`${url(ch)}/${u}`)).body).warnings]).toEqual([u, []]);
    }
  });

  test('a filter never removes the metadata: the video-only and audio-only views keep every event', async () => {
    const sep = q === '' ? '?' : '&';
    const audioOnly = (await httpGet(`${url(ch)}/.mpd${q}${sep}filter=${encodeURIComponent('type=="audio"')}`)).body;
    // Audio without video carries the events (segments/fmp4/emsg.ts carriesEvents).
    expect(audioOnly).toContain(`<InbandEventStream schemeIdUri="${SCTE35_SCHEME}" value="" />`);
    const ids: number[] = [];
    for (const t of setTimes(audioOnly, 'audio')) {
      const b = await ok(
        `${url(ch)}/dash/ch-audio=64000-${t}.dash${q}${sep}filter=${encodeURIComponent('type=="audio"')}`,
      );
      const parsed = isoBoxes(b);
      ids.push(...parsed.fetchAll('emsg').map((e) => e.id!));
    }
    expect(ids.sort((a, b) => a - b)).toEqual(EVENTS.map((e) => e.id).sort((a, b) => a - b));
  });

  test('Smooth and HDS leave the metadata out, as for VOD: the bytes of the plain channel', async () => {
    for (const tail of ['/Manifest', '/.f4m']) {
      const got = (await ok(`${url(ch)}${tail}${q}`)).toString();
      const want = (await ok(`${url('plain')}${tail}`)).toString();
      expect(withoutQuery(got, query)).toBe(want);
    }
  });
});

describe('the window slides', () => {
  beforeAll(async () => {
    // 2-s HLS segments in a 4-s window: the OUT (4 s) and the IN (6 s) of one break can part.
    await channel(
      'slide',
      [
        ['video-400k.cmfv', withEmsg],
        ['audio-64k.cmfa', audio],
      ],
      ['--timed_metadata', '--dvr_window_length=4', '--hls_minimum_fragment_length=2'],
    );
  });

  test('DATERANGEs slide out with the window; an IN keeps its OUT’s ID and START-DATE across reloads', async () => {
    const playlist = `${url('slide')}/ch-audio=64000-video=400000.m3u8`;
    const read = async (): Promise<{ ranges: DateRange[]; pdt: number | undefined }> => {
      const { manifest, warnings } = readDateRanges((await httpGet(playlist)).body);
      expect(warnings).toEqual([]);
      return { ranges: manifest.dateRanges ?? [], pdt: manifest.segments[0]?.programDateTime };
    };
    const summary = (r: DateRange): unknown[] => [
      r.id,
      r.startDate.getTime(),
      r.duration,
      r.scte35Out !== undefined,
      r.scte35In !== undefined,
    ];
    await push('slide', 0, 4); // 4–8 s listed: the OUT and the IN
    const first = await read();
    expect(first.pdt).toBe(utcMs(4000));
    expect(first.ranges.map(summary)).toEqual([['splice-000003E9', utcMs(4000), 2, true, true]]);
    await push('slide', 4, 5); // 6–10 s: the IN without its OUT, and the time_signal
    const second = await read();
    expect(second.pdt).toBe(utcMs(6000));
    expect(second.ranges.map(summary)).toEqual([
      ['splice-000003E9', utcMs(4000), 2, false, true],
      ['scte35-12', utcMs(8500), undefined, false, false],
    ]);
    expect(hexValue(second.ranges[0]!.scte35In).equals(section(11))).toBe(true);
    await push('slide', 5, 7); // 10–14 s: no cue left
    const third = await read();
    expect(third.pdt).toBe(utcMs(10000));
    expect(third.ranges).toEqual([]);
  });
});
