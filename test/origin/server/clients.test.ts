// ffprobe and ffmpeg as clients of the running origin (CONTRIBUTING.md design rule 11):
// they read the HLS master and the MPD over HTTP, and every frame of the selected tracks decodes
// without a word on stderr, as many frames as the source has (fixtures/media/facts.json) and,
// frame for frame, with the checksums of decoding the source file itself. Every MPD the origin
// writes for these requests validates against MPEG's DASH schema.

import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { media } from '../../helpers/fixtures';
import { PLAYABLE } from '../../helpers/presentations';
import { validateMpd } from '../manifests/format-support';
import { get, startTestOrigin, TestOrigin } from './server-helpers';
import { run } from '../../helpers/process';

interface Facts {
  file: string;
  kind: 'video' | 'audio' | 'text';
  codec: string;
  packets: number;
  width?: number;
  height?: number;
  sample_rate?: number;
  channels?: number;
  box: { fragments: Array<{ samples: number }> };
}
const FACTS = JSON.parse(readFileSync(media('facts.json'), 'utf8')) as Facts[];
const factsOf = (file: string): Facts => FACTS.find((f) => f.file === file)!;

let origin: TestOrigin;
/** Source file → representation id (`<trackName>=<systemBitrate>`), from the .ism the packager wrote. */
const keys = new Map<string, string>();

beforeAll(async () => {
  origin = await startTestOrigin({ p: PLAYABLE });
  const ism = await fs.readFile(path.join(origin.root, 'p.ism'), 'utf8');
  for (const m of ism.matchAll(/<(?:video|audio|textstream)\b([^>]*)>([\s\S]*?)<\/(?:video|audio|textstream)>/g)) {
    const file = path.basename(/\bsrc="([^"]+)"/.exec(m[1]!)![1]!);
    const bitrate = /\bsystemBitrate="(\d+)"/.exec(m[1]!)![1]!;
    const name = /<param name="trackName" value="([^"]+)"/.exec(m[2]!)![1]!;
    keys.set(file, `${name}=${bitrate}`);
  }
});

afterAll(async () => {
  await origin.server.close();
});

const key = (file: string): string => keys.get(file)!;

interface ProbedStream {
  index: number;
  codec_type: string;
  codec_name?: string;
  width?: number;
  height?: number;
  sample_rate?: string;
  channels?: number;
  tags?: Record<string, string>;
}

async function probe(url: string): Promise<ProbedStream[]> {
  const r = await run('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', url]);
  expect([url, r.code, r.stderr]).toEqual([url, 0, '']);
  return (JSON.parse(r.stdout) as { streams: ProbedStream[] }).streams;
}

/** What ffprobe should say about a source's stream: from the facts, not from the origin. */
function expectedStream(file: string): Partial<ProbedStream> {
  const f = factsOf(file);
  if (f.kind === 'video') return { codec_type: 'video', codec_name: f.codec, width: f.width!, height: f.height! };
  return { codec_type: 'audio', codec_name: f.codec, sample_rate: String(f.sample_rate), channels: f.channels! };
}
const pick = (s: ProbedStream, like: Partial<ProbedStream>): Partial<ProbedStream> =>
  Object.fromEntries(Object.keys(like).map((k) => [k, s[k as keyof ProbedStream]])) as Partial<ProbedStream>;

interface FrameMd5 {
  /** `#tb`, `#media_type`, `#codec_id`, `#dimensions`, `#sar`, `#sample_rate`, `#channel_layout`. */
  header: string[];
  /** `stream, dts, pts, duration, size, hash` per decoded frame. */
  rows: string[][];
}

async function framemd5(input: string, map: string): Promise<FrameMd5> {
  const r = await run('ffmpeg', ['-nostdin', '-v', 'error', '-i', input, '-map', map, '-f', 'framemd5', '-']);
  expect([input, map, r.code, r.stderr]).toEqual([input, map, 0, '']);
  const lines = r.stdout.trim().split('\n');
  return {
    // #software names the libavformat build, #stream# the column titles: not about the stream.
    header: lines.filter((l) => l.startsWith('#') && !l.startsWith('#software') && !l.startsWith('#stream#')),
    rows: lines.filter((l) => !l.startsWith('#')).map((l) => l.split(',').map((c) => c.trim())),
  };
}

const sources = new Map<string, Promise<FrameMd5>>();
/** The source file decoded directly (its only stream). */
const sourceFrames = (file: string): Promise<FrameMd5> => {
  let s = sources.get(file);
  if (s === undefined) sources.set(file, (s = framemd5(media(file), '0:0')));
  return s;
};

/**
 * Decodes one stream through the origin and compares with the source: the same stream header,
 * `frames` frames (all of the source, or its first ones for a sub-clip), the same size and
 * checksum per frame, timestamps strictly increasing. Timestamps are not compared: the origin
 * moves the whole presentation by the AAC priming (−213333 at 10 MHz) so that it starts at 0.
 */
async function expectSourceFrames(url: string, map: string, file: string, frames: number): Promise<void> {
  const [mine, source] = await Promise.all([framemd5(url, map), sourceFrames(file)]);
  expect(source.rows.length).toBe(factsOf(file).packets);
  expect(mine.header).toEqual(source.header);
  expect(mine.rows.length).toBe(frames);
  const sizeAndHash = (rows: string[][]): string[] => rows.map((r) => `${r[4]} ${r[5]}`);
  expect(sizeAndHash(mine.rows)).toEqual(sizeAndHash(source.rows.slice(0, frames)));
  const pts = mine.rows.map((r) => Number(r[2]));
  expect(pts.every((p, i) => i === 0 || p > pts[i - 1]!)).toBe(true);
}

const base = (): string => `${origin.url}/p.ism`;
const AV = PLAYABLE.filter((f) => !f.startsWith('text_'));
const VIDEOS = AV.filter((f) => factsOf(f).kind === 'video');

// ---------------------------------------------------------------------------------------------
// ffprobe

test('ffprobe reads the MPD: every representation, with its source codec, size, rate and channels', async () => {
  const streams = await probe(`${base()}/.mpd`);
  expect(streams.map((s) => s.tags?.['id']).sort()).toEqual(PLAYABLE.map(key).sort());
  for (const file of AV) {
    const s = streams.find((x) => x.tags?.['id'] === key(file))!;
    expect([file, pick(s, expectedStream(file))]).toEqual([file, expectedStream(file)]);
  }
});

test('ffprobe reads the HLS master: a video stream per variant and every audio rendition', async () => {
  const streams = await probe(`${base()}/.m3u8?hls_fmp4=true`);
  const video = streams.filter((s) => s.codec_type === 'video').map((s) => pick(s, expectedStream(VIDEOS[0]!)));
  expect(video).toEqual(expect.arrayContaining(VIDEOS.map(expectedStream)));
  expect(video.length).toBe(VIDEOS.length);
  const audio = streams.filter((s) => s.codec_type === 'audio');
  const audioFiles = AV.filter((f) => factsOf(f).kind === 'audio');
  expect(audio.map((s) => s.tags?.['comment']).sort()).toEqual(audioFiles.map((f) => key(f).split('=')[0]).sort());
  for (const s of audio) expect(pick(s, expectedStream(audioFiles[0]!))).toEqual(expectedStream(audioFiles[0]!));
});

test('ffprobe reads the filtered MPD: only the H.264 and AAC representations', async () => {
  const streams = await probe(`${base()}/.mpd?filter=FourCC%3D%3D%22AVC1%22%7C%7CFourCC%3D%3D%22AACL%22`);
  expect(streams.map((s) => s.tags?.['id']).sort()).toEqual(AV.map(key).sort());
});

// ---------------------------------------------------------------------------------------------
// ffmpeg decodes every frame

/** The ffprobe index of a stream of a manifest, found by a predicate. */
async function streamIndex(url: string, which: (s: ProbedStream) => boolean): Promise<number> {
  const found = (await probe(url)).filter(which);
  expect(found.length).toBe(1);
  return found[0]!.index;
}

describe('DASH: ffmpeg decodes every frame of a representation, as the source decodes', () => {
  test.each(['video_baseline_400k.ismv', 'video_high_1600k.ismv', 'audio_eng_64k.isma', 'audio_nld_128k.isma'])(
    '%s',
    async (file) => {
      const url = `${base()}/.mpd`;
      const index = await streamIndex(url, (s) => s.tags?.['id'] === key(file));
      await expectSourceFrames(url, `0:${index}`, file, factsOf(file).packets);
    },
  );
});

describe('HLS: ffmpeg decodes every frame, as the source decodes', () => {
  const master = (): string => `${base()}/.m3u8?hls_fmp4=true`;

  test('video_main_900k.ismv, mapped from the master by its resolution', async () => {
    const f = factsOf('video_main_900k.ismv');
    const index = await streamIndex(
      master(),
      (s) => s.codec_type === 'video' && s.width === f.width && s.height === f.height,
    );
    await expectSourceFrames(master(), `0:${index}`, f.file, f.packets);
  });

  test('audio_nld_128k.isma, mapped from the master by its language (a rendition the variants reference)', async () => {
    const index = await streamIndex(master(), (s) => s.codec_type === 'audio' && s.tags?.['language'] === 'nl');
    await expectSourceFrames(master(), `0:${index}`, 'audio_nld_128k.isma', factsOf('audio_nld_128k.isma').packets);
  });

  // ffmpeg opens no rendition that no variant references (all variants take the highest audio
  // group), so the 64 kbit/s rendition is read from its media playlist.
  test.each(['audio_eng_64k.isma', 'video_high_1600k.ismv'])('%s, from its media playlist', async (file) => {
    await expectSourceFrames(`${base()}/p-${key(file)}.m3u8?hls_fmp4=true`, '0:0', file, factsOf(file).packets);
  });
});

describe('sub-clip t=0-0:00:06: ffmpeg decodes exactly the first 3 fragments', () => {
  const firstThree = (file: string): number =>
    factsOf(file)
      .box.fragments.slice(0, 3)
      .reduce((s, f) => s + f.samples, 0);

  test('DASH video: 3 × 48 frames', async () => {
    const url = `${base()}/.mpd?t=0-0:00:06`;
    const file = 'video_baseline_400k.ismv';
    expect(firstThree(file)).toBe(144);
    const index = await streamIndex(url, (s) => s.tags?.['id'] === key(file));
    await expectSourceFrames(url, `0:${index}`, file, firstThree(file));
  });

  test('HLS audio: 3 × 94 AAC frames', async () => {
    const file = 'audio_eng_128k.isma';
    expect(firstThree(file)).toBe(282);
    await expectSourceFrames(`${base()}/p-${key(file)}.m3u8?hls_fmp4=true&t=0-0:00:06`, '0:0', file, firstThree(file));
  });
});

// ---------------------------------------------------------------------------------------------
// The DASH schema

test('every MPD of these requests validates against DASH-MPD.xsd', async () => {
  const filter = 'filter=FourCC%3D%3D%22AVC1%22%7C%7CFourCC%3D%3D%22AACL%22';
  const queries = [
    '',
    `?${filter}`,
    '?t=0-0:00:06',
    '?vbegin=0:00:04',
    '?mpd_segment_template=number',
    '?presentation_name=foo',
    '?presentation_name=foo&suppress_query_parameters=true',
    `?${filter}&t=0-0:00:06&mpd_segment_template=number&presentation_name=foo`,
  ];
  const results = [];
  for (const url of ['/p.ism/.mpd', '/p.ism/virtual/path/p.mpd']) {
    for (const q of queries) {
      const r = await get(origin.url, url + q);
      expect([url + q, r.status, r.headers['content-type']]).toEqual([url + q, 200, 'application/dash+xml']);
      const v = validateMpd(r.text);
      results.push([url + q, v.ok ? 'valid' : v.output]);
    }
  }
  expect(results).toEqual(results.map(([u]) => [u, 'valid']));
});
