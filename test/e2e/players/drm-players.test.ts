// Encrypted DASH and HLS in real players: dash.js and shaka 5 in headless Chromium play the cenc
// and the cbcs DASH presentation, hls.js and shaka 5 the HLS fMP4 (cbcs) one, with W3C ClearKey (Chromium's own CDM), keys from a ClearKey license server on
// loopback (origin/drm/clearkey-server.ts), each past 6 s without a player error. Negative
// control: a license server that holds the wrong key for the KID, and playback does not start.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FIXTURE_FILES } from '../../helpers/fixtures';
import { startTestOrigin, TestOrigin } from '../../origin/server/server-helpers';
import { closeBrowser, playAndCheck, playerTestsEnabled } from '../../helpers/browser';
import { ClearKeyServer, startClearKeyServer } from '../../../origin/drm/clearkey-server';
import { PlayerName } from '../../../origin/player/player-page';
import { hlsjsAware } from '../../helpers/hlsjs-notices';

const KID = '00112233445566778899aabbccddeeff';
const KEY = '3a2a1b68dd2bd9b2eeb25e84c4776668';
const FILTER = encodeURIComponent('FourCC=="AVC1"||FourCC=="AACL"');
const PLAY_TIMEOUT_MS = 25_000;

const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('encrypted DASH and HLS with ClearKey', () => {
  let origin: TestOrigin;
  let licenses: ClearKeyServer;
  let wrong: ClearKeyServer;
  let keyFile: http.Server;

  beforeAll(async () => {
    licenses = await startClearKeyServer({ keys: new Map([[KID, KEY]]) });
    // HLS AES-128's key file (identity key format): 16 raw bytes, with CORS for the page.
    keyFile = http.createServer((_, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Access-Control-Allow-Origin': '*' });
      res.end(Buffer.from(KEY, 'hex'));
    });
    await new Promise<void>((resolve) => keyFile.listen(0, '127.0.0.1', resolve));
    const keyUrl = `http://127.0.0.1:${(keyFile.address() as AddressInfo).port}/key`;
    wrong = await startClearKeyServer({ keys: new Map([[KID, KEY.replace(/.$/, '9')]]) });
    // The MPD signals ClearKey with its license URL (DASH-IF ClearKey descriptor): dash.js takes
    // ClearKey from that descriptor or from the W3C Common PSSH; shaka from the page's settings.
    const signal = `--clearkey.license_server_url=${licenses.url}`;
    origin = await startTestOrigin(
      { cenc: FIXTURE_FILES, cbcs: FIXTURE_FILES, hls: FIXTURE_FILES, aes: FIXTURE_FILES },
      {
        cenc: [`--drm_a.key=${KID}:${KEY}`, signal],
        cbcs: [`--drm_a.key=${KID}:${KEY}`, '--mpd.protection_scheme=cbcs', signal],
        hls: [`--hls.key=${KID}:${KEY}`, '--hls.playout=sample_aes', signal],
        aes: [`--hls.key=:${KEY}`, `--hls.license_server_url=${keyUrl}`],
      },
    );
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    await origin?.server.close();
    await licenses?.close();
    await wrong?.close();
    await new Promise((resolve) => keyFile?.close(resolve));
  });

  // HLS AES-128 whole-segment MPEG-TS: hls.js and shaka decrypt it themselves with the key file.
  // Chromium's own HLS player (native) refuses every playlist with an EXT-X-KEY (NotSupportedError
  // at play(), measured with one key line and with one per segment): docs/guide/drm.md.
  test.each(['hlsjs', 'shaka'] as PlayerName[])(
    '%s plays HLS MPEG-TS AES-128 past 6 s',
    async (player) => {
      const manifest = `/aes.ism/.m3u8?filter=${FILTER}`;
      const aware = hlsjsAware(player, manifest);
      const r = await playAndCheck(
        `${origin.url}/play?player=${player}&url=${encodeURIComponent(origin.url + manifest)}`,
        {
          untilSeconds: 6,
          timeoutMs: PLAY_TIMEOUT_MS,
          screenshot: `drm-${player}-hls-aes128`,
          ...aware.options,
        },
      );
      expect({ errors: aware.errors(r), passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
    },
    PLAY_TIMEOUT_MS + 10_000,
  );

  // dash.js takes the keys themselves (with a license URL it asks the CDM for a 'keyids' request
  // built from the segments' pssh, which Chromium refuses); shaka asks the license server.
  const page = (player: PlayerName, name: string, server: ClearKeyServer, key = KEY): string =>
    `${origin.url}/play?player=${player}&url=${encodeURIComponent(`${origin.url}/${name}.ism/.mpd?filter=${FILTER}`)}` +
    (player === 'dashjs' ? `&clearkeys=${KID}:${key}` : `&clearkey=${encodeURIComponent(server.url)}`);

  test.each([
    ['dashjs', 'cenc'],
    ['shaka', 'cenc'],
    ['dashjs', 'cbcs'],
    ['shaka', 'cbcs'],
  ] as Array<[PlayerName, string]>)(
    '%s plays %s past 6 s',
    async (player, name) => {
      const before = licenses.answered();
      const r = await playAndCheck(page(player, name, licenses), {
        untilSeconds: 6,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `drm-${player}-${name}`,
      });
      expect({ errors: r.errors, passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
      if (player === 'shaka') expect(licenses.answered()).toBeGreaterThan(before);
    },
    PLAY_TIMEOUT_MS + 10_000,
  );

  // HLS fMP4 cbcs: hls.js through EME with the license server (the playlist's org.w3.clearkey
  // line gives the KID), shaka 5 with the keys given (it refuses that key format otherwise).
  test.each([
    ['hlsjs', `&clearkey=`],
    ['shaka', `&clearkeys=${KID}:${KEY}`],
  ] as Array<[PlayerName, string]>)(
    '%s plays HLS fMP4 cbcs past 6 s',
    async (player, drm) => {
      const manifest = `/hls.ism/.m3u8?hls_fmp4=true&filter=${FILTER}`;
      // hls.js's own notices on correct input (test/helpers/hlsjs-notices.ts), no others.
      const aware = hlsjsAware(player, manifest);
      const r = await playAndCheck(
        `${origin.url}/play?player=${player}&url=${encodeURIComponent(origin.url + manifest)}${drm}${drm.endsWith('=') ? encodeURIComponent(licenses.url) : ''}`,
        { untilSeconds: 6, timeoutMs: PLAY_TIMEOUT_MS, screenshot: `drm-${player}-hls-cbcs`, ...aware.options },
      );
      expect({ errors: aware.errors(r), passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
    },
    PLAY_TIMEOUT_MS + 10_000,
  );

  test.each(['dashjs', 'shaka'] as PlayerName[])(
    '%s with the wrong key does not play',
    async (player) => {
      const r = await playAndCheck(page(player, 'cenc', wrong, KEY.replace(/.$/, '9')), {
        untilSeconds: 3,
        timeoutMs: 12_000,
        screenshot: `drm-${player}-wrong-key`,
      });
      expect(r.currentTime).toBeLessThan(1);
      expect(r.errors.length).toBeGreaterThan(0);
    },
    25_000,
  );

  test('hlsjs with a license server holding the wrong key does not play', async () => {
    const manifest = `${origin.url}/hls.ism/.m3u8?hls_fmp4=true&filter=${FILTER}`;
    const r = await playAndCheck(
      `${origin.url}/play?player=hlsjs&url=${encodeURIComponent(manifest)}&clearkey=${encodeURIComponent(wrong.url)}`,
      { untilSeconds: 3, timeoutMs: 12_000, screenshot: 'drm-hlsjs-wrong-key' },
    );
    expect(r.currentTime).toBeLessThan(1);
    expect(r.errors.length).toBeGreaterThan(0);
  }, 25_000);
});
