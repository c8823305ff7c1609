// The cold-start index path (origin/media/media-file.ts fast mode, boxes.ts parseMfra): few
// reads per source, one pass over the tfra entries, and the same fragment tables as the moof walk.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseMfra } from '../../../origin/media/boxes';
import { readMediaFile } from '../../../origin/media/media-file';
import { BufferSource, ByteSource, FileSource } from '../../../origin/io/source';
import { OriginError } from '../../../origin/errors';
import { MediaFile } from '../../../origin/model/media';
import { FIXTURE_FILES, media } from '../../helpers/fixtures';
import { box, concat, fullBox, i64, u32, u64 } from '../../helpers/mp4-builder';

/** A file source that counts its reads. */
class Counting implements ByteSource {
  reads: Array<[number, number]> = [];
  constructor(private readonly inner: ByteSource) {}
  get name(): string {
    return this.inner.name;
  }
  get size(): number {
    return this.inner.size;
  }
  read(offset: number, length: number): Promise<Uint8Array> {
    this.reads.push([offset, length]);
    return this.inner.read(offset, length);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function read(file: string, mode: 'fast' | 'exact'): Promise<{ m: MediaFile; reads: Array<[number, number]> }> {
  const source = new Counting(await FileSource.open(file));
  try {
    return { m: await readMediaFile(source, mode), reads: source.reads };
  } finally {
    await source.close();
  }
}

/** systemBitrate as finishTrack computes it by adding up the table. */
function bitrateBySum(m: MediaFile, k: number): number {
  const t = m.tracks[k]!;
  let duration = 0;
  let bytes = 0;
  for (let i = 0; i < t.fragments.count; i++) {
    duration += t.fragments.durations[i]!;
    bytes += t.fragments.sizes[i]!;
  }
  return Math.round((bytes * 8 * t.properties.TimeScale) / duration);
}

// muxed_av.ismv: two tracks in one file, whose fragment sizes come from the union of their offsets.
const MFRA_FIXTURES = [...FIXTURE_FILES.filter((f) => !f.endsWith('.ismt')), 'muxed_av.ismv'];

describe.each(MFRA_FIXTURES)('%s', (file) => {
  test('the fast path reads the file in at most three reads and equals the walk', async () => {
    const fast = await read(media(file), 'fast');
    const exact = await read(media(file), 'exact');
    expect(fast.m.indexedBy).toBe('mfra');
    // Head and tail at once, then at most the last moof.
    expect(fast.reads.length).toBeLessThanOrEqual(3);
    expect(Buffer.from(fast.m.moov).equals(Buffer.from(exact.m.moov))).toBe(true);
    expect(fast.m.tracks.length).toBe(exact.m.tracks.length);
    for (const [k, t] of fast.m.tracks.entries()) {
      const e = exact.m.tracks[k]!;
      expect([...t.fragments.times]).toEqual([...e.fragments.times]);
      expect([...t.fragments.durations]).toEqual([...e.fragments.durations]);
      expect([...t.fragments.offsets]).toEqual([...e.fragments.offsets]);
      expect([...t.fragments.sizes]).toEqual([...e.fragments.sizes]);
      // The totals taken without a pass give what adding up the table gives.
      expect(t.properties.systemBitrate).toBe(bitrateBySum(fast.m, k));
    }
  });
});

const LONG = path.join(__dirname, '..', '..', '..', 'bench', '.cache', 'http', 'long');
const longFiles = existsSync(LONG) ? readdirSync(LONG).filter((f) => /\.ism[va]$/.test(f)) : [];

(longFiles.length > 0 ? describe : describe.skip)('2-hour bench sources (when generated)', () => {
  test.each(longFiles)('%s: few reads, consistent table, bitrate as the sum gives', async (f) => {
    const { m, reads } = await read(path.join(LONG, f), 'fast');
    expect(m.indexedBy).toBe('mfra');
    expect(reads.length).toBeLessThanOrEqual(3);
    const t = m.tracks[0]!.fragments;
    expect(t.count).toBeGreaterThan(3000);
    for (let i = 0; i + 1 < t.count; i++) {
      if (t.offsets[i]! + t.sizes[i]! !== t.offsets[i + 1])
        throw new Error(`fragment ${i} does not end where ${i + 1} begins`);
      if (BigInt(t.durations[i]!) !== t.times[i + 1]! - t.times[i]!)
        throw new Error(`fragment ${i}: duration is not the time step`);
    }
    expect(m.tracks[0]!.properties.systemBitrate).toBe(bitrateBySum(m, 0));
  });
});

describe('parseMfra columns (ISO/IEC 14496-12 §8.8.10)', () => {
  function tfra(trackId: number, entries: Array<[bigint, number]>): Uint8Array {
    const rows = entries.map(([t, o]) => concat(i64(t), u64(o), Uint8Array.of(1, 1, 1)));
    return fullBox('tfra', 1, 0, u32(trackId), u32(0), u32(entries.length), ...rows);
  }
  const parse = (entries: Array<[bigint, number]>) => parseMfra(box('mfra', tfra(1, entries)), 0).get(1)!;

  test('time and offset steps to the next entry, 0 for the last', () => {
    const t = parse([
      [-213333n, 100],
      [19_840_000n, 600],
      [39_893_333n, 1500],
    ]);
    expect([...t.timeSteps]).toEqual([19_840_000 + 213333, 20_053_333, 0]);
    expect([...t.offsetSteps]).toEqual([500, 900, 0]);
    expect(t.ascending).toBe(true);
  });

  test('a repeated or decreasing time or offset is not ascending', () => {
    expect(
      parse([
        [0n, 100],
        [0n, 200],
      ]).ascending,
    ).toBe(false);
    expect(
      parse([
        [0n, 100],
        [10n, 100],
      ]).ascending,
    ).toBe(false);
    expect(
      parse([
        [10n, 100],
        [5n, 200],
      ]).ascending,
    ).toBe(false);
    expect(
      parse([
        [0n, 300],
        [10n, 200],
      ]).ascending,
    ).toBe(false);
    // Compared exactly past 2^53, where the numbers would round to the same value.
    const big = 2n ** 60n;
    expect(
      parse([
        [big, 100],
        [big + 1n, 200],
      ]).ascending,
    ).toBe(true);
    expect(
      parse([
        [big + 1n, 100],
        [big, 200],
      ]).ascending,
    ).toBe(false);
    // Negative times (ffmpeg's priming) order below positive ones.
    expect(
      parse([
        [-5n, 100],
        [3n, 200],
      ]).ascending,
    ).toBe(true);
  });

  test('timesSafe is exactly Number.isSafeInteger of every time', () => {
    for (const t of [
      2n ** 53n - 1n,
      2n ** 53n,
      -(2n ** 53n) + 1n,
      -(2n ** 53n),
      -(2n ** 53n) - 1n,
      0n,
      -1n,
      2n ** 63n - 1n,
      -(2n ** 63n),
    ]) {
      expect([t, parse([[t, 100]]).timesSafe]).toEqual([t, Number.isSafeInteger(Number(t)) && BigInt(Number(t)) === t]);
    }
  });
});

describe('fragment times that go back', () => {
  // Found by the hardening corpus (test/hardening/): the last fragment's tfxd set to −2^63 made the
  // mfra path fall back to the walk, which took the time as it was and produced negative durations
  // that an HDS bootstrap and fMP4 writers then refused as internal errors.
  test('a tfxd time before the previous fragment is corrupt-media naming the moof', async () => {
    const bytes = readFileSync(media('video_baseline_400k.ismv'));
    const tfxd = Buffer.from('6d1d9b0542d544e680e2141daff757b2', 'hex');
    const at: number[] = [];
    for (let i = bytes.indexOf(tfxd); i >= 0; i = bytes.indexOf(tfxd, i + 1)) at.push(i);
    expect(at.length).toBe(5);
    // usertype, then version 1 and flags, then the 64-bit absolute time.
    bytes.writeBigInt64BE(-(2n ** 63n), at[4]! + 16 + 4);
    const source = new BufferSource('v.ismv', bytes);
    let error: unknown;
    try {
      await readMediaFile(source, 'fast');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OriginError);
    expect((error as OriginError).kind).toBe('corrupt-media');
    expect((error as Error).message).toMatch(
      /moof@\d+: fragment time -9223372036854775808 of track 1 is not after the previous fragment's 60000000/,
    );
  });
});
