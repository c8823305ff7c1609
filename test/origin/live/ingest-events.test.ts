// Timed metadata on ingest (issue 27's live input): top-level `emsg` boxes before a moof, and a
// `urim` or `evte` metadata track pushed as its own stream, are archived (docs/design/live.md
// #timed-metadata). The archive files are read back with the VOD event reader
// (origin/media/event-index.ts): the events of the fixture (fixtures/make-timed-metadata.cjs),
// moved onto the ingest's UTC timeline, and nothing else. Bad events are refused, the channel
// unharmed.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileSource } from '../../../origin/io/source';
import { INDEX_HEADER_BYTES, readIndexRecords } from '../../../origin/live/archive-index';
import { readMediaFile } from '../../../origin/media/media-file';
import { readTrackEvents } from '../../../origin/media/event-index';
import { TimedEvent } from '../../../origin/model/timed-metadata';
import { media as fixtureMedia } from '../../helpers/fixtures';
import { createChannel, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { box, EMPTY_MFRA, Fixture, loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { EVENTS, inbandVideo, META_EVTE, META_URIM, SCTE35_SCHEME } from '../../helpers/timed-metadata';

const NOW = Math.floor(Date.now() / 1000);
const inband = inbandVideo();

let origin: LiveOrigin;

beforeAll(async () => {
  origin = await startLiveOrigin();
  for (const ch of ['inband', 'urim', 'evte', 'bad']) await createChannel(origin.root, ch, ['--archiving']);
});
afterAll(() => origin.close());

async function eventsOf(file: string, trackId = 1): Promise<TimedEvent[]> {
  const src = await FileSource.open(file);
  try {
    return await readTrackEvents(src, await readMediaFile(src, 'exact'), trackId);
  } finally {
    await src.close();
  }
}

/** The one archive file of a channel's track, and its index records. */
function archived(ch: string, track: string): { media: string; records: ReturnType<typeof readIndexRecords> } {
  const dir = path.join(origin.root, 'live', `${ch}.isml.archive`, track);
  const idx = fs.readdirSync(dir).find((n) => n.endsWith('.idx'))!;
  const media = path.join(
    dir,
    fs.readdirSync(dir).find((n) => n.startsWith(idx.slice(0, -3)) && !n.endsWith('.idx'))!,
  );
  const index = fs.readFileSync(path.join(dir, idx)).subarray(INDEX_HEADER_BYTES);
  return { media, records: readIndexRecords(index, fs.statSync(media).size) };
}

/** The fixture's events on the ingest's timeline: its media time 0 is NOW. */
const moved = (events: TimedEvent[]): TimedEvent[] =>
  events.map((e) => ({ ...e, time: e.time + BigInt(NOW) * BigInt(e.timescale) }));

async function pushAll(ch: string, stream: string, fixture: Fixture): Promise<void> {
  const enc = new TestEncoder({ channelUrl: origin.channelUrl(ch), stream, fixture, anchorSeconds: NOW });
  await enc.open();
  await enc.send(0, fixture.fragments.length);
  const a = await enc.close(true);
  expect([a.status, a.body]).toEqual([200, expect.stringMatching(/^5 fragments archived/)]);
}

test('inband emsg boxes stay ahead of their moof in the archive; the index marks those fragments', async () => {
  const fixture = loadFixture(inband);
  await pushAll('inband', 'video', fixture);
  const vod = await eventsOf(inband);
  expect(vod.length).toBe(EVENTS.length);
  const { media, records } = archived('inband', 'video-1');
  // Read back as any fragmented MP4 with inband events: every event, on the UTC timeline.
  expect(await eventsOf(media)).toEqual(moved(vod));
  const withEvents = fixture.fragments.map((f) => f.bytes[4] === 0x65); // 'e' of emsg leads the bytes
  expect(records.records.map((r) => r.events)).toEqual(withEvents);
  expect(withEvents.some((x) => x) && !withEvents.every((x) => x)).toBe(true);
  const s = await origin.state('inband');
  expect(s.tracks[0]).toMatchObject({ fragments: 5, events: EVENTS.length });
});

test.each([
  ['urim', META_URIM],
  ['evte', META_EVTE],
])('a %s metadata track pushed as its own stream is archived with its events', async (kind, file) => {
  await pushAll(kind, `meta-${kind}.cmfm`, loadFixture(file));
  const { media, records } = archived(kind, `meta-${kind}.cmfm-1`);
  expect(media.endsWith('.cmfm')).toBe(true);
  expect(records.valid).toBe(5);
  const vod = await eventsOf(file);
  expect(vod.length).toBe(EVENTS.length);
  expect(await eventsOf(media)).toEqual(moved(vod));
  const s = await origin.state(kind);
  expect(s.tracks[0]).toMatchObject({ type: 'data', fragments: 5 });
  // Events repeat in every sample they overlap: the count is of events read, at least one each.
  expect(s.tracks[0]!.events).toBeGreaterThanOrEqual(EVENTS.length);
});

/** An emsg version 1 box (ISO/IEC 23009-1 §5.10.3.3). */
function emsgV1(o: { scheme: string; data: Uint8Array; time?: bigint; nul?: boolean }): Uint8Array {
  const head = Buffer.alloc(24);
  head.writeUInt32BE(0x01000000, 0);
  head.writeUInt32BE(1000, 4);
  head.writeBigUInt64BE(o.time ?? BigInt(NOW) * 1000n, 8);
  head.writeUInt32BE(0, 16);
  head.writeUInt32BE(7, 20);
  const strings = o.nul === false ? Buffer.from(o.scheme) : Buffer.from(`${o.scheme}\0\0`);
  return box('emsg', head, strings, o.data);
}

describe('bad events: refused, the channel unharmed', () => {
  const video = loadFixture(fixtureMedia('video_baseline_400k.ismv'));
  const scte = Buffer.from(EVENTS.find((e) => e.scheme === SCTE35_SCHEME)!.data, 'hex');
  let next = 0;

  /** A new POST: the header, a good fragment, then `bad`; answers the status and error code. */
  async function refused(bad: (enc: TestEncoder) => Uint8Array[]): Promise<[number, unknown]> {
    const enc = new TestEncoder({
      channelUrl: origin.channelUrl('bad'),
      stream: 'v',
      fixture: video,
      anchorSeconds: NOW,
    });
    await enc.open();
    await enc.send(next, next + 1);
    next++;
    for (const b of bad(enc)) await enc.push!.write(b);
    const a = await enc.close();
    return [a.status, a.headers['x-origin-error']];
  }

  test('a SCTE-35 section whose CRC does not match', async () => {
    const broken = Buffer.from(scte);
    broken[broken.length - 1]! ^= 1;
    const r = await refused((enc) => [emsgV1({ scheme: SCTE35_SCHEME, data: broken }), enc.fragment(next).bytes]);
    expect(r).toEqual([400, 'ingest-bad-box']);
  });

  test('an emsg whose strings lack their NUL', async () => {
    const r = await refused((enc) => [
      emsgV1({ scheme: 'urn:x', data: new Uint8Array(), nul: false }),
      enc.fragment(next).bytes,
    ]);
    expect(r).toEqual([400, 'ingest-bad-box']);
  });

  test('an emsg with no fragment after it: before the end of the body, before an mfra', async () => {
    const good = emsgV1({ scheme: SCTE35_SCHEME, data: scte });
    expect(await refused(() => [good])).toEqual([400, 'ingest-bad-box']);
    expect(await refused(() => [good, EMPTY_MFRA])).toEqual([400, 'ingest-bad-box']);
  });

  test('over a megabyte of emsg before one fragment', async () => {
    const big = emsgV1({ scheme: 'urn:x', data: new Uint8Array(600_000) });
    expect(await refused(() => [big, big])).toEqual([400, 'ingest-box-too-large']);
  });

  test('the good fragments of those pushes were archived, nothing of the bad ones', async () => {
    const s = await origin.state('bad');
    expect(s.tracks[0]).toMatchObject({ fragments: next, events: 0 });
    const { records } = archived('bad', 'v-1');
    expect(records.records.map((r) => r.events)).toEqual(new Array(next).fill(false));
  });
});
