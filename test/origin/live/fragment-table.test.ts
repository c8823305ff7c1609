// The serving side's fragment table (origin/live/fragment-table.ts) against a real ingest
// listener and its archive on disk: the messages the ingest sends are handed to tables by the
// test, some dropped on purpose; whatever was dropped, each table answers what the index files
// say (read here with readTrackRecords, the storage seam), and reads them only when it must.

import { media } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { FILE_STORAGE } from '../../../origin/io/storage';
import { LiveFragment, readChannelStatus, readTrackRecords } from '../../../origin/live/channel-reader';
import {
  isLivePublished,
  LiveFragmentTable,
  LivePublished,
  publishedMessage,
} from '../../../origin/live/fragment-table';
import { ChannelStatus, TrackStatus } from '../../../origin/live/status';

const NOW = Math.floor(Date.now() / 1000);
const muxed = loadFixture(media('muxed_av.ismv'));

let origin: LiveOrigin;
/** Every message of the ingest, per channel, in the order sent. */
const sent = new Map<string, LivePublished[]>();

beforeAll(async () => {
  origin = await startLiveOrigin({
    onPublish: (m) => {
      const list = sent.get(m.live) ?? [];
      list.push(m);
      sent.set(m.live, list);
    },
  });
  for (const ch of ['all', 'dropped', 'last', 'later'])
    await createChannel(origin.root, ch, [
      '--archiving',
      '--archive_segment_length=4',
      '--restart_on_encoder_reconnect',
    ]);
  // Four seconds kept, in files of two: the oldest files go as the stream grows.
  await createChannel(origin.root, 'purged', ['--dvr_window_length=4', '--archive_segment_length=2']);
});
afterAll(() => origin.close());

const messages = (ch: string): LivePublished[] => sent.get(`/live/${ch}.isml`) ?? [];
const table = (): LiveFragmentTable => new LiveFragmentTable(FILE_STORAGE, origin.root);
const status = (ch: string): Promise<ChannelStatus> => readChannelStatus(FILE_STORAGE, origin.root, `/live/${ch}.isml`);

/** Pushes fragments [from, to) on one POST; answered once each is published (its message sent). */
async function push(ch: string, from: number, to: number, end = false): Promise<void> {
  const enc = new TestEncoder({ channelUrl: origin.channelUrl(ch), stream: 'enc', fixture: muxed, anchorSeconds: NOW });
  await enc.open();
  await enc.send(from, to);
  expect((await enc.close(end)).status).toBe(200);
}

/** What the index files say of every track of a channel, and what the table answers. */
async function compare(
  ch: string,
  t: LiveFragmentTable,
): Promise<{ truth: LiveFragment[][]; table: LiveFragment[][] }> {
  const s = await status(ch);
  const truth: LiveFragment[][] = [];
  const answered: LiveFragment[][] = [];
  for (const track of s.tracks) {
    truth.push(await readTrackRecords(FILE_STORAGE, origin.root, `/live/${ch}.isml`, track));
    answered.push([...(await t.fragments(`/live/${ch}.isml`, track))]);
  }
  return { truth, table: answered };
}

test('every message handed over: the table is the index, and never reads it', async () => {
  await push('all', 0, 8);
  const t = table();
  for (const m of messages('all')) t.apply(m);
  const { truth, table: answered } = await compare('all', t);
  expect(truth.map((x) => x.length)).toEqual([4, 4]);
  expect(answered).toEqual(truth);
  expect(t.counts).toEqual({ extended: 8, missed: 0, ignored: 0, reads: 0 });
  // The same messages again (a repeat) change nothing.
  for (const m of messages('all')) t.apply(m);
  expect((await compare('all', t)).table).toEqual(truth);
  expect(t.counts).toMatchObject({ extended: 8, ignored: 8, reads: 0 });
});

test('messages dropped on purpose: the next one shows the gap, the index is read once, messages follow again', async () => {
  await push('dropped', 0, 8);
  const t = table();
  messages('dropped').forEach((m, i) => {
    if (i !== 2 && i !== 5) t.apply(m);
  });
  expect(t.counts.missed).toBeGreaterThan(0);
  let c = await compare('dropped', t);
  expect(c.table).toEqual(c.truth);
  expect(t.counts.reads).toBe(2); // each track once
  const seen = messages('dropped').length;
  await push('dropped', 6, 12); // a reconnect: the last two again (duplicates), then new ones
  for (const m of messages('dropped').slice(seen)) t.apply(m);
  c = await compare('dropped', t);
  expect(c.truth.map((x) => x.length)).toEqual([6, 6]);
  expect(c.table).toEqual(c.truth);
  expect(t.counts.reads).toBe(2);
});

test('the last message lost: the status file is newer than the table, which reads the index', async () => {
  await push('last', 0, 8, true);
  const t = table();
  const all = messages('last');
  const lastOf = new Set(['enc-1', 'enc-2'].map((k) => all.filter((m) => m.track === k).pop()));
  for (const m of all) if (!lastOf.has(m)) t.apply(m);
  expect(t.counts).toMatchObject({ missed: 0, reads: 0 });
  const c = await compare('last', t);
  expect(c.table).toEqual(c.truth);
  expect(c.truth.map((x) => x.length)).toEqual([4, 4]);
  expect(t.counts.reads).toBe(2);
});

test('a table started after the channel reads each track once, then follows the messages', async () => {
  await push('later', 0, 4);
  const t = table();
  const seen = messages('later').length;
  let c = await compare('later', t);
  expect(c.table).toEqual(c.truth);
  expect(t.counts.reads).toBe(2);
  await push('later', 4, 10);
  for (const m of messages('later').slice(seen)) t.apply(m);
  c = await compare('later', t);
  expect(c.truth.map((x) => x.length)).toEqual([5, 5]);
  expect(c.table).toEqual(c.truth);
  expect(t.counts).toMatchObject({ reads: 2, missed: 0, extended: 6 });
});

test('fragments of purged files leave the table with the message that says so', async () => {
  const t = table();
  const enc = new TestEncoder({
    channelUrl: origin.channelUrl('purged'),
    stream: 'enc',
    fixture: muxed,
    anchorSeconds: NOW,
  });
  await enc.open();
  await enc.send(0, 16);
  expect((await enc.close(true)).status).toBe(200);
  for (const m of messages('purged')) t.apply(m);
  const c = await compare('purged', t);
  expect(c.truth.map((x) => x.length).every((n) => n > 0 && n < 8)).toBe(true);
  expect(c.table).toEqual(c.truth);
  expect(t.counts.reads).toBe(0);
  const s = await eventually(
    () => status('purged'),
    (x) => x.state === 'stopped',
  );
  for (const [i, track] of s.tracks.entries())
    expect(c.table[i]!.every((f) => track.files.includes(f.file.toString()))).toBe(true);
});

test('isLivePublished: only well-formed messages are taken', () => {
  const good: LivePublished = {
    live: '/live/x.isml',
    track: 'enc-1',
    prev: null,
    records: [{ time: '17000000000000000', duration: 1, offset: 0, size: 1, keyframe: true, events: false, file: '1' }],
    files: ['1'],
  };
  expect(isLivePublished(good)).toBe(true);
  for (const bad of [
    null,
    'x',
    { origin: 'reconfigure' },
    { ...good, prev: 12 },
    { ...good, prev: '1e5' },
    { ...good, records: [{ ...good.records[0], time: 5 }] },
    { ...good, records: [{ ...good.records[0], file: 'x' }] },
    { ...good, files: [1] },
    { ...good, live: undefined },
  ])
    expect(isLivePublished(bad)).toBe(false);
});

test('a record’s producer time (prft) crosses the IPC as JSON and reaches the table', async () => {
  const producer = { ntp: 0xeb5f_3c2a_8000_0000n, mediaTime: 44_892_151_296n, flags: 24 };
  const record = { time: 44_892_151_296n, duration: 8, offset: 900, size: 100, keyframe: true, events: false };
  const m = publishedMessage('/live/x.isml', 'v-1', undefined, [{ ...record, producer, file: 5n }], [5n]);
  const wire: unknown = JSON.parse(JSON.stringify(m));
  expect(isLivePublished(wire)).toBe(true);
  const t = table();
  t.apply(wire as LivePublished);
  const track = { key: 'v-1', lastTime: record.time } as TrackStatus;
  expect(await t.fragments('/live/x.isml', track)).toEqual([{ ...record, producer, file: 5n }]);
  expect(t.counts.reads).toBe(0);
  // A producer time that is not decimal is no message of ours.
  const bad = JSON.parse(JSON.stringify(m)) as LivePublished;
  bad.records[0]!.producer!.ntp = '0x10';
  expect(isLivePublished(bad)).toBe(false);
});
