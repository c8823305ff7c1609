// The judges: real players in headless Chromium play what the origin serves. The fixture
// presentation (every fixture file) is filtered to H.264 + AAC (Chromium's MSE has no AC-3/E-AC-3
// and the players here do not render TTML in fMP4 reliably), through the filter language, exactly as
// a user would request it. Each test saves a screenshot under test-artifacts/players/.

import { FIXTURE_FILES } from '../../helpers/fixtures';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { closeBrowser, playAndCheck, playerTestsEnabled } from '../../helpers/browser';
import { hlsjsAware } from '../../helpers/hlsjs-notices';
import { PlayerName } from '../../../origin/player/player-page';

const FILTER = encodeURIComponent('FourCC=="AVC1"||FourCC=="AACL"');
const PLAY_TIMEOUT_MS = 25_000;

const MANIFESTS = {
  dash: `/all.ism/.mpd?filter=${FILTER}`,
  smooth: `/all.ism/Manifest?filter=${FILTER}`,
  hls: `/all.ism/.m3u8?hls_fmp4=true&filter=${FILTER}`,
} as const;
type Format = keyof typeof MANIFESTS;

const PAIRS: Array<[PlayerName, Format]> = [
  ['dashjs', 'dash'],
  ['shaka', 'dash'],
  ['dashjs-mss', 'smooth'],
  ['shaka4-mss', 'smooth'],
  ['hlsjs', 'hls'],
  ['native', 'hls'],
];

const enabled = playerTestsEnabled();
const describePlayers = enabled ? describe : describe.skip;

describePlayers('real players on the origin', () => {
  let origin: TestOrigin;
  const page = (player: PlayerName, manifest: string): string =>
    `${origin.url}/play?player=${player}&url=${encodeURIComponent(origin.url + manifest)}`;

  beforeAll(async () => {
    origin = await startTestOrigin({ all: FIXTURE_FILES });
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await origin?.server.close();
  });

  test.each(PAIRS)(
    '%s plays %s past 6 s without a player error',
    async (player, format) => {
      const aware = hlsjsAware(player, MANIFESTS[format]);
      const r = await playAndCheck(page(player, MANIFESTS[format]), {
        untilSeconds: 6,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `origin-${player}-${format}`,
        ...aware.options,
      });
      expect({ errors: aware.errors(r), passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
    },
    PLAY_TIMEOUT_MS + 10_000,
  );

  // The player page's own links (what `npm start` shows a person): the presentation holds AC-3 and
  // E-AC-3, which the page's links filter out; hls.js pairs the variants with the AAC group then.
  test.each(['hlsjs', 'dashjs', 'dashjs-mss'] as PlayerName[])(
    'the index page link for %s plays the unfiltered presentation',
    async (player) => {
      const index = await (await fetch(`${origin.url}/`)).text();
      const m = new RegExp(`href="(/play\\?player=${player}&#38;url=[^"]*all\\.ism[^"]*)"`).exec(index);
      expect(m).not.toBeNull();
      const link = m![1]!.replace(/&#38;/g, '&');
      const aware = hlsjsAware(player, new URL(origin.url + link).searchParams.get('url')!);
      const r = await playAndCheck(origin.url + link, {
        untilSeconds: 6,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `origin-index-${player}`,
        ...aware.options,
      });
      expect({ errors: aware.errors(r), passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
    },
    PLAY_TIMEOUT_MS + 10_000,
  );

  // A 6 s sub-clip (t=0-0:00:06, three 2 s fragments): the players reach its end.
  test.each([
    ['dashjs', 'dash'],
    ['hlsjs', 'hls'],
    ['dashjs-mss', 'smooth'],
  ] as Array<[PlayerName, Format]>)(
    '%s plays the t=0-0:00:06 sub-clip of %s',
    async (player, format) => {
      const aware = hlsjsAware(player, `${MANIFESTS[format]}&t=0-0:00:06`);
      const r = await playAndCheck(page(player, `${MANIFESTS[format]}&t=0-0:00:06`), {
        untilSeconds: 5,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `origin-clip-${player}-${format}`,
        ...aware.options,
      });
      expect({ errors: aware.errors(r), passed: r.currentTime > 5 }).toEqual({ errors: [], passed: true });
    },
    PLAY_TIMEOUT_MS + 10_000,
  );
});
