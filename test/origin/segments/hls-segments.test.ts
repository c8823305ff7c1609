// MPEG-TS, packed-audio and I-frame segments from a real origin on loopback, judged by ffmpeg
// and by the tests' own TS checker (ts-check.ts):
// - every rendition (each video alone, each audio + video multiplexed), read as a whole through
//   its media playlist, and each segment on its own, decodes with `-v warning` printing nothing,
//   with the source's frame counts (fixtures/media/facts.json, or ffprobe on the source);
// - per segment, the video frames of its fragments and the audio frames the cut rule gives it
//   (video[i] ≤ t < video[i+1] on the source timeline, the first and last segments open ended),
//   computed here from the facts;
// - the segments of a rendition form one valid transport stream (counters, PCR, PTS/DTS), also
//   for a sub-clip and for other segment lengths, and whatever order they are fetched in;
// - timestamps: TS time = fMP4 time of the same origin at 90 kHz + 10 s (packet by packet);
// - AC-3 and E-AC-3 in TS and packed; packed AAC with its ID3 timestamp;
// - bad URLs answer the right status and X-Origin-Error code.

import { spawn } from 'node:child_process';
import { promises as fs, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { boxes } from '../../helpers/box-walk';
import { media, tempDir } from '../../helpers/fixtures';
import { loadPresentation, viewOf } from '../../helpers/presentations';
import { Fetched, get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { adtsFrames, checkTs } from './mpegts/ts-check';
import { segmentsOf as segmentObjects } from '../../helpers/segments';

// ---------------------------------------------------------------------------------------------
// Fixtures and what is known about them without the origin

interface FileFacts {
  file: string;
  kind: string;
  packets: number;
  first_pts_seconds: number;
  sample_rate?: string;
  codec: string;
  box: { timescale: number; fragments: Array<{ tfxd_time: string; samples: number }> };
}
const FACTS = JSON.parse(readFileSync(media('facts.json'), 'utf8')) as FileFacts[];
const fact = (file: string): FileFacts => FACTS.find((f) => f.file === file)!;

const PRESENTATIONS: Record<string, string[]> = {
  p: [
    'video_baseline_400k.ismv',
    'video_main_900k.ismv',
    'video_high_1600k.ismv',
    'audio_eng_64k.isma',
    'audio_eng_128k.isma',
    'audio_nld_128k.isma',
    'text_eng.ismt',
  ],
  v: ['video_sar_500k.ismv', 'video_2997_600k.ismv', 'video_interlaced_800k.ismv', 'audio_nld_128k.isma'],
  d: ['video_baseline_400k.ismv', 'audio_ac3_384k.isma', 'audio_eac3_256k.isma'],
  m: ['muxed_av.ismv'],
};

interface Rendition {
  pres: string;
  video: string;
  audio?: string;
}

const RENDITIONS: Rendition[] = Object.entries(PRESENTATIONS).flatMap(([pres, files]) => {
  const videos = files.filter((f) => f.endsWith('.ismv'));
  const audios = files.filter((f) => f.endsWith('.isma') || f === 'muxed_av.ismv');
  return videos.flatMap((video) => [{ pres, video }, ...audios.map((audio) => ({ pres, video, audio }))]);
});

const AUDIO_TRACKS: Array<{ pres: string; file: string }> = Object.entries(PRESENTATIONS).flatMap(([pres, files]) =>
  files.filter((f) => f.endsWith('.isma') || f === 'muxed_av.ismv').map((file) => ({ pres, file })),
);

let origin: TestOrigin;
const dir = tempDir('hls-segments-');
/** `<trackName>=<bitrate>` of (presentation, file, type), from the .ism the packager wrote. */
const keys = new Map<string, string>();
/** Fragment ranges of the HLS view segments of each track (first, count). */
const segmentsOf = new Map<string, Array<{ first: number; count: number }>>();

type TrackType = 'video' | 'audio' | 'textstream';
const trackId = (pres: string, file: string, type: TrackType): string => `${pres}/${file}/${type}`;
const keyOf = (pres: string, file: string, type: TrackType): string => keys.get(trackId(pres, file, type))!;
const renditionKey = (r: Rendition): string =>
  [r.audio !== undefined ? keyOf(r.pres, r.audio, 'audio') : undefined, keyOf(r.pres, r.video, 'video')]
    .filter((k) => k !== undefined)
    .join('-');
const nameOf = (r: Rendition): string => `${r.pres}:${r.audio !== undefined ? `${r.audio}+` : ''}${r.video}`;

beforeAll(async () => {
  origin = await startTestOrigin(PRESENTATIONS);
  for (const pres of Object.keys(PRESENTATIONS)) {
    const ism = path.join(origin.root, `${pres}.ism`);
    const text = await fs.readFile(ism, 'utf8');
    for (const m of text.matchAll(/<(video|audio|textstream)\b([^>]*)>([\s\S]*?)<\/\1>/g)) {
      const file = path.basename(/\bsrc="([^"]+)"/.exec(m[2]!)![1]!);
      const bitrate = /\bsystemBitrate="(\d+)"/.exec(m[2]!)![1]!;
      const name = /<param name="trackName" value="([^"]+)"/.exec(m[3]!)![1]!;
      keys.set(`${pres}/${file}/${m[1]}`, `${name}=${bitrate}`);
    }
    const view = viewOf(await loadPresentation(ism), 'hls');
    for (const t of view.tracks) {
      const type = t.track.properties.type;
      segmentsOf.set(
        `${pres}/${path.basename(t.track.src)}/${type}`,
        segmentObjects(t).map((s) => ({ first: s.first, count: s.count })),
      );
    }
  }
}, 120_000);

afterAll(async () => {
  await origin.server.close();
  rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Tools

/** Runs a tool without blocking the event loop: the origin answering it lives in this process. */
function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

interface Probed {
  stderr: string;
  frames: Record<string, number>;
  codecs: Record<string, string>;
}

/** Decodes every frame (`-count_frames`) and reports per stream type; stderr at `-v warning`. */
async function probeFrames(input: string, options: string[] = []): Promise<Probed> {
  const r = await run('ffprobe', [
    '-v',
    'warning',
    ...options,
    '-count_frames',
    '-show_entries',
    'stream=codec_type,codec_name,nb_read_frames',
    '-of',
    'json',
    input,
  ]);
  expect([input, r.code]).toEqual([input, 0]);
  const streams = (
    JSON.parse(r.stdout) as { streams: Array<{ codec_type: string; codec_name: string; nb_read_frames: string }> }
  ).streams;
  const frames: Record<string, number> = {};
  const codecs: Record<string, string> = {};
  for (const s of streams) {
    frames[s.codec_type] = (frames[s.codec_type] ?? 0) + Number(s.nb_read_frames);
    codecs[s.codec_type] = s.codec_name;
  }
  return { stderr: r.stderr, frames, codecs };
}

/** Packet timestamps per stream type, in the stream's own time base. */
async function packetTimes(file: string): Promise<Record<string, { timeBase: [number, number]; pts: bigint[] }>> {
  const r = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'stream=index,codec_type,time_base:packet=stream_index,pts',
    '-of',
    'json',
    file,
  ]);
  expect(r.stderr).toBe('');
  const j = JSON.parse(r.stdout) as {
    streams: Array<{ index: number; codec_type: string; time_base: string }>;
    packets: Array<{ stream_index: number; pts: number }>;
  };
  const out: Record<string, { timeBase: [number, number]; pts: bigint[] }> = {};
  for (const s of j.streams) {
    const [num, den] = s.time_base.split('/').map(Number) as [number, number];
    out[s.codec_type] = {
      timeBase: [num, den],
      pts: j.packets.filter((p) => p.stream_index === s.index).map((p) => BigInt(p.pts)),
    };
  }
  return out;
}

/** Runs tasks two at a time (the machine is shared). */
async function pool<T>(tasks: Array<() => Promise<T>>, width = 2): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

async function fetchOk(url: string, contentType: string): Promise<Buffer> {
  const r = await get(origin.url, url);
  expect([url, r.status, r.headers['content-type']]).toEqual([url, 200, contentType]);
  return r.body;
}

const sourcePackets = new Map<string, Promise<Record<string, number>>>();
/** Frames per stream type of a source file: the facts, or ffprobe for the muxed fixture (no facts). */
function sourceFrames(file: string): Promise<Record<string, number>> {
  let p = sourcePackets.get(file);
  if (p === undefined) {
    const f = FACTS.find((x) => x.file === file);
    p = f !== undefined ? Promise.resolve({ [f.kind]: f.packets }) : probeFrames(media(file)).then((x) => x.frames);
    sourcePackets.set(file, p);
  }
  return p;
}

/**
 * Audio frames per segment by the cut rule, from the facts: frame k of an audio file starts at
 * its first fragment's tfxd time + k·frameSamples/rate seconds (AAC 1024, AC-3/E-AC-3 1536
 * samples); video segment i starts at its first fragment's tfxd time. First segment open below,
 * last open above. (No frame of these fixtures falls within rounding of a boundary.)
 */
function expectedAudioPerSegment(
  audio: string,
  video: string,
  segments: Array<{ first: number; count: number }>,
): number[] {
  const a = fact(audio);
  const v = fact(video);
  const perFrame = a.codec === 'aac' ? 1024 : 1536;
  const rate = Number(a.sample_rate);
  const starts = segments.map((s) => Number(v.box.fragments[s.first]!.tfxd_time) / v.box.timescale);
  const counts = segments.map(() => 0);
  for (let k = 0; k < a.packets; k++) {
    const t = Number(a.box.fragments[0]!.tfxd_time) / a.box.timescale + (k * perFrame) / rate;
    let i = 0;
    while (i + 1 < starts.length && t >= starts[i + 1]!) i++;
    counts[i]!++;
  }
  return counts;
}

function expectedVideoPerSegment(video: string, segments: Array<{ first: number; count: number }>): number[] {
  const f = fact(video).box.fragments;
  return segments.map((s) => f.slice(s.first, s.first + s.count).reduce((n, x) => n + x.samples, 0));
}

/** moov/trak/mdia/mdhd timescale of an init segment (§8.4.2). */
function initTimescale(init: Buffer): bigint {
  const find = (b: Buffer, type: string) => boxes(b).find((x) => x.type === type)!.body;
  const mdhd = find(find(find(find(init, 'moov'), 'trak'), 'mdia'), 'mdhd');
  return BigInt(mdhd[0] === 1 ? mdhd.readUInt32BE(20) : mdhd.readUInt32BE(12));
}

/**
 * The composition time of every sample of fMP4 media segments, in decode order, read with the
 * tests' own box walk (ISO/IEC 14496-12 §8.8.7 tfhd, §8.8.8 trun, §8.8.12 tfdt, §8.8.3 trex):
 * tfdt + the durations before the sample + its composition offset (signed in trun version 1).
 */
function compositionTimes(init: Buffer, segments: Buffer[]): bigint[] {
  const find = (b: Buffer, type: string) => boxes(b).find((x) => x.type === type)?.body;
  const trex = find(find(init, 'moov')!, 'mvex');
  const trexDuration = trex !== undefined ? find(trex, 'trex')!.readUInt32BE(12) : 0;
  const out: bigint[] = [];
  for (const seg of segments) {
    for (const moof of boxes(seg).filter((b) => b.type === 'moof')) {
      for (const traf of boxes(moof.body).filter((b) => b.type === 'traf')) {
        const tfhd = find(traf.body, 'tfhd')!;
        const tfhdFlags = tfhd.readUInt32BE(0) & 0xffffff;
        let at = 8 + (tfhdFlags & 1 ? 8 : 0) + (tfhdFlags & 2 ? 4 : 0);
        const defaultDuration = tfhdFlags & 8 ? tfhd.readUInt32BE(at) : trexDuration;
        const tfdt = find(traf.body, 'tfdt')!;
        let time = tfdt[0] === 1 ? tfdt.readBigUInt64BE(4) : BigInt(tfdt.readUInt32BE(4));
        for (const trun of boxes(traf.body).filter((b) => b.type === 'trun')) {
          const version = trun.body[0]!;
          const flags = trun.body.readUInt32BE(0) & 0xffffff;
          const count = trun.body.readUInt32BE(4);
          at = 8 + (flags & 1 ? 4 : 0) + (flags & 4 ? 4 : 0);
          for (let i = 0; i < count; i++) {
            let duration = defaultDuration;
            let offset = 0;
            if (flags & 0x100) {
              duration = trun.body.readUInt32BE(at);
              at += 4;
            }
            if (flags & 0x200) at += 4;
            if (flags & 0x400) at += 4;
            if (flags & 0x800) {
              offset = version === 1 ? trun.body.readInt32BE(at) : trun.body.readUInt32BE(at);
              at += 4;
            }
            out.push(time + BigInt(offset));
            time += BigInt(duration);
          }
        }
      }
    }
  }
  return out;
}

const tsUrl = (r: Rendition, n: number, query = ''): string =>
  `/${r.pres}.ism/${r.pres}-${renditionKey(r)}-${n}.ts${query}`;

async function renditionSegments(
  r: Rendition,
  query = '',
  order: 'forward' | 'reverse' = 'forward',
  count?: number,
): Promise<Buffer[]> {
  const n = count ?? segmentsOf.get(trackId(r.pres, r.video, 'video'))!.length;
  const numbers = Array.from({ length: n }, (_, i) => i + 1);
  const out: Buffer[] = new Array(n);
  for (const i of order === 'forward' ? numbers : [...numbers].reverse())
    out[i - 1] = await fetchOk(tsUrl(r, i, query), 'video/mp2t');
  return out;
}

// ---------------------------------------------------------------------------------------------
// MPEG-TS renditions

describe('MPEG-TS renditions', () => {
  test('the renditions cover every video alone and every audio + video pair', () => {
    expect(RENDITIONS.length).toBe(3 * 4 + 3 * 2 + 1 * 3 + 1 * 2);
  });

  test.each(RENDITIONS.map((r) => [nameOf(r), r] as const))(
    '%s: the playlist read as one stream, and every segment alone',
    async (_, r) => {
      const expected = await sourceFrames(r.video);
      const audioExpected = r.audio !== undefined ? await sourceFrames(r.audio) : undefined;
      // Whole, through the media playlist.
      const whole = await probeFrames(`${origin.url}/${r.pres}.ism/${r.pres}-${renditionKey(r)}.m3u8`);
      expect(whole.stderr).toBe('');
      expect(whole.codecs['video']).toBe('h264');
      expect(whole.frames['video']).toBe(expected['video']);
      expect(whole.frames['audio']).toBe(audioExpected?.['audio']);

      // Each segment alone: the checker over the sequence, ffmpeg on each.
      const segments = await renditionSegments(r);
      const check = checkTs(segments);
      expect(check.problems).toEqual([]);
      expect(check.streams.length).toBe(r.audio !== undefined ? 2 : 1);
      const files = segments.map((b, i) => {
        const file = path.join(dir, `${r.pres}-${renditionKey(r)}-${i + 1}.ts`);
        writeFileSync(file, b);
        return file;
      });
      const probed = await pool(files.map((f) => () => probeFrames(f)));
      probed.forEach((p, i) => expect([i + 1, p.stderr]).toEqual([i + 1, '']));
      const videoPer = probed.map((p) => p.frames['video'] ?? 0);
      const audioPer = probed.map((p) => p.frames['audio'] ?? 0);
      expect(videoPer.reduce((a, b) => a + b, 0)).toBe(expected['video']);
      if (r.audio !== undefined) expect(audioPer.reduce((a, b) => a + b, 0)).toBe(audioExpected!['audio']);
      const ranges = segmentsOf.get(trackId(r.pres, r.video, 'video'))!;
      if (r.video !== 'muxed_av.ismv') {
        expect(videoPer).toEqual(expectedVideoPerSegment(r.video, ranges));
        if (r.audio !== undefined) expect(audioPer).toEqual(expectedAudioPerSegment(r.audio, r.video, ranges));
      }
    },
  );

  test.each([
    ['p', 'video_main_900k.ismv', 'audio_eng_64k.isma'],
    ['d', 'video_baseline_400k.ismv', 'audio_ac3_384k.isma'],
    ['v', 'video_2997_600k.ismv', 'audio_nld_128k.isma'],
    ['v', 'video_interlaced_800k.ismv', 'audio_nld_128k.isma'],
    ['m', 'muxed_av.ismv', 'muxed_av.ismv'],
  ])('%s %s + %s: every frame presents at its fMP4 time at 90 kHz + 10 s', async (pres, video, audio) => {
    const r: Rendition = { pres, video, audio };
    const tsFile = path.join(dir, `times-${pres}.ts`);
    writeFileSync(tsFile, Buffer.concat(await renditionSegments(r)));
    const ts = await packetTimes(tsFile);
    for (const [type, file] of [
      ['video', video],
      ['audio', audio],
    ] as const) {
      const key = keyOf(pres, file, type);
      const count = segmentsOf.get(trackId(pres, file, type))!.length;
      const init = await fetchOk(`/${pres}.ism/hls/${pres}-${key}.m4s`, 'video/mp4');
      const segments: Buffer[] = [];
      for (let n = 1; n <= count; n++)
        segments.push(await fetchOk(`/${pres}.ism/hls/${pres}-${key}-${n}.m4s`, 'video/mp4'));
      const timescale = initTimescale(init);
      // Composition times (§8.8.8: decode time + signed offset), halves up to 90 kHz, + 10 s.
      const expected = compositionTimes(init, segments).map(
        (t) => (2n * t * 90000n + timescale) / (2n * timescale) + 900000n,
      );
      expect(ts[type]!.timeBase).toEqual([1, 90000]);
      expect(ts[type]!.pts).toEqual(expected);
    }
  });

  test('a sub-clip and other segment lengths stay one valid stream, fetched in any order', async () => {
    const r: Rendition = { pres: 'p', video: 'video_high_1600k.ismv', audio: 'audio_nld_128k.isma' };
    const cold = await startTestOrigin({ p: PRESENTATIONS['p']! });
    try {
      for (const query of [
        '?t=2-8',
        '?vbegin=0:00:04',
        '?hls_minimum_fragment_length=0',
        '?hls_minimum_fragment_length=6',
        '?hls_minimum_fragment_length=3&t=3',
      ]) {
        const playlist = (await get(origin.url, `/p.ism/p-${renditionKey(r)}.m3u8${query}`)).text;
        // A clip's segments keep the whole presentation's numbers (vbegin=0:00:04 starts at 2).
        const urls = playlist
          .split('\n')
          .filter((l) => /\.ts(\?|$)/.test(l))
          .map((l) => `/p.ism/${l}`);
        expect([query, urls.length > 0]).toEqual([query, true]);
        const forward: Buffer[] = [];
        for (const u of urls) forward.push(await fetchOk(u, 'video/mp2t'));
        const check = checkTs(forward);
        expect([query, check.problems]).toEqual([query, []]);
        // Another origin (cold for the first query) answering in reverse order gives the same bytes.
        for (let i = urls.length - 1; i >= 0; i--) {
          const again = await get(cold.url, urls[i]!);
          expect([query, urls[i], again.body.equals(forward[i]!)]).toEqual([query, urls[i], true]);
        }
        const file = path.join(dir, `clip.ts`);
        writeFileSync(file, Buffer.concat(forward));
        const probed = await probeFrames(file);
        expect([query, probed.stderr]).toEqual([query, '']);
      }
    } finally {
      await cold.server.close();
    }
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Packed audio

/** moof/traf/tfdt (v1: 64-bit) and the trun sample counts of an fMP4 media segment. */
function fmp4Facts(segment: Buffer): { tfdt: bigint; samples: number } {
  let tfdt: bigint | undefined;
  let samples = 0;
  for (const moof of boxes(segment).filter((b) => b.type === 'moof')) {
    for (const traf of boxes(moof.body).filter((b) => b.type === 'traf')) {
      for (const c of boxes(traf.body)) {
        if (c.type === 'tfdt' && tfdt === undefined)
          tfdt = c.body[0] === 1 ? c.body.readBigUInt64BE(4) : BigInt(c.body.readUInt32BE(4));
        if (c.type === 'trun') samples += c.body.readUInt32BE(4);
      }
    }
  }
  return { tfdt: tfdt!, samples };
}

const PACKED_TYPES: Record<string, [string, string]> = {
  aac: ['aac', 'audio/aac'],
  ac3: ['ac3', 'audio/ac3'],
  eac3: ['ec3', 'audio/eac3'],
};

describe('packed audio', () => {
  test.each(AUDIO_TRACKS.map((a) => [`${a.pres}:${a.file}`, a] as const))(
    '%s: playlist and segments decode; ID3 timestamps are the fMP4 times',
    async (_, a) => {
      const key = keyOf(a.pres, a.file, 'audio');
      const codec = a.file === 'muxed_av.ismv' ? 'aac' : fact(a.file).codec;
      const [ext, contentType] = PACKED_TYPES[codec]!;
      const expected = (await sourceFrames(a.file))['audio'];
      // ffmpeg's HLS reader checks that a segment's extension is one its detected demuxer lists:
      // its raw E-AC-3 demuxer lists `eac3`, not the `.ec3` of our URLs (extension_picky).
      const whole = await probeFrames(
        `${origin.url}/${a.pres}.ism/${a.pres}-${key}.m3u8`,
        ext === 'ec3' ? ['-extension_picky', '0'] : [],
      );
      expect(whole.stderr).toBe('');
      expect(whole.frames['audio']).toBe(expected);
      expect(whole.codecs['audio']).toBe(codec);

      const count = segmentsOf.get(trackId(a.pres, a.file, 'audio'))!.length;
      const timescale = initTimescale(await fetchOk(`/${a.pres}.ism/hls/${a.pres}-${key}.m4s`, 'video/mp4'));
      let total = 0;
      for (let n = 1; n <= count; n++) {
        const body = await fetchOk(`/${a.pres}.ism/${a.pres}-${key}-${n}.${ext}`, contentType);
        const fmp4 = fmp4Facts(await fetchOk(`/${a.pres}.ism/hls/${a.pres}-${key}-${n}.m4s`, 'video/mp4'));
        // ID3v2.4 tag with the PRIV frame (RFC 8216 §3.4).
        expect(body.subarray(0, 4).toString('latin1')).toBe('ID3\x04');
        const tagSize = 10 + ((body[6]! << 21) | (body[7]! << 14) | (body[8]! << 7) | body[9]!);
        const owner = 'com.apple.streaming.transportStreamTimestamp\0';
        expect(body.subarray(20, 20 + owner.length).toString('latin1')).toBe(owner);
        const pts = body.readBigUInt64BE(20 + owner.length);
        expect([n, pts]).toEqual([n, (2n * fmp4.tfdt * 90000n + timescale) / (2n * timescale) + 900000n]);
        const frames = body.subarray(tagSize);
        if (codec === 'aac') {
          const parsed = adtsFrames(frames);
          expect(parsed.problems).toEqual([]);
          expect([n, parsed.frames.length]).toEqual([n, fmp4.samples]);
        } else {
          expect(frames.readUInt16BE(0)).toBe(0x0b77); // AC-3 / E-AC-3 syncword
        }
        const file = path.join(dir, `packed-${a.pres}-${n}.${ext}`);
        writeFileSync(file, body);
        const probed = await probeFrames(file);
        // A raw elementary stream has no duration: ffprobe says so, and nothing else.
        expect(
          probed.stderr.split('\n').filter((l) => l !== '' && !/Estimating duration from bitrate/.test(l)),
        ).toEqual([]);
        expect([n, probed.frames['audio']]).toEqual([n, fmp4.samples]);
        total += probed.frames['audio']!;
      }
      expect(total).toBe(expected);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// I-frame segments

describe('I-frame segments', () => {
  test.each(['video_baseline_400k.ismv', 'video_main_900k.ismv', 'video_high_1600k.ismv'])(
    '%s: each keyframe alone, as TS and as fMP4',
    async (video) => {
      const key = keyOf('p', video, 'video');
      const v4 = '?hls_client_manifest_version=4';
      const fragments = fact(video).box.fragments.length;
      // Every URI the I-frame playlists write (relative to keyframes/) answers, TS and fMP4.
      for (const query of [v4, `${v4}&hls_fmp4=true`]) {
        const playlist = await get(origin.url, `/p.ism/keyframes/p-${key}.m3u8${query}`);
        expect([query, playlist.status]).toEqual([query, 200]);
        const uris = [...playlist.text.matchAll(/^([^#\n].*)$/gm), ...playlist.text.matchAll(/URI="([^"]+)"/g)].map(
          (m) => m[1]!,
        );
        expect(uris.length).toBe(fragments + (query.includes('fmp4') ? 1 : 0));
        for (const uri of uris) {
          const url = new URL(uri, `${origin.url}/p.ism/keyframes/`);
          const r = await get(origin.url, url.pathname + url.search);
          expect([uri, r.status, r.headers['content-type']]).toEqual([
            uri,
            200,
            uri.includes('.ts') ? 'video/mp2t' : 'video/mp4',
          ]);
        }
      }
      // The video-only rendition's PTS values: each keyframe must be one of them.
      const stream = checkTs(await renditionSegments({ pres: 'p', video }));
      const ptsOf = new Set(stream.pes.map((p) => p.pts));
      const init = await fetchOk(`/p.ism/hls/p-${key}.m4s`, 'video/mp4');
      for (let n = 1; n <= fragments; n++) {
        const ts = await fetchOk(`/p.ism/keyframes/p-${key}-${n}.ts${v4}`, 'video/mp2t');
        const check = checkTs([ts]);
        expect(check.problems).toEqual([]);
        expect(check.pes.length).toBe(1);
        expect(ptsOf.has(check.pes[0]!.pts)).toBe(true);
        const tsFile = path.join(dir, `key-${n}.ts`);
        writeFileSync(tsFile, ts);
        const probedTs = await probeFrames(tsFile);
        expect([n, probedTs.stderr, probedTs.frames]).toEqual([n, '', { video: 1 }]);
        const m4s = await fetchOk(`/p.ism/keyframes/p-${key}-${n}.m4s${v4}`, 'video/mp4');
        const mp4File = path.join(dir, `key-${n}.mp4`);
        writeFileSync(mp4File, Buffer.concat([init, m4s]));
        const probedMp4 = await probeFrames(mp4File);
        expect([n, probedMp4.stderr, probedMp4.frames]).toEqual([n, '', { video: 1 }]);
      }
      for (const n of [0, fragments + 1]) {
        const r = await get(origin.url, `/p.ism/keyframes/p-${key}-${n}.ts${v4}`);
        expect([n, r.status, r.headers['x-origin-error']]).toEqual([n, 404, 'unknown-time']);
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------
// WebVTT and the HTTP side

describe('WebVTT segments', () => {
  test('text/vtt with the TS time map, or 0 with fMP4 segments', async () => {
    const key = keyOf('p', 'text_eng.ismt', 'textstream');
    const ts = await fetchOk(`/p.ism/p-${key}-1.webvtt`, 'text/vtt');
    expect(ts.toString('utf8')).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n/);
    const fmp4 = await fetchOk(`/p.ism/p-${key}-1.webvtt?hls_fmp4=true`, 'text/vtt');
    expect(fmp4.toString('utf8')).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n/);
    const cues = ts
      .toString('utf8')
      .split('\n')
      .filter((l) => l.includes('-->'));
    expect(cues.length).toBeGreaterThan(0);
  });
});

describe('HTTP', () => {
  test('HEAD and Range on a generated segment', async () => {
    const r: Rendition = { pres: 'p', video: 'video_baseline_400k.ismv', audio: 'audio_eng_64k.isma' };
    const full = await fetchOk(tsUrl(r, 2), 'video/mp2t');
    const head = await get(origin.url, tsUrl(r, 2), {}, 'HEAD');
    expect([head.status, head.headers['content-length'], head.body.byteLength]).toEqual([
      200,
      String(full.byteLength),
      0,
    ]);
    expect(head.headers['cache-control']).toBe('public, max-age=86400');
    const part = await get(origin.url, tsUrl(r, 2), { range: 'bytes=188-375' });
    expect(part.status).toBe(206);
    expect(part.body.equals(full.subarray(188, 376))).toBe(true);
    const again = await get(origin.url, tsUrl(r, 2), { 'if-none-match': String(head.headers['etag']) });
    expect(again.status).toBe(304);
  });

  test('bad URLs: status and X-Origin-Error', async () => {
    const v = keyOf('p', 'video_baseline_400k.ismv', 'video');
    const a = keyOf('p', 'audio_eng_64k.isma', 'audio');
    const t = keyOf('p', 'text_eng.ismt', 'textstream');
    const ac3 = keyOf('d', 'audio_ac3_384k.isma', 'audio');
    const cases: Array<[string, number, string]> = [
      [`/p.ism/p-${a}-1.ts`, 404, 'unknown-url'], // audio alone is packed audio
      [`/p.ism/p-${v}-1.aac`, 404, 'unknown-url'], // video is TS
      [`/p.ism/p-${a}-${v}-1.aac`, 404, 'unknown-url'],
      [`/d.ism/d-${ac3}-1.aac`, 404, 'unknown-url'], // AC-3 is .ac3
      [`/d.ism/d-${ac3}-1.ec3`, 404, 'unknown-url'],
      [`/p.ism/p-${t}-1.ts`, 404, 'unknown-url'],
      [`/p.ism/p-${a}-1.webvtt`, 404, 'unknown-url'],
      [`/p.ism/p-${a}-${v}-1.ts?hls_fmp4=true`, 404, 'unknown-track'], // fMP4 does not multiplex
      [`/p.ism/p-${v}-1.ts?hls_fmp4=true`, 404, 'unknown-url'], // fMP4 segments are hls/…m4s
      [`/p.ism/p-${a}-${v}-0.ts`, 404, 'unknown-time'],
      [`/p.ism/p-${a}-${v}-4.ts`, 404, 'unknown-time'],
      [`/p.ism/p-${a}-99.aac`, 404, 'unknown-time'],
      [`/p.ism/p-${t}-0.webvtt`, 404, 'unknown-time'],
      [`/p.ism/p-${a}-${v}-12345678901.ts`, 404, 'unknown-url'], // more digits than a segment number has
      [`/p.ism/p-video_eng=1-1.ts`, 404, 'unknown-track'],
      [`/p.ism/garbage-1.ts`, 404, 'unknown-track'],
      [`/p.ism/-1.ts`, 404, 'unknown-url'],
      [`/p.ism/p-${v}.ts`, 404, 'unknown-url'],
      [`/p.ism/p-${v}-1.ts?t=50`, 404, 'empty-clip'],
      [`/p.ism/p-${v}-1.ts?hls_minimum_fragment_length=x`, 400, 'bad-option'],
      [`/nope.ism/nope-${v}-1.ts`, 404, 'unknown-presentation'],
      [`/p.ism/keyframes/p-${a}.m3u8?hls_client_manifest_version=4`, 404, 'unknown-track'],
      [`/p.ism/keyframes/p-${a}-${v}.m3u8?hls_client_manifest_version=4`, 404, 'unknown-track'],
      [`/p.ism/keyframes/p-${v}.m3u8`, 404, 'unknown-url'], // version 1 has no I-frame playlists
      [`/p.ism/keyframes/p-${a}-1.ts`, 404, 'unknown-track'],
      [`/p.ism/keyframes/p-${a}-${v}-1.ts`, 404, 'unknown-track'],
      [`/p.ism/keyframes/nothing-1.m4s`, 404, 'unknown-track'],
    ];
    for (const [url, status, code] of cases) {
      const r: Fetched = await get(origin.url, url);
      expect([url, r.status, r.headers['x-origin-error']]).toEqual([url, status, code]);
      expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
  });
});

describe('corrupt media', () => {
  test('a broken NAL length is a 500 corrupt-media whose log names the file and offset', async () => {
    const damaged = await startTestOrigin({ x: ['video_baseline_400k.ismv'] });
    try {
      // Point the .ism at a copy whose first sample's NAL length runs past the sample.
      const copy = path.join(damaged.root, 'broken.ismv');
      const bytes = readFileSync(media('video_baseline_400k.ismv'));
      const mdat = bytes.indexOf(Buffer.from('mdat'));
      bytes.writeUInt32BE(0x7fffffff, mdat + 4);
      writeFileSync(copy, bytes);
      const ism = path.join(damaged.root, 'x.ism');
      await fs.writeFile(ism, (await fs.readFile(ism, 'utf8')).replace(/src="[^"]+"/, 'src="broken.ismv"'));
      const key = /trackName" value="([^"]+)"/.exec(await fs.readFile(ism, 'utf8'))![1]!;
      const bitrate = /systemBitrate="(\d+)"/.exec(await fs.readFile(ism, 'utf8'))![1]!;
      const r = await get(damaged.url, `/x.ism/x-${key}=${bitrate}-1.ts`);
      expect([r.status, r.headers['x-origin-error']]).toEqual([500, 'corrupt-media']);
      expect(r.text).not.toContain('broken.ismv');
      const logged = damaged.logs.join('\n');
      expect(logged).toContain('broken.ismv');
      expect(logged).toMatch(new RegExp(`at file offset ${mdat + 4}\\b`));
      // Segment 2 does not need the damaged sample.
      expect((await get(damaged.url, `/x.ism/x-${key}=${bitrate}-2.ts`)).status).toBe(200);
    } finally {
      await damaged.server.close();
    }
  });
});
