// Live HDS: the F4M of a hand-built channel (the fixture repeated on UTC and cut to a window,
// test/origin/live/live-presentation.ts) checked structurally with xmllint and the tests' own F4V
// reader (f4f-reader.ts): `streamType` live without a duration, the abst's Live bit, its
// CurrentMediaTime, the open segment run and the fragment runs numbered by the channel; then the
// recorded form after the end of stream, and what the bootstrap writer refuses.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { OriginError } from '../../../origin/errors';
import { writeHdsManifest } from '../../../origin/manifests/hds';
import { Presentation } from '../../../origin/model/presentation';
import { PlayoutView } from '../../../origin/model/view';
import { writeBootstrap } from '../../../origin/segments/f4f/bootstrap';
import { LIVE_HDS_PERIOD_SECONDS, liveHdsBase } from '../../../origin/model/hds-media';
import { viewOf } from '../../helpers/presentations';
import { channelWindow } from '../live/live-presentation';
import { Abst, parseAbst, parseAmf0 } from '../segments/f4f/f4f-reader';
import { presentationOf } from './format-support';

const FILES = ['video_baseline_400k.ismv', 'video_main_900k.ismv', 'audio_eng_64k.isma'];
/** The channel's number of the window's first fragment (what ViewTrack.firstNumber carries live). */
const NUMBER = 1001;
const COUNT = 9;

type Attrs = Record<string, string>;
interface F4m {
  streamType?: string;
  duration?: string;
  bootstrapInfo: Array<Attrs & { '#text': string }>;
  media: Array<Attrs & { metadata: string }>;
}
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => name === 'media' || name === 'bootstrapInfo',
  parseTagValue: false,
});
const scratch = mkdtempSync(path.join(tmpdir(), 'origin-f4m-live-'));

function readF4m(xml: string): F4m {
  const file = path.join(scratch, `m${Math.random().toString(36).slice(2)}.f4m`);
  writeFileSync(file, xml);
  const r = spawnSync('xmllint', ['--noout', '--nonet', file], { encoding: 'utf8' });
  expect(`${r.stdout}${r.stderr}`).toBe('');
  return (parser.parse(xml) as { manifest: F4m }).manifest;
}

let channel: Presentation;
let view: PlayoutView;
beforeAll(async () => {
  channel = channelWindow(await presentationOf(FILES), 3, COUNT);
  const v = viewOf(channel, 'hds');
  view = { ...v, tracks: v.tracks.map((t) => ({ ...t, firstNumber: NUMBER })) };
});

/** Fragments of a live afrt: each run lasts to the next run, the last one to CurrentMediaTime. */
function expandLive(abst: Abst): Array<{ n: number; time: bigint; duration: bigint }> {
  const entries = abst.fragmentRunTables[0]!.entries;
  const out: Array<{ n: number; time: bigint; duration: bigint }> = [];
  entries.forEach((e, i) => {
    const d = BigInt(e.fragmentDuration);
    const count =
      i + 1 < entries.length
        ? entries[i + 1]!.firstFragment - e.firstFragment
        : Number((abst.currentMediaTime - e.firstFragmentTimestamp) / d);
    for (let k = 0; k < count; k++)
      out.push({ n: e.firstFragment + k, time: e.firstFragmentTimestamp + BigInt(k) * d, duration: d });
  });
  return out;
}

/** The view's video segments as an HDS client should number them. */
function expected(): Array<{ n: number; time: bigint; duration: bigint }> {
  const s = view.tracks[0]!.segments;
  return Array.from({ length: s.count }, (_, i) => ({ n: NUMBER + i, time: s.time(i), duration: s.duration(i) }));
}

test('live F4M: streamType live, no duration, a live bootstrap numbered by the channel', () => {
  const m = readF4m(writeHdsManifest(view, 'channel', { ended: false }));
  expect(m.streamType).toBe('live');
  expect(m.duration).toBeUndefined();
  expect(m.media.length).toBeGreaterThan(0);
  for (const media of m.media) {
    const b = m.bootstrapInfo.find((x) => x.id === media.bootstrapInfoId)!;
    expect(b.profile).toBe('named');
    const abst = parseAbst(Buffer.from(b['#text'], 'base64'));
    expect({ profile: abst.profile, live: abst.live, update: abst.update }).toEqual({ profile: 0, live: 1, update: 0 });
    expect(abst.segmentRunTables[0]!.segmentRuns).toEqual([{ firstSegment: 1, fragmentsPerSegment: 0xffffffff }]);
    const s = view.tracks[0]!.segments;
    expect(abst.currentMediaTime).toBe(s.end);
    expect(abst.fragmentRunTables[0]!.timeScale).toBe(abst.timeScale);
    expect(expandLive(abst)).toEqual(expected());
    // A live onMetaData has no duration yet.
    const [, props] = parseAmf0(Buffer.from(media.metadata, 'base64')) as [string, Array<[string, unknown]>];
    expect(new Map(props).get('duration')).toBe(0);
  }
});

test('after the end of stream: recorded, a duration, a closed bootstrap, the same numbers', () => {
  const m = readF4m(writeHdsManifest(view, 'channel', { ended: true }));
  expect(m.streamType).toBe('recorded');
  expect(Number(m.duration)).toBeGreaterThan(COUNT * 2 - 1);
  const abst = parseAbst(Buffer.from(m.bootstrapInfo[0]!['#text'], 'base64'));
  expect(abst.live).toBe(0);
  expect(abst.segmentRunTables[0]!.segmentRuns).toEqual([{ firstSegment: 1, fragmentsPerSegment: NUMBER + COUNT - 1 }]);
  expect(expandLive(abst)).toEqual(expected());
});

test('VOD is unchanged: fragments from 1, not live', async () => {
  const vod = readF4m(writeHdsManifest(viewOf(await presentationOf(FILES), 'hds'), 'x'));
  expect(vod.streamType).toBe('recorded');
  const abst = parseAbst(Buffer.from(vod.bootstrapInfo[0]!['#text'], 'base64'));
  expect([abst.live, abst.fragmentRunTables[0]!.entries[0]!.firstFragment]).toEqual([0, 1]);
});

test('refused: fragment numbers outside 1..2^32-1', () => {
  const fragments = [
    { time: 0n, duration: 10n },
    { time: 10n, duration: 10n },
  ];
  const b = { movieIdentifier: 'c', timescale: 1000, fragments, live: true };
  expect(() => writeBootstrap({ ...b, firstFragment: 0 })).toThrow(OriginError);
  expect(() => writeBootstrap({ ...b, firstFragment: 1.5 })).toThrow(/fragment numbers/);
  expect(() => writeBootstrap({ ...b, firstFragment: 0xffffffff })).toThrow(/do not fit/);
  expect(
    parseAbst(writeBootstrap({ ...b, firstFragment: 0xfffffffe })).fragmentRunTables[0]!.entries[0]!.firstFragment,
  ).toBe(0xfffffffe);
});

test('live HDS times are taken modulo 2^22 s, in whole ticks of any timescale', () => {
  for (const ts of [1000, 25, 48000, 10_000_000]) {
    const period = BigInt(LIVE_HDS_PERIOD_SECONDS) * BigInt(ts);
    expect(liveHdsBase(false, 5n * period + 7n, ts)).toBe(0n);
    expect(liveHdsBase(true, 5n * period + 7n, ts)).toBe(5n * period);
    expect(liveHdsBase(true, period - 1n, ts)).toBe(0n);
    expect(liveHdsBase(true, -1n, ts)).toBe(-period);
    // What stays is below 2^32 ms.
    expect(((period - 1n) * 1000n) / BigInt(ts)).toBeLessThan(2n ** 32n);
  }
});
