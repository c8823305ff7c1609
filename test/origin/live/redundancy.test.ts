// Redundant encoders (the same stream pushed twice, epoch-locked) and an encoder that drops its
// connection and comes back (Azure fMP4 ingest §4 req. 7, §8–9; DASH-IF ingest §failover): every
// (track, time) is archived once, the first copy wins, nothing is missing.

import { media } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';

const NOW = Math.floor(Date.now() / 1000);
const muxed = loadFixture(media('muxed_av.ismv'));

let origin: LiveOrigin;
beforeAll(async () => {
  origin = await startLiveOrigin();
  await createChannel(origin.root, 'red', ['--archiving']);
  await createChannel(origin.root, 'again', ['--archiving']);
});
afterAll(() => origin.close());

const encoder = (channel: string): TestEncoder =>
  new TestEncoder({ channelUrl: origin.channelUrl(channel), stream: 'ffmpeg', fixture: muxed, anchorSeconds: NOW });

test('two redundant encoders, one killed: each fragment archived once, none missing', async () => {
  const a = encoder('red');
  const b = encoder('red');
  await Promise.all([a.open(), b.open()]);
  // Both push fragments 0..7 at once (video and audio alternate), b a little behind.
  for (let g = 0; g < 8; g++) {
    await a.send(g);
    if (g > 0) await b.send(g - 1);
  }
  a.drop(); // the encoder dies: no end of its body
  await b.send(7, 12);
  expect((await b.close(true)).status).toBe(200);
  const s = await eventually(
    () => origin.state('red'),
    (x) => x.state === 'stopped',
  );
  expect(s.tracks.map((t) => [t.track, t.fragments, t.gaps, t.lateDropped])).toEqual([
    ['ffmpeg-1', 6, 0, 0],
    ['ffmpeg-2', 6, 0, 0],
  ]);
  // b's copies of 0..7 were dropped (a's arrived first), whatever a managed to send before it died.
  const dropped = s.tracks.reduce((n, t) => n + t.duplicatesDropped, 0);
  expect(dropped).toBeGreaterThanOrEqual(7); // a's last write may die with its connection
  expect(dropped).toBeLessThanOrEqual(8);
  const { json } = await origin.archive('red');
  for (const t of json.tracks) expect(t.ranges).toHaveLength(1); // contiguous: nothing missing
});

test('an encoder that drops its connection and reconnects (resending the last two fragments) continues the timeline', async () => {
  const e = encoder('again');
  await e.open();
  await e.send(0, 6);
  await eventually(
    () => origin.state('again'),
    (x) => x.tracks.reduce((n, t) => n + t.fragments, 0) === 6,
  );
  e.drop();
  // A dropped connection ends nothing: the channel waits for its encoder.
  const waiting = await eventually(
    () => origin.state('again'),
    (x) => x.encoders === 0,
  );
  expect(waiting.state).toBe('started');
  await e.reconnect(); // the same header, then the last two fragments of each track again
  await e.send(6, 10);
  expect((await e.close(true)).status).toBe(200);
  const s = await eventually(
    () => origin.state('again'),
    (x) => x.state === 'stopped',
  );
  expect(s.tracks.map((t) => [t.fragments, t.gaps, t.duplicatesDropped])).toEqual([
    [5, 0, 2],
    [5, 0, 2],
  ]);
});
