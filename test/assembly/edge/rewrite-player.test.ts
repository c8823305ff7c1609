// hls.js plays aliased HLS URLs in headless Chromium through the embedded edge (map files →
// origin edge-config → envoy.yaml → origin edge with build/edge.wasm → the real origin): the
// player page, the scripts, the aliased master, the sibling media playlists and every segment
// come through the edge, and none is refused. ORIGIN_SKIP_PLAYERS=1 skips it
// (test/helpers/browser.ts). Screenshots: test-artifacts/players/edge-alias-*.png.

import { closeBrowser, playAndCheck, playerTestsEnabled } from '../../helpers/browser';
import { AliasSetup, startAliasEdge } from './alias-edge';

const PLAY_TIMEOUT_MS = 25_000;
const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('hls.js plays aliased HLS through the edge', () => {
  let s: AliasSetup;

  beforeAll(async () => {
    s = await startAliasEdge();
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await s?.close();
  });

  test.each([
    ['fmp4-one', '/vod/tos.ism/fmp4/one.m3u8', 'one H.264 and one AAC rendition, fMP4, past 6 s', 6],
    ['fmp4-intro', '/vod/tos.ism/fmp4/one@intro.m3u8', 'the six-second intro subclip, past 5 s', 5],
    // From 4 s on: whole segments 2 and 3 (EXT-X-MEDIA-SEQUENCE:2, media times from 4 s).
    ['fmp4-late', '/vod/tos.ism/fmp4/one@late.m3u8', 'the six-second subclip from four seconds on, past 5 s', 5],
  ] as Array<[string, string, string, number]>)(
    '%s: %s (%s) without a player error',
    async (name, alias, _what, until) => {
      const before = s.edge.edge.stats.requests;
      const page = `${s.edge.url}/play?player=hlsjs&url=${encodeURIComponent(s.edge.url + alias)}`;
      const r = await playAndCheck(page, {
        untilSeconds: until,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `edge-alias-${name}`,
      });
      expect({ errors: r.errors, passed: r.currentTime > until }).toEqual({ errors: [], passed: true });
      // The subclips' segments are the whole presentation's URLs (docs/reference/edge-config.md#rewrite):
      // the browser's HTTP cache holds those the test before fetched, so a subclip may need only
      // its page, master and media playlists from the edge.
      expect(s.edge.edge.stats.requests - before).toBeGreaterThan(name === 'fmp4-one' ? 5 : 3);
      expect(s.edge.logs.filter((l) => / [45]\d\d /.test(l) && !l.includes('favicon'))).toEqual([]);
      // The player asked for alias URLs only: the sibling media playlists and segments under the format directory.
      const hls = s.edge.logs.filter((l) => l.includes('/vod/tos.ism/'));
      expect(hls.length).toBeGreaterThan(3);
      expect(hls.every((l) => /\/vod\/tos\.ism\/(fmp4|ts)\//.test(l))).toBe(true);
      // No segment URL carries a query (no clip): one URL per segment for all siblings.
      expect(hls.filter((l) => /\.m4s\?/.test(l))).toEqual([]);
    },
    PLAY_TIMEOUT_MS + 10_000,
  );
});
