// What `npm start` offers to try through the edge, per device class (docs/guide/serving.md,
// "Trying it"): the origin's own URLs, the alias URLs of the shipped rewrite maps, a signed URL
// for the /token/ location (signed when asked for, so always fresh) and the /secure/ location's
// Basic-auth URL. The token secret and timeout are read from the plugin configuration the edge
// runs (envoy-config/envoy.yaml, written from envoy-config/maps/edge-config.yaml); the Basic-auth
// password is the one documented there, since the configuration holds only its htpasswd digest.

import type { EdgeExample } from '../player/index-page';
import { PlayerName, playHref } from '../player/player-page';
import { signUrl } from './sign-url-command';

/** The demo user of the /secure/ location, published in envoy-config/maps/edge-config.yaml: demo-only. */
export const DEMO_BASIC_AUTH = { user: 'demo', password: 'demo-only' } as const;

/** The edge locations the examples need, as the plugin configuration declares them. */
export interface DemoLocations {
  /** The auth_token location: its prefix (`/token/`), secret and timeout (seconds). */
  token?: { prefix: string; secret: string; timeout: number };
  /** The auth_basic location's prefix (`/secure/`). */
  basic?: { prefix: string };
}

interface LocationJson {
  prefix?: unknown;
  auth_token?: { secret?: unknown; prefix?: unknown; timeout?: unknown };
  auth_basic?: unknown;
}

/** The token and Basic-auth locations of the plugin's JSON configuration (the first of each). */
export function demoLocations(pluginJson: string): DemoLocations {
  let locations: LocationJson[] = [];
  try {
    const parsed = JSON.parse(pluginJson) as { locations?: unknown };
    if (Array.isArray(parsed.locations)) locations = parsed.locations as LocationJson[];
  } catch {
    return {};
  }
  const out: DemoLocations = {};
  for (const l of locations) {
    if (typeof l.prefix !== 'string') continue;
    const t = l.auth_token;
    if (out.token === undefined && t !== undefined && typeof t.secret === 'string' && typeof t.prefix === 'string') {
      // mod_auth_token's default timeout, as the plugin applies it (docs/reference/edge-config.md).
      out.token = { prefix: t.prefix, secret: t.secret, timeout: typeof t.timeout === 'number' ? t.timeout : 60 };
    }
    if (out.basic === undefined && l.auth_basic !== undefined) out.basic = { prefix: l.prefix };
  }
  return out;
}

/** One line of the demo's output: a label, the URL to fetch, and its player page link. */
export interface DemoUrl {
  label: string;
  /** Path and query on the edge (or the origin without one). */
  url: string;
  player: PlayerName;
  /** Basic-auth credentials the player page sends. */
  auth?: string;
}

/** The URLs of one device class: direct, aliases, and the protected ones when the edge has them. */
export function classUrls(
  name: string,
  browserQuery: string,
  locations: DemoLocations | undefined,
  now: number,
): DemoUrl[] {
  const ism = `/${name}.ism`;
  const urls: DemoUrl[] = [
    { label: 'Smooth Streaming', url: `${ism}/Manifest`, player: 'dashjs-mss' },
    { label: 'DASH', url: `${ism}/.mpd`, player: 'dashjs' },
    { label: 'HLS (fMP4)', url: `${ism}/.m3u8?hls_fmp4=true`, player: 'hlsjs' },
  ];
  if (locations === undefined) return urls;
  urls.push(
    { label: 'alias: H.264 + AAC, fMP4, v7', url: `${ism}/fmp4/avc.m3u8`, player: 'hlsjs' },
    { label: 'alias: the first 6 s', url: `${ism}/fmp4/avc@intro.m3u8`, player: 'hlsjs' },
  );
  // The protected locations serve the whole presentation: the browser filter leaves out what
  // Chromium cannot decode (AC-3, E-AC-3) where the class has it.
  const query = `?hls_fmp4=true${browserQuery === '' ? '' : `&${browserQuery}`}`;
  const token = locations.token;
  if (token !== undefined) {
    const signed = signUrl({
      secret: token.secret,
      prefix: token.prefix,
      path: `${ism}/.m3u8${query}`,
      timestamp: now,
    });
    urls.push({ label: `signed URL (valid ${token.timeout} s)`, url: signed, player: 'hlsjs' });
  }
  if (locations.basic !== undefined) {
    const prefix = locations.basic.prefix.replace(/\/+$/, '');
    const { user, password } = DEMO_BASIC_AUTH;
    urls.push({
      label: `Basic auth (${user}/${password})`,
      url: `${prefix}${ism}/.m3u8${query}`,
      player: 'hlsjs',
      auth: `${user}:${password}`,
    });
  }
  return urls;
}

/** The player page link of a demo URL. */
export function demoPlayHref(u: DemoUrl): string {
  return playHref(u.player, u.url, undefined, u.auth);
}

/** The edge's examples for the index page: every URL of every class that needs the edge. */
export function edgeExamples(
  classes: ReadonlyArray<{ name: string; browserQuery: string }>,
  locations: DemoLocations,
  now: number,
): EdgeExample[] {
  return classes.flatMap((c) =>
    classUrls(c.name, c.browserQuery, locations, now)
      .slice(3)
      .map((u) => ({ label: `${c.name}: ${u.label}`, url: u.url, ...(u.auth === undefined ? {} : { auth: u.auth }) })),
  );
}
