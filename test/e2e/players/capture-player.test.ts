// A capture of a live channel's archive, packaged by `origin package` and served by a VOD origin,
// played by hls.js (fMP4) and dash.js past 6 s without a player error. The test encoder pushes
// 24 s of the fixture on UTC times ending now, at once; the capture takes 4..16 s of it.

import * as path from 'node:path';
import { media, runOrigin } from '../../helpers/fixtures';
import { createChannel, eventually, LiveOrigin, startLiveOrigin } from '../../helpers/live';
import { loadFixture, TestEncoder } from '../../helpers/test-encoder';
import { closeBrowser, playAndCheck, playerTestsEnabled, PlayResult } from '../../helpers/browser';
import { hlsjsAware } from '../../helpers/hlsjs-notices';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import type { PlayerName } from '../../../origin/player/player-page';

const PLAY_TIMEOUT_MS = 25_000;
const FRAGMENTS = 12;
const ANCHOR = Math.floor(Date.now() / 2000) * 2 - 2 * FRAGMENTS;

/**
 * The capture cuts the audio to the samples that start at or after the video's first keyframe, so
 * the audio begins up to one AAC frame (1024 / 48000 s) after the video; with separate fMP4
 * renditions hls.js sees media.buffered start there and steps over it (gap-controller.ts
 * _trySkipBufferHole: the hole plus skipBufferHolePadding, 0.1 s), announcing it as a non-fatal
 * notice on the first video fragment. Accepted in exactly that form and size; dash.js plays on.
 */
function startHole(e: string): boolean {
  const m =
    /^hls\.js non-fatal mediaError\/bufferSeekOverHole \S+-video_\w+=\d+-1\.m4s\?hls_fmp4=true: fragment loaded with buffer holes, seeking from 0 to ([0-9.]+)$/.exec(
      e,
    );
  return m !== null && Number(m[1]) <= 0.1 + 1024 / 48000 + 0.001;
}

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('a captured archive range, packaged and played', () => {
  let live: LiveOrigin;
  let vod: TestOrigin;

  beforeAll(async () => {
    live = await startLiveOrigin();
    await createChannel(live.root, 'ch', ['--archiving', '--dvr_window_length=8']);
    const encoders = (
      [
        ['video-400k.cmfv', 'video_baseline_400k.ismv'],
        ['audio-64k.cmfa', 'audio_eng_64k.isma'],
      ] as const
    ).map(
      ([stream, file]) =>
        new TestEncoder({
          channelUrl: live.channelUrl('ch'),
          stream,
          fixture: loadFixture(media(file)),
          anchorSeconds: ANCHOR,
        }),
    );
    for (const e of encoders) await e.open();
    for (const e of encoders) await e.send(0, FRAGMENTS);
    await eventually(
      () => live.state('ch'),
      (s) => s.tracks.length === 2 && s.tracks.every((t) => t.fragments === FRAGMENTS),
    );
    vod = await startTestOrigin({});
    const iso = (s: number): string => new Date((ANCHOR + s) * 1000).toISOString().slice(0, -1);
    const ismv = path.join(vod.root, 'clip.ismv');
    const r = await runOrigin(['capture', `${live.serving.url}/live/ch.isml/.mpd?t=${iso(4)}-${iso(16)}`, '-o', ismv]);
    expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('wrote ')]);
    const pkg = await runOrigin(['package', '-q', '-o', path.join(vod.root, 'clip.ism'), ismv]);
    expect([pkg.code, pkg.stderr]).toEqual([0, '']);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await vod?.server.close();
    await live?.close();
  });

  test.each([
    ['hlsjs', '/clip.ism/.m3u8?hls_fmp4=true'],
    ['dashjs', '/clip.ism/.mpd'],
  ] as Array<[PlayerName, string]>)(
    '%s plays %s past 6 s',
    async (player, manifest) => {
      const aware = hlsjsAware(player, manifest);
      const counted = (x: Pick<PlayResult, 'errors' | 'errorTimes' | 'switchedAt'>): string[] =>
        aware.errors(x).filter((e) => !startHole(e));
      const page = `${vod.url}/play?player=${player}&url=${encodeURIComponent(vod.url + manifest)}`;
      const r = await playAndCheck(page, {
        untilSeconds: 6,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `capture-${player}`,
        counted,
      });
      expect({ errors: counted(r), passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
    },
    PLAY_TIMEOUT_MS + 10_000,
  );
});
