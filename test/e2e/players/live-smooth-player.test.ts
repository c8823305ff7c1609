// dash.js MSS plays a live Smooth channel in headless Chromium: the test encoder pushes CMAF
// ingest in real time (a 20 s backlog, then each fragment when its end is past), the serving port
// answers the live Smooth manifest and fragments with their tfrf. dash.js places a live Smooth
// presentation on UTC (`t` is time since 1970), so video.currentTime starts near now minus its
// live delay: passing "the test's start + 2 s" means at least 10 s of live playback, kept up with
// the fragments as they arrive (dash.js learns of each from the previous ones' tfrf alone).

import { media } from '../../helpers/fixtures';
import { closeBrowser, playAndCheck, playerTestsEnabled } from '../../helpers/browser';
import { createChannel, eventually, liveServerOptions, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { RunningServer, startServer } from '../../../origin/server/server';

const PLAY_TIMEOUT_MS = 45_000;
const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('a real player on a live Smooth channel', () => {
  let origin: LiveOrigin;
  let page: RunningServer;
  let encoders: TestEncoder[];
  let timer: NodeJS.Timeout | undefined;
  const ANCHOR = Math.floor(Date.now() / 2000) * 2 - 20;
  let next = 0;
  let feeding = Promise.resolve();

  /** Pushes every fragment whose end is past (fixture fragments last 2 s). */
  function feed(): void {
    feeding = feeding.then(async () => {
      while (ANCHOR + (next + 1) * 2 <= Date.now() / 1000) {
        for (const e of encoders) await e.send(next);
        next++;
      }
    });
  }

  beforeAll(async () => {
    origin = await startLiveOrigin();
    // The player page on the same root: it serves /play and the players' files.
    page = await startServer({ ...liveServerOptions(origin.root), playerPage: true });
    await createChannel(origin.root, 'live', ['--dvr_window_length=30']);
    const fixture = (file: string) => loadFixture(media(file));
    encoders = [
      ['video-400k.cmfv', 'video_baseline_400k.ismv'],
      ['audio-64k.cmfa', 'audio_eng_64k.isma'],
    ].map(
      ([stream, file]) =>
        new TestEncoder({
          channelUrl: origin.channelUrl('live'),
          stream: stream!,
          fixture: fixture(file!),
          anchorSeconds: ANCHOR,
        }),
    );
    for (const e of encoders) await e.open();
    feed();
    await feeding;
    await eventually(
      () => origin.state('live'),
      (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments >= 9),
    );
    timer = setInterval(feed, 250);
  }, 30_000);

  afterAll(async () => {
    if (timer !== undefined) clearInterval(timer);
    await feeding;
    await closeBrowser();
    for (const e of encoders ?? []) await e.close(true).catch(() => undefined);
    await page?.close();
    await origin?.close();
  });

  test(
    'dash.js MSS plays the live channel for 10 s without a player error',
    async () => {
      const start = Date.now() / 1000;
      const manifest = `${page.url}/live/live.isml/Manifest`;
      const r = await playAndCheck(`${page.url}/play?player=dashjs-mss&url=${encodeURIComponent(manifest)}`, {
        untilSeconds: start + 2,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: 'live-dashjs-mss-smooth',
      });
      // Playback began in the DVR window (not at 0, not past now) and ran to now + 2 s.
      expect({ errors: r.errors, passed: r.currentTime > start + 2 }).toEqual({ errors: [], passed: true });
      expect(r.currentTime).toBeLessThan(Date.now() / 1000 + 5);
    },
    PLAY_TIMEOUT_MS + 15_000,
  );
});
