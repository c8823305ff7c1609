// HLS judged by the players that play it: hls.js, shaka 5 and Chromium's own HLS, on MPEG-TS
// multiplexed (the default), MPEG-TS demultiplexed (hls_no_multiplex) and fMP4 (hls_fmp4). Each
// run switches the audio to Dutch mid-play (playback must go on, and the player must say Dutch is
// active) and turns subtitles on (a WebVTT cue must reach a text track of the <video>).

import { startTestOrigin, TestOrigin } from '../server/server-helpers';
import { closeBrowser, playAndCheck, playerTestsEnabled } from '../support/browser';
import { PLAYABLE } from '../helpers/presentations';
import { PlayerName } from '../../origin/player/player-page';

const PLAY_TIMEOUT_MS = 30_000;
const DUTCH = ['nl', 'nld', 'dut'];

const MODES = {
  'ts-muxed': '',
  'ts-demuxed': '?hls_no_multiplex=true',
  fmp4: '?hls_fmp4=true',
} as const;
type Mode = keyof typeof MODES;

const PLAYERS: PlayerName[] = ['hlsjs', 'shaka', 'native'];
const CASES: Array<[PlayerName, Mode]> = PLAYERS.flatMap((p) => (Object.keys(MODES) as Mode[]).map((m): [PlayerName, Mode] => [p, m]));

const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('HLS in real players', () => {
  let origin: TestOrigin;
  const page = (player: PlayerName, manifest: string): string => `${origin.url}/play?player=${player}&url=${encodeURIComponent(origin.url + manifest)}`;

  beforeAll(async () => {
    origin = await startTestOrigin({ hls: PLAYABLE });
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await origin?.server.close();
  });

  test.each(CASES)('%s plays %s, switches the audio to Dutch and shows a subtitle cue', async (player, mode) => {
    const r = await playAndCheck(page(player, `/hls.ism/.m3u8${MODES[mode]}`), {
      untilSeconds: 7,
      timeoutMs: PLAY_TIMEOUT_MS,
      screenshot: `hls-${player}-${mode}`,
      switchAudio: { to: DUTCH, atSeconds: 2 },
      subtitles: true,
    });
    expect({
      errors: r.errors,
      passed: r.currentTime > 7,
      dutch: DUTCH.includes((r.audioLanguage ?? '').split('-')[0]!.toLowerCase()),
      cue: (r.cues ?? 0) > 0,
    }).toEqual({ errors: [], passed: true, dutch: true, cue: true });
  }, PLAY_TIMEOUT_MS + 10_000);
});
