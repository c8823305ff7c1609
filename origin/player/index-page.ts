// The `/` page: every presentation under the root with its manifest URLs and a link per
// format/player pair into `/play`, its tracks with the properties a filter sees, and a filter box
// that asks the origin (`/_filter`, origin/server/filter-explain.ts) which tracks an expression
// keeps and plays the result; with `npm start` also the edge's examples (alias, signed and
// Basic-auth URLs). index-script.ts is its browser side. Pure functions.

import { rowDetails, TrackRow } from '../ism/track-table';
import { escapeHtml, htmlDocument, scriptJson } from './html';
import { INDEX_SCRIPT } from './index-script';
import { Format, formatOfUrl, PlayerName, PLAYERS_BY_FORMAT, playHref } from './player-page';

export interface PresentationLinks {
  name: string;
  /** The manifest URL of each format the presentation plays in (an encrypted one: its keyed formats). */
  urls: Partial<Record<Format, string>>;
  /** An encrypted presentation: how a browser gets its keys. */
  drm?: EncryptedLinks;
  /** Its tracks with the properties a filter sees (undefined: the server manifest is unreadable). */
  tracks?: readonly TrackRow[];
}

export interface EncryptedLinks {
  /** The W3C ClearKey license server the manifests signal, if any. */
  clearKeyLicense: string | undefined;
  /** HLS is AES-128 (the players fetch the key file themselves, no EME). */
  hlsKeyFile: boolean;
}

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

/** A URL of the edge's own (an alias, a signed URL, a Basic-auth location) for the page to play. */
export interface EdgeExample {
  /** What it shows, e.g. "alias: H.264 + AAC, fMP4, version 7". */
  label: string;
  /** The URL path and query, as the edge answers it. */
  url: string;
  /** Basic-auth credentials `user:password` the player sends. */
  auth?: string;
}

/** What the page shows besides the presentations. */
export interface IndexExtras {
  /** The edge's examples (`npm start`); none when the origin runs alone. */
  examples?: readonly EdgeExample[];
}

const FORMATS: ReadonlyArray<readonly [Format, string]> = [
  ['smooth', 'Smooth Streaming'],
  ['dash', 'DASH'],
  ['hls', 'HLS'],
];

/** The `/` page: the edge examples, then each presentation, then the room for live channels. */
export function indexPage(presentations: ReadonlyArray<PresentationLinks>, extras: IndexExtras = {}): string {
  const items = presentations.map(presentationSection);
  const body = [
    '<header>',
    '<h1>Streaming Origin</h1>',
    '<p>Smooth, DASH and HLS generated on request from one set of fragmented MP4 files.</p>',
    '</header>',
    '<main>',
    '<p class="note">Try first: play a presentation with a player of each format (the links under it);',
    'type a filter in a presentation&rsquo;s box (<code>type=="video"&amp;&amp;systemBitrate&lt;800000</code>) to see which tracks it keeps, then play the result;',
    'and play the edge&rsquo;s alias, signed and Basic-auth URLs below, which the edge plugin turns into origin requests.</p>',
    ...(extras.examples !== undefined && extras.examples.length > 0 ? [edgeSection(extras.examples)] : []),
    items.length > 0 ? items.join('\n') : '<p>No presentations.</p>',
    '<section id="live"><h2>Live</h2>',
    '<p class="note">Live channels appear here once live ingest is built (docs/guide/ lists what works today).</p>',
    '</section>',
    '</main>',
    `<script type="application/json" id="config">${scriptJson({ players: PLAYERS_BY_FORMAT })}</script>`,
    `<script>${INDEX_SCRIPT}</script>`,
  ].join('\n');
  return htmlDocument('Streaming Origin', body, INDEX_SCRIPT);
}

/** The players offered for a URL of the edge: those of its format that send Basic auth if needed. */
function examplePlayers(e: EdgeExample): readonly PlayerName[] {
  const format = formatOfUrl(e.url);
  if (format === undefined) return [];
  // Chromium's own HLS cannot add an Authorization header, and asks for no credentials itself.
  return PLAYERS_BY_FORMAT[format].filter((p) => p !== 'native' || e.auth === undefined);
}

function edgeSection(examples: readonly EdgeExample[]): string {
  const rows = examples.map((e) => {
    const links = examplePlayers(e).map(
      (p) => `<a href="${escapeHtml(playHref(p, e.url, undefined, e.auth))}">${p}</a>`,
    );
    const auth = e.auth === undefined ? '' : ` <span class="note">(as ${escapeHtml(e.auth)})</span>`;
    return `<tr><td>${escapeHtml(e.label)}</td><td><a href="${escapeHtml(e.url)}"><code>${escapeHtml(e.url)}</code></a>${auth}</td><td>${links.join(' ')}</td></tr>`;
  });
  return [
    '<section id="edge"><h2>Through the edge</h2>',
    '<p class="note">These URLs mean something only to the edge plugin (envoy-config/envoy.yaml): open this page through the edge, not the origin&rsquo;s own port. The token and the Basic-auth user are demo-only.</p>',
    '<table class="examples"><tr><th>example</th><th>URL</th><th>play</th></tr>',
    ...rows,
    '</table>',
    '</section>',
  ].join('\n');
}

function presentationSection(p: PresentationLinks): string {
  const rows = FORMATS.flatMap(([key, label]) => {
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
  const tracks = p.tracks === undefined ? '' : `\n${trackTable(p.name, p.tracks)}`;
  // The filter box plays what it selects in the clear: an encrypted presentation has none.
  const filter = p.tracks === undefined || p.drm !== undefined ? '' : `\n${filterBox(p)}`;
  return `<section class="presentation" data-ism="${escapeHtml(p.name)}">\n<h2>${escapeHtml(p.name)}</h2>${note}\n<ul class="formats">\n${rows.join('\n')}\n</ul>${tracks}${filter}\n</section>`;
}

const NUMERIC = new Set(['index', 'systemBitrate']);

/** The tracks as `origin filter` prints them; the filter column is filled in by the filter box. */
function trackTable(ism: string, tracks: readonly TrackRow[]): string {
  const head = ['filter', '#', 'trackName', 'type', 'FourCC', 'systemBitrate', 'systemLanguage', 'properties'];
  const rows = tracks.map((t) => {
    const cells = [
      '<td class="verdict"></td>',
      `<td class="num">${t.index + 1}</td>`,
      ...(['trackName', 'type', 'FourCC', 'systemBitrate', 'systemLanguage'] as const).map(
        (k) => `<td${NUMERIC.has(k) ? ' class="num"' : ''}>${escapeHtml(String(t[k]))}</td>`,
      ),
      `<td><code>${escapeHtml(rowDetails(t).join(' '))}</code></td>`,
    ];
    return `<tr data-track="${t.index}">${cells.join('')}</tr>`;
  });
  return [
    `<table class="tracks" data-ism="${escapeHtml(ism)}">`,
    `<tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr>`,
    ...rows,
    '</table>',
  ].join('\n');
}

/** The expression box of a presentation; index-script.ts asks /_filter and builds the play links. */
function filterBox(p: PresentationLinks): string {
  const bases = Object.fromEntries(
    FORMATS.flatMap(([key]) => (p.urls[key] === undefined ? [] : [[key, (p.urls[key] ?? '').split('?')[0]]])),
  );
  return [
    `<form class="filter" data-ism="${escapeHtml(p.name)}" data-urls="${escapeHtml(JSON.stringify(bases))}">`,
    '<input name="expression" spellcheck="false" autocomplete="off" aria-label="filter expression" placeholder="type==&quot;video&quot;&amp;&amp;systemBitrate&lt;800000">',
    '<button type="submit">Explain</button>',
    '</form>',
    '<div class="result" aria-live="polite"></div>',
  ].join('\n');
}
