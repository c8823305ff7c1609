// LL-DASH output (`mpd_low_latency`, issue 23) of a channel fed by the test encoder with ffmpeg's
// 0.32 s CMAF fragments (test/helpers/ll-hls.ts), real HTTP on loopback: the MPD's low-latency
// attributes and elements against the schema, the predicted segment in the timeline, and the
// MPD without the option unchanged. The channel's clock is fixed; the encoder pushes when the
// test says.

import { tempDir } from '../../helpers/fixtures';
import { createChannel, eventually, fragmentsAtLeast, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { makeLlFixtures, PARTS_PER_SEGMENT } from '../../helpers/ll-hls';
import { httpGet, TestEncoder } from '../../helpers/test-encoder';
import { validateMpd } from '../manifests/format-support';
import * as http from 'node:http';

// A multiple of 48 s since the epoch: on the 1.92 s grid (48 frames at 25 fps), as encoders anchor.
const ANCHOR = 1577836800;
/** The publishing point's options for LL-DASH in tests. */
const LL_DASH_OPTIONS = ['--mpd.minimum_fragment_length=48/25', '--mpd.low_latency'];

let origin: LiveOrigin;
let base: string;
let v: TestEncoder;
let a: TestEncoder;
let pushed = 0;

async function push(n: number): Promise<void> {
  await v.send(pushed, pushed + n);
  await a.send(pushed, pushed + n);
  pushed += n;
  await fragmentsAtLeast(origin, 'lld', pushed);
}

beforeAll(async () => {
  const fx = await makeLlFixtures(tempDir('origin-lld-'));
  origin = await startLiveOrigin({ now: () => (ANCHOR + 60) * 1000 });
  await createChannel(origin.root, 'lld', LL_DASH_OPTIONS);
  base = `${origin.serving.url}/live/lld.isml`;
  const common = { channelUrl: origin.channelUrl('lld'), anchorSeconds: ANCHOR };
  v = new TestEncoder({ ...common, stream: 'video-300k.cmfv', fixture: fx.video });
  a = new TestEncoder({ ...common, stream: 'audio-64k.cmfa', fixture: fx.audio });
  await v.open();
  await a.open();
  // Two whole segments and two chunks of the third.
  await push(2 * PARTS_PER_SEGMENT + 2);
}, 60_000);
afterAll(() => origin.close());

/** The SegmentTemplate of the AdaptationSet of `type`, and its timeline's `<S>` lines. */
function template(mpd: string, type: string): { attrs: string; s: string[] } {
  const set = new RegExp(`<AdaptationSet[^>]*contentType="${type}"[\\s\\S]*?</AdaptationSet>`).exec(mpd)![0];
  const attrs = /<SegmentTemplate([^>]*)>/.exec(set)![1]!;
  return { attrs, s: set.match(/<S [^>]*\/>/g) ?? [] };
}

test('the LL MPD: availabilityTimeOffset, ServiceDescription, ProducerReferenceTime, UTCTiming; valid', async () => {
  const r = await httpGet(`${base}/.mpd`);
  expect(r.status).toBe(200);
  const mpd = r.body;
  expect(mpd).toContain('type="dynamic"');
  // One chunk: the client learns of the next segment within a chunk.
  expect(mpd).toContain('minimumUpdatePeriod="PT0.32S"');
  expect(mpd).toContain(
    [
      '  <ServiceDescription id="0">',
      '    <Latency referenceId="0" target="2500" max="5000" min="1875" />',
      '    <PlaybackRate max="1.1" min="0.9" />',
      '  </ServiceDescription>',
      '  <Period',
    ].join('\n'),
  );
  expect(mpd).toContain('<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="/.time" />');
  const video = template(mpd, 'video');
  // 1.92 s segments of 0.32 s chunks: a segment may be asked for 1.6 s before its end.
  expect(video.attrs).toContain('availabilityTimeOffset="1.6"');
  expect(video.attrs).toContain('availabilityTimeComplete="false"');
  // Two whole segments and the one being ingested (predicted 48 ticks at 25 Hz), one run.
  expect(video.s).toEqual([`<S t="${ANCHOR * 25}" d="48" r="2" />`]);
  const audio = template(mpd, 'audio');
  expect(audio.attrs).toContain('availabilityTimeComplete="false"');
  expect(audio.s.length).toBeGreaterThan(0);
  // PRFT: the first listed segment's time and the wall-clock time it was produced (the anchor's).
  expect(mpd).toContain(
    `<ProducerReferenceTime id="0" type="encoder" wallClockTime="2020-01-01T00:00:00Z" presentationTime="${ANCHOR * 25}">`,
  );
  const valid = validateMpd(mpd);
  expect(valid.output).not.toMatch(/fails to validate|error/);
  expect(valid.ok).toBe(true);
});

test('without the option (query off) the MPD has none of it, and lists whole segments only', async () => {
  const r = await httpGet(`${base}/.mpd?mpd_low_latency=false`);
  expect(r.status).toBe(200);
  expect(r.body).not.toMatch(/availabilityTime|ServiceDescription|ProducerReferenceTime/);
  expect(r.body).toContain(`minimumUpdatePeriod="PT1.92S"`);
  expect(template(r.body, 'video').s).toEqual([`<S t="${ANCHOR * 25}" d="48" r="1" />`]);
  expect(validateMpd(r.body).ok).toBe(true);
});

test('the predicted segment appears with its first chunk, and folds into the run when whole', async () => {
  // The third segment completes: no growing segment until the fourth's first chunk.
  await push(PARTS_PER_SEGMENT - 2);
  let mpd = (await httpGet(`${base}/.mpd`)).body;
  expect(template(mpd, 'video').s).toEqual([`<S t="${ANCHOR * 25}" d="48" r="2" />`]);
  await push(1);
  mpd = (await httpGet(`${base}/.mpd`)).body;
  expect(template(mpd, 'video').s).toEqual([`<S t="${ANCHOR * 25}" d="48" r="3" />`]);
  expect(validateMpd(mpd).ok).toBe(true);
});

/** A GET whose body is collected as it arrives: `received` grows, `done` resolves at its end. */
function streamingGet(u: string, headers: http.OutgoingHttpHeaders = {}): StreamingGet {
  const s: Partial<StreamingGet> = { received: [] };
  s.done = new Promise((resolve, reject) => {
    http
      .get(u, { agent: false, headers }, (res) => {
        s.status = res.statusCode;
        s.headers = res.headers;
        res.on('data', (c: Buffer) => s.received!.push(c));
        res.on('end', () => resolve(Buffer.concat(s.received!)));
        res.on('error', reject);
      })
      .on('error', reject);
  });
  return s as StreamingGet;
}

interface StreamingGet {
  status?: number;
  headers?: http.IncomingHttpHeaders;
  received: Buffer[];
  done: Promise<Buffer>;
}

const VIDEO_TICKS = ANCHOR * 25;
const segmentUrl = (k: number, q = ''): string => `${base}/dash/lld-video=300000-${VIDEO_TICKS + 48 * k}.dash${q}`;

test('the segment being ingested streams chunk by chunk; its bytes are the whole segment', async () => {
  // Segment 3 (from 0) holds one chunk now (pushed 19 fragments).
  const first = streamingGet(segmentUrl(3));
  await eventually(
    async () => first.received.length,
    (n) => n > 0,
  );
  expect(first.status).toBe(200);
  expect(first.headers!['content-length']).toBeUndefined();
  expect(first.headers!['transfer-encoding']).toBe('chunked');
  expect(first.headers!.etag).toBeUndefined();
  expect(first.headers!['cache-control']).toBe('no-store');
  // Concurrent readers of the same segment, one of them with a Range (it waits for the whole).
  const others = Array.from({ length: 20 }, () => streamingGet(segmentUrl(3)));
  const ranged = streamingGet(segmentUrl(3), { range: 'bytes=0-99' });
  const before = Buffer.concat(first.received).byteLength;
  await push(1);
  await eventually(
    async () => Buffer.concat(first.received).byteLength,
    (n) => n > before,
  );
  await push(PARTS_PER_SEGMENT - 2);
  const body = await first.done;
  const whole = await getBytes(segmentUrl(3));
  expect(whole.status).toBe(200);
  expect(whole.headers['content-length']).toBe(String(whole.bytes.byteLength));
  expect(whole.headers.etag).toMatch(/^"/);
  expect(body.equals(whole.bytes)).toBe(true);
  for (const o of others) expect((await o.done).equals(whole.bytes)).toBe(true);
  const range = await ranged.done;
  expect(ranged.status).toBe(206);
  expect(ranged.headers!['content-range']).toBe(`bytes 0-99/${whole.bytes.byteLength}`);
  expect(range.equals(whole.bytes.subarray(0, 100))).toBe(true);
});

test('the next segment before its first chunk waits for it; a segment further ahead is refused', async () => {
  const next = streamingGet(segmentUrl(4));
  const far = await getBytes(segmentUrl(6));
  expect(far.status).toBe(404);
  expect(far.headers['x-origin-error']).toBe('fragment-not-yet');
  const offGrid = await getBytes(`${base}/dash/lld-video=300000-${VIDEO_TICKS + 48 * 4 + 1}.dash`);
  expect(offGrid.status).toBe(404);
  expect(next.received).toEqual([]);
  await push(PARTS_PER_SEGMENT);
  const body = await next.done;
  expect(next.status).toBe(200);
  expect(body.equals((await getBytes(segmentUrl(4))).bytes)).toBe(true);
  // HEAD of a growing segment: the headers only.
  const head = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.request(segmentUrl(5), { method: 'HEAD', agent: false }, resolve).on('error', reject).end(),
  );
  expect(head.statusCode).toBe(200);
  expect(head.headers['cache-control']).toBe('no-store');
});

function getBytes(u: string): Promise<{ status: number; bytes: Buffer; headers: http.IncomingHttpHeaders }> {
  const s = streamingGet(u);
  return s.done.then((bytes) => ({ status: s.status!, bytes, headers: s.headers! }));
}
