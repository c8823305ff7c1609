// The channel's clock is injectable (IngestServerOptions.now): the UTC check and the status times
// follow it, so a test can replay media of any date; and a stall shorter than the idle timeout
// loses nothing.

import { media } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';

const JAN_2020 = Date.UTC(2020, 0, 1) / 1000;
const video = loadFixture(media('video_baseline_400k.ismv'));

let origin: LiveOrigin;
beforeAll(async () => {
  origin = await startLiveOrigin({ now: () => (JAN_2020 + 10) * 1000, idleTimeoutMs: 2000 });
  await createChannel(origin.root, 'past', ['--archiving', '--restart_on_encoder_reconnect']);
});
afterAll(() => origin.close());

test('with the clock at 2020-01-01, media of that day is UTC and media of today is not', async () => {
  const then = new TestEncoder({
    channelUrl: origin.channelUrl('past'),
    stream: 'v',
    fixture: video,
    anchorSeconds: JAN_2020,
  });
  await then.open();
  await then.send(0, 2);
  await then.stall(300); // shorter than the idle timeout: the POST goes on
  await then.send(2, 4);
  expect((await then.close()).status).toBe(200);
  const s = await eventually(
    () => origin.state('past'),
    (x) => x.state === 'stopped',
  );
  expect(s).toMatchObject({ updated: new Date((JAN_2020 + 10) * 1000).toISOString() });
  expect(s.tracks[0]).toMatchObject({ fragments: 4, gaps: 0, lastTimeUtc: '2020-01-01T00:00:06.000Z' });
  const now = new TestEncoder({
    channelUrl: origin.channelUrl('past'),
    stream: 'w',
    fixture: video,
    anchorSeconds: Math.floor(Date.now() / 1000),
  });
  await now.open();
  await now.send(0, 1);
  const a = await now.close();
  expect([a.status, a.headers['x-origin-error']]).toEqual([400, 'ingest-not-utc']);
});
