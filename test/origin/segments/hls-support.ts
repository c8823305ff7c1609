// Set-up and tools shared by the HLS segment tests (mpegts-renditions.test.ts,
// packed-audio.test.ts, hls-segment-requests.test.ts): the fixtures and what is known about them
// without the origin, a real origin on loopback serving them, and the ffmpeg/ffprobe readers.

import { promises as fs, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { boxes } from '../../helpers/box-walk';
import { media, tempDir } from '../../helpers/fixtures';
import { loadPresentation, viewOf } from '../../helpers/presentations';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { segmentsOf as segmentObjects } from '../../helpers/segments';
import { run } from '../../helpers/process';

// ---------------------------------------------------------------------------------------------
// Fixtures and what is known about them without the origin

export interface FileFacts {
  file: string;
  kind: string;
  packets: number;
  first_pts_seconds: number;
  sample_rate?: string;
  codec: string;
  box: { timescale: number; fragments: Array<{ tfxd_time: string; samples: number }> };
}
export const FACTS = JSON.parse(readFileSync(media('facts.json'), 'utf8')) as FileFacts[];
export const fact = (file: string): FileFacts => FACTS.find((f) => f.file === file)!;

export const PRESENTATIONS: Record<string, string[]> = {
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

export interface Rendition {
  pres: string;
  video: string;
  audio?: string;
}

export const RENDITIONS: Rendition[] = Object.entries(PRESENTATIONS).flatMap(([pres, files]) => {
  const videos = files.filter((f) => f.endsWith('.ismv'));
  const audios = files.filter((f) => f.endsWith('.isma') || f === 'muxed_av.ismv');
  return videos.flatMap((video) => [{ pres, video }, ...audios.map((audio) => ({ pres, video, audio }))]);
});

export const AUDIO_TRACKS: Array<{ pres: string; file: string }> = Object.entries(PRESENTATIONS).flatMap(
  ([pres, files]) => files.filter((f) => f.endsWith('.isma') || f === 'muxed_av.ismv').map((file) => ({ pres, file })),
);

export let origin: TestOrigin;
export const dir = tempDir('hls-segments-');
/** `<trackName>=<bitrate>` of (presentation, file, type), from the .ism the packager wrote. */
export const keys = new Map<string, string>();
/** Fragment ranges of the HLS view segments of each track (first, count). */
export const segmentsOf = new Map<string, Array<{ first: number; count: number }>>();

export type TrackType = 'video' | 'audio' | 'textstream';
export const trackId = (pres: string, file: string, type: TrackType): string => `${pres}/${file}/${type}`;
export const keyOf = (pres: string, file: string, type: TrackType): string => keys.get(trackId(pres, file, type))!;
export const renditionKey = (r: Rendition): string =>
  [r.audio !== undefined ? keyOf(r.pres, r.audio, 'audio') : undefined, keyOf(r.pres, r.video, 'video')]
    .filter((k) => k !== undefined)
    .join('-');
export const nameOf = (r: Rendition): string => `${r.pres}:${r.audio !== undefined ? `${r.audio}+` : ''}${r.video}`;

/** Starts the origin over PRESENTATIONS for the calling test file and reads the keys and segments. */
export function setUpHlsOrigin(): void {
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
}

// ---------------------------------------------------------------------------------------------
// Tools

export interface Probed {
  stderr: string;
  frames: Record<string, number>;
  codecs: Record<string, string>;
}

/** Decodes every frame (`-count_frames`) and reports per stream type; stderr at `-v warning`. */
export async function probeFrames(input: string, options: string[] = []): Promise<Probed> {
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
export async function packetTimes(
  file: string,
): Promise<Record<string, { timeBase: [number, number]; pts: bigint[] }>> {
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
export async function pool<T>(tasks: Array<() => Promise<T>>, width = 2): Promise<T[]> {
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

export async function fetchOk(url: string, contentType: string): Promise<Buffer> {
  const r = await get(origin.url, url);
  expect([url, r.status, r.headers['content-type']]).toEqual([url, 200, contentType]);
  return r.body;
}

export const sourcePackets = new Map<string, Promise<Record<string, number>>>();
/** Frames per stream type of a source file: the facts, or ffprobe for the muxed fixture (no facts). */
export function sourceFrames(file: string): Promise<Record<string, number>> {
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
export function expectedAudioPerSegment(
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

export function expectedVideoPerSegment(video: string, segments: Array<{ first: number; count: number }>): number[] {
  const f = fact(video).box.fragments;
  return segments.map((s) => f.slice(s.first, s.first + s.count).reduce((n, x) => n + x.samples, 0));
}

/** moov/trak/mdia/mdhd timescale of an init segment (§8.4.2). */
export function initTimescale(init: Buffer): bigint {
  const find = (b: Buffer, type: string) => boxes(b).find((x) => x.type === type)!.body;
  const mdhd = find(find(find(find(init, 'moov'), 'trak'), 'mdia'), 'mdhd');
  return BigInt(mdhd[0] === 1 ? mdhd.readUInt32BE(20) : mdhd.readUInt32BE(12));
}

/**
 * The composition time of every sample of fMP4 media segments, in decode order, read with the
 * tests' own box walk (ISO/IEC 14496-12 §8.8.7 tfhd, §8.8.8 trun, §8.8.12 tfdt, §8.8.3 trex):
 * tfdt + the durations before the sample + its composition offset (signed in trun version 1).
 */
export function compositionTimes(init: Buffer, segments: Buffer[]): bigint[] {
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

export const tsUrl = (r: Rendition, n: number, query = ''): string =>
  `/${r.pres}.ism/${r.pres}-${renditionKey(r)}-${n}.ts${query}`;

export async function renditionSegments(
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
