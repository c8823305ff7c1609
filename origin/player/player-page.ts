// The player pages: `/` lists the presentations with one link per format/player pair, `/play`
// loads one browser player (hls.js, dash.js, shaka) from `/_players/` and plays one manifest URL.
// They exist so that real clients judge what the origin writes (test/e2e/players/README.md), by hand in a
// browser and headless in the player tests, which read the `window.__test` hook.
//
// Pure functions: no HTTP types and no I/O, except resolving the player files in node_modules.
// The manifest URL is user input; it reaches the page only JSON-escaped inside a data block (never
// interpolated into code) and HTML-escaped in text, and a Content-Security-Policy allows no
// script but the player files and the page's own (hash-pinned) inline script.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as path from 'node:path';

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

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that is safe inside a `<script>` element: no `<`, `>`, `&` or line separators survive. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The `/play` link of a player and a manifest URL, with the ClearKey license server of an encrypted one. */
export function playHref(player: PlayerName, url: string, clearKeyLicense: string | undefined): string {
  const clearKey = clearKeyLicense === undefined ? '' : `&clearkey=${encodeURIComponent(clearKeyLicense)}`;
  return `/play?player=${encodeURIComponent(player)}&url=${encodeURIComponent(url)}${clearKey}`;
}

export interface PresentationLinks {
  name: string;
  /** The manifest URL of each format the presentation plays in (an encrypted one: its keyed formats). */
  urls: Partial<Record<Format, string>>;
  /** An encrypted presentation: how a browser gets its keys. */
  drm?: EncryptedLinks;
}

export interface EncryptedLinks {
  /** The W3C ClearKey license server the manifests signal, if any. */
  clearKeyLicense: string | undefined;
  /** HLS is AES-128 (the players fetch the key file themselves, no EME). */
  hlsKeyFile: boolean;
}

type Format = keyof typeof PLAYERS_BY_FORMAT;

/**
 * The players that play an encrypted format here with a license server, as
 * test/e2e/players/drm-players.test.ts measures: Chromium's own HLS refuses every EXT-X-KEY,
 * shaka 5's HLS parser refuses the org.w3.clearkey key format unless the keys are given to it,
 * dash.js with a license URL builds a `keyids` request Chromium's CDM refuses (it plays only with
 * the keys given), and neither dash.js's nor shaka 4's Smooth Streaming gets ClearKey keys
 * (docs/guide/drm.md). Other DRMs have no CDM in a test browser.
 */
function encryptedPlayers(format: Format, drm: EncryptedLinks): readonly PlayerName[] {
  if (format === 'hls' && drm.hlsKeyFile) return ['hlsjs', 'shaka'];
  if (drm.clearKeyLicense === undefined || format === 'smooth') return [];
  return format === 'dash' ? ['shaka'] : ['hlsjs'];
}

/** The `/` page: each presentation with its manifest URLs and a link per format/player pair. */
export function indexPage(presentations: ReadonlyArray<PresentationLinks>): string {
  const formats = [
    ['smooth', 'Smooth Streaming'],
    ['dash', 'DASH'],
    ['hls', 'HLS'],
  ] as const;
  const items = presentations.map((p) => {
    const rows = formats.flatMap(([key, label]) => {
      const url = p.urls[key];
      if (url === undefined) return [];
      const license = key === 'hls' && p.drm?.hlsKeyFile === true ? undefined : p.drm?.clearKeyLicense;
      const players = p.drm === undefined ? PLAYERS_BY_FORMAT[key] : encryptedPlayers(key, p.drm);
      const links = players.map((player) => `<a href="${escapeHtml(playHref(player, url, license))}">${player}</a>`);
      const play = links.length > 0 ? links.join(' ') : 'no browser player here has its keys';
      return [`  <li>${label}: <a href="${escapeHtml(url)}"><code>${escapeHtml(url)}</code></a> &mdash; ${play}</li>`];
    });
    const license = p.drm?.clearKeyLicense;
    const note =
      p.drm === undefined
        ? ''
        : license === undefined
          ? '\n<p>Encrypted.</p>'
          : `\n<p>Encrypted; ClearKey license server <code>${escapeHtml(license)}</code>.</p>`;
    return `<h2>${escapeHtml(p.name)}</h2>${note}\n<ul>\n${rows.join('\n')}\n</ul>`;
  });
  const body = items.length > 0 ? items.join('\n') : '<p>No presentations.</p>';
  return htmlDocument('Streaming Origin', `<h1>Streaming Origin</h1>\n${body}`, '');
}

/** How the page's player gets W3C ClearKey keys for an encrypted presentation. */
export interface ClearKeySettings {
  /** A ClearKey license server (origin/drm/clearkey-server.ts) the player asks. */
  licenseUrl?: string;
  /** Keys given to the player directly, KID → key, 32 hexadecimal digits each (tests, demos). */
  keys?: Record<string, string>;
}

/** The `/play` page for one player and one manifest URL, with ClearKey settings when encrypted. */
export function playerPage(player: PlayerName, url: string, clearKey?: ClearKeySettings): string {
  const scripts = PLAYER_SCRIPTS[player].map((src) => `<script src="${src}"></script>`).join('\n');
  const config = `<script type="application/json" id="config">${scriptJson({ player, url, ...(clearKey === undefined ? {} : { clearKey }) })}</script>`;
  const drm =
    clearKey === undefined
      ? ''
      : clearKey.licenseUrl !== undefined
        ? ` (ClearKey license: <code>${escapeHtml(clearKey.licenseUrl)}</code>)`
        : ' (ClearKey keys given to the player)';
  const body = [
    `<p>${escapeHtml(player)}: <code>${escapeHtml(url)}</code>${drm}</p>`,
    '<div style="position:relative;width:640px;height:360px">',
    '<video id="video" muted autoplay playsinline controls width="640" height="360"></video>',
    // dash.js renders TTML (stpp) subtitles into a div laid over the video.
    '<div id="ttml" style="position:absolute;left:0;top:0;width:640px;height:360px;pointer-events:none"></div>',
    '</div>',
    config,
    scripts,
    `<script>${PAGE_SCRIPT}</script>`,
  ].join('\n');
  return htmlDocument(`${player}: ${url}`, body, PAGE_SCRIPT);
}

function htmlDocument(title: string, body: string, inlineScript: string): string {
  const scriptSrc =
    inlineScript === '' ? "'none'" : `'self' 'sha256-${createHash('sha256').update(inlineScript).digest('base64')}'`;
  // Manifests and segments may live on any origin (a CDN, another port), hence connect/media *.
  // hls.js transmuxes in a worker started from a blob: URL.
  const csp = [
    "default-src 'none'",
    `script-src ${scriptSrc}`,
    "worker-src 'self' blob:",
    'connect-src *',
    'media-src * blob: data:',
    "img-src 'self' data:",
    "style-src 'unsafe-inline'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">`,
    '<link rel="icon" href="data:,">',
    `<title>${escapeHtml(title)}</title>`,
    '<style>body{font-family:sans-serif;margin:1em}video{background:#000;max-width:100%}</style>',
    '</head>',
    '<body>',
    body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

// The browser side: plain ES2017, one constant string (its hash goes into the CSP). It reads the
// config block, installs window.__test, starts the chosen player and turns every error the
// player or the <video> element reports into one readable line.
const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('config').textContent);
  var video = document.getElementById('video');
  var t = window.__test = { errors: [], errorTimes: [], events: [], player: cfg.player };
  function at() { return '@' + video.currentTime.toFixed(2); }
  // errorTimes[i]: video.currentTime when errors[i] was reported (the tests judge some player
  // notices by when they happen, e.g. right after the test switched tracks).
  function error(msg) { t.errors.push(msg); t.errorTimes.push(video.currentTime); }
  function event(msg) { t.events.push(msg + ' ' + at()); }
  function str(x) {
    var s;
    try { s = typeof x === 'string' ? x : JSON.stringify(x); } catch (e) { s = String(x); }
    s = s === undefined ? String(x) : s;
    return s.length > 300 ? s.slice(0, 300) + '...' : s;
  }
  function play() {
    var p = video.play();
    if (p) p.catch(function (e) { event('play() rejected: ' + e.name); });
  }
  // The name of a numeric error code in a player's table of constants (for readable errors).
  function nameOf(table, value, suffix) {
    return Object.keys(table || {}).filter(function (k) {
      return table[k] === value && (!suffix || k.slice(-suffix.length) === suffix);
    })[0] || '';
  }
  function b64url(hex) {
    var s = '';
    for (var i = 0; i < hex.length; i += 2) s += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
    return btoa(s).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  }
  function b64urlKeys(keys) {
    var out = {};
    Object.keys(keys).forEach(function (kid) { out[b64url(kid)] = b64url(keys[kid]); });
    return out;
  }
  function need(name, file) {
    if (typeof window[name] === 'undefined') throw new Error(name + ' is not defined (did ' + file + ' load?)');
  }
  ['loadedmetadata', 'canplay', 'playing', 'waiting', 'stalled', 'seeking', 'seeked', 'ended'].forEach(function (n) {
    video.addEventListener(n, function () { event('video:' + n); });
  });
  video.addEventListener('error', function () {
    var e = video.error;
    error('<video> error' + (e ? ' code ' + e.code + (e.message ? ': ' + e.message : '') : ''));
  });

  function hlsjs() {
    need('Hls', '/_players/hls.min.js');
    if (!Hls.isSupported()) throw new Error('hls.js: Media Source Extensions not supported');
    // EME with ClearKey for fMP4 SAMPLE-AES: hls.js takes the KID from the playlist's
    // org.w3.clearkey key line and asks the license server.
    var ck = cfg.clearKey;
    var hls = new Hls(ck && ck.licenseUrl ? { emeEnabled: true, drmSystems: { 'org.w3.clearkey': { licenseUrl: ck.licenseUrl } } } : {});
    window.__player = hls;
    hls.on(Hls.Events.ERROR, function (_, d) {
      var url = d.url || (d.frag && d.frag.url) || (d.context && d.context.url) || '';
      error('hls.js ' + (d.fatal ? 'fatal' : 'non-fatal') + ' ' + d.type + '/' + d.details +
        (d.response && d.response.code !== undefined ? ' HTTP ' + d.response.code : '') +
        (url ? ' ' + url : '') + (d.error && d.error.message ? ': ' + d.error.message : (d.reason ? ': ' + d.reason : '')));
    });
    hls.on(Hls.Events.MANIFEST_PARSED, function (_, d) { event('hls.js:manifestParsed levels=' + d.levels.length); play(); });
    hls.on(Hls.Events.AUDIO_TRACK_SWITCHING, function (_, d) { event('hls.js:audioTrackSwitching ' + d.lang); });
    hls.on(Hls.Events.AUDIO_TRACK_SWITCHED, function (_, d) { event('hls.js:audioTrackSwitched ' + d.id); });
    hls.on(Hls.Events.SUBTITLE_TRACK_SWITCH, function (_, d) { event('hls.js:subtitleTrackSwitch ' + d.id); });
    hls.on(Hls.Events.FRAG_LOADING, function (_, d) { if (d.frag.type === 'subtitle') event('hls.js:fragLoading ' + d.frag.type + ' ' + d.frag.sn); });
    hls.loadSource(cfg.url);
    hls.attachMedia(video);
  }

  function dash(mss) {
    need('dashjs', '/_players/dash.all.min.js');
    if (mss && typeof dashjs.MssHandler !== 'function') throw new Error('dash.js MSS module is not loaded');
    var p = dashjs.MediaPlayer().create();
    window.__player = p;
    function describe(e) {
      if (!e || e.code === undefined) return str(e);
      var name = nameOf(dashjs.MediaPlayer.errors, e.code, '_CODE');
      return 'code ' + e.code + (name ? ' ' + name : '') + (e.message ? ': ' + e.message : '');
    }
    p.on('error', function (e) { error('dash.js error ' + describe(e.error)); });
    p.on('playbackError', function (e) { error('dash.js playbackError ' + describe(e.error)); });
    p.on('streamInitialized', function () { event('dash.js:streamInitialized'); });
    // EME with the W3C ClearKey system: keys given (base64url, as the CDM's messages carry them),
    // or a license server dash.js POSTs the CDM's request to.
    var ck = cfg.clearKey;
    if (ck && ck.keys) p.setProtectionData({ 'org.w3.clearkey': { clearkeys: b64urlKeys(ck.keys) } });
    else if (ck && ck.licenseUrl) p.setProtectionData({ 'org.w3.clearkey': { serverURL: ck.licenseUrl } });
    p.initialize(video, cfg.url, true);
    p.attachTTMLRenderingDiv(document.getElementById('ttml'));
  }

  function shakaError(e) {
    if (!e || e.code === undefined) return str(e && e.message ? e.message : e);
    var E = (shaka.util && shaka.util.Error) || {};
    return 'code ' + e.code + ' ' + nameOf(E.Code, e.code) +
      ' (category ' + (nameOf(E.Category, e.category) || e.category) +
      ', severity ' + (nameOf(E.Severity, e.severity) || e.severity) + ')' +
      (e.data && e.data.length ? ' data ' + str(e.data) : '');
  }
  function shakaStart(file, mimeType) {
    need('shaka', file);
    shaka.polyfill.installAll();
    if (!shaka.Player.isBrowserSupported()) throw new Error('shaka: browser not supported');
    var player = new shaka.Player();
    window.__player = player;
    player.addEventListener('error', function (e) { error('shaka error ' + shakaError(e.detail)); });
    var ck = cfg.clearKey;
    // shaka 5's HLS parser refuses the org.w3.clearkey key format: with the keys given, the
    // manifest's DRM lines are not needed.
    if (ck && ck.keys) player.configure({ drm: { clearKeys: ck.keys }, manifest: { ignoreDrmInfo: /\.m3u8/.test(cfg.url) } });
    else if (ck && ck.licenseUrl) player.configure({ drm: { servers: { 'org.w3.clearkey': ck.licenseUrl } } });
    // shaka 5 times WebVTT in fMP4 HLS by the video appends that follow the text track's
    // selection; a track chosen after the short clip is fully buffered never gets its cues. Asking
    // for the page's language up front streams the matching subtitles with the media.
    if ('preferredText' in player.getConfiguration()) {
      player.configure({ preferredText: [{ language: (navigator.language || 'en').split('-')[0], role: '', format: '', forced: false }] });
    }
    player.attach(video)
      .then(function () { return player.load(cfg.url, null, mimeType); })
      .then(function () { event('shaka:loaded'); play(); })
      .catch(function (e) { error('shaka load() rejected: ' + shakaError(e)); });
  }

  // Test controls (read by test/support/browser.ts; harmless by hand): switch the audio language
  // and show subtitles through each player's own API, the way a viewer's menu would.
  function langMatches(lang, wanted) {
    lang = String(lang || '').toLowerCase();
    return wanted.some(function (w) { return lang === w || lang.split('-')[0] === w; });
  }
  var controls = {
    hlsjs: {
      audio: function () { var p = window.__player, tr = p.audioTracks[p.audioTrack]; return tr ? tr.lang || '' : ''; },
      setAudio: function (wanted) {
        var p = window.__player;
        var i = p.audioTracks.findIndex(function (tr) { return langMatches(tr.lang, wanted); });
        if (i < 0) throw new Error('hls.js has no audio track in ' + wanted + ': ' + str(p.audioTracks.map(function (tr) { return tr.lang; })));
        p.audioTrack = i;
      },
      showText: function () { var p = window.__player; p.subtitleDisplay = true; if (p.subtitleTracks.length > 0) p.subtitleTrack = 0; },
      textReady: function () { return window.__player.subtitleTracks.length > 0; }
    },
    // shaka 5 has getAudioTracks/selectAudioTrack and shows a selected text track; shaka 4 has
    // getAudioLanguages/selectAudioLanguage and a separate visibility switch.
    shaka: {
      audio: function () {
        var p = window.__player;
        var all = p.getAudioTracks ? p.getAudioTracks() : p.getVariantTracks();
        var v = all.filter(function (tr) { return tr.active; })[0];
        return v ? v.language : '';
      },
      setAudio: function (wanted) {
        var p = window.__player;
        if (p.getAudioTracks) {
          var tr = p.getAudioTracks().filter(function (a) { return langMatches(a.language, wanted); })[0];
          if (tr === undefined) throw new Error('shaka has no audio track in ' + wanted + ': ' + str(p.getAudioTracks().map(function (a) { return a.language; })));
          p.selectAudioTrack(tr);
          return;
        }
        var lang = p.getAudioLanguages().filter(function (l) { return langMatches(l, wanted); })[0];
        if (lang === undefined) throw new Error('shaka has no audio language in ' + wanted + ': ' + str(p.getAudioLanguages()));
        p.selectAudioLanguage(lang);
      },
      showText: function () {
        var p = window.__player, tracks = p.getTextTracks();
        if (tracks.length > 0) p.selectTextTrack(tracks[0]);
        if (p.setTextTrackVisibility) p.setTextTrackVisibility(true);
      },
      textReady: function () { var p = window.__player; return !!p && p.getTextTracks().length > 0; }
    },
    native: {
      audio: function () {
        var a = video.audioTracks;
        if (!a) return '';
        for (var i = 0; i < a.length; i++) if (a[i].enabled) return a[i].language;
        return '';
      },
      setAudio: function (wanted) {
        var a = video.audioTracks, found = -1, i;
        if (!a) throw new Error('this browser has no HTMLMediaElement.audioTracks');
        for (i = 0; i < a.length; i++) if (found < 0 && langMatches(a[i].language, wanted)) found = i;
        if (found < 0) throw new Error('no native audio track in ' + wanted);
        for (i = 0; i < a.length; i++) a[i].enabled = i === found;
      },
      showText: function () { for (var i = 0; i < video.textTracks.length; i++) video.textTracks[i].mode = 'showing'; },
      textReady: function () { return video.textTracks.length > 0; }
    }
  };
  function control(name) {
    var c = controls[cfg.player] || (cfg.player === 'shaka4-mss' ? controls.shaka : undefined);
    if (!c || !c[name]) throw new Error(cfg.player + ' has no test control ' + name);
    return c[name];
  }
  t.audioLanguage = function () { try { return control('audio')(); } catch (e) { return 'error: ' + e.message; } };
  t.setAudioLanguage = function (wanted) {
    try { control('setAudio')(wanted); event('test:audio ' + wanted.join('/')); } catch (e) { error('setAudioLanguage: ' + e.message); }
  };
  // Whether the player lists text tracks yet (a viewer can pick subtitles from its menu).
  t.textReady = function () { try { return !!control('textReady')(); } catch (e) { return false; } };
  t.showText = function () {
    try { control('showText')(); event('test:showText'); } catch (e) { error('showText: ' + e.message); }
  };
  // The largest number of cues any text track of the <video> holds (players render into them).
  t.cues = function () {
    var n = 0;
    for (var i = 0; i < video.textTracks.length; i++) {
      var c = video.textTracks[i].cues;
      if (c && c.length > n) n = c.length;
    }
    return n;
  };

  var start = {
    hlsjs: hlsjs,
    dashjs: function () { dash(false); },
    'dashjs-mss': function () { dash(true); },
    shaka: function () { shakaStart('/_players/shaka-player.compiled.js', undefined); },
    // A Smooth URL (".../Manifest") has no extension shaka knows: name the MIME type (MS-SSTR).
    'shaka4-mss': function () {
      need('ISOBoxer', '/_players/codem-isoboxer.min.js');
      shakaStart('/_players/shaka4/shaka-player.compiled.js', 'application/vnd.ms-sstr+xml');
    },
    native: function () { video.src = cfg.url; play(); }
  };
  try {
    if (!Object.prototype.hasOwnProperty.call(start, cfg.player)) throw new Error('unknown player ' + cfg.player);
    start[cfg.player]();
  } catch (e) {
    error('start failed: ' + (e && e.message ? e.message : str(e)));
  }
})();
`;
