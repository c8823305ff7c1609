// The player view, `/play`: loads one browser player (hls.js, dash.js, shaka) from `/_players/`
// (files of node_modules, never a CDN) and plays one manifest URL, with the quality, audio and
// subtitle selectors, live figures and the manifest text beside the video (play-script.ts is its
// browser side). `/` is index-page.ts. The pages exist so that real clients judge what the origin
// writes (test/e2e/players/README.md), by hand in a browser and headless in the player tests,
// which read the `window.__test` hook.
//
// Pure functions: no HTTP types and no I/O, except resolving the player files in node_modules.
// The manifest URL is user input; it reaches the page only JSON-escaped inside a data block (never
// interpolated into code) and HTML-escaped in text, and a Content-Security-Policy allows no
// script but the player files and the page's own (hash-pinned) inline script.

import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { escapeHtml, htmlDocument, scriptJson } from './html';
import { PLAY_SCRIPT } from './play-script';

export { escapeHtml } from './html';

export const PLAYER_NAMES = ['hlsjs', 'dashjs', 'dashjs-mss', 'shaka', 'shaka4-mss', 'native'] as const;
export type PlayerName = (typeof PLAYER_NAMES)[number];

export function isPlayerName(value: string): value is PlayerName {
  return (PLAYER_NAMES as readonly string[]).includes(value);
}

export interface PlayerAsset {
  /** npm package name as installed (an alias such as `shaka4` is its own directory). */
  readonly pkg: string;
  /** Path inside the package. A constant of this table, never derived from a request. */
  readonly file: string;
}

/** Every file served under `/_players/`. Nothing else is: the URL path is a key, not a path. */
export const PLAYER_ASSETS: Readonly<Record<string, PlayerAsset>> = Object.freeze({
  '/_players/hls.min.js': { pkg: 'hls.js', file: 'dist/hls.min.js' },
  '/_players/dash.all.min.js': { pkg: 'dashjs', file: 'dist/modern/umd/dash.all.min.js' },
  // dash.js's Smooth Streaming module; registers dashjs.MssHandler, which MediaPlayer picks up.
  '/_players/dash.mss.min.js': { pkg: 'dashjs', file: 'dist/modern/umd/dash.mss.min.js' },
  '/_players/shaka-player.compiled.js': { pkg: 'shaka-player', file: 'dist/shaka-player.compiled.js' },
  // shaka 5 dropped Smooth; shaka 4 has it and reads the boxes with the global window.ISOBoxer.
  '/_players/shaka4/shaka-player.compiled.js': { pkg: 'shaka4', file: 'dist/shaka-player.compiled.js' },
  '/_players/codem-isoboxer.min.js': { pkg: 'codem-isoboxer', file: 'dist/iso_boxer.min.js' },
});

export const PLAYER_ASSET_CONTENT_TYPE = 'text/javascript; charset=utf-8';

/** Which `/_players/` files each player page loads, in order. */
const PLAYER_SCRIPTS: Record<PlayerName, readonly string[]> = {
  hlsjs: ['/_players/hls.min.js'],
  dashjs: ['/_players/dash.all.min.js'],
  'dashjs-mss': ['/_players/dash.all.min.js', '/_players/dash.mss.min.js'],
  shaka: ['/_players/shaka-player.compiled.js'],
  'shaka4-mss': ['/_players/codem-isoboxer.min.js', '/_players/shaka4/shaka-player.compiled.js'],
  native: [],
};

/** Which players the index page offers for each format. */
export const PLAYERS_BY_FORMAT: Readonly<Record<'smooth' | 'dash' | 'hls', readonly PlayerName[]>> = {
  smooth: ['dashjs-mss', 'shaka4-mss'],
  dash: ['dashjs', 'shaka'],
  hls: ['hlsjs', 'shaka', 'native'],
};

const packageRoots = new Map<string, string>();

/** The directory holding a package's package.json, found from its main entry (require.resolve
 * honours `exports`, which for dashjs hides package.json itself), so the lookup works from the
 * sources under ts-jest and from dist/origin/player/ after tsc alike. */
function packageRoot(pkg: string): string {
  const known = packageRoots.get(pkg);
  if (known !== undefined) return known;
  let dir = path.dirname(require.resolve(pkg));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`${pkg}: no package.json above ${require.resolve(pkg)}`);
    dir = parent;
  }
  packageRoots.set(pkg, dir);
  return dir;
}

/** Absolute path of the file behind a `/_players/` URL path; undefined for anything not in the
 * table (the request path is only ever compared, never joined onto a directory). */
export function playerAssetFile(urlPath: string): string | undefined {
  if (!Object.hasOwn(PLAYER_ASSETS, urlPath)) return undefined;
  const asset = PLAYER_ASSETS[urlPath];
  if (asset === undefined) return undefined;
  return path.join(packageRoot(asset.pkg), asset.file);
}

/**
 * The `/play` link of a player and a manifest URL, with the ClearKey license server of an
 * encrypted one, or the Basic-auth credentials (`user:password`) of a protected location.
 */
export function playHref(player: PlayerName, url: string, clearKeyLicense: string | undefined, auth?: string): string {
  const clearKey = clearKeyLicense === undefined ? '' : `&clearkey=${encodeURIComponent(clearKeyLicense)}`;
  const credentials = auth === undefined ? '' : `&auth=${encodeURIComponent(auth)}`;
  return `/play?player=${encodeURIComponent(player)}&url=${encodeURIComponent(url)}${clearKey}${credentials}`;
}

export type Format = keyof typeof PLAYERS_BY_FORMAT;

/** The format of a manifest URL, by its last path segment (a query left aside). */
export function formatOfUrl(url: string): Format | undefined {
  const pathPart = url.split('?')[0] ?? '';
  if (/\.mpd$/i.test(pathPart)) return 'dash';
  if (/\.m3u8$/i.test(pathPart)) return 'hls';
  if (/\/manifest$/i.test(pathPart)) return 'smooth';
  return undefined;
}

const FORMAT_LABEL: Record<Format, string> = { smooth: 'Smooth Streaming', dash: 'DASH', hls: 'HLS' };

/** How the page's player gets W3C ClearKey keys for an encrypted presentation. */
export interface ClearKeySettings {
  /** A ClearKey license server (origin/drm/clearkey-server.ts) the player asks. */
  licenseUrl?: string;
  /** Keys given to the player directly, KID → key, 32 hexadecimal digits each (tests, demos). */
  keys?: Record<string, string>;
}

/** What `/play` plays: a player, a manifest URL, and how the player gets in. */
export interface PlaySettings {
  player: PlayerName;
  url: string;
  clearKey?: ClearKeySettings;
  /** Basic-auth credentials `user:password` for the page's own origin (the demo's /secure/). */
  auth?: string;
}

/** The `/play` page for one player and one manifest URL, with ClearKey settings when encrypted. */
export function playerPage(player: PlayerName, url: string, clearKey?: ClearKeySettings, auth?: string): string {
  const s: PlaySettings = {
    player,
    url,
    ...(clearKey === undefined ? {} : { clearKey }),
    ...(auth === undefined ? {} : { auth }),
  };
  const scripts = PLAYER_SCRIPTS[player].map((src) => `<script src="${src}"></script>`).join('\n');
  const config = `<script type="application/json" id="config">${scriptJson(s)}</script>`;
  const body = [
    header(s),
    '<main class="play">',
    '<div>',
    '<div class="stage">',
    '<video id="video" muted autoplay playsinline controls></video>',
    // dash.js renders TTML (stpp) subtitles into a div laid over the video.
    '<div id="ttml"></div>',
    '</div>',
    '<div class="controls">',
    '<label>Quality <select id="quality"></select></label>',
    '<label>Audio <select id="audio"></select></label>',
    '<label>Subtitles <select id="text"></select></label>',
    '</div>',
    '<table class="figures"><tr><th>bitrate</th><th>resolution</th><th>buffer</th><th>dropped frames</th><th>errors</th></tr>',
    '<tr><td id="f-bitrate">-</td><td id="f-resolution">-</td><td id="f-buffer">-</td><td id="f-dropped">-</td><td id="f-errors">0</td></tr></table>',
    '<ol id="errors"></ol>',
    '</div>',
    '<div><h2>Manifest</h2><pre id="manifest">loading…</pre></div>',
    '</main>',
    config,
    scripts,
    `<script>${PLAY_SCRIPT}</script>`,
  ].join('\n');
  return htmlDocument(`${player}: ${url}`, body, PLAY_SCRIPT);
}

/** The page's head: the player, the format and URL, how it gets in, and the other players of the format. */
function header(s: PlaySettings): string {
  const format = formatOfUrl(s.url);
  const license = s.clearKey?.licenseUrl;
  const drm =
    s.clearKey === undefined
      ? ''
      : license !== undefined
        ? ` (ClearKey license: <code>${escapeHtml(license)}</code>)`
        : ' (ClearKey keys given to the player)';
  const auth = s.auth === undefined ? '' : ` (Basic auth as <code>${escapeHtml(s.auth.split(':')[0] ?? '')}</code>)`;
  const others =
    format === undefined || s.clearKey?.keys !== undefined
      ? []
      : PLAYERS_BY_FORMAT[format]
          .filter((p) => p !== s.player)
          .map((p) => `<a href="${escapeHtml(playHref(p, s.url, license, s.auth))}">${p}</a>`);
  return [
    '<header>',
    `<h1><a href="/">Streaming Origin</a> &rsaquo; ${escapeHtml(s.player)}${format === undefined ? '' : ` &middot; ${FORMAT_LABEL[format]}`}</h1>`,
    `<p><code>${escapeHtml(s.url)}</code>${drm}${auth}${others.length > 0 ? ` &middot; also with ${others.join(' ')}` : ''}</p>`,
    '</header>',
  ].join('\n');
}
