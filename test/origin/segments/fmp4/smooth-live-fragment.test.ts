// A live Smooth fragment of a hand-built channel (the fixture on UTC, test/origin/live/
// live-presentation.ts), made by the segment reader from the fixture's real moofs: a fresh tfxd
// with the fragment's own UTC time, a tfrf with the next `lookahead` fragments' UTC times and
// durations, the samples untouched. Times are read back with the tests' own box walk (exact
// 64-bit) and the boxes recognised by mp4box.

import { readFileSync } from 'node:fs';
import { createFile, MP4BoxBuffer } from 'mp4box';
import { openFile, withSource } from '../../../../origin/io/source';
import { lookaheadOf } from '../../../../origin/model/lookahead';
import { Presentation } from '../../../../origin/model/presentation';
import { assembleSegment } from '../../../../origin/segments/fmp4/media-segment';
import { readSegmentParts } from '../../../../origin/segments/fmp4/segment-parts';
import { boxes } from '../../../helpers/box-walk';
import { viewOf } from '../../../helpers/presentations';
import { channelWindow } from '../../live/live-presentation';
import { presentationOf } from '../../manifests/format-support';

const TFXD = '6d1d9b0542d544e680e2141daff757b2';
const TFRF = 'd4807ef2ca3946958e5426cb9e46a79f';

let channel: Presentation;
beforeAll(async () => {
  channel = channelWindow(await presentationOf(['video_baseline_400k.ismv', 'audio_eng_64k.isma']), 3, 9);
});

async function fragment(trackIndex: number, i: number, ended = false): Promise<Buffer> {
  const vt = viewOf(channel, 'smooth').tracks[trackIndex]!;
  const next = lookaheadOf(vt.segments, i, { count: 2, ended });
  const mode = { kind: 'smooth-live' as const, lookahead: 2, next };
  const { parts } = await readSegmentParts(openFile, vt.track, vt.segments.segment(i), channel, mode);
  return Buffer.from(await withSource(openFile, vt.track.src, (s) => assembleSegment(s, parts)));
}

interface Uuids {
  tfxd: { time: bigint; duration: bigint };
  tfrf: Array<{ time: bigint; duration: bigint }>;
  tfdt: bigint;
}

/** The one traf's tfdt, tfxd and tfrf, exact. */
function uuids(bytes: Buffer): Uuids {
  const [moof, mdat, ...rest] = boxes(bytes);
  expect([moof!.type, mdat!.type, rest.length]).toEqual(['moof', 'mdat', 0]);
  const trafs = boxes(moof!.body).filter((b) => b.type === 'traf');
  expect(trafs).toHaveLength(1);
  const inner = boxes(trafs[0]!.body);
  const of = (uuid: string) => inner.filter((b) => b.type === 'uuid' && b.body.toString('hex', 0, 16) === uuid);
  const [x] = of(TFXD);
  const [r] = of(TFRF);
  expect([of(TFXD).length, of(TFRF).length]).toEqual([1, 1]);
  expect([x!.body[16], r!.body[16]]).toEqual([1, 1]); // version 1
  const count = r!.body[20]!;
  expect(r!.body.length).toBe(21 + 16 * count);
  const tfdt = inner.find((b) => b.type === 'tfdt')!;
  return {
    tfxd: { time: x!.body.readBigUInt64BE(20), duration: x!.body.readBigUInt64BE(28) },
    tfrf: Array.from({ length: count }, (_, k) => ({
      time: r!.body.readBigUInt64BE(21 + 16 * k),
      duration: r!.body.readBigUInt64BE(29 + 16 * k),
    })),
    tfdt: tfdt.body.readBigUInt64BE(4),
  };
}

test.each([
  ['video', 0],
  ['audio', 1],
])('%s: tfxd says the fragment, tfrf the next two, on the manifest clock', async (_, trackIndex) => {
  const s = viewOf(channel, 'smooth').tracks[trackIndex]!.segments;
  for (const i of [0, 3, 6]) {
    const u = uuids(await fragment(trackIndex, i));
    expect(u.tfxd).toEqual({ time: s.smoothTime(i), duration: s.duration(i) });
    expect(u.tfdt).toBe(s.smoothTime(i));
    expect(u.tfrf).toEqual([1, 2].map((k) => ({ time: s.smoothTime(i + k), duration: s.duration(i + k) })));
    expect(u.tfxd.time).toBeGreaterThan(2n ** 53n);
  }
});

test('the samples are the source fragment’s, byte for byte', async () => {
  const vt = viewOf(channel, 'smooth').tracks[0]!;
  const f = vt.track.fragments;
  const source = readFileSync(vt.track.src).subarray(f.offsets[4]!, f.offsets[4]! + f.sizes[4]!);
  const out = await fragment(0, 4);
  expect(boxes(out)[1]!.body.equals(boxes(source)[1]!.body)).toBe(true);
});

test('after the end of stream the last fragments list the successors they have', async () => {
  expect(uuids(await fragment(0, 7, true)).tfrf).toHaveLength(1);
  expect(uuids(await fragment(0, 8, true)).tfrf).toHaveLength(0);
});

test('mp4box recognises the TfxdBox and TfrfBox in the fragment', async () => {
  const file = createFile();
  file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(new Uint8Array(await fragment(0, 2)).buffer, 0));
  file.flush();
  const moof = (
    file as unknown as {
      boxes: Array<{ type: string; trafs: Array<{ boxes: Array<{ box_name?: string; fragment_count?: number }> }> }>;
    }
  ).boxes.find((b) => b.type === 'moof')!;
  const names = moof.trafs[0]!.boxes.map((b) => b.box_name);
  expect(names).toEqual(expect.arrayContaining(['TfxdBox', 'TfrfBox']));
  expect(moof.trafs[0]!.boxes.find((b) => b.box_name === 'TfrfBox')!.fragment_count).toBe(2);
});
