// A CPIX presentation in real players: the 2.2 fixture gives SD video, HD video and audio three
// keys (fixtures/cpix/three-keys-2.2.xml), so the MPD has one AdaptationSet per key, marked
// switchable. dash.js and shaka 5 play it in headless Chromium with W3C ClearKey past 6 s
// without a player error: shaka asks a ClearKey license server holding the three keys, dash.js is
// given them. Negative control: a license server without the audio key, and playback does not start.

import * as path from 'node:path';
import { ROOT } from '../../helpers/fixtures';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { closeBrowser, playAndCheck, playerTestsEnabled } from '../../helpers/browser';
import { ClearKeyServer, startClearKeyServer } from '../../../origin/drm/clearkey-server';
import { PlayerName } from '../../../origin/player/player-page';

const KEYS = new Map([
  ['d95627cfa966471bae89ace6822b4664', 'b965b4fa4448c37c73369bd4c0c94503'], // SD
  ['dd96304a2eea41e381926c9010625a8b', '447c67908a887b0e7765bc7d1de9b01a'], // HD
  ['baaf5c5055154ef698aa454752aeb3b6', '7d3a00433864636bcf0c072bf9a3ef0b'], // audio
]);
const FILES = ['video_baseline_400k.ismv', 'video_main_900k.ismv', 'video_high_1600k.ismv', 'audio_eng_128k.isma'];
const PLAY_TIMEOUT_MS = 25_000;

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('a CPIX presentation (three keys) with ClearKey', () => {
  let origin: TestOrigin;
  let licenses: ClearKeyServer;
  let noAudio: ClearKeyServer;

  beforeAll(async () => {
    licenses = await startClearKeyServer({ keys: KEYS });
    noAudio = await startClearKeyServer({ keys: new Map([...KEYS].slice(0, 2)) });
    const cpix = path.join(ROOT, 'fixtures', 'cpix', 'three-keys-2.2.xml');
    origin = await startTestOrigin(
      { cpix: FILES, noaudio: FILES },
      {
        cpix: [`--cpix=${cpix}`, `--clearkey.license_server_url=${licenses.url}`],
        noaudio: [`--cpix=${cpix}`, `--clearkey.license_server_url=${noAudio.url}`],
      },
    );
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await origin?.server.close();
    await licenses?.close();
    await noAudio?.close();
  });

  const page = (player: PlayerName, name: string, server: ClearKeyServer): string =>
    `${origin.url}/play?player=${player}&url=${encodeURIComponent(`${origin.url}/${name}.ism/.mpd`)}` +
    (player === 'dashjs'
      ? `&clearkeys=${[...KEYS].map(([kid, key]) => `${kid}:${key}`).join(',')}`
      : `&clearkey=${encodeURIComponent(server.url)}`);

  test.each(['dashjs', 'shaka'] as PlayerName[])(
    '%s plays it past 6 s',
    async (player) => {
      const before = licenses.answered();
      const r = await playAndCheck(page(player, 'cpix', licenses), {
        untilSeconds: 6,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `cpix-${player}`,
      });
      expect({ errors: r.errors, passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
      if (player === 'shaka') expect(licenses.answered()).toBeGreaterThan(before);
    },
    PLAY_TIMEOUT_MS + 10_000,
  );

  test(
    'shaka does not play it when the license server lacks the audio key',
    async () => {
      const r = await playAndCheck(page('shaka', 'noaudio', noAudio), {
        untilSeconds: 6,
        timeoutMs: 12_000,
        screenshot: 'cpix-shaka-no-audio-key',
      });
      expect(r.currentTime).toBeLessThan(1);
      // Chromium's ClearKey CDM rejects the license that holds no key for the audio set's KID.
      expect(r.errors.join('\n')).toContain('LICENSE_RESPONSE_REJECTED');
    },
    PLAY_TIMEOUT_MS + 10_000,
  );
});
