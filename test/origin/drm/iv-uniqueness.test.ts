// Never one key and IV on two tracks (docs/design/drm.md "Determinism"), read from what the origin
// serves rather than from drm/ivs.ts: every cenc segment of every track of a presentation under
// one key, DASH (16-byte IVs, one keystream per fragment) and Smooth (8-byte IVs, PIFF), with the
// derived IV base and with an operator's `--iss.key_iv` near the 2^64 wrap. Each sample's IV and
// protected byte count (its `senc` entry, the `trun` size when it has no subsamples) give the AES
// counter blocks it uses (ISO/IEC 23001-7 §9.1: block i of a sample is IV + i); no block may be
// used twice, within a track or across tracks. cbcs: each track's constant IV (`tenc`, §10.4.1)
// is its own.

import { boxes, Box } from '../../helpers/box-walk';
import { get, startTestOrigin, TestOrigin } from '../server/server-helpers';
import { dashWritten, smoothWritten, Written } from '../server/written-urls';

const PAIR = '00112233445566778899aabbccddeeff:3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILES = ['video_high_1600k.ismv', 'video_interlaced_800k.ismv', 'audio_eng_64k.isma', 'audio_ac3_384k.isma'];
const PIFF_SENC = 'a2394f525a9b4f14a2446c427c648df4';
const TWO_64 = 1n << 64n;

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin(
    { derived: FILES, based: FILES, cbcs: FILES },
    {
      derived: [`--drm_a.key=${PAIR}`, `--iss.key=${PAIR}`],
      based: [`--iss.key=${PAIR}`, '--iss.key_iv=0xffffffffffffff00'],
      cbcs: [`--iss.key=${PAIR}`, '--mpd.protection_scheme=cbcs'],
    },
  );
}, 60_000);

afterAll(() => origin?.server.close());

async function fetched(url: string): Promise<Buffer> {
  const r = await get(origin.url, url.replace(origin.url, ''));
  expect([url, r.status]).toEqual([url, 200]);
  return r.body;
}

const child = (list: Box[], type: string): Box | undefined => list.find((b) => b.type === type);

/** ISO/IEC 14496-12 §8.8.8: each sample's size from the trun, or the tfhd default. */
function sampleSizes(traf: Box[]): number[] {
  const tfhd = child(traf, 'tfhd')!.body;
  const tfFlags = tfhd.readUInt32BE(0) & 0xffffff;
  let at = 8 + (tfFlags & 0x1 ? 8 : 0) + (tfFlags & 0x2 ? 4 : 0) + (tfFlags & 0x8 ? 4 : 0);
  const defaultSize = tfFlags & 0x10 ? tfhd.readUInt32BE(at) : 0;
  const sizes: number[] = [];
  for (const trun of traf.filter((b) => b.type === 'trun')) {
    const flags = trun.body.readUInt32BE(0) & 0xffffff;
    const count = trun.body.readUInt32BE(4);
    at = 8 + (flags & 0x1 ? 4 : 0) + (flags & 0x4 ? 4 : 0);
    for (let i = 0; i < count; i++) {
      at += flags & 0x100 ? 4 : 0;
      sizes.push(flags & 0x200 ? trun.body.readUInt32BE(at) : defaultSize);
      at += (flags & 0x200 ? 4 : 0) + (flags & 0x400 ? 4 : 0) + (flags & 0x800 ? 4 : 0);
    }
  }
  return sizes;
}

interface Entry {
  iv: Buffer;
  /** Bytes encrypted; undefined: the whole sample (no subsample entries). */
  protectedBytes: number | undefined;
}

/** §7.2 SampleEncryptionBox (or PIFF's, after its usertype): the IV size is whichever parses exactly. */
function sencEntries(body: Buffer): Entry[] {
  const flags = body.readUInt32BE(0) & 0xffffff;
  const start = 4 + (flags & 0x1 ? 20 : 0);
  for (const ivSize of [16, 8]) {
    const out = tryEntries(body, start, flags, ivSize);
    if (out !== undefined) return out;
  }
  throw new Error('a senc whose entries fit neither 8- nor 16-byte IVs');
}

function tryEntries(body: Buffer, start: number, flags: number, ivSize: number): Entry[] | undefined {
  const count = body.readUInt32BE(start);
  const out: Entry[] = [];
  try {
    let at = start + 4;
    for (let i = 0; i < count && at + ivSize <= body.length; i++) {
      const iv = body.subarray(at, at + ivSize);
      at += ivSize;
      let protectedBytes: number | undefined;
      if (flags & 0x2) {
        const n = body.readUInt16BE(at);
        protectedBytes = 0;
        for (let s = 0; s < n; s++) protectedBytes += body.readUInt32BE(at + 2 + 6 * s + 2);
        at += 2 + 6 * n;
      }
      out.push({ iv, protectedBytes });
    }
    return out.length === count && at === body.length ? out : undefined;
  } catch {
    return undefined; // ran past the end: not this IV size
  }
}

/** The counter blocks each sample of a segment uses, as [first, end) 128-bit counter values. */
function counterRanges(segment: Buffer): Array<[bigint, bigint]> {
  const out: Array<[bigint, bigint]> = [];
  for (const moof of boxes(segment).filter((b) => b.type === 'moof')) {
    for (const traf of boxes(moof.body).filter((b) => b.type === 'traf')) {
      const kids = boxes(traf.body);
      const senc =
        child(kids, 'senc')?.body ??
        kids.find((b) => b.type === 'uuid' && b.body.subarray(0, 16).toString('hex') === PIFF_SENC)?.body.subarray(16);
      if (senc === undefined) continue; // a clear traf
      const sizes = sampleSizes(kids);
      sencEntries(senc).forEach((e, k) => {
        const blocks = BigInt(Math.ceil((e.protectedBytes ?? sizes[k]!) / 16));
        const hex = e.iv.toString('hex');
        // An 8-byte IV is the high half of the counter block, the low half counting from 0 (§9.2).
        const first = e.iv.length === 8 ? BigInt(`0x${hex}`) * TWO_64 : BigInt(`0x${hex}`);
        if (blocks > 0n) out.push([first, first + blocks]);
      });
    }
  }
  return out;
}

/** The first two ranges of different owners (or of one owner) that share a counter block. */
function firstOverlap(ranges: Array<[bigint, bigint, string]>): string | undefined {
  const sorted = [...ranges].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) {
    const [prev, cur] = [sorted[i - 1]!, sorted[i]!];
    if (cur[0] < prev[1])
      return `${prev[2]} [${prev[0].toString(16)}, ${prev[1].toString(16)}) and ${cur[2]} at ${cur[0].toString(16)}`;
  }
  return undefined;
}

async function written(name: string, format: 'dash' | 'smooth'): Promise<Written[]> {
  const url = `${origin.url}/${name}.ism/${format === 'dash' ? '.mpd' : 'Manifest'}`;
  const text = (await fetched(url)).toString('utf8');
  return format === 'dash' ? dashWritten(text, url) : smoothWritten(text, url);
}

describe.each([
  ['derived', 'dash'],
  ['derived', 'smooth'],
  ['based', 'dash'],
  ['based', 'smooth'],
  ['cbcs', 'smooth'],
] as const)('%s IV base, %s', (name, format) => {
  test('no AES counter block is used by two samples, of one track or of two', async () => {
    const ranges: Array<[bigint, bigint, string]> = [];
    const tracks = new Set<string>();
    for (const w of (await written(name, format)).filter((x) => x.kind === 'media')) {
      for (const [a, b] of counterRanges(await fetched(w.url))) ranges.push([a, b, `${w.key}@${w.time ?? w.url}`]);
      tracks.add(w.key);
    }
    expect(tracks.size).toBe(4);
    expect(ranges.length).toBeGreaterThan(500);
    expect(firstOverlap(ranges)).toBeUndefined();
  }, 60_000);
});

test('the overlap check finds a counter block used twice', () => {
  expect(
    firstOverlap([
      [10n, 20n, 'a'],
      [30n, 40n, 'b'],
      [19n, 25n, 'c'],
    ]),
  ).toBe('a [a, 14) and c at 13');
  expect(
    firstOverlap([
      [10n, 20n, 'a'],
      [20n, 25n, 'b'],
    ]),
  ).toBeUndefined();
});

test('cbcs: every track of the DASH presentation has a constant IV of its own', async () => {
  const inits = (await written('cbcs', 'dash')).filter((x) => x.kind === 'init');
  expect(inits.length).toBe(4);
  const ivs = new Set<string>();
  for (const w of inits) {
    const init = await fetched(w.url);
    const at = init.indexOf('tenc', 0, 'latin1') + 4;
    // §8.2 tenc: version/flags (4), reserved, pattern, isProtected, Per_Sample_IV_Size 0, KID (16),
    // constant IV size, constant IV.
    expect(init[at + 7]).toBe(0);
    const size = init[at + 24]!;
    expect(size).toBe(16);
    ivs.add(init.subarray(at + 25, at + 25 + size).toString('hex'));
  }
  expect(ivs.size).toBe(4);
});
