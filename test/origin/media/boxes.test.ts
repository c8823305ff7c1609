import { parseMfra, parseMfro, parseMoof, readBoxHeader } from '../../../origin/media/boxes';
import { OriginError } from '../../../origin/errors';
import { box, concat, fullBox, mdat, moof, NON_SYNC, SYNC, traf, u32, u64, i64 } from '../../helpers/mp4-builder';

const noDefaults = () => undefined;

describe('box headers (ISO/IEC 14496-12 §4.2)', () => {
  test('reads a 32-bit and a 64-bit size', () => {
    const small = box('free', new Uint8Array(4));
    expect(readBoxHeader(small, 0, 100, 112, 'file')).toEqual({ type: 'free', start: 100, size: 12, headerSize: 8 });
    const large = concat(u32(1), new TextEncoder().encode('mdat'), u64(20), new Uint8Array(4));
    expect(readBoxHeader(large, 0, 0, 20, 'file')).toEqual({ type: 'mdat', start: 0, size: 20, headerSize: 16 });
  });

  test('size 0 extends to the end of the container', () => {
    const b = concat(u32(0), new TextEncoder().encode('mdat'), new Uint8Array(10));
    expect(readBoxHeader(b, 0, 0, 18, 'file')?.size).toBe(18);
  });

  test('a box running past its container is named with its offset', () => {
    const b = concat(u32(1000), new TextEncoder().encode('mdat'));
    expect(() => readBoxHeader(b, 0, 40, 48, 'file')).toThrow(
      /box 'mdat' of 1000 bytes runs past the end of its container \(8 bytes left\).*offset 40/,
    );
  });

  test('a size smaller than the header is refused', () => {
    const b = concat(u32(4), new TextEncoder().encode('moof'));
    expect(() => readBoxHeader(b, 0, 0, 8, 'file')).toThrow(OriginError);
  });

  test('returns undefined when fewer than 8 bytes are there', () => {
    expect(readBoxHeader(new Uint8Array(5), 0, 0, 5, 'file')).toBeUndefined();
  });
});

describe('moof parsing (§8.8.4–8.8.8, MS-SSTR tfxd)', () => {
  test('tfxd time is read signed and exact (negative AAC priming)', () => {
    const m = moof(
      1,
      traf(
        1,
        [
          { duration: 213333, size: 300, flags: SYNC },
          { duration: 213334, size: 301 },
        ],
        { tfxd: -213333n },
      ),
    );
    const [t] = parseMoof(m, 5000, noDefaults);
    expect(t).toEqual({
      trackId: 1,
      baseTime: -213333n,
      duration: 426667,
      sampleCount: 2,
      dataSize: 601,
      startsWithSync: true,
    });
  });

  test('times above 2^53 survive (live UTC at 10 MHz)', () => {
    const big = 17_640_000_000_000_000n; // ~ 2025 in 100 ns units, > Number.MAX_SAFE_INTEGER
    const [t] = parseMoof(moof(1, traf(1, [{ duration: 20_000_000, size: 1 }], { tfdt: big })), 0, noDefaults);
    expect(t!.baseTime).toBe(big);
  });

  test('tfxd wins over tfdt; a non-sync first sample is reported', () => {
    const [t] = parseMoof(
      moof(1, traf(2, [{ duration: 10, size: 5, flags: NON_SYNC }], { tfdt: 99n, tfxd: 7n })),
      0,
      noDefaults,
    );
    expect(t!.baseTime).toBe(7n);
    expect(t!.startsWithSync).toBe(false);
  });

  test('trex defaults apply when trun carries no per-sample fields', () => {
    const tfhd = fullBox('tfhd', 0, 0, u32(3));
    const trun = fullBox('trun', 0, 0, u32(4));
    const m = box('moof', fullBox('mfhd', 0, 0, u32(1)), box('traf', tfhd, trun));
    const [t] = parseMoof(m, 0, () => ({
      defaultSampleDescriptionIndex: 1,
      defaultSampleDuration: 1000,
      defaultSampleSize: 50,
      defaultSampleFlags: 0,
    }));
    expect(t).toMatchObject({
      trackId: 3,
      duration: 4000,
      dataSize: 200,
      sampleCount: 4,
      startsWithSync: true,
      baseTime: undefined,
    });
  });

  test('a trun whose entries run past the box names the box path and offset', () => {
    const tfhd = fullBox('tfhd', 0, 0, u32(1));
    const trun = fullBox('trun', 0, 0x300, u32(10), u32(1), u32(2)); // claims 10 samples, holds 1
    const m = box('moof', box('traf', tfhd, trun));
    expect(() => parseMoof(m, 800, noDefaults)).toThrow(/moof@800\/traf\[0\]\/trun\[0\].*needs 80 bytes/);
  });

  test('an absurd sample count is refused before any allocation', () => {
    const m = box('moof', box('traf', fullBox('tfhd', 0, 0, u32(1)), fullBox('trun', 0, 0x100, u32(0xffffffff))));
    expect(() => parseMoof(m, 0, noDefaults)).toThrow(/exceeds the limit/);
  });

  test('a traf without tfhd is corrupt', () => {
    expect(() => parseMoof(box('moof', box('traf', fullBox('trun', 0, 0, u32(0)))), 0, noDefaults)).toThrow(
      /traf without tfhd/,
    );
  });

  test('moof with mdat: parse only takes the moof', () => {
    const m = moof(1, traf(1, [{ duration: 1, size: 4 }]));
    expect(parseMoof(concat(m, mdat(4)).subarray(0, m.byteLength), 0, noDefaults)).toHaveLength(1);
  });
});

describe('mfra / mfro (§8.8.9–8.8.11)', () => {
  function tfra(trackId: number, entries: Array<[bigint, number]>): Uint8Array {
    const rows = entries.map(([t, o]) => concat(i64(t), u64(o), Uint8Array.of(1, 1, 1)));
    return fullBox('tfra', 1, 0, u32(trackId), u32(0), u32(entries.length), ...rows);
  }

  test('reads entries per track and the mfro size', () => {
    const body = box(
      'mfra',
      tfra(1, [
        [0n, 100],
        [20_000_000n, 5000],
      ]),
      tfra(2, [[5n, 200]]),
      fullBox('mfro', 0, 0, u32(0)),
    );
    const entries = parseMfra(body, 9000);
    const rows = (id: number): Array<[bigint, number]> => {
      const t = entries.get(id)!;
      return Array.from({ length: t.count }, (_, k) => [t.times[k]!, t.moofOffsets[k]!]);
    };
    expect(rows(1)).toEqual([
      [0n, 100],
      [20_000_000n, 5000],
    ]);
    expect(rows(2)).toEqual([[5n, 200]]);
    const mfro = fullBox('mfro', 0, 0, u32(123));
    expect(parseMfro(mfro, 0)).toBe(123);
    expect(parseMfro(box('free', new Uint8Array(8)), 0)).toBeUndefined();
  });

  test('version 0 entries (32-bit time and offset) and negative version-1 times', () => {
    const v0 = fullBox(
      'tfra',
      0,
      0,
      u32(7),
      u32(0),
      u32(2),
      u32(10),
      u32(300),
      Uint8Array.of(1, 1, 1),
      u32(4000),
      u32(900),
      Uint8Array.of(1, 1, 1),
    );
    const t0 = parseMfra(box('mfra', v0), 0).get(7)!;
    expect([...t0.times, ...t0.moofOffsets]).toEqual([10n, 4000n, 300, 900]);
    const t1 = parseMfra(box('mfra', tfra(3, [[-213333n, 2 ** 40]])), 0).get(3)!;
    expect([t1.times[0], t1.moofOffsets[0]]).toEqual([-213333n, 2 ** 40]);
  });

  test('times as numbers equal the exact times', () => {
    const t = parseMfra(
      box(
        'mfra',
        tfra(1, [
          [-213333n, 10],
          [72_000_000_000n, 20],
          [2n ** 40n + 3n, 30],
        ]),
      ),
      0,
    ).get(1)!;
    expect([...t.times]).toEqual([-213333n, 72_000_000_000n, 2n ** 40n + 3n]);
    expect([...t.timeNumbers]).toEqual([-213333, 72_000_000_000, 2 ** 40 + 3]);
  });

  test('times past 2^53 (a live capture with epoch-based 10 MHz times) stay exact and are flagged', () => {
    const big = 17_000_000_000_000_001n;
    const t = parseMfra(
      box(
        'mfra',
        tfra(1, [
          [big, 10],
          [big + 20_000_000n, 20],
        ]),
      ),
      0,
    ).get(1)!;
    expect([...t.times]).toEqual([big, big + 20_000_000n]);
    expect(t.timesSafe).toBe(false);
    expect(parseMfra(box('mfra', tfra(1, [[5n, 10]])), 0).get(1)!.timesSafe).toBe(true);
  });

  test('a moof offset past 2^53 is corrupt, not rounded', () => {
    const row = concat(i64(0n), u32(0x200000), u32(0), Uint8Array.of(1, 1, 1));
    const bad = box('mfra', fullBox('tfra', 1, 0, u32(1), u32(0), u32(1), row));
    expect(() => parseMfra(bad, 0)).toThrow(/entry 0: moof_offset exceeds 2\^53/);
  });

  test('a tfra claiming more entries than it holds is corrupt', () => {
    const bad = box('mfra', fullBox('tfra', 1, 0, u32(1), u32(0), u32(5)));
    expect(() => parseMfra(bad, 0)).toThrow(/mfra@0\/tfra\[0\].*needs/);
  });
});
