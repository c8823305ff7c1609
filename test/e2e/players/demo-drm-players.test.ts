// `npm start`'s encrypted presentation plays from the player page's own links (the index page,
// through the edge, keys from the demo's ClearKey license server): shaka 5 the DASH cenc one,
// hls.js the HLS fMP4 cbcs one, each past 6 s without a player error.

import { Capture, startDemo } from '../../helpers/demo';
import { closeBrowser, playAndCheck, playerTestsEnabled } from '../../helpers/browser';
import { hlsjsAware } from '../../helpers/hlsjs-notices';
import { PlayerName } from '../../../origin/player/player-page';

const out = new Capture();
const err = new Capture();

/** License requests the demo's ClearKey server answered with the key (its log lines on stderr). */
const licensesAnswered = (): number => (err.text.match(/^clearkey: 1 of 1 keys for /gm) ?? []).length;

const PLAY_TIMEOUT_MS = 25_000;
const describePlayers = playerTestsEnabled() ? describe : describe.skip;

describePlayers('the encrypted demo on the player page', () => {
  let running: Promise<number>;
  let edge: string;
  let links: Map<string, string>;

  beforeAll(async () => {
    ({ running, edge } = await startDemo(out, err));
    const index = await (await fetch(`${edge}/`)).text();
    const from = index.indexOf('<h2>/encrypted.ism</h2>');
    const section = index.slice(from, index.indexOf('<h2>', from + 1));
    const hrefs = [...section.matchAll(/href="(\/play\?[^"]+)"/g)].map((m) => m[1]!.replace(/&#38;/g, '&'));
    links = new Map(hrefs.map((h) => [new URLSearchParams(h.slice('/play?'.length)).get('player')!, h]));
  }, 60_000);

  afterAll(async () => {
    await closeBrowser();
    process.emit('SIGINT');
    expect(await running).toBe(0);
  });

  test.each(['shaka', 'hlsjs'] as PlayerName[])(
    '%s plays its link past 6 s',
    async (player) => {
      const href = links.get(player);
      expect(href).toBeDefined();
      const manifest = new URLSearchParams(href!.slice('/play?'.length)).get('url')!;
      const aware = hlsjsAware(player, manifest);
      const before = licensesAnswered();
      const r = await playAndCheck(`${edge}${href}`, {
        untilSeconds: 6,
        timeoutMs: PLAY_TIMEOUT_MS,
        screenshot: `demo-encrypted-${player}`,
        ...aware.options,
      });
      expect({ errors: aware.errors(r), passed: r.currentTime > 6 }).toEqual({ errors: [], passed: true });
      expect(licensesAnswered()).toBeGreaterThan(before);
    },
    PLAY_TIMEOUT_MS + 10_000,
  );
});
