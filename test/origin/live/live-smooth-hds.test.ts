// Live Smooth and HDS output end to end: the test encoder pushes CMAF ingest (one long POST per
// track, times on UTC) to a real ingest listener, and the serving port answers the channel's
// Smooth manifest and fragments (tfxd + tfrf, the lookahead rule, the refusals' statuses) and its
// HDS manifest and fragments (live bootstrap, the channel's numbering), then the static forms
// after the end of stream. Box fields are read with the tests' own box walk.

import { XMLParser } from 'fast-xml-parser';
import { media } from '../../helpers/fixtures';
import { boxes } from '../../helpers/box-walk';
import { avEncoders, createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { parseAbst, parseFragment } from '../segments/f4f/f4f-reader';
import * as http from 'node:http';

// On the 2 s grid of the fixtures' fragments, so that the epoch numbering is exact.
const NOW = Math.floor(Date.now() / 2000) * 2;
const video = loadFixture(media('video_baseline_400k.ismv'));
const audio = loadFixture(media('audio_eng_64k.isma'));
const TFXD = '6d1d9b0542d544e680e2141daff757b2';
const TFRF = 'd4807ef2ca3946958e5426cb9e46a79f';

let origin: LiveOrigin;
let v: TestEncoder;
let a: TestEncoder;

function get(path: string): Promise<{ status: number; body: Buffer; error?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${origin.serving.url}${path}`, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks),
            error: res.headers['x-origin-error'] as string | undefined,
          }),
        );
      })
      .on('error', reject);
  });
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (n) => ['StreamIndex', 'QualityLevel', 'c', 'media', 'bootstrapInfo'].includes(n),
  parseTagValue: false,
});
type Attrs = Record<string, string>;
type Stream = Attrs & { QualityLevel: Attrs[]; c?: Attrs[] };

async function manifest(): Promise<{ root: Attrs; streams: Stream[] }> {
  const r = await get('/live/ch.isml/Manifest');
  expect(r.status).toBe(200);
  const doc = parser.parse(r.body.toString()) as { SmoothStreamingMedia: Attrs & { StreamIndex?: Stream[] } };
  return { root: doc.SmoothStreamingMedia, streams: doc.SmoothStreamingMedia.StreamIndex ?? [] };
}

/** Chunk start times of a stream (one `<c>` per chunk, `t` on the first). */
function times(s: Stream): bigint[] {
  const out: bigint[] = [];
  for (const c of s.c ?? [])
    out.push(c.t !== undefined ? BigInt(c.t) : out[out.length - 1]! + BigInt(prevD(s, out.length)));
  return out;
}
function prevD(s: Stream, k: number): string {
  return s.c![k - 1]!.d!;
}

function fragmentUrl(s: Stream, t: bigint): string {
  const url = s.Url!.replace('{bitrate}', s.QualityLevel[0]!.Bitrate!).replace(/\{start[ _]time\}/, String(t));
  return `/live/ch.isml/${url}`;
}

function uuids(bytes: Buffer): { tfxd: bigint; tfrf: bigint[] } {
  const moof = boxes(bytes).find((b) => b.type === 'moof')!;
  const traf = boxes(moof.body).find((b) => b.type === 'traf')!;
  const inner = boxes(traf.body);
  const x = inner.find((b) => b.type === 'uuid' && b.body.toString('hex', 0, 16) === TFXD)!;
  const r = inner.find((b) => b.type === 'uuid' && b.body.toString('hex', 0, 16) === TFRF)!;
  const n = r.body[20]!;
  return {
    tfxd: x.body.readBigUInt64BE(20),
    tfrf: Array.from({ length: n }, (_, k) => r.body.readBigUInt64BE(21 + 16 * k)),
  };
}

async function pushed(count: number): Promise<void> {
  await eventually(
    () => origin.state('ch'),
    (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments === count),
  );
}

beforeAll(async () => {
  origin = await startLiveOrigin();
  await createChannel(origin.root, 'ch', ['--dvr_window_length=30']);
  [v, a] = avEncoders(origin.channelUrl('ch'), { video, audio }, NOW);
  await v.open();
  await a.open();
  await v.send(0, 6);
  await a.send(0, 6);
  await pushed(6);
});
afterAll(() => origin.close());

test('Smooth: a live manifest on UTC times, all but the 2 lookahead fragments listed', async () => {
  const { root, streams } = await manifest();
  expect(root).toMatchObject({ IsLive: 'TRUE', Duration: '0', LookaheadCount: '2', DVRWindowLength: '300000000' });
  expect(streams.map((s) => s.Type).sort()).toEqual(['audio', 'video']);
  const vs = streams.find((s) => s.Type === 'video')!;
  expect(vs.Chunks).toBe('4');
  expect(times(vs)[0]).toBe(BigInt(NOW) * 10_000_000n);
});

test('Smooth: a listed fragment carries its tfxd and a tfrf of the next two; an unlisted one is 412', async () => {
  const vs = (await manifest()).streams.find((s) => s.Type === 'video')!;
  const ts = times(vs);
  const r = await get(fragmentUrl(vs, ts[1]!));
  expect(r.status).toBe(200);
  const u = uuids(r.body);
  expect(u.tfxd).toBe(ts[1]);
  expect(u.tfrf).toEqual([ts[2], ts[3]]);
  // The last listed one announces the two that are archived but not listed yet.
  const last = uuids((await get(fragmentUrl(vs, ts[3]!))).body);
  expect(last.tfrf).toEqual([ts[3]! + 20_000_000n, ts[3]! + 40_000_000n]);
  const notYet = await get(fragmentUrl(vs, ts[3]! + 20_000_000n));
  expect([notYet.status, notYet.error]).toEqual([412, 'fragment-not-yet']);
  const expired = await get(fragmentUrl(vs, ts[0]! - 20_000_000n));
  expect([expired.status, expired.error]).toEqual([404, 'fragment-expired']);
  const missing = await get(fragmentUrl(vs, ts[1]! + 1000n));
  expect([missing.status, missing.error]).toEqual([412, 'fragment-missing']);
  // A time rounded to a double (dash.js keeps tfrf times as Numbers; between 2^53 and 2^54 they
  // step by 2) still names its fragment, and only within that spacing.
  expect(ts[2]! >= 2n ** 53n && ts[2]! < 2n ** 54n).toBe(true);
  const rounded = await get(fragmentUrl(vs, ts[2]! + 2n));
  expect([rounded.status, uuids(rounded.body).tfxd]).toEqual([200, ts[2]]);
  expect((await get(fragmentUrl(vs, ts[2]! - 2n))).status).toBe(200);
  expect((await get(fragmentUrl(vs, ts[2]! + 3n))).status).toBe(412);
});

test('HDS: a live F4M and bootstrap numbered on the epoch grid; fragments by that number, times wrapped', async () => {
  const r = await get('/live/ch.isml/.f4m');
  expect(r.status).toBe(200);
  const m = (parser.parse(r.body.toString()) as { manifest: Attrs & { media: Attrs[]; bootstrapInfo: Attrs[] } })
    .manifest;
  expect(m.streamType).toBe('live');
  expect(m.duration).toBeUndefined();
  const abst = parseAbst(Buffer.from(m.bootstrapInfo[0]!['#text']!, 'base64'));
  expect(abst.live).toBe(1);
  expect(abst.segmentRunTables[0]!.segmentRuns[0]!.fragmentsPerSegment).toBe(0xffffffff);
  const first = abst.fragmentRunTables[0]!.entries[0]!.firstFragment;
  expect(first).toBe(NOW / 2);
  const url = (n: number) => `/live/ch.isml/${m.media[0]!.url}Seg1-Frag${n}`;
  const ok = await get(url(first));
  expect([ok.status, ok.error, ok.status === 200 ? '' : ok.body.toString()]).toEqual([200, undefined, '']);
  // Times modulo the live HDS period (2^22 s): FLV timestamps are 32-bit milliseconds.
  const wrapped = NOW % 2 ** 22;
  expect(abst.fragmentRunTables[0]!.entries[0]!.firstFragmentTimestamp).toBe(BigInt(wrapped) * 10_000_000n);
  const tags = parseFragment(ok.body).tags;
  expect(tags.find((t) => t.tagType === 9)!.timestamp).toBe(wrapped * 1000);
  const before = await get(url(first - 1));
  expect([before.status, before.error]).toEqual([404, 'fragment-expired']);
  const after = await get(url(first + 100));
  expect([after.status, after.error]).toEqual([503, 'fragment-not-yet']);
});

test('more fragments archived: one more chunk listed; after the end of stream, static forms', async () => {
  await v.send(6, 7);
  await a.send(6, 7);
  await pushed(7);
  expect((await manifest()).streams.find((s) => s.Type === 'video')!.Chunks).toBe('5');
  await v.close(true);
  await a.close(true);
  await eventually(
    () => origin.state('ch'),
    (s) => s.state === 'stopped',
  );
  const { root, streams } = await manifest();
  expect(root.IsLive).toBeUndefined();
  const vs = streams.find((s) => s.Type === 'video')!;
  expect(vs.Chunks).toBe('7');
  const ts = times(vs);
  expect(uuids((await get(fragmentUrl(vs, ts[6]!))).body).tfrf).toEqual([]);
  expect(uuids((await get(fragmentUrl(vs, ts[5]!))).body).tfrf).toEqual([ts[6]]);
  const f4m = (await get('/live/ch.isml/.f4m')).body.toString();
  expect(f4m).toContain('<streamType>recorded</streamType>');
});
