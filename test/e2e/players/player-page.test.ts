// The player page's pure functions, without a browser: the /_players/ table as a security
// boundary, escaping of the manifest URL (user input), the CSP hash, and the index links.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import {
  escapeHtml,
  PLAYER_ASSETS,
  PLAYER_NAMES,
  playerAssetFile,
  playerPage,
  PLAYERS_BY_FORMAT,
} from '../../../origin/player/player-page';
import { indexPage } from '../../../origin/player/index-page';

const HOSTILE = `"'><img src=x onerror=alert(1)></script><script>alert(2)</script>\u2028&amp;`;

/** The text of the `<script>` element with the given opening tag. */
function scriptText(html: string, open: string): string {
  const start = html.indexOf(open);
  if (start < 0) throw new Error(`no ${open}`);
  const end = html.indexOf('</script>', start);
  return html.slice(start + open.length, end);
}

describe('/_players/ table', () => {
  test.each(Object.keys(PLAYER_ASSETS))('%s resolves to a file of its package', (urlPath) => {
    const file = playerAssetFile(urlPath);
    const asset = PLAYER_ASSETS[urlPath];
    expect(file).toBeDefined();
    expect(existsSync(file ?? '')).toBe(true);
    expect(file?.split(path.sep).join('/')).toContain(`/node_modules/${asset?.pkg}/${asset?.file}`);
  });

  test.each([
    '/_players/../package.json',
    '/_players/%2e%2e/package.json',
    '/_players/hls.min.js/../../x',
    '/_players/',
    '/_players',
    '/',
    '',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    '/_players/HLS.MIN.JS',
    '/_players/hls.min.js?x',
    '/_players/hls.min.js.map',
    'hls.min.js',
  ])('%j is not served', (urlPath) => {
    expect(playerAssetFile(urlPath)).toBeUndefined();
  });
});

describe('playerPage', () => {
  test.each([...PLAYER_NAMES])('%s loads only /_players/ scripts from the table, no CDN', (player) => {
    const html = playerPage(player, 'http://127.0.0.1/x/Manifest');
    const srcs = [...html.matchAll(/<script src="([^"]*)"/g)].map((m) => m[1] ?? '');
    for (const src of srcs) expect(playerAssetFile(src)).toBeDefined();
    expect(srcs.length).toBe(player === 'native' ? 0 : player.endsWith('-mss') ? 2 : 1);
    expect(html).toContain('<video id="video" muted autoplay playsinline controls');
  });

  test('the Smooth players load their helper first', () => {
    const order = (player: 'dashjs-mss' | 'shaka4-mss'): string[] =>
      [...playerPage(player, 'u').matchAll(/<script src="([^"]*)"/g)].map((m) => m[1] ?? '');
    expect(order('dashjs-mss')).toEqual(['/_players/dash.all.min.js', '/_players/dash.mss.min.js']);
    expect(order('shaka4-mss')).toEqual([
      '/_players/codem-isoboxer.min.js',
      '/_players/shaka4/shaka-player.compiled.js',
    ]);
  });

  test('a hostile URL reaches the page only escaped, and round-trips through the config block', () => {
    const html = playerPage('hlsjs', HOSTILE);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('alert(2)</script>');
    const config = scriptText(html, '<script type="application/json" id="config">');
    expect(config).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(config)).toEqual({ player: 'hlsjs', url: HOSTILE });
  });

  test('the CSP allows exactly the inline script that is on the page', () => {
    const html = playerPage('shaka', 'u');
    const inline = scriptText(html, '<script>');
    const hash = createHash('sha256').update(inline).digest('base64');
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1] ?? '';
    expect(csp.replace(/&#39;/g, "'")).toContain(`script-src 'self' 'sha256-${hash}'`);
    expect(inline).toContain('window.__test');
  });
});

describe('indexPage', () => {
  const presentations = [
    {
      name: 'Big <Buck> & Bunny',
      urls: { smooth: '/bbb.ism/Manifest', dash: '/bbb.ism/.mpd?a=1&b=2', hls: '/bbb.ism/.m3u8' },
    },
  ];

  test('one link per format/player pair, each decoding back to the manifest URL', () => {
    const html = indexPage(presentations);
    const hrefs = [...html.matchAll(/href="(\/play\?[^"]*)"/g)].map((m) => (m[1] ?? '').replace(/&#38;/g, '&'));
    const pairs = hrefs.map((h) => {
      const q = new URL(h, 'http://x').searchParams;
      return `${q.get('player')} ${q.get('url')}`;
    });
    const expected = (['smooth', 'dash', 'hls'] as const).flatMap((f) =>
      PLAYERS_BY_FORMAT[f].map((p) => `${p} ${presentations[0]?.urls[f]}`),
    );
    expect(pairs).toEqual(expected);
  });

  const playLinks = (html: string): string[] =>
    [...html.matchAll(/href="(\/play\?[^"]*)"/g)].map((m) => {
      const q = new URL((m[1] ?? '').replace(/&#38;/g, '&'), 'http://x').searchParams;
      return [q.get('player'), q.get('url'), q.get('clearkey')].join(' ');
    });

  test('an encrypted presentation: its keyed formats, each with the players that get its keys here', () => {
    const license = 'http://127.0.0.1:8082/license';
    const urls = { dash: '/e.ism/.mpd', hls: '/e.ism/.m3u8?hls_fmp4=true' };
    const html = indexPage([{ name: '/e.ism', urls, drm: { clearKeyLicense: license, hlsKeyFile: false } }]);
    expect(playLinks(html)).toEqual([`shaka /e.ism/.mpd ${license}`, `hlsjs /e.ism/.m3u8?hls_fmp4=true ${license}`]);
    expect(html).toContain(`ClearKey license server <code>${license}</code>`);
    expect(html).not.toContain('Smooth Streaming');
    // HLS AES-128: the players fetch the key file themselves; no license server.
    const aes = indexPage([
      { name: '/a.ism', urls: { hls: '/a.ism/.m3u8' }, drm: { clearKeyLicense: undefined, hlsKeyFile: true } },
    ]);
    expect(playLinks(aes)).toEqual(['hlsjs /a.ism/.m3u8 ', 'shaka /a.ism/.m3u8 ']);
    // Another DRM: no browser here has its keys, and the page says so rather than offering a player.
    const other = indexPage([
      { name: '/d.ism', urls: { dash: '/d.ism/.mpd' }, drm: { clearKeyLicense: undefined, hlsKeyFile: false } },
    ]);
    expect(playLinks(other)).toEqual([]);
    expect(other).toContain('no browser player here has its keys');
  });

  test('names are escaped', () => {
    expect(indexPage(presentations)).toContain(`<h2>${escapeHtml('Big <Buck> & Bunny')}</h2>`);
    expect(indexPage([])).toContain('No presentations.');
  });
});
