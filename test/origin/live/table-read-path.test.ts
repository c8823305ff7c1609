// Live output reads the serving process's fragment table (origin/live/fragment-table.ts), not the
// index files, when it builds a channel's presentation (live/channel-loader.ts, the `fragments`
// seam of loadChannelPresentation). The table is a hint kept by messages; the test drops every
// third message and, at each step of a stream (rotations, a gap, a purge), the presentation built
// from the table equals the one built from the index files: the same fragment table, the same
// archive files on the same byte axis, the same live description, so every writer's output is
// the same. With ORIGIN_LIVE_TABLE_BENCH=1 it also measures what one rebuild costs (one per
// publish) on a channel with a long window, both ways interleaved, and prints the ratio.

import { media } from '../../helpers/fixtures';
import { archivedTo, avEncoders, createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture } from '../../helpers/test-encoder';
import { FILE_STORAGE } from '../../../origin/io/storage';
import { channelVersion, HeadCache, loadChannelPresentation } from '../../../origin/live/channel-loader';
import { LiveFragmentTable, LivePublished } from '../../../origin/live/fragment-table';
import { Presentation } from '../../../origin/model/presentation';

const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));

let origin: LiveOrigin;
let table: LiveFragmentTable;
let received = 0;

beforeAll(async () => {
  origin = await startLiveOrigin({
    // Every third message lost on its way to this table.
    onPublish: (m: LivePublished) => {
      if (++received % 3 !== 0) table.apply(m);
    },
  });
  table = new LiveFragmentTable(FILE_STORAGE, origin.root);
  // Files of 6 s, 10 s kept: the oldest files are purged as the stream grows.
  await createChannel(origin.root, 'ch', ['--dvr_window_length=10', '--archive_segment_length=6']);
  await createChannel(origin.root, 'long', ['--archiving', '--archive_segment_length=60', '--dvr_window_length=3600']);
});
afterAll(() => origin.close());

async function both(isml: string): Promise<{ files: Presentation; table: Presentation }> {
  const version = (await channelVersion(FILE_STORAGE, origin.root, isml))!;
  const files = await loadChannelPresentation(FILE_STORAGE, origin.root, isml, version);
  const fromTable = await loadChannelPresentation(FILE_STORAGE, origin.root, isml, version, {
    fragments: (i, t) => table.fragments(i, t),
    heads: new HeadCache(),
  });
  return { files, table: fromTable };
}

/** What the writers read of a presentation's tracks, as plain values. */
function shape(p: Presentation): unknown {
  return {
    live: p.live,
    version: [p.mtimeMs, p.size],
    tracks: p.tracks.map((t) => ({
      src: t.src,
      properties: t.properties,
      times: Array.from(t.fragments.times, String),
      durations: Array.from(t.fragments.durations),
      offsets: Array.from(t.fragments.offsets),
      sizes: Array.from(t.fragments.sizes),
      keyframes: Array.from(t.fragments.keyframes),
      files: t.archive?.files,
      fileOf: Array.from(t.archive?.fileOf ?? []),
    })),
  };
}

test('the presentation from the fragment table equals the index files one, every third message dropped', async () => {
  const anchor = Math.floor(Date.now() / 2000) * 2 - 60;
  const [v, a] = avEncoders(origin.channelUrl('ch'), { video, audio }, anchor);
  await v.open();
  await a.open();
  const steps: Array<[number, number]> = [
    [0, 2],
    [2, 5],
    [5, 6],
    [8, 11], // a gap: fragments 6 and 7 never sent
    [11, 17], // the oldest files purged
    [17, 18],
  ];
  for (const [from, to] of steps) {
    await v.send(from, to);
    await a.send(from, to);
    await archivedTo(origin, 'ch', anchor + 2 * (to - 1));
    const p = await both('/live/ch.isml');
    expect(shape(p.table)).toEqual(shape(p.files));
  }
  // Messages were lost and the table noticed; the rest of the time it answered from memory.
  expect(table.counts.missed).toBeGreaterThan(0);
  expect(table.counts.extended).toBeGreaterThan(table.counts.reads);
  for (const p of [v, a]) expect((await p.close(true)).status).toBe(200);
});

const bench = process.env.ORIGIN_LIVE_TABLE_BENCH === '1' ? test : test.skip;

bench(
  'bench: one rebuild of a long-window channel, index files vs fragment table (interleaved)',
  async () => {
    const fragments = Number(process.env.ORIGIN_LIVE_TABLE_FRAGMENTS ?? 1800);
    const anchor = Math.floor(Date.now() / 2000) * 2 - 2 * fragments - 10;
    const [v, a] = avEncoders(origin.channelUrl('long'), { video, audio }, anchor);
    await v.open();
    await a.open();
    for (let g = 0; g < fragments; g += 50) {
      await v.send(g, Math.min(fragments, g + 50));
      await a.send(g, Math.min(fragments, g + 50));
    }
    await eventually(
      () => origin.state('long'),
      (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments === fragments),
      120_000,
    );
    const isml = '/live/long.isml';
    const version = (await channelVersion(FILE_STORAGE, origin.root, isml))!;
    const heads = new HeadCache();
    const viaTable = {
      fragments: (i: string, t: Parameters<LiveFragmentTable['fragments']>[1]) => table.fragments(i, t),
      heads,
    };
    await loadChannelPresentation(FILE_STORAGE, origin.root, isml, version, viaTable); // warm: the table reads once
    const rounds = 20;
    let files = 0;
    let fromTable = 0;
    for (let r = 0; r < rounds; r++) {
      let t = process.hrtime.bigint();
      await loadChannelPresentation(FILE_STORAGE, origin.root, isml, version);
      files += Number(process.hrtime.bigint() - t);
      t = process.hrtime.bigint();
      await loadChannelPresentation(FILE_STORAGE, origin.root, isml, version, viaTable);
      fromTable += Number(process.hrtime.bigint() - t);
    }
    const ms = (ns: number): string => (ns / rounds / 1e6).toFixed(2);
    console.log(
      `live rebuild, ${fragments} fragments per track in ${Math.ceil((fragments * 2) / 60)} files: index files ${ms(files)} ms, ` +
        `fragment table ${ms(fromTable)} ms, ratio ${(files / fromTable).toFixed(1)}× (${rounds} interleaved rounds)`,
    );
    expect(shape(await loadChannelPresentation(FILE_STORAGE, origin.root, isml, version, viaTable))).toEqual(
      shape(await loadChannelPresentation(FILE_STORAGE, origin.root, isml, version)),
    );
  },
  300_000,
);
