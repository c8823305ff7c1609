// Failure drill (issue 21): the origin killed with SIGKILL mid-stream and started again. The built
// CLI (`origin serve --workers 2 --ingest-port 0`) takes CMAF ingest from the test encoder (a
// video and an audio POST); before the kill every segment and init that every format lists (DASH,
// HLS MPEG-TS and fMP4, Smooth, HDS) is fetched; the kill comes while the encoder is still writing,
// a torn index record is left at a track's end as a cut-short write would leave it. After the
// restart every URL listed before is listed again and answers the same bytes, the archive index is
// whole, and the encoder (restarted by the harness: a new POST, the same header, its last two
// fragments again) continues the timeline with nothing missing and nothing twice.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { media, tempDir } from '../../helpers/fixtures';
import { createChannel, eventually, LiveState } from '../../helpers/live';
import { fetchSegments, listSegments, ListedSegment } from '../../helpers/live-catalogue';
import { ServedCli, serveCli, stopCli } from '../../helpers/live-cli';
import { httpGet, loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { INDEX_HEADER_BYTES, readIndexRecords, writeIndexRecord } from '../../../origin/live/archive-index';
import { linux } from '../server/cli-origin';

const maybe = linux ? test : test.skip;
// On the fixtures' 2-s grid, so that every format's numbering is exact.
const NOW = Math.floor(Date.now() / 2000) * 2;
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));

const state = async (o: ServedCli): Promise<LiveState> =>
  JSON.parse((await httpGet(`${o.url}/live/ch.isml/state?format=json`)).body) as LiveState;

function encoders(o: ServedCli): TestEncoder[] {
  const channelUrl = `${o.ingest}/live/ch.isml`;
  return [
    new TestEncoder({ channelUrl, stream: 'video-400k.cmfv', fixture: video, anchorSeconds: NOW }),
    new TestEncoder({ channelUrl, stream: 'audio-64k.cmfa', fixture: audio, anchorSeconds: NOW }),
  ];
}

/** Each track's index records, as the files on disk hold them: `<track>` → times, oldest first. */
function indexTimes(root: string): Map<string, bigint[]> {
  const out = new Map<string, bigint[]>();
  const dir = path.join(root, 'live', 'ch.isml.archive');
  for (const track of fs.readdirSync(dir).filter((n) => !n.endsWith('.json'))) {
    const times: bigint[] = [];
    const names = fs.readdirSync(path.join(dir, track));
    const idx = names
      .filter((n) => n.endsWith('.idx'))
      .sort((a, b) => (BigInt(a.slice(0, -4)) < BigInt(b.slice(0, -4)) ? -1 : 1));
    for (const i of idx) {
      const mediaName = names.find((n) => n.startsWith(i.replace('.idx', '.')) && !n.endsWith('.idx'))!;
      const size = fs.statSync(path.join(dir, track, mediaName)).size;
      const bytes = fs.readFileSync(path.join(dir, track, i)).subarray(INDEX_HEADER_BYTES);
      const read = readIndexRecords(bytes, size);
      expect(read.valid * 40).toBe(bytes.byteLength); // no torn record left behind
      times.push(...read.records.map((r) => r.time));
    }
    out.set(track, times);
  }
  return out;
}

/** Every listed URL of `before` is listed in `after` with the same MSN, PDT and time. */
function expectListedAgain(before: ListedSegment[], after: ListedSegment[]): void {
  const now = new Map(after.map((s) => [`${s.format} ${s.url}`, s]));
  const missing = before.filter((s) => !now.has(`${s.format} ${s.url}`)).map((s) => `${s.format} ${s.url}`);
  expect(missing).toEqual([]);
  for (const s of before) expect(now.get(`${s.format} ${s.url}`)).toEqual(s);
}

function expectSameBytes(before: Map<string, Buffer>, after: Map<string, Buffer>): void {
  const differ = [...before].filter(([url, b]) => after.get(url)?.equals(b) !== true).map(([url]) => url);
  expect(differ).toEqual([]);
}

maybe(
  'SIGKILL mid-stream, a torn record, restart: everything listed before is listed and byte-identical, the encoder continues',
  async () => {
    const root = tempDir('origin-kill-drill-');
    await createChannel(root, 'ch', ['--archiving', '--archive_segment_length=6', '--dvr_window_length=60']);
    let o = await serveCli(root);
    try {
      const [v, a] = encoders(o);
      await v!.open();
      await a!.open();
      await v!.send(0, 10);
      await a!.send(0, 10);
      await eventually(
        () => state(o),
        (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments === 10),
      );
      const base = `${o.url}/live/ch.isml`;
      const listed = await listSegments(base);
      // Every format lists media: DASH, both HLS, Smooth (lookahead 2), HDS.
      expect(new Set(listed.map((s) => s.format))).toEqual(new Set(['dash', 'hls-ts', 'hls-fmp4', 'smooth', 'hds']));
      const served = await fetchSegments(base, listed);

      // The kill lands while the encoder is writing the next fragments.
      const writing = Promise.all([v!.send(10, 12), a!.send(10, 12)]);
      await stopCli(o, 'SIGKILL');
      v!.drop();
      a!.drop();
      await writing;
      // A write cut short: half a record at the end of the newest video index.
      const dir = path.join(root, 'live', 'ch.isml.archive', 'video-400k.cmfv-1');
      const newest = fs
        .readdirSync(dir)
        .filter((n) => n.endsWith('.idx'))
        .sort((x, y) => (BigInt(x.slice(0, -4)) < BigInt(y.slice(0, -4)) ? -1 : 1))
        .pop()!;
      const record = writeIndexRecord({ time: 1n, duration: 1, offset: 0, size: 9999, keyframe: true, events: false });
      fs.appendFileSync(path.join(dir, newest), record.subarray(0, 23));

      o = await serveCli(root);
      const again = `${o.url}/live/ch.isml`;
      expect(await state(o)).toMatchObject({ state: 'started', encoders: 0 });
      expectListedAgain(listed, await listSegments(again));
      expectSameBytes(served, await fetchSegments(again, listed));
      const kept = indexTimes(root);

      // The harness restarts the encoder: a new POST, the same header, its last two fragments again.
      const [v2, a2] = encoders(o);
      await v2!.open();
      await a2!.open();
      const from = Math.min(...[...kept.values()].map((t) => t.length)) - 2;
      await v2!.send(from, 16);
      await a2!.send(from, 16);
      const end = await eventually(
        () => state(o),
        (s) => s.tracks.every((t) => t.fragments === 16),
      );
      expect(end.tracks.map((t) => [t.gaps, t.lateDropped])).toEqual([
        [0, 0],
        [0, 0],
      ]);
      // The index: 16 fragments per track, each once, contiguous on the 2-s grid.
      for (const [track, times] of indexTimes(root)) {
        expect({ track, times: times.length }).toEqual({ track, times: 16 });
        // 2-s fragments at 10 MHz (AAC frames make audio's 2.0053 or 2.0 s): each step one fragment.
        for (let i = 1; i < times.length; i++)
          expect(Number(times[i]! - times[i - 1]!)).toBeGreaterThanOrEqual(19_900_000);
        for (let i = 1; i < times.length; i++) expect(Number(times[i]! - times[i - 1]!)).toBeLessThan(20_100_000);
      }
      const later = await listSegments(again);
      expectListedAgain(listed, later);
      expectSameBytes(served, await fetchSegments(again, listed));
      // What the window lists now is served, new segments included.
      expect((await fetchSegments(again, later)).size).toBeGreaterThan(served.size);
      expect((await v2!.close(true)).status).toBe(200);
      expect((await a2!.close(true)).status).toBe(200);
    } finally {
      await stopCli(o, 'SIGTERM');
    }
  },
  90_000,
);
