// The archive of a track on real files: the index codec, append and reload, purge by whole files,
// and a torn tail (a crash between or inside the writes of a fragment and its index record)
// detected and cut off on reload, after which appending continues.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../helpers/fixtures';
import { FILE_ARCHIVE_STORAGE } from '../../../origin/io/archive-storage';
import { FILE_STORAGE } from '../../../origin/io/storage';
import { ArchiveIo, TrackArchive } from '../../../origin/live/archive';
import {
  crc32,
  INDEX_HEADER_BYTES,
  INDEX_RECORD_BYTES,
  readIndexHeader,
  readIndexRecords,
  writeIndexHeader,
  writeIndexRecord,
} from '../../../origin/live/archive-index';
import { timeRanges } from '../../../origin/live/status';

const io: ArchiveIo = { read: FILE_STORAGE, write: FILE_ARCHIVE_STORAGE };
const TS = 10_000_000;
const T0 = 17_956_855_590_000_000n; // a UTC time at 10 MHz: past 2^53
const INIT = new Uint8Array(100).fill(7);
const fragment = (
  i: number,
  seconds = 2,
): { time: bigint; duration: number; keyframe: boolean; bytes: Uint8Array } => ({
  time: T0 + BigInt(i * seconds * TS),
  duration: seconds * TS,
  keyframe: true,
  bytes: new Uint8Array(1000 + i).fill(i & 0xff),
});

test('crc32 is zlib’s', () => {
  expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
});

test('index records round-trip with exact 64-bit times; a flipped bit ends the index there', () => {
  const records = [0, 1, 2].map((i) => ({
    time: T0 + BigInt(i),
    duration: TS * 2,
    offset: 100 + i * 10,
    size: 10,
    keyframe: i !== 1,
    events: i === 2,
  }));
  const body = Buffer.concat(records.map(writeIndexRecord));
  expect(readIndexRecords(body, 1000)).toEqual({ records, valid: 3, bytes: 3 * INDEX_RECORD_BYTES });
  expect(readIndexHeader(writeIndexHeader({ timescale: TS, initSize: 100 }))).toEqual({ timescale: TS, initSize: 100 });
  const bad = Buffer.from(body);
  bad[INDEX_RECORD_BYTES + 9]! ^= 1;
  expect(readIndexRecords(bad, 1000).valid).toBe(1);
  // A record pointing past the media file does not check either.
  expect(readIndexRecords(body, 125).valid).toBe(2);
});

const PRODUCER = { ntp: 0xeb5f_3c2a_8000_0000n, mediaTime: T0 + 5n, flags: 24 };

test('a producer time rides ahead of its fragment record (flag bit 2); either half alone is a torn tail', () => {
  const plain = { time: T0, duration: TS, offset: 100, size: 10, keyframe: true, events: false };
  const timed = { ...plain, time: T0 + BigInt(TS), offset: 110, producer: PRODUCER };
  const two = Buffer.from(writeIndexRecord(timed));
  expect(two.byteLength).toBe(2 * INDEX_RECORD_BYTES);
  expect(two.toString('latin1', 0, 4)).toBe('OLPT');
  expect(two.toString('latin1', 40, 44)).toBe('OLFR');
  expect(two.readUInt32BE(40 + 32)).toBe(1 | 4);
  const body = Buffer.concat([
    writeIndexRecord(plain),
    two,
    writeIndexRecord({ ...plain, time: T0 + 2n * BigInt(TS), offset: 120 }),
  ]);
  expect(readIndexRecords(body, 1000)).toEqual({
    records: [plain, timed, { ...plain, time: T0 + 2n * BigInt(TS), offset: 120 }],
    valid: 3,
    bytes: 4 * INDEX_RECORD_BYTES,
  });
  // The producer record without its fragment's (a crash between): one record kept, 40 bytes.
  expect(readIndexRecords(body.subarray(0, 80), 1000)).toMatchObject({ valid: 1, bytes: INDEX_RECORD_BYTES });
  // A fragment record whose bit 2 says a producer record precedes it, without one.
  const orphan = Buffer.concat([writeIndexRecord(plain), two.subarray(40)]);
  expect(readIndexRecords(orphan, 1000)).toMatchObject({ valid: 1, bytes: INDEX_RECORD_BYTES });
  // Two producer records in a row, or one whose crc fails.
  expect(readIndexRecords(Buffer.concat([two.subarray(0, 40), two]), 1000).valid).toBe(0);
  const flipped = Buffer.from(two);
  flipped[7]! ^= 1;
  expect(readIndexRecords(flipped, 1000).valid).toBe(0);
});

test('the header is version 2; version 1 files (no producer records) are read alike', () => {
  const h = Buffer.from(writeIndexHeader({ timescale: TS, initSize: 100 }));
  expect(h.readUInt32BE(4)).toBe(2);
  h.writeUInt32BE(1, 4);
  expect(readIndexHeader(h)).toEqual({ timescale: TS, initSize: 100 });
  h.writeUInt32BE(3, 4);
  expect(readIndexHeader(h)).toBeUndefined();
});

test('producer times are archived with their fragments and survive a reload', async () => {
  const dir = path.join(tempDir('origin-archive-'), 'v-1');
  const { archive } = await TrackArchive.open(io, dir, { type: 'video', timescale: TS }, { segmentSeconds: 0 });
  await archive.append(INIT, fragment(0));
  const published = await archive.append(INIT, { ...fragment(1), producer: PRODUCER });
  expect(published!.record.producer).toEqual(PRODUCER);
  await archive.close();
  const again = await TrackArchive.open(io, dir, { type: 'video', timescale: TS }, { segmentSeconds: 0 });
  expect(again.report).toEqual({ files: 1, fragments: 2, droppedRecords: 0, droppedBytes: 0 });
  expect(again.archive.files[0]!.records.map((r) => r.producer)).toEqual([undefined, PRODUCER]);
  // Torn after the producer record: reload cuts the index back to the first fragment's record.
  const index = path.join(dir, `${T0}.idx`);
  fs.truncateSync(index, INDEX_HEADER_BYTES + 2 * INDEX_RECORD_BYTES);
  await again.archive.close();
  const torn = await TrackArchive.open(io, dir, { type: 'video', timescale: TS }, { segmentSeconds: 0 });
  expect(torn.report).toMatchObject({ fragments: 1, droppedRecords: 1, droppedBytes: 1001 });
  expect(fs.statSync(index).size).toBe(INDEX_HEADER_BYTES + INDEX_RECORD_BYTES);
  await torn.archive.close();
});

test('append, reload and continue', async () => {
  const dir = path.join(tempDir('origin-archive-'), 'v-1');
  const { archive } = await TrackArchive.open(io, dir, { type: 'video', timescale: TS }, { segmentSeconds: 0 });
  for (let i = 0; i < 3; i++) await archive.append(INIT, fragment(i));
  await archive.append(INIT, fragment(1)); // a duplicate is not written again
  await archive.close();
  const media = path.join(dir, `${T0}.cmfv`);
  expect(fs.statSync(media).size).toBe(100 + 1000 + 1001 + 1002);
  const again = await TrackArchive.open(io, dir, { type: 'video', timescale: TS }, { segmentSeconds: 0 });
  expect(again.report).toEqual({ files: 1, fragments: 3, droppedRecords: 0, droppedBytes: 0 });
  expect(Buffer.from((await again.archive.storedInit())!)).toEqual(Buffer.from(INIT));
  await again.archive.append(INIT, fragment(3));
  expect(again.archive.count).toBe(4);
  expect(timeRanges(again.archive.files.flatMap((f) => f.records))).toEqual([{ start: T0, end: T0 + BigInt(8 * TS) }]);
  await again.archive.close();
});

test('files of archive_segment_length; purge removes whole files older than the retention, never the newest', async () => {
  const dir = path.join(tempDir('origin-archive-'), 'a-2');
  const { archive } = await TrackArchive.open(io, dir, { type: 'audio', timescale: TS }, { segmentSeconds: 4 });
  for (let i = 0; i < 6; i++) await archive.append(INIT, fragment(i));
  expect(archive.files.map((f) => f.records.length)).toEqual([2, 2, 2]);
  expect(await archive.purge(T0 + BigInt(8 * TS))).toBe(2);
  expect(fs.readdirSync(dir).sort()).toEqual([`${T0 + BigInt(8 * TS)}.cmfa`, `${T0 + BigInt(8 * TS)}.idx`]);
  expect(archive.has(T0)).toBe(false);
  expect(archive.count).toBe(2);
  expect(await archive.purge(T0 + BigInt(100 * TS))).toBe(0);
  await archive.close();
});

describe('a torn tail is detected and cut off on reload', () => {
  async function written(): Promise<{
    dir: string;
    media: string;
    index: string;
    goodMedia: number;
    goodIndex: number;
  }> {
    const dir = path.join(tempDir('origin-archive-'), 'v-1');
    const { archive } = await TrackArchive.open(io, dir, { type: 'video', timescale: TS }, { segmentSeconds: 0 });
    for (let i = 0; i < 3; i++) await archive.append(INIT, fragment(i));
    await archive.close();
    const media = path.join(dir, `${T0}.cmfv`);
    const index = path.join(dir, `${T0}.idx`);
    return { dir, media, index, goodMedia: fs.statSync(media).size, goodIndex: fs.statSync(index).size };
  }

  const reopen = (dir: string) => TrackArchive.open(io, dir, { type: 'video', timescale: TS }, { segmentSeconds: 0 });

  test('a fragment written without its index record (killed between the two writes)', async () => {
    const w = await written();
    fs.appendFileSync(w.media, Buffer.alloc(1500, 9));
    const { archive, report } = await reopen(w.dir);
    expect(report).toEqual({ files: 1, fragments: 3, droppedRecords: 0, droppedBytes: 1500 });
    expect(fs.statSync(w.media).size).toBe(w.goodMedia);
    await archive.append(INIT, fragment(3));
    await archive.close();
    const again = await reopen(w.dir);
    expect(again.report.fragments).toBe(4);
    await again.archive.close();
  });

  test('half an index record, and a fragment cut in the middle', async () => {
    const w = await written();
    fs.truncateSync(w.media, w.goodMedia - 300); // the third fragment lost its end
    fs.appendFileSync(
      w.index,
      writeIndexRecord({
        time: T0 + 99n,
        duration: 1,
        offset: w.goodMedia,
        size: 10,
        keyframe: true,
        events: false,
      }).subarray(0, 17),
    );
    const { archive, report } = await reopen(w.dir);
    expect(report).toEqual({ files: 1, fragments: 2, droppedRecords: 2, droppedBytes: 1002 - 300 });
    expect(fs.statSync(w.index).size).toBe(INDEX_HEADER_BYTES + 2 * INDEX_RECORD_BYTES);
    expect(archive.has(T0 + BigInt(4 * TS))).toBe(false);
    // The lost fragment comes again (an encoder's resend) and is archived.
    await archive.append(INIT, fragment(2));
    expect(archive.count).toBe(3);
    await archive.close();
  });

  test('an index whose header is torn: the file was never published, and is removed', async () => {
    const dir = path.join(tempDir('origin-archive-'), 'v-1');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${T0}.cmfv`), INIT.subarray(0, 50));
    fs.writeFileSync(path.join(dir, `${T0}.idx`), writeIndexHeader({ timescale: TS, initSize: 100 }).subarray(0, 20));
    const { archive, report } = await reopen(dir);
    expect(report.files).toBe(0);
    expect(fs.readdirSync(dir)).toEqual([]);
    await archive.close();
  });
});
