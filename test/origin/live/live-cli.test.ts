// `origin serve --workers 2 --ingest-port`, the built CLI: the primary takes ingest and owns the
// archive, both workers answer the channel's state from it; killed with SIGKILL mid-stream and
// started again, the origin reloads the archive (a torn tail dropped), lists every fragment it
// had published, byte for byte, and the reconnecting encoder continues the timeline. The workers'
// fragment tables, fed by the primary's messages with some dropped on purpose, answer every
// fragment the index files hold.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { media, tempDir } from '../../helpers/fixtures';
import { ArchiveJson, createChannel, eventually, LiveState } from '../../helpers/live';
import { ServedCli, serveCli, stopCli } from '../../helpers/live-cli';
import { httpGet, loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { readIndexRecords, writeIndexRecord, INDEX_HEADER_BYTES } from '../../../origin/live/archive-index';
import { readChannelStatus, readTrackRecords } from '../../../origin/live/channel-reader';
import { timeRanges } from '../../../origin/live/status';
import { FILE_STORAGE } from '../../../origin/io/storage';
import { exited, linux } from '../server/cli-origin';

const maybe = linux ? test : test.skip;
const NOW = Math.floor(Date.now() / 1000);
const muxed = loadFixture(media('muxed_av.ismv'));

/** A channel archived in 4-s files, in a new root, served by the built CLI with two workers. */
async function serveChannel(prefix: string, env: NodeJS.ProcessEnv = {}): Promise<{ root: string; o: ServedCli }> {
  const root = tempDir(prefix);
  await createChannel(root, 'ch', ['--archiving', '--archive_segment_length=4']);
  return { root, o: await serveCli(root, ['--workers', '2'], env) };
}

/** The test encoder posting the muxed fixture to the channel as stream `ffmpeg`, anchored at NOW. */
const encoderOn = (o: ServedCli): TestEncoder =>
  new TestEncoder({ channelUrl: `${o.ingest}/live/ch.isml`, stream: 'ffmpeg', fixture: muxed, anchorSeconds: NOW });

const state = async (o: ServedCli): Promise<LiveState> =>
  JSON.parse((await httpGet(`${o.url}/live/ch.isml/state?format=json`)).body) as LiveState;
const archive = async (o: ServedCli): Promise<ArchiveJson> =>
  JSON.parse((await httpGet(`${o.url}/live/ch.isml/archive`)).body) as ArchiveJson;

/** Every published fragment's bytes, read straight from the archive files: `<track>@<time>` → bytes. */
function publishedBytes(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const dir = path.join(root, 'live', 'ch.isml.archive');
  for (const track of fs.readdirSync(dir).filter((n) => !n.endsWith('.json'))) {
    for (const idx of fs.readdirSync(path.join(dir, track)).filter((n) => n.endsWith('.idx'))) {
      const mediaFile = fs
        .readdirSync(path.join(dir, track))
        .find((n) => n.startsWith(idx.replace('.idx', '.')) && !n.endsWith('.idx'))!;
      const bytes = fs.readFileSync(path.join(dir, track, mediaFile));
      const index = fs.readFileSync(path.join(dir, track, idx));
      for (const r of readIndexRecords(index.subarray(INDEX_HEADER_BYTES), bytes.byteLength).records)
        out.set(`${track}@${r.time}`, bytes.subarray(r.offset, r.offset + r.size));
    }
  }
  return out;
}

maybe(
  'two workers see the channel; SIGKILL mid-stream, a torn tail, restart: nothing published is lost, the encoder continues',
  async () => {
    const served = await serveChannel('origin-live-cli-');
    const root = served.root;
    let o = served.o;
    try {
      const enc = encoderOn(o);
      await enc.open();
      await enc.send(0, 8);
      // Both workers answer from the primary's archive: several requests, one answer.
      const seen = await eventually(
        () => state(o),
        (s) => s.tracks.reduce((n, t) => n + t.fragments, 0) === 8,
      );
      expect(seen).toMatchObject({ state: 'started', encoders: 1 });
      for (let i = 0; i < 6; i++) expect((await state(o)).tracks.map((t) => t.fragments)).toEqual([4, 4]);
      await enc.send(8, 10);
      await eventually(
        () => state(o),
        (s) => s.tracks.reduce((n, t) => n + t.fragments, 0) === 10,
      );
      const before = await archive(o);
      const bytesBefore = publishedBytes(root);
      expect(bytesBefore.size).toBe(10);

      o.child.kill('SIGKILL');
      await exited(o.child);
      enc.drop();
      // A write cut short by the kill: half a fragment and half its index record at the end of the
      // newest video file.
      const dir = path.join(root, 'live', 'ch.isml.archive', 'ffmpeg-1');
      const newest = fs
        .readdirSync(dir)
        .filter((n) => n.endsWith('.idx'))
        .sort((a, b) => (BigInt(a.split('.')[0]!) < BigInt(b.split('.')[0]!) ? -1 : 1))
        .pop()!;
      const mediaFile = path.join(dir, newest.replace('.idx', '.cmfv'));
      const size = fs.statSync(mediaFile).size;
      fs.appendFileSync(mediaFile, enc.fragment(10).bytes.subarray(0, 700));
      fs.appendFileSync(
        path.join(dir, newest),
        writeIndexRecord({ time: 1n, duration: 1, offset: size, size: 9999, keyframe: true, events: false }).subarray(
          0,
          30,
        ),
      );

      o = await serveCli(root, ['--workers', '2']);
      const after = await archive(o);
      expect(after).toEqual(before);
      const bytesAfter = publishedBytes(root);
      expect([...bytesAfter.keys()]).toEqual([...bytesBefore.keys()]);
      for (const [k, b] of bytesBefore) expect(Buffer.compare(bytesAfter.get(k)!, b)).toBe(0);
      // Readers never trusted the torn tail; the ingest process cuts it when it opens the channel.
      expect(await state(o)).toMatchObject({ state: 'started', encoders: 0 });

      // The encoder comes back (a new process: the same header, the last two fragments again).
      const back = encoderOn(o);
      await back.open();
      await back.send(8, 14);
      expect((await back.close(true)).status).toBe(200);
      const records = fs.readFileSync(path.join(dir, newest)).subarray(INDEX_HEADER_BYTES);
      expect(readIndexRecords(records, fs.statSync(mediaFile).size).valid * 40).toBe(records.byteLength);
      const end = await eventually(
        () => state(o),
        (s) => s.state === 'stopped',
      );
      expect(end.tracks.map((t) => [t.fragments, t.gaps, t.duplicatesDropped])).toEqual([
        [7, 0, 1],
        [7, 0, 1],
      ]);
      for (const t of (await archive(o)).tracks) expect(t.ranges).toHaveLength(1);
    } finally {
      await stopCli(o, 'SIGTERM');
    }
  },
  60_000,
);

/** Each track's ranges as the index files on disk say, as /archive spells them. */
async function rangesOnDisk(root: string, isml: string): Promise<Array<{ track: string; ranges: string[] }>> {
  const s = await readChannelStatus(FILE_STORAGE, root, isml);
  const out = [];
  for (const t of s.tracks) {
    const ranges = timeRanges(await readTrackRecords(FILE_STORAGE, root, isml, t));
    out.push({ track: t.key, ranges: ranges.map((r) => `${r.start}-${r.end}`) });
  }
  return out;
}

maybe(
  'two workers, every third message of the primary dropped in each: both answer every published fragment',
  async () => {
    const { root, o } = await serveChannel('origin-live-table-', { ORIGIN_TEST_DROP_LIVE_MESSAGES: '3' });
    try {
      const enc = encoderOn(o);
      await enc.open();
      const answered = async (): Promise<Array<{ track: string; ranges: string[] }>> =>
        (await archive(o)).tracks.map((t) => ({ track: t.track, ranges: t.ranges.map((r) => `${r.start}-${r.end}`) }));
      for (let step = 0; step < 6; step++) {
        // Two fragments at a time; a gap after the fourth step (fragments 8 and 9 never sent).
        const from = step < 4 ? step * 2 : step * 2 + 2;
        await enc.send(from, from + 2);
        const published = step < 4 ? from + 2 : from;
        await eventually(
          () => state(o),
          (x) => x.tracks.reduce((n, t) => n + t.fragments, 0) === published,
        );
        const truth = await rangesOnDisk(root, '/live/ch.isml');
        // New connections alternate between the workers (cluster round robin): both answer.
        for (let i = 0; i < 6; i++) expect(await answered()).toEqual(truth);
      }
      expect((await enc.close(true)).status).toBe(200);
      const truth = await rangesOnDisk(root, '/live/ch.isml');
      expect(truth.map((t) => t.ranges.length)).toEqual([2, 2]);
      for (let i = 0; i < 4; i++) expect(await answered()).toEqual(truth);
    } finally {
      await stopCli(o, 'SIGTERM');
    }
  },
  60_000,
);
