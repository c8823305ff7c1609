// Failure drill (issue 21): two redundant encoders push the same channel (the same stream names,
// the same epoch-locked times), one is killed mid-stream. The channel goes on from the other: the
// manifests of every format keep advancing, every segment they list is served, and the archive
// index holds each fragment once with none missing (Azure fMP4 ingest §9, DASH-IF ingest
// §interface-1-failover: duplicates by (track, time) dropped, first wins).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { media } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { fetchSegments, listSegments } from '../../helpers/live-catalogue';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { INDEX_HEADER_BYTES, readIndexRecords } from '../../../origin/live/archive-index';

const NOW = Math.floor(Date.now() / 2000) * 2 - 40;
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));

let origin: LiveOrigin;
beforeAll(async () => {
  origin = await startLiveOrigin();
  await createChannel(origin.root, 'ch', ['--archiving', '--archive_segment_length=6', '--dvr_window_length=60']);
});
afterAll(() => origin.close());

function encoder(): [TestEncoder, TestEncoder] {
  const channelUrl = origin.channelUrl('ch');
  return [
    new TestEncoder({ channelUrl, stream: 'video-400k.cmfv', fixture: video, anchorSeconds: NOW }),
    new TestEncoder({ channelUrl, stream: 'audio-64k.cmfa', fixture: audio, anchorSeconds: NOW }),
  ];
}

/** Every track's index record times from the files on disk, oldest first. */
function indexTimes(): Map<string, bigint[]> {
  const out = new Map<string, bigint[]>();
  const dir = path.join(origin.root, 'live', 'ch.isml.archive');
  for (const track of fs.readdirSync(dir).filter((n) => !n.endsWith('.json'))) {
    const names = fs.readdirSync(path.join(dir, track));
    const times: bigint[] = [];
    for (const idx of names.filter((n) => n.endsWith('.idx'))) {
      const mediaName = names.find((n) => n.startsWith(idx.replace('.idx', '.')) && !n.endsWith('.idx'))!;
      const size = fs.statSync(path.join(dir, track, mediaName)).size;
      const bytes = fs.readFileSync(path.join(dir, track, idx)).subarray(INDEX_HEADER_BYTES);
      times.push(...readIndexRecords(bytes, size).records.map((r) => r.time));
    }
    out.set(
      track,
      times.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
    );
  }
  return out;
}

test('two redundant encoders, one killed mid-stream: manifests go on, every listed segment served, each fragment once', async () => {
  const a = encoder();
  const b = encoder();
  for (const p of [...a, ...b]) await p.open();
  const base = `${origin.serving.url}/live/ch.isml`;
  // Both push each fragment, a first then b, b sometimes ahead on one track.
  for (let g = 0; g < 8; g++) {
    await a[0].send(g);
    await b[0].send(g);
    await b[1].send(g);
    await a[1].send(g);
  }
  await eventually(
    () => origin.state('ch'),
    (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments === 8),
  );
  const before = await listSegments(base);
  expect((await fetchSegments(base, before)).size).toBeGreaterThan(0);

  // Encoder a dies in the middle of a fragment: half of video fragment 8 written, then the socket dropped.
  await a[0].push!.write(a[0].fragment(8).bytes.subarray(0, 500));
  a[0].drop();
  a[1].drop();
  for (let g = 8; g < 14; g++) {
    await b[0].send(g);
    await b[1].send(g);
  }
  const s = await eventually(
    () => origin.state('ch'),
    (x) => x.tracks.every((t) => t.fragments === 14),
  );
  expect(s.tracks.map((t) => [t.gaps, t.lateDropped, t.duplicatesDropped])).toEqual([
    [0, 0, 8],
    [0, 0, 8],
  ]);
  // The index: 14 fragments per track, each once, one fragment duration apart (none missing).
  for (const [track, times] of indexTimes()) {
    expect({ track, count: times.length }).toEqual({ track, count: 14 });
    for (let i = 1; i < times.length; i++) {
      expect(Number(times[i]! - times[i - 1]!)).toBeGreaterThanOrEqual(19_900_000);
      expect(Number(times[i]! - times[i - 1]!)).toBeLessThan(20_100_000);
    }
  }
  // The manifests went on: every format lists more, every URL listed before is still listed (a
  // 60-s window), and every listed segment is served.
  const after = await listSegments(base);
  for (const format of ['dash', 'hls-ts', 'hls-fmp4', 'smooth', 'hds'])
    expect(after.filter((x) => x.format === format).length).toBeGreaterThan(
      before.filter((x) => x.format === format).length,
    );
  const urls = new Set(after.map((x) => `${x.format} ${x.url}`));
  expect(before.filter((x) => !urls.has(`${x.format} ${x.url}`))).toEqual([]);
  expect((await fetchSegments(base, after)).size).toBe(new Set(after.map((x) => x.url)).size);
  for (const p of b) expect((await p.close(true)).status).toBe(200);
  await eventually(
    () => origin.state('ch'),
    (x) => x.state === 'stopped',
  );
});
