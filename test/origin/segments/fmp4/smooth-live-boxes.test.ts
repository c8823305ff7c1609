// The live Smooth uuid boxes (MS-SSTR §2.2.4.4 TfxdBox, §2.2.4.5 TfrfBox): golden bytes spelled
// out field by field from the specification, then read back by mp4box (a parser this project did
// not write, the one dash.js's own follows field for field), and what the writer refuses.

import { createFile, MP4BoxBuffer } from 'mp4box';
import { OriginError } from '../../../../origin/errors';
import { box, field, fullBox, serialize } from '../../../../origin/segments/box-writer';
import { MAX_TFRF_ENTRIES, tfrfBox, tfxdBox } from '../../../../origin/segments/fmp4/smooth-live-boxes';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

// A UTC time at 10 MHz (past 2^53) and a 2 s duration.
const T = 17_956_860_500_000_000n;
const D = 20_000_000n;

test('tfxd: size, uuid, version 1, flags 0, 64-bit time and duration', () => {
  expect(hex(serialize(tfxdBox({ time: T, duration: D })))).toBe(
    [
      '0000002c', // size 44 = 8 header + 16 usertype + 4 version/flags + 16
      '75756964', // 'uuid'
      '6d1d9b0542d544e680e2141daff757b2', // TfxdBox usertype
      '01000000', // version 1, flags 0
      T.toString(16).padStart(16, '0'),
      D.toString(16).padStart(16, '0'),
    ].join(''),
  );
});

test('tfrf: size, uuid, version 1, an 8-bit count, then time/duration pairs', () => {
  const next = [
    { time: T + D, duration: D },
    { time: T + 2n * D, duration: 19_000_000n },
  ];
  expect(hex(serialize(tfrfBox(next)))).toBe(
    [
      '0000003d', // 61 = 8 + 16 + 4 + 1 + 2 × 16
      '75756964',
      'd4807ef2ca3946958e5426cb9e46a79f', // TfrfBox usertype
      '01000000',
      '02', // FragmentCount
      (T + D).toString(16).padStart(16, '0'),
      D.toString(16).padStart(16, '0'),
      (T + 2n * D).toString(16).padStart(16, '0'),
      19_000_000n.toString(16).padStart(16, '0'),
    ].join(''),
  );
  // An empty lookahead (the last fragment after the end of stream) is a count of 0.
  expect(hex(serialize(tfrfBox([])))).toBe('0000001d75756964d4807ef2ca3946958e5426cb9e46a79f0100000000');
});

interface Uuid {
  box_name?: string;
  version?: number;
  fragment_count?: number;
  entries?: Array<{ absolute_time: number; absolute_duration: number }>;
  absolute_time?: number;
  duration?: number;
}

/** The boxes of the first traf of a moof holding `children`, as mp4box parses them. */
function mp4boxTraf(...children: ReturnType<typeof tfxdBox>[]): Uuid[] {
  const bytes = serialize(
    box(
      'moof',
      fullBox('mfhd', 0, 0, field.u32(1)),
      box('traf', fullBox('tfhd', 0, 0x20000, field.u32(1)), ...children),
    ),
  );
  const file = createFile();
  file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(new Uint8Array(bytes).buffer, 0));
  file.flush();
  const moof = (file as unknown as { boxes: Array<{ type: string; trafs: Array<{ boxes: Uuid[] }> }> }).boxes[0]!;
  expect(moof.type).toBe('moof');
  return moof.trafs[0]!.boxes.slice(1);
}

test('mp4box reads both boxes back (times below 2^53, where its numbers are exact)', () => {
  const t = 2n ** 52n + 10n;
  const [tfxd, tfrf] = mp4boxTraf(
    tfxdBox({ time: t, duration: 3n }),
    tfrfBox([
      { time: t + 3n, duration: 4n },
      { time: t + 7n, duration: 5n },
    ]),
  );
  expect(tfxd).toMatchObject({ box_name: 'TfxdBox', version: 1, absolute_time: Number(t), duration: 3 });
  expect(tfrf).toMatchObject({
    box_name: 'TfrfBox',
    version: 1,
    fragment_count: 2,
    entries: [
      { absolute_time: Number(t + 3n), absolute_duration: 4 },
      { absolute_time: Number(t + 7n), absolute_duration: 5 },
    ],
  });
});

test('refused: more entries than the 8-bit count holds, negative or 64-bit overflowing times', () => {
  const many = Array.from({ length: MAX_TFRF_ENTRIES + 1 }, (_, i) => ({ time: BigInt(i), duration: 1n }));
  expect(() => tfrfBox(many)).toThrow(OriginError);
  expect(serialize(tfrfBox(many.slice(0, MAX_TFRF_ENTRIES))).byteLength).toBe(29 + 16 * MAX_TFRF_ENTRIES);
  expect(() => tfxdBox({ time: -1n, duration: 1n })).toThrow(/not two unsigned 64-bit values/);
  expect(() => tfxdBox({ time: 1n << 64n, duration: 1n })).toThrow(OriginError);
  expect(() => tfrfBox([{ time: 0n, duration: -5n }])).toThrow(/tfrf entry 0/);
});
