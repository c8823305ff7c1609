// LL-DASH ProducerReferenceTime from the ingest's `prft` (issue 23): the test encoder sends a
// hand-built prft before each video fragment, real HTTP on loopback. The video AdaptationSet's
// PRFT is then the newest prft's mapping (type from its flags), the audio's (no prft) is still
// the anchor's; the MPD validates; bad prft boxes are refused as 400 ingest-bad-box; the mapping
// is in the archive, so a restarted origin (a serving port whose table reads the index files)
// writes the same PRFT.

import { writePrft, unixMsToNtp } from '../../../origin/media/prft';
import { tempDir } from '../../helpers/fixtures';
import { createChannel, eventually, fragmentsAtLeast, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { makeLlFixtures, PARTS_PER_SEGMENT } from '../../helpers/ll-hls';
import { Fixture, httpGet, TestEncoder } from '../../helpers/test-encoder';
import { validateMpd } from '../manifests/format-support';

const ANCHOR = 1577836800; // 2020-01-01, on the 1.92 s grid
const LL_DASH_OPTIONS = ['--mpd.minimum_fragment_length=48/25', '--mpd.low_latency'];
/** How late the "encoder" says it made each fragment's first frame, ms. */
const DELAY_MS = 420;
const now = (): number => (ANCHOR + 60) * 1000;

let fx: { video: Fixture; audio: Fixture };
let origin: LiveOrigin;
let root: string;

beforeAll(async () => {
  fx = await makeLlFixtures(tempDir('origin-lld-prft-'));
  root = tempDir('origin-lld-prft-root-');
  origin = await startLiveOrigin({ now }, root);
  for (const ch of ['prft', 'bad', 'runs']) await createChannel(root, ch, LL_DASH_OPTIONS);
}, 60_000);
afterAll(() => origin.close());

function encoders(ch: string): { v: TestEncoder; a: TestEncoder } {
  const common = { channelUrl: origin.channelUrl(ch), anchorSeconds: ANCHOR };
  return {
    v: new TestEncoder({ ...common, stream: 'video-300k.cmfv', fixture: fx.video }),
    a: new TestEncoder({ ...common, stream: 'audio-64k.cmfa', fixture: fx.audio }),
  };
}

/** Video fragment g with a prft before it: media time its own, wall clock the anchor's plus DELAY_MS. */
function withPrft(v: TestEncoder, g: number, flags: number, version: 0 | 1 = 1): Uint8Array {
  const f = v.fragment(g);
  const wallMs = ANCHOR * 1000 + Number((f.time - BigInt(ANCHOR) * 25n) * 40n) + DELAY_MS;
  const prft = writePrft({ version, flags, trackId: f.trackId, ntp: unixMsToNtp(wallMs), mediaTime: f.time });
  return Buffer.concat([prft, f.bytes]);
}

/** The ProducerReferenceTime start tag of the AdaptationSet of `type`. */
function prftOf(mpd: string, type: string): string {
  const set = new RegExp(`<AdaptationSet[^>]*contentType="${type}"[\\s\\S]*?</AdaptationSet>`).exec(mpd)![0];
  return /<ProducerReferenceTime [^>]*>/.exec(set)![0];
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const videoTicks = (g: number): bigint => BigInt(ANCHOR) * 25n + BigInt(8 * g);

describe('a channel whose video ingest carries prft', () => {
  let v: TestEncoder;
  let a: TestEncoder;

  beforeAll(async () => {
    ({ v, a } = encoders('prft'));
    await v.open();
    await a.open();
    // Two whole segments and two chunks of the third; flags 24 ("captured"), the last one version 0.
    const n = 2 * PARTS_PER_SEGMENT + 2;
    for (let g = 0; g < n; g++) await v.push!.write(withPrft(v, g, 24, g === n - 1 ? 0 : 1));
    await a.send(0, n);
    await fragmentsAtLeast(origin, 'prft', n);
  }, 30_000);

  test('video: the newest prft (type captured); audio: the anchor; the MPD validates', async () => {
    const r = await httpGet(`${origin.serving.url}/live/prft.isml/.mpd`);
    expect(r.status).toBe(200);
    const last = 2 * PARTS_PER_SEGMENT + 1;
    const wall = ANCHOR * 1000 + last * 320 + DELAY_MS;
    expect(prftOf(r.body, 'video')).toBe(
      `<ProducerReferenceTime id="0" type="captured" wallClockTime="${iso(wall)}" presentationTime="${videoTicks(last)}">`,
    );
    // The audio track has none: its first listed segment produced at anchor + its time.
    expect(prftOf(r.body, 'audio')).toMatch(
      /^<ProducerReferenceTime id="0" type="encoder" wallClockTime="2020-01-01T00:00:00(\.\d+)?Z" presentationTime="\d+">$/,
    );
    // The UTCTiming child as for the anchor's.
    expect(r.body).toContain('<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="/.time" />');
    const valid = validateMpd(r.body);
    expect(valid.output).not.toMatch(/fails to validate|error/);
    expect(valid.ok).toBe(true);
  });

  test('flags 0 (encoder input) write type encoder; flags 8 (no wall clock) keep the newest usable one', async () => {
    const base = 2 * PARTS_PER_SEGMENT + 2;
    await v.push!.write(withPrft(v, base, 0));
    await a.send(base);
    await v.push!.write(withPrft(v, base + 1, 8));
    await a.send(base + 1);
    await eventually(
      () => origin.state('prft'),
      (s) => s.tracks.every((t) => t.fragments >= base + 2),
    );
    const mpd = (await httpGet(`${origin.serving.url}/live/prft.isml/.mpd`)).body;
    const wall = ANCHOR * 1000 + base * 320 + DELAY_MS;
    expect(prftOf(mpd, 'video')).toBe(
      `<ProducerReferenceTime id="0" type="encoder" wallClockTime="${iso(wall)}" presentationTime="${videoTicks(base)}">`,
    );
  });

  test('an origin restarted on the same archive (its table read from the index files) writes the same PRFT', async () => {
    const before = (await httpGet(`${origin.serving.url}/live/prft.isml/.mpd`)).body;
    v.drop();
    a.drop();
    await origin.close();
    origin = await startLiveOrigin({ now }, root);
    const after = await httpGet(`${origin.serving.url}/live/prft.isml/.mpd`);
    expect(after.status).toBe(200);
    expect(prftOf(after.body, 'video')).toBe(prftOf(before, 'video'));
    expect(prftOf(after.body, 'audio')).toBe(prftOf(before, 'audio'));
    expect(origin.serving.live.counts.reads).toBeGreaterThan(0);
  });
});

describe('bad prft boxes', () => {
  test('short: 400 ingest-bad-box naming it; one naming an undeclared track too; an unknown version is ignored', async () => {
    const { v } = encoders('bad');
    const push = await v.open();
    await push.write(withPrft(v, 0, 24));
    const prft = withPrft(v, 1, 24).subarray(0, 32);
    // Version 2 (unknown): the box is skipped, the fragment archived.
    const v2 = Buffer.from(withPrft(v, 1, 24));
    v2[8] = 2;
    await push.write(v2);
    await eventually(
      () => origin.state('bad'),
      (s) => s.tracks[0]?.fragments === 2,
    );
    const short = Buffer.concat([Buffer.from(prft.subarray(0, 28)), v.fragment(2).bytes]);
    short.writeUInt32BE(28, 0);
    await push.write(short);
    const a = await push.end();
    expect([a.status, a.headers['x-origin-error']]).toEqual([400, 'ingest-bad-box']);
    expect(a.body).toMatch(/prft@\d+.*prft version 1 has 24 bytes after its header, this one 20/);

    const again = await v.open();
    const other = Buffer.from(withPrft(v, 2, 24));
    other.writeUInt32BE(9, 12);
    await again.write(other);
    const b = await again.end();
    expect([b.status, b.headers['x-origin-error']]).toEqual([400, 'ingest-bad-box']);
    expect(b.body).toMatch(/the prft at byte \d+ names track 9, which the header does not declare/);
    expect((await origin.state('bad')).tracks[0]!.fragments).toBe(2);
  });
});

test('after an encoder restart (a new Period) without prft, the new run has the anchor’s PRFT', async () => {
  const first = encoders('runs').v;
  await first.open();
  for (let g = 0; g < PARTS_PER_SEGMENT + 2; g++) await first.push!.write(withPrft(first, g, 24));
  await eventually(
    () => origin.state('runs'),
    (s) => s.tracks[0]?.fragments === PARTS_PER_SEGMENT + 2,
  );
  first.drop(); // a dropped connection ends nothing: the channel waits for its encoder
  // Restarted 11 s after the anchor: off the 0.32 s grid, a new run (live/channel.ts breaksTimeline).
  const again = new TestEncoder({
    channelUrl: origin.channelUrl('runs'),
    anchorSeconds: ANCHOR + 11,
    stream: 'video-300k.cmfv',
    fixture: fx.video,
  });
  await again.open();
  await again.send(0, PARTS_PER_SEGMENT + 2);
  await eventually(
    () => origin.state('runs'),
    (s) => s.tracks[0]?.fragments === 2 * PARTS_PER_SEGMENT + 4,
  );
  const mpd = (await httpGet(`${origin.serving.url}/live/runs.isml/.mpd`)).body;
  const prfts = mpd.match(/<ProducerReferenceTime [^>]*>/g) ?? [];
  expect(mpd.match(/<Period /g)?.length).toBe(2);
  expect(prfts).toEqual([
    `<ProducerReferenceTime id="0" type="captured" wallClockTime="${iso(ANCHOR * 1000 + (PARTS_PER_SEGMENT + 1) * 320 + DELAY_MS)}" presentationTime="${videoTicks(PARTS_PER_SEGMENT + 1)}">`,
    `<ProducerReferenceTime id="0" type="encoder" wallClockTime="${iso((ANCHOR + 11) * 1000)}" presentationTime="${(ANCHOR + 11) * 25}">`,
  ]);
  expect(validateMpd(mpd).ok).toBe(true);
  await again.close();
});
