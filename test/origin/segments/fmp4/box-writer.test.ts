// The box writer: every field type writes the exact big-endian bytes, refuses values that do not
// fit, and what it writes reads back through the repository's own ByteReader (CONTRIBUTING.md design rule 5).

import fc from 'fast-check';
import { OriginError } from '../../../../origin/errors';
import { box, BoxWriter, brandBox, field, fullBox, serialize, Writable } from '../../../../origin/segments/box-writer';
import { childBoxes, readBoxHeader } from '../../../../origin/media/boxes';
import { ByteReader } from '../../../../origin/media/byte-reader';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('field encodings', () => {
  test.each([
    ['u8', field.u8(0xab), 'ab'],
    ['u16', field.u16(0xbeef), 'beef'],
    ['i16', field.i16(-2), 'fffe'],
    ['u24', field.u24(0x123456), '123456'],
    ['u32', field.u32(0xdeadbeef), 'deadbeef'],
    ['i32', field.i32(-1), 'ffffffff'],
    ['u64', field.u64(0x0123456789abcdefn), '0123456789abcdef'],
    ['u64 max', field.u64((1n << 64n) - 1n), 'ffffffffffffffff'],
    ['i64', field.i64(-213333n), 'fffffffffffcbeab'],
    ['fixed16_16', field.fixed16_16(640), '02800000'],
    ['fixed16_16 fraction', field.fixed16_16(1.5), '00018000'],
    ['fixed8_8', field.fixed8_8(1), '0100'],
    ['fixed8_8 negative', field.fixed8_8(-0.5), 'ff80'],
    ['fourcc', field.fourcc('url '), '75726c20'],
    ['cstring', field.cstring('Vid'), '56696400'],
    ['cstring utf-8', field.cstring('é'), 'c3a900'],
    ['bytes', field.bytes(Uint8Array.of(1, 2, 3)), '010203'],
    ['zeros', field.zeros(3), '000000'],
    ['group', field.group(field.u8(1), field.u16(2)), '010002'],
  ] as const)('%s', (_name, node, expected) => {
    expect(hex(serialize(node))).toBe(expected);
    expect(node.size).toBe(expected.length / 2);
  });

  test.each([
    ['u8 256', () => serialize(field.u8(256))],
    ['u8 negative', () => serialize(field.u8(-1))],
    ['u8 fraction', () => serialize(field.u8(1.5))],
    ['u16', () => serialize(field.u16(0x10000))],
    ['u24', () => serialize(field.u24(0x1000000))],
    ['u32', () => serialize(field.u32(2 ** 32))],
    ['i32', () => serialize(field.i32(2 ** 31))],
    ['u64 negative', () => serialize(field.u64(-1n))],
    ['u64 2^64', () => serialize(field.u64(1n << 64n))],
    ['i64', () => serialize(field.i64(1n << 63n))],
    ['fourcc length', () => serialize(field.fourcc('abc'))],
    ['fourcc non-ascii', () => serialize(field.fourcc('ab\ncd'.slice(0, 4)))],
  ])('%s is refused as an internal error', (_name, write) => {
    expect(write).toThrow(OriginError);
    try {
      write();
    } catch (e) {
      expect((e as OriginError).kind).toBe('internal');
    }
  });
});

describe('boxes (ISO/IEC 14496-12 §4.2)', () => {
  test('box header: 32-bit size and type, then the payload', () => {
    expect(hex(serialize(box('free', field.u32(7))))).toBe('0000000c' + '66726565' + '00000007');
  });

  test('full box: version and 24-bit flags before the payload', () => {
    expect(hex(serialize(fullBox('tfhd', 1, 0x020000, field.u32(9))))).toBe(
      '00000010' + '74666864' + '01020000' + '00000009',
    );
  });

  test('a payload past 4 GiB switches to size 1 and a 64-bit largesize (size only: not written)', () => {
    const huge: Writable = { size: 2 ** 32, write: () => undefined };
    expect(box('mdat', huge).size).toBe(2 ** 32 + 16);
    expect(box('mdat', field.zeros(16)).size).toBe(24);
  });

  test('ftyp and styp carry major, minor and compatible brands (§4.3, §8.16.2)', () => {
    const bytes = serialize(brandBox('styp', 'msdh', 0, ['msdh', 'cmfs']));
    const r = new ByteReader(bytes.subarray(8), 'styp');
    expect([r.fourcc(), r.u32(), r.fourcc(), r.fourcc(), r.remaining]).toEqual(['msdh', 0, 'msdh', 'cmfs', 0]);
    expect(readBoxHeader(bytes, 0, 0, bytes.byteLength, 'file')).toEqual({
      type: 'styp',
      start: 0,
      size: 24,
      headerSize: 8,
    });
  });

  test('nested boxes read back with the repository reader', () => {
    const bytes = serialize(box('moov', fullBox('mvhd', 1, 0, field.u64(5n)), box('trak', box('tkhd'))), box('free'));
    const top = [...childBoxes(bytes, 0, 'file')].map((b) => [b.type, b.size]);
    expect(top).toEqual([
      ['moov', 44],
      ['free', 8],
    ]);
    const moov = [...childBoxes(bytes.subarray(8, 44), 8, 'moov')].map((b) => [b.type, b.start, b.size]);
    expect(moov).toEqual([
      ['mvhd', 8, 20],
      ['trak', 28, 16],
    ]);
  });
});

describe('size agreement (compute first, allocate once, assert)', () => {
  test('a node that writes fewer bytes than it announced is caught by its box', () => {
    const liar: Writable = { size: 4, write: (w) => w.u16(1) };
    expect(() => serialize(box('oops', liar), field.u16(0))).toThrow(/box 'oops' wrote 10 bytes, computed 12/);
  });

  test('a node that writes more than the buffer holds is caught by the cursor', () => {
    const liar: Writable = { size: 1, write: (w) => w.u32(1) };
    expect(() => serialize(liar)).toThrow(/overruns the 1-byte buffer/);
  });

  test('finish() refuses a buffer that was not filled', () => {
    const w = new BoxWriter(4);
    w.u16(1);
    expect(() => w.finish()).toThrow(/wrote 2 bytes into a buffer computed as 4/);
  });
});

describe('round trip of random field lists (property)', () => {
  type F =
    | { kind: 'u8' | 'u16' | 'u24' | 'u32' | 'i32'; v: number }
    | { kind: 'u64' | 'i64'; v: bigint }
    | { kind: 'fourcc'; v: string };
  const anyField: fc.Arbitrary<F> = fc.oneof(
    fc.integer({ min: 0, max: 0xff }).map((v) => ({ kind: 'u8' as const, v })),
    fc.integer({ min: 0, max: 0xffff }).map((v) => ({ kind: 'u16' as const, v })),
    fc.integer({ min: 0, max: 0xffffff }).map((v) => ({ kind: 'u24' as const, v })),
    fc.integer({ min: 0, max: 0xffffffff }).map((v) => ({ kind: 'u32' as const, v })),
    fc.integer({ min: -0x80000000, max: 0x7fffffff }).map((v) => ({ kind: 'i32' as const, v })),
    fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((v) => ({ kind: 'u64' as const, v })),
    fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map((v) => ({ kind: 'i64' as const, v })),
    fc.stringMatching(/^[a-z0-9 ]{4}$/).map((v) => ({ kind: 'fourcc' as const, v })),
  );

  const node = (f: F): Writable => (field[f.kind] as (v: unknown) => Writable)(f.v);

  const read = (r: ByteReader, f: F): unknown => {
    switch (f.kind) {
      case 'u64':
        return r.u64Big();
      case 'i64':
        return r.i64Big();
      case 'fourcc':
        return r.fourcc();
      default:
        return r[f.kind]();
    }
  };

  test('serialize → ByteReader gives back every value, and the box size is exact', () => {
    fc.assert(
      fc.property(fc.array(anyField, { maxLength: 30 }), (fields) => {
        const bytes = serialize(fullBox('test', 1, 0xabcdef, ...fields.map(node)));
        const h = readBoxHeader(bytes, 0, 0, bytes.byteLength, 'file')!;
        expect(h.size).toBe(bytes.byteLength);
        const r = new ByteReader(bytes.subarray(8), 'test');
        expect(r.u8()).toBe(1);
        expect(r.u24()).toBe(0xabcdef);
        for (const f of fields) expect(read(r, f)).toBe(f.v);
        expect(r.remaining).toBe(0);
      }),
    );
  });
});
