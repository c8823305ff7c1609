// Files under the root that are not presentation URLs (served as they are, with validators and
// Range), and the player pages: `/` (the index of presentations), `/play`, `/_players/` and the
// filter box's `/_filter` (filter-explain.ts).

import { createReadStream, promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { originError } from '../errors';
import { EdgeExample, indexPage, PresentationLinks } from '../player/index-page';
import {
  ClearKeySettings,
  isPlayerName,
  PLAYER_ASSET_CONTENT_TYPE,
  playerAssetFile,
  playerPage,
} from '../player/player-page';
import { ifNoneMatchHits, notModifiedSince, parseRange } from './http-util';
import { sendBytes, startBody, unsatisfiable } from './http';
import { listPresentations, protectionAt, tracksAt } from './presentations';
import { explainFilter } from './filter-explain';
import { trackRow } from '../ism/track-table';
import { DRM_OPTIONS } from '../options/drm-options';
import type { RootConfinement } from '../io/confine';
import type { Protection } from '../model/protection';

/** What the player page requests: everything but the Dolby audio browsers cannot decode. */
export const BROWSER_FILTER = 'FourCC!="ac-3"&&FourCC!="ec-3"';

const STATIC_TYPES: Record<string, string> = {
  '.ism': 'application/xml',
  '.ismv': 'video/mp4',
  '.isma': 'audio/mp4',
  '.ismt': 'application/mp4',
  '.mp4': 'video/mp4',
  '.m4s': 'video/mp4',
  '.vtt': 'text/vtt',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** A path below the root, decoded (routes.ts decodePath), with the raw query. */
export interface StaticRequest {
  root: string;
  segments: string[];
  rawQuery: string;
}

/** The player pages; false when the path is none of them. `examples`: the edge's, for `/`. */
export async function servePlayer(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  at: StaticRequest,
  examples?: () => readonly EdgeExample[],
): Promise<boolean> {
  const { root, segments, rawQuery } = at;
  const urlPath = '/' + segments.join('/');
  const html = (text: string): void => {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  if (urlPath === '/') {
    const list = await listPresentations(root);
    const links = await Promise.all(
      list.map(async (p) => {
        const [protection, tracks] = await Promise.all([protectionAt(root, p), tracksAt(root, p)]);
        return { ...linksOf(p, protection), ...(tracks === undefined ? {} : { tracks: tracks.map(trackRow) }) };
      }),
    );
    html(indexPage(links, examples === undefined ? {} : { examples: examples() }));
    return true;
  }
  if (urlPath === '/_filter') {
    const { status, body } = await explainFilter(root, rawQuery);
    const text = `${JSON.stringify(body)}\n`;
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-store');
    if (status === 400) res.setHeader('X-Origin-Error', 'bad-filter');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(req.method === 'HEAD' ? undefined : text);
    return true;
  }
  if (urlPath === '/play') {
    const params = new URLSearchParams(rawQuery);
    const player = params.get('player') ?? '';
    const url = params.get('url') ?? '';
    if (!isPlayerName(player))
      throw originError('bad-parameter', `unknown player "${player.slice(0, 32)}"`, { subject: 'player' });
    if (url === '' || url.length > 2048)
      throw originError('bad-parameter', 'url must be a manifest URL of at most 2048 characters', { subject: 'url' });
    html(playerPage(player, url, clearKeySettings(params), basicAuth(params)));
    return true;
  }
  if (urlPath.startsWith('/_players/')) {
    const file = playerAssetFile(urlPath);
    if (file === undefined) throw originError('unknown-url', `no player asset ${urlPath.slice(0, 128)}`);
    const bytes = await fs.readFile(file);
    res.setHeader('Content-Type', PLAYER_ASSET_CONTENT_TYPE);
    res.setHeader('Cache-Control', 'public, max-age=3600');
    sendBytes(req, res, bytes, false);
    return true;
  }
  return false;
}

/**
 * The index entry of a presentation. Browsers decode neither AC-3 nor E-AC-3 (and HLS pairs video
 * with the highest audio group): the page asks for what a browser can play, through the filter
 * language. An encrypted presentation lists only its keyed formats, HLS SAMPLE-AES with fMP4
 * segments (what EME decrypts), and the ClearKey license server its manifests signal.
 */
export function linksOf(name: string, protection: Protection | undefined): PresentationLinks {
  const q = `?filter=${encodeURIComponent(BROWSER_FILTER)}`;
  const all = { smooth: `${name}/Manifest${q}`, dash: `${name}/.mpd${q}`, hls: `${name}/.m3u8${q}` };
  if (protection === undefined) return { name, urls: all };
  const hls = protection.hls;
  const clearKey = protection.clearKeyLicense;
  return {
    name,
    urls: {
      ...(protection.formats.has('smooth') ? { smooth: all.smooth } : {}),
      ...(protection.formats.has('dash') ? { dash: all.dash } : {}),
      ...(hls === undefined ? {} : { hls: hls.method === 'SAMPLE-AES' ? `${all.hls}&hls_fmp4=true` : all.hls }),
    },
    drm: { clearKeyLicense: clearKey, hlsKeyFile: hls?.method === 'AES-128' },
  };
}

/** Media sources (ISO BMFF, CMAF) and server manifests: never static files unless asked for. */
const SOURCE_FILE = /\.(ismv|isma|ismt|mp4|m4v|m4a|cmf[vatm]|ism|isml)$/i;

/**
 * The file at the path, or 404 unknown-url. Media sources and server manifests are not served
 * (an encrypted presentation's clear sources, or its keys in the .ism, would be downloadable)
 * unless `serveSources` (`--serve-sources`, for roots of clear content), and a server manifest
 * with DRM options never is.
 */
export async function serveStatic(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  at: StaticRequest,
  o: { serveSources: boolean; confinement: RootConfinement | undefined },
): Promise<void> {
  const serveSources = o.serveSources;
  const { root, segments } = at;
  const file = path.join(root, ...segments);
  // decodePath refused dot segments and encoded slashes; this guards the join anyway.
  if (file !== root && !file.startsWith(root + path.sep)) throw originError('bad-path', 'path outside the root');
  const shown = `/${segments.join('/').slice(0, 256)}`;
  if (SOURCE_FILE.test(file)) {
    if (!serveSources) {
      throw originError(
        'unknown-url',
        `${shown}: media sources and server manifests are not served as files (origin serve --serve-sources serves them, for clear content only)`,
      );
    }
    if (/\.isml?$/i.test(file) && (await hasDrmOptions(file))) {
      throw originError('unknown-url', `${shown}: a server manifest with DRM options is never served as a file`);
    }
  }
  let stat;
  try {
    stat = await fs.stat(file);
  } catch {
    throw originError('unknown-url', `nothing at /${segments.join('/').slice(0, 256)}`);
  }
  if (!stat.isFile()) throw originError('unknown-url', `nothing at /${segments.join('/').slice(0, 256)}`);
  // A symbolic link under the root may point anywhere (/etc/passwd): what it resolves to must be
  // under the root too, unless the operator allows links out (--follow-symlinks; io/confine.ts).
  if (o.confinement !== undefined && !(await o.confinement.holds(file))) {
    throw originError('unknown-url', `nothing at /${segments.join('/').slice(0, 256)}`);
  }
  const etag = `"${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}"`;
  res.setHeader('Content-Type', STATIC_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream');
  res.setHeader('Last-Modified', stat.mtime.toUTCString());
  res.setHeader('ETag', etag);
  res.setHeader('Accept-Ranges', 'bytes');
  if (
    ifNoneMatchHits(req.headers['if-none-match'], etag) ||
    notModifiedSince(req.headers['if-none-match'], req.headers['if-modified-since'], stat.mtime)
  ) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const range = parseRange(req.headers.range, stat.size);
  if (range.kind === 'unsatisfiable') return unsatisfiable(res, stat.size);
  startBody(res, range, stat.size);
  if (req.method === 'HEAD' || stat.size === 0) return void res.end();
  const [start, end] = range.kind === 'range' ? [range.start, range.end] : [0, stat.size - 1];
  await pipeline(createReadStream(file, { start, end }), res);
}

/** Whether a server manifest sets a DRM option (its head's `<meta name>`, origin/options/drm-options.ts). */
async function hasDrmOptions(file: string): Promise<boolean> {
  let text: string;
  try {
    text = await fs.readFile(file, 'latin1');
  } catch {
    return false; // the stat below answers for a file that is not there
  }
  return DRM_META.some((name) => text.includes(`"${name}"`));
}

const DRM_META = DRM_OPTIONS.map((o) => o.name);

/**
 * `/play`'s ClearKey parameters: `clearkey=<license URL>` or `clearkeys=<kid>:<key>[,…]` (hex),
 * for playing an encrypted presentation (docs/guide/drm.md). Bounded and checked.
 */
function clearKeySettings(params: URLSearchParams): ClearKeySettings | undefined {
  const licenseUrl = params.get('clearkey') ?? undefined;
  const pairs = params.get('clearkeys') ?? undefined;
  if (licenseUrl === undefined && pairs === undefined) return undefined;
  if (licenseUrl !== undefined && (licenseUrl.length > 2048 || !/^https?:\/\/\S+$/.test(licenseUrl))) {
    throw originError('bad-parameter', 'clearkey must be an http(s) license URL of at most 2048 characters', {
      subject: 'clearkey',
    });
  }
  if (pairs === undefined) return { licenseUrl };
  const list = pairs.split(',');
  if (list.length > 16 || !list.every((p) => /^[0-9a-fA-F]{32}:[0-9a-fA-F]{32}$/.test(p))) {
    throw originError('bad-parameter', 'clearkeys must be <kid>:<key>[,...], 32 hexadecimal digits each', {
      subject: 'clearkeys',
    });
  }
  return { keys: Object.fromEntries(list.map((p) => p.toLowerCase().split(':') as [string, string])) };
}

/** `/play`'s `auth=<user>:<password>` (Basic-auth credentials the player sends to this origin). */
function basicAuth(params: URLSearchParams): string | undefined {
  const auth = params.get('auth') ?? undefined;
  if (auth !== undefined && !/^[\x21-\x39\x3b-\x7e]{1,64}:[\x20-\x7e]{0,128}$/.test(auth)) {
    throw originError(
      'bad-parameter',
      'auth must be <user>:<password>, printable ASCII, at most 64 and 128 characters',
      {
        subject: 'auth',
      },
    );
  }
  return auth;
}
