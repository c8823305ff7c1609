// The ingest body's box splitter (origin/live/box-stream.ts): the same boxes whatever the chunking,
// a box larger than the bound refused from its header, never more than one box held.

import { BoxSplitter } from '../../../origin/live/box-stream';
import { OriginError } from '../../../origin/errors';
import { box } from '../../helpers/test-encoder';

const BODY = Buffer.concat([
  box('ftyp', Buffer.from('isml\x00\x00\x00\x01', 'latin1')),
  box('moov', new Uint8Array(300).fill(1)),
  box('moof', new Uint8Array(50).fill(2)),
  box('mdat', new Uint8Array(1000).fill(3)),
]);
// A 64-bit size (size field 1) box at the end.
const LARGE = Buffer.concat([
  Buffer.from([0, 0, 0, 1]),
  Buffer.from('free'),
  Buffer.from([0, 0, 0, 0, 0, 0, 0, 24]),
  new Uint8Array(8),
]);
const ALL = Buffer.concat([BODY, LARGE]);

function split(chunkSize: number, max = 1 << 20): Array<[string, number, number]> {
  const s = new BoxSplitter(max);
  const out: Array<[string, number, number]> = [];
  let held = 0;
  for (let at = 0; at < ALL.byteLength; at += chunkSize) {
    for (const b of s.push(ALL.subarray(at, at + chunkSize))) out.push([b.type, b.offset, b.bytes.byteLength]);
    held = Math.max(held, s.buffered);
  }
  s.end();
  expect(held).toBeLessThan(1008 + chunkSize); // at most the largest box and one chunk
  return out;
}

test('the same boxes at every chunk size, 64-bit sizes included', () => {
  const expected: Array<[string, number, number]> = [
    ['ftyp', 0, 16],
    ['moov', 16, 308],
    ['moof', 324, 58],
    ['mdat', 382, 1008],
    ['free', 1390, 24],
  ];
  for (const size of [1, 2, 3, 7, 8, 15, 16, 17, 100, 1007, 4096]) expect(split(size)).toEqual(expected);
});

test('a box past the bound is refused from its header; bad sizes and a truncated end are ingest-bad-box', () => {
  const code = (f: () => void): string => {
    try {
      f();
    } catch (e) {
      return (e as OriginError).code;
    }
    return 'none';
  };
  expect(code(() => new BoxSplitter(1000).push(BODY.subarray(0, 382)))).toBe('none');
  expect(code(() => new BoxSplitter(1000).push(BODY.subarray(382, 390)))).toBe('ingest-box-too-large');
  expect(code(() => new BoxSplitter(1000).push(Buffer.from([0, 0, 0, 4, 0x66, 0x72, 0x65, 0x65])))).toBe(
    'ingest-bad-box',
  );
  expect(code(() => new BoxSplitter(1000).push(Buffer.from([0, 0, 0, 0, 0x6d, 0x64, 0x61, 0x74])))).toBe(
    'ingest-bad-box',
  );
  const s = new BoxSplitter(1 << 20);
  s.push(BODY.subarray(0, 100));
  expect(code(() => s.end())).toBe('ingest-bad-box');
});
