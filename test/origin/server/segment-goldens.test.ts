// Golden files of what players read, as the origin serves it over HTTP (CONTRIBUTING.md design rule 11): the
// Smooth client manifest, and box dumps of one init and one media segment per format: the first
// Smooth video and audio fragments, a DASH video init and media segment, an HLS fMP4 audio init
// and segment 1. Regenerate with `UPDATE_GOLDEN=1 npx jest test/server/segment-goldens` and
// review the diff. Besides the goldens, each segment is checked against values worked out from
// the fixture facts and the source files' own bytes (read with a box walk of this file): tfdt,
// tfxd, sequence numbers, trun data offsets, sample counts, and mdat payloads equal to the
// source fragments' sample data.

import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { dumpBoxes } from '../../helpers/box-dump';
import { media } from '../../helpers/fixtures';
import { expectGolden } from '../../helpers/golden';
import { PLAYABLE } from '../../helpers/presentations';
import { facts, outputTimes } from '../manifests/format-support';
import { get, startTestOrigin, TestOrigin } from './server-helpers';
import { Box, boxes } from '../../helpers/box-walk';

let origin: TestOrigin;
const keys = new Map<string, { trackName: string; bitrate: number }>();

beforeAll(async () => {
  origin = await startTestOrigin({ p: PLAYABLE });
  const ism = await fs.readFile(path.join(origin.root, 'p.ism'), 'utf8');
  for (const m of ism.matchAll(/<(?:video|audio|textstream)\b([^>]*)>([\s\S]*?)<\/(?:video|audio|textstream)>/g)) {
    const file = path.basename(/\bsrc="([^"]+)"/.exec(m[1]!)![1]!);
    keys.set(file, {
      trackName: /<param name="trackName" value="([^"]+)"/.exec(m[2]!)![1]!,
      bitrate: Number(/\bsystemBitrate="(\d+)"/.exec(m[1]!)![1]),
    });
  }
});

afterAll(async () => {
  await origin.server.close();
});

const VIDEO = 'video_baseline_400k.ismv';
const AUDIO = 'audio_eng_64k.isma';
const idOf = (file: string): string => `${keys.get(file)!.trackName}=${keys.get(file)!.bitrate}`;

async function served(urlPath: string): Promise<Buffer> {
  const r = await get(origin.url, urlPath);
  expect([urlPath, r.status, r.headers['content-type']]).toEqual([urlPath, 200, 'video/mp4']);
  return r.body;
}

/** The golden: the request, then the dump. */
const golden = (name: string, urlPath: string, body: Buffer): void =>
  expectGolden(`server/${name}`, `# GET ${urlPath}\n${dumpBoxes(body)}`);

// ---------------------------------------------------------------------------------------------
// Independent checks over the tests' own box walk (test/helpers/box-walk.ts)

const one = (list: Box[], type: string): Box => {
  const found = list.filter((b) => b.type === type);
  if (found.length !== 1) throw new Error(`${found.length} ${type} boxes where one was expected`);
  return found[0]!;
};
const TFXD = '6d1d9b0542d544e680e2141daff757b2';

/** The fields of one moof (a single traf) that decide where a player puts the samples. */
interface MoofFacts {
  sequence: number;
  tfhdFlags: number;
  tfdt: bigint | undefined;
  /** MS-SSTR §2.2.4.4 fragment_absolute_time and duration. */
  tfxd: [bigint, bigint] | undefined;
  samples: number;
  /** trun data_offset minus the moof size: 8 when the data starts right after the mdat header. */
  dataOffsetPastMoof: number;
}

function moofFacts(moof: Box): MoofFacts {
  const inner = boxes(moof.body);
  const traf = boxes(one(inner, 'traf').body);
  const tfdt = traf.find((b) => b.type === 'tfdt');
  const tfxd = traf.find((b) => b.type === 'uuid' && b.body.toString('hex', 0, 16) === TFXD);
  const trun = one(traf, 'trun').body;
  expect(trun.readUInt32BE(0) & 0x1).toBe(1); // data-offset-present (§8.8.8)
  return {
    sequence: one(inner, 'mfhd').body.readUInt32BE(4),
    tfhdFlags: one(traf, 'tfhd').body.readUInt32BE(0) & 0xffffff,
    tfdt:
      tfdt === undefined
        ? undefined
        : tfdt.body[0] === 1
          ? tfdt.body.readBigUInt64BE(4)
          : BigInt(tfdt.body.readUInt32BE(4)),
    tfxd:
      tfxd === undefined
        ? undefined
        : tfxd.body[16] === 1
          ? [tfxd.body.readBigInt64BE(20), tfxd.body.readBigUInt64BE(28)]
          : [BigInt(tfxd.body.readUInt32BE(20)), BigInt(tfxd.body.readUInt32BE(24))],
    samples: trun.readUInt32BE(4),
    dataOffsetPastMoof: trun.readInt32BE(8) - moof.size,
  };
}

/** The mdat payload of each (moof, mdat) pair of a source file. */
function sourceMdats(file: string): Buffer[] {
  const top = boxes(readFileSync(media(file)));
  return top.flatMap((b, i) => (b.type === 'moof' && top[i + 1]?.type === 'mdat' ? [top[i + 1]!.body] : []));
}

/** tfhd default-base-is-moof (§8.8.7.1): data offsets count from the moof's first byte. */
const DEFAULT_BASE_IS_MOOF = 0x020000;
/** tfhd base-data-offset-present: must not be set with default-base-is-moof. */
const BASE_DATA_OFFSET = 0x000001;

/** Checks a media segment's moof/mdat pairs against source fragments `first`, `first + 1`, …. */
function expectFragments(
  body: Buffer,
  file: string,
  first: number,
  expected: Array<Omit<MoofFacts, 'tfhdFlags' | 'dataOffsetPastMoof'>>,
): void {
  const top = boxes(body);
  const pairs = top.flatMap((b, i) => (b.type === 'moof' ? [[b, top[i + 1]!] as const] : []));
  const src = sourceMdats(file);
  expect(
    pairs.map(([moof]) => {
      const f = moofFacts(moof);
      return { sequence: f.sequence, tfdt: f.tfdt, tfxd: f.tfxd, samples: f.samples };
    }),
  ).toEqual(expected);
  pairs.forEach(([moof, mdat], k) => {
    const f = moofFacts(moof);
    expect(mdat.type).toBe('mdat');
    expect([f.tfhdFlags & DEFAULT_BASE_IS_MOOF, f.tfhdFlags & BASE_DATA_OFFSET, f.dataOffsetPastMoof]).toEqual([
      DEFAULT_BASE_IS_MOOF,
      0,
      8,
    ]);
    // The samples are the source's bytes, in the source's order.
    expect(mdat.body.equals(src[first + k]!)).toBe(true);
  });
}

// ---------------------------------------------------------------------------------------------

test('the Smooth client manifest', async () => {
  const r = await get(origin.url, '/p.ism/Manifest');
  expect(r.status).toBe(200);
  expectGolden('server/smooth-manifest.xml', r.text);
});

describe('Smooth fragments: the source moof + mdat with tfxd, on the shifted timeline', () => {
  test.each([
    ['video', VIDEO],
    ['audio', AUDIO],
  ] as const)('first %s fragment', async (kind, file) => {
    const f = facts(file);
    const t = outputTimes(PLAYABLE, file)[0]!;
    const { trackName, bitrate } = keys.get(file)!;
    const urlPath = `/p.ism/QualityLevels(${bitrate})/Fragments(${trackName}=${t})`;
    const body = await served(urlPath);
    golden(`smooth-${kind}-fragment-1.txt`, urlPath, body);
    expect(boxes(body).map((b) => b.type)).toEqual(['moof', 'mdat']);
    // The whole presentation moves by the AAC priming (213333 at 10 MHz) so nothing is negative:
    // video starts at 213333, the audio (source tfxd −213333) at 0; tfxd and tfdt say so.
    expect(t).toBe(kind === 'video' ? 213333n : 0n);
    expectFragments(body, file, 0, [
      { sequence: 1, tfdt: t, tfxd: [t, f.durations[0]!], samples: sampleCounts(file)[0]! },
    ]);
  });
});

describe('DASH: init segment and a media segment', () => {
  test('init segment of the video representation', async () => {
    const urlPath = `/p.ism/dash/p-${idOf(VIDEO)}.dash`;
    const body = await served(urlPath);
    golden('dash-video-init.txt', urlPath, body);
    expectInit(body, VIDEO, 'vide');
  });

  test('media segment 2 of the video representation', async () => {
    const t = outputTimes(PLAYABLE, VIDEO)[1]!;
    expect(t).toBe(20_213_333n);
    const urlPath = `/p.ism/dash/p-${idOf(VIDEO)}-${t}.dash`;
    const body = await served(urlPath);
    golden('dash-video-segment-2.txt', urlPath, body);
    expect(boxes(body).map((b) => b.type)).toEqual(['styp', 'moof', 'mdat']);
    expectFragments(body, VIDEO, 1, [{ sequence: 2, tfdt: t, tfxd: undefined, samples: sampleCounts(VIDEO)[1]! }]);
  });
});

describe('HLS fMP4: init segment and segment 1', () => {
  test('init segment of an audio rendition', async () => {
    const urlPath = `/p.ism/hls/p-${idOf(AUDIO)}.m4s?hls_fmp4=true`;
    const body = await served(urlPath);
    golden('hls-audio-init.txt', urlPath, body);
    expectInit(body, AUDIO, 'soun');
  });

  test('segment 1 of an audio rendition: two source fragments (4 s minimum)', async () => {
    const urlPath = `/p.ism/hls/p-${idOf(AUDIO)}-1.m4s?hls_fmp4=true`;
    const body = await served(urlPath);
    golden('hls-audio-segment-1.txt', urlPath, body);
    expect(boxes(body).map((b) => b.type)).toEqual(['styp', 'moof', 'mdat', 'moof', 'mdat']);
    const times = outputTimes(PLAYABLE, AUDIO);
    expect(times.slice(0, 2)).toEqual([0n, 20_053_333n]);
    const counts = sampleCounts(AUDIO);
    expectFragments(body, AUDIO, 0, [
      { sequence: 1, tfdt: times[0]!, tfxd: undefined, samples: counts[0]! },
      { sequence: 2, tfdt: times[1]!, tfxd: undefined, samples: counts[1]! },
    ]);
  });
});

const FACT_FILES = JSON.parse(readFileSync(media('facts.json'), 'utf8')) as Array<{
  file: string;
  box: { fragments: Array<{ samples: number }> };
}>;

/** Samples per fragment, from the facts. */
function sampleCounts(file: string): number[] {
  return FACT_FILES.find((x) => x.file === file)!.box.fragments.map((f) => f.samples);
}

/** ftyp + moov with mvex/trex and no samples (ISO/IEC 23009-1 §6.3.3, RFC 8216 §3.3). */
function expectInit(body: Buffer, file: string, handler: string): void {
  const top = boxes(body);
  expect(top.map((b) => b.type)).toEqual(['ftyp', 'moov']);
  const moov = boxes(one(top, 'moov').body);
  const trex = one(boxes(one(moov, 'mvex').body), 'trex').body;
  const trak = boxes(one(moov, 'trak').body);
  const trackId = one(trak, 'tkhd').body.readUInt32BE(one(trak, 'tkhd').body[0] === 1 ? 20 : 12);
  expect(trex.readUInt32BE(4)).toBe(trackId);
  const mdia = boxes(one(trak, 'mdia').body);
  expect(one(mdia, 'hdlr').body.toString('latin1', 8, 12)).toBe(handler);
  const mdhd = one(mdia, 'mdhd').body;
  expect(mdhd.readUInt32BE(mdhd[0] === 1 ? 20 : 12)).toBe(facts(file).timescale);
  const stbl = boxes(one(boxes(one(mdia, 'minf').body), 'stbl').body);
  // No samples in an init segment: every sample table is empty.
  for (const [type, countAt] of [
    ['stts', 4],
    ['stsc', 4],
    ['stco', 4],
    ['stsz', 8],
  ] as const) {
    expect([type, one(stbl, type).body.readUInt32BE(countAt)]).toEqual([type, 0]);
  }
}
