// Real players through the embedded edge (envoy-config/envoy.yaml, the real build/edge.wasm in
// the proxy-wasm host) in front of the real origin: the player page, the player scripts, the
// manifests and every segment all come through the edge. Screenshots go to
// test-artifacts/players/edge-*.png. ORIGIN_SKIP_PLAYERS=1 skips them (test/helpers/browser.ts).
// The presentation and manifests are those of test/e2e/players/origin-players.test.ts, which play
// cleanly direct (on the smaller PLAYABLE set, hls.js's up-switch aborts an audio fragment load
// and reports it as a non-fatal error, direct or through the edge alike).

import { PlayerName } from '../../../origin/player/player-page';
import { FIXTURE_FILES } from '../../helpers/fixtures';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { closeBrowser, playAndCheck, playerTestsEnabled } from '../../helpers/browser';
import { hlsjsAware } from '../../helpers/hlsjs-notices';
import { EdgeUnderTest, startTestEdge } from '../../host-glue/envoy/edge-helpers';

const FILTER = encodeURIComponent('FourCC=="AVC1"||FourCC=="AACL"');
/** One video and one audio rendition: nothing for an ABR controller to switch. */
const ONE_LADDER_STEP = encodeURIComponent(
  '(FourCC=="AVC1"&&systemBitrate<500000)||(FourCC=="AACL"&&systemBitrate<100000)',
);
const PLAY_TIMEOUT_MS = 25_000;

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('real players through the embedded edge', () => {
  let origin: TestOrigin;
  let edge: EdgeUnderTest;

  beforeAll(async () => {
    origin = await startTestOrigin({ all: FIXTURE_FILES });
    edge = await startTestEdge(origin.url); // the real host (host-glue/proxy-wasm/host.ts) with build/edge.wasm
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await edge?.close();
    await origin?.server.close();
  });

  test.each([
    [
      'hlsjs',
      'hls',
      'the H.264 + AAC ladder (as test/e2e/players/origin-players.test.ts plays it direct)',
      `/all.ism/.m3u8?hls_fmp4=true&filter=${FILTER}`,
    ],
    ['hlsjs', 'hls-one', 'one video and one audio rendition', `/all.ism/.m3u8?hls_fmp4=true&filter=${ONE_LADDER_STEP}`],
    ['dashjs', 'dash', 'the H.264 + AAC ladder', `/all.ism/.mpd?filter=${FILTER}`],
  ] as Array<[PlayerName, string, string, string]>)(
    '%s plays %s (%s) through the edge past 6 s without a player error',
    async (player, name, _what, manifest) => {
      const before = edge.edge.stats.requests;
      const page = `${edge.url}/play?player=${player}&url=${encodeURIComponent(edge.url + manifest)}`;
      const aware = hlsjsAware(player, manifest);
      const r = await playAndCheck(page, {
        untilSeconds: 6,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `edge-${player}-${name}`,
        ...aware.options,
      });
      expect({ errors: aware.errors(r), passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
      // Page, scripts, manifest(s) and segments: all through the edge, none refused.
      expect(edge.edge.stats.requests - before).toBeGreaterThan(5);
      expect(edge.logs.filter((l) => / [45]\d\d /.test(l) && !l.includes('favicon'))).toEqual([]);
    },
    PLAY_TIMEOUT_MS + 10_000,
  );
});
