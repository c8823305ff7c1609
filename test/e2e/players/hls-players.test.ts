// HLS judged by the players that play it: hls.js, shaka 5 and Chromium's own HLS, on MPEG-TS
// multiplexed (the default), MPEG-TS demultiplexed (hls_no_multiplex) and fMP4 (hls_fmp4). Each
// run switches the audio to Dutch mid-play (playback must go on, and the player must say Dutch is
// active) and turns subtitles on (a WebVTT cue must reach a text track of the <video>).

import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { closeBrowser, playAndCheck, playerTestsEnabled, PlayResult } from '../../helpers/browser';
import { PLAYABLE } from '../../helpers/presentations';
import { PlayerName } from '../../../origin/player/player-page';
import { Mode, withoutHlsjsNotices } from '../../helpers/hlsjs-notices';

const PLAY_TIMEOUT_MS = 30_000;
const DUTCH = ['nl', 'nld', 'dut'];

const MODES = {
  'ts-muxed': '',
  'ts-demuxed': '?hls_no_multiplex=true',
  fmp4: '?hls_fmp4=true',
} as const;

const PLAYERS: PlayerName[] = ['hlsjs', 'shaka', 'native'];

const CASES: Array<[PlayerName, Mode]> = PLAYERS.flatMap((p) =>
  (Object.keys(MODES) as Mode[]).map((m): [PlayerName, Mode] => [p, m]),
);

const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('HLS in real players', () => {
  let origin: TestOrigin;
  const page = (player: PlayerName, manifest: string): string =>
    `${origin.url}/play?player=${player}&url=${encodeURIComponent(origin.url + manifest)}`;

  beforeAll(async () => {
    origin = await startTestOrigin({ hls: PLAYABLE });
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await origin?.server.close();
  });

  async function playSwitchAndCue(player: PlayerName, mode: Mode): Promise<void> {
    const r = await playAndCheck(page(player, `/hls.ism/.m3u8${MODES[mode]}`), {
      untilSeconds: 7,
      timeoutMs: PLAY_TIMEOUT_MS,
      screenshot: `hls-${player}-${mode}`,
      switchAudio: { to: DUTCH, atSeconds: 2 },
      // No subtitles for native (see cueApplies below): waiting for a cue would only time out.
      subtitles: player !== 'native',
      ...(player === 'hlsjs'
        ? { counted: (p: Pick<PlayResult, 'errors' | 'errorTimes' | 'switchedAt'>) => withoutHlsjsNotices(mode, p) }
        : {}),
    });
    // Chromium's native HLS has no subtitles: it never creates a TextTrack for a SUBTITLES
    // rendition (video.textTracks stays empty in every mode, while hls.js and shaka show cues from
    // the same playlists), so a cue cannot be asked of it.
    const cueApplies = player !== 'native';
    expect({
      errors: player === 'hlsjs' ? withoutHlsjsNotices(mode, r) : r.errors,
      passed: r.currentTime > 7,
      dutch: DUTCH.includes((r.audioLanguage ?? '').split('-')[0]!.toLowerCase()),
      cue: cueApplies ? (r.cues ?? 0) > 0 : 'not applicable',
    }).toEqual({ errors: [], passed: true, dutch: true, cue: cueApplies ? true : 'not applicable' });
  }

  // Every player and mode, Chromium's native HLS on multiplexed TS included. That case needs the
  // DEFAULT audio of a group of several to have its own URI (origin/manifests/hls.ts hasUri): with
  // a URI-less DEFAULT, native HLS starts with the 'primary' role only, and the 'audio-override'
  // role that the Dutch rendition needs is refused once playback has started
  // (DEMUXER_ERROR_COULD_NOT_PARSE), whatever the container of the Dutch audio.
  test.each(CASES)(
    '%s plays %s, switches the audio to Dutch and shows a subtitle cue',
    async (player, mode) => {
      await playSwitchAndCue(player, mode);
    },
    PLAY_TIMEOUT_MS + 10_000,
  );
});
