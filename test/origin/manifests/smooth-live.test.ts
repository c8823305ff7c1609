// The live Smooth Streaming manifest (MS-SSTR §2.2.2.1, §2.2.2.6) of a hand-built channel: the
// fixture media moved onto UTC and cut to a window (live-presentation.ts). Expected times come
// from fixtures/media/facts.json plus the UTC shift, never from the origin's own reader.

import { XMLParser } from 'fast-xml-parser';
import { writeSmoothManifest, SmoothLive } from '../../../origin/manifests/smooth';
import { Presentation } from '../../../origin/model/presentation';
import { listedChunks, lookaheadOf } from '../../../origin/model/lookahead';
import { viewOf } from '../../helpers/presentations';
import { channelWindow, repeated, UTC_SECONDS } from '../live/live-presentation';
import { facts, presentationOf } from './format-support';

const FILES = ['video_baseline_400k.ismv', 'video_main_900k.ismv', 'audio_eng_64k.isma'];
const FIRST = 3;
const COUNT = 9;
const LIVE: SmoothLive = { count: 2, ended: false, dvrWindowSeconds: 30 };

type Attrs = Record<string, string>;
type Chunk = Attrs;
type Stream = Attrs & {
  QualityLevel: Attrs[];
  c: Chunk[];
};
interface Doc {
  SmoothStreamingMedia: Attrs & { StreamIndex: Stream[] };
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => ['StreamIndex', 'QualityLevel', 'c'].includes(name),
});
const parse = (xml: string): Doc => parser.parse(xml) as Doc;

/** Expected (t, d) of a file's fragments [first, first + count) on the UTC clock. */
function utcChunks(file: string, first: number, count: number): Array<{ t: bigint; d: bigint }> {
  const f = facts(file);
  const shift = BigInt(UTC_SECONDS) * BigInt(f.timescale);
  return Array.from({ length: count }, (_, i) => {
    const x = repeated(f.times, f.durations, first + i, shift);
    return { t: x.time, d: x.duration };
  });
}

/** `<c>` elements expanded to (t, d) per chunk, `r` read as the total count (dash.js, shaka 4, ExoPlayer). */
function expand(chunks: Chunk[]): Array<{ t: bigint; d: bigint }> {
  const out: Array<{ t: bigint; d: bigint }> = [];
  for (const c of chunks) {
    let t = c.t !== undefined ? BigInt(c.t) : out[out.length - 1]!.t + out[out.length - 1]!.d;
    for (let k = 0; k < Number(c.r ?? 1); k++) {
      out.push({ t, d: BigInt(c.d!) });
      t += BigInt(c.d!);
    }
  }
  return out;
}

let p: Presentation;
let channel: Presentation;
beforeAll(async () => {
  p = await presentationOf(FILES);
  channel = channelWindow(p, FIRST, COUNT);
});

const streamOf = (doc: Doc, type: string): Stream => doc.SmoothStreamingMedia.StreamIndex.find((s) => s.Type === type)!;

test('live: IsLive, Duration 0, LookaheadCount, DVRWindowLength, UTC times, all but the lookahead listed', () => {
  const doc = parse(writeSmoothManifest(viewOf(channel, 'smooth'), LIVE));
  const root = doc.SmoothStreamingMedia;
  expect(root).toMatchObject({
    MajorVersion: '2',
    MinorVersion: '0',
    TimeScale: '10000000',
    Duration: '0',
    IsLive: 'TRUE',
    LookaheadCount: '2',
    DVRWindowLength: String(30 * 10_000_000),
  });
  const video = streamOf(doc, 'video');
  expect(video.QualityLevel).toHaveLength(2);
  expect(video.Chunks).toBe(String(COUNT - 2));
  expect(video.c).toHaveLength(COUNT - 2);
  expect(video.c.every((c) => c.r === undefined)).toBe(true);
  expect(expand(video.c)).toEqual(utcChunks('video_baseline_400k.ismv', FIRST, COUNT - 2));
  // UTC at 10 MHz is past 2^53: written exactly.
  expect(BigInt(video.c[0]!.t!)).toBeGreaterThan(2n ** 53n);
  const audio = streamOf(doc, 'audio');
  expect(expand(audio.c)).toEqual(utcChunks('audio_eng_64k.isma', FIRST, COUNT - 2));
});

test('after the end of stream: the static form, every chunk of the window, its Duration', () => {
  const doc = parse(writeSmoothManifest(viewOf(channel, 'smooth'), { ...LIVE, ended: true }));
  const root = doc.SmoothStreamingMedia;
  expect(root.IsLive).toBeUndefined();
  expect(root.LookaheadCount).toBeUndefined();
  expect(root.DVRWindowLength).toBeUndefined();
  const expected = utcChunks('video_baseline_400k.ismv', FIRST, COUNT);
  expect(expand(streamOf(doc, 'video').c)).toEqual(expected);
  const videoTicks = expected.reduce((s, c) => s + c.d, 0n);
  const audioTicks = utcChunks('audio_eng_64k.isma', FIRST, COUNT).reduce((s, c) => s + c.d, 0n);
  expect(root.Duration).toBe(String(videoTicks > audioTicks ? videoTicks : audioTicks));
});

test('a ladder whose renditions are archived one after the other stays one StreamIndex', () => {
  const ahead = channelWindow(p, FIRST, COUNT + 1);
  const mixed = { ...channel, tracks: channel.tracks.map((t, i) => (i === 1 ? ahead.tracks[1]! : t)) };
  expect(mixed.tracks[1]!.fragments.count).toBe(COUNT + 1);
  const video = streamOf(parse(writeSmoothManifest(viewOf(mixed, 'smooth'), LIVE)), 'video');
  expect(video.QualityLevel).toHaveLength(2);
  // What both have, less the lookahead.
  expect(expand(video.c)).toEqual(utcChunks('video_baseline_400k.ismv', FIRST, COUNT - 2));
});

test('a channel with no more fragments than its lookahead lists no stream yet', () => {
  const young = channelWindow(p, FIRST, 2);
  const doc = parse(writeSmoothManifest(viewOf(young, 'smooth'), LIVE));
  expect(doc.SmoothStreamingMedia.StreamIndex ?? []).toHaveLength(0);
  expect(doc.SmoothStreamingMedia.IsLive).toBe('TRUE');
});

test('iss_chunk_repeat: runs folded with r = total count, MinorVersion 2; expands to the same chunks', () => {
  const plain = parse(writeSmoothManifest(viewOf(channel, 'smooth'), LIVE));
  const folded = parse(writeSmoothManifest(viewOf(channel, 'smooth', 'iss_chunk_repeat=true'), LIVE));
  expect(folded.SmoothStreamingMedia.MinorVersion).toBe('2');
  for (const type of ['video', 'audio']) {
    const f = streamOf(folded, type);
    expect(f.c.length).toBeLessThan(streamOf(plain, type).c.length);
    expect(f.c.some((c) => Number(c.r) > 1)).toBe(true);
    expect(expand(f.c)).toEqual(expand(streamOf(plain, type).c));
  }
  // VOD too, and off by default there.
  const vod = parse(writeSmoothManifest(viewOf(p, 'smooth')));
  expect(streamOf(vod, 'video').c.every((c) => c.r === undefined)).toBe(true);
  const vodFolded = parse(writeSmoothManifest(viewOf(p, 'smooth', 'iss_chunk_repeat=true')));
  expect(expand(streamOf(vodFolded, 'video').c)).toEqual(expand(streamOf(vod, 'video').c));
});

test('the lookahead: listed chunks and each chunk’s tfrf entries', () => {
  const s = viewOf(channel, 'smooth').tracks[0]!.segments;
  const live = { count: 2, ended: false };
  expect(listedChunks(s, live)).toBe(COUNT - 2);
  expect(listedChunks(s, { count: 0, ended: false })).toBe(COUNT);
  expect(listedChunks(s, { count: COUNT + 3, ended: false })).toBe(0);
  expect(listedChunks(s, { ...live, ended: true })).toBe(COUNT);
  const utc = utcChunks('video_baseline_400k.ismv', FIRST, COUNT);
  const entry = (k: number) => ({ time: utc[k]!.t, duration: utc[k]!.d });
  expect(lookaheadOf(s, 0, live)).toEqual([entry(1), entry(2)]);
  expect(lookaheadOf(s, COUNT - 3, live)).toEqual([entry(COUNT - 2), entry(COUNT - 1)]);
  // After the end of stream, the last chunks have fewer successors, the last none.
  expect(lookaheadOf(s, COUNT - 2, { ...live, ended: true })).toEqual([entry(COUNT - 1)]);
  expect(lookaheadOf(s, COUNT - 1, { ...live, ended: true })).toEqual([]);
});
