// What of a request URL may be logged. A URL can carry credentials: a signed path of the edge's
// auth_token (`/<prefix>/<32 hex>/<8 hex>/…`, assembly/edge/token.ts), a CDN's signature or token
// parameter, or the content keys a player page is given (`/play?clearkeys=<kid>:<key>`). The log
// keeps the path with any token-shaped pair of segments replaced, and of the query the values of
// the stream options a query may set (origin/options/registry.ts: `query` and not `secret`), the
// parameters whose meaning the origin knows to be harmless; every other value, and every bare
// name that is not such an option, is replaced with [redacted]. Plain names stay, so a line still
// says which parameters came.

import { OPTIONS } from '../options/registry';

export const REDACTED = '[redacted]';

/** Longest path and query written into a log line (the rest is cut). */
const MAX_LOGGED = 1024;

/** Query parameters whose values are logged: stream options a query may set, none secret. */
const LOGGED_VALUES: ReadonlySet<string> = new Set(
  OPTIONS.filter((o) => o.query && o.secret !== true).map((o) => o.name),
);

/** `/<32 hex>/<8 hex>/`: an auth_token hash and timestamp (mod_auth_token's shape). */
const TOKEN_SEGMENTS = /\/[0-9a-fA-F]{32}\/[0-9a-fA-F]{8}(?=\/|$)/g;

/** A path (raw, or decoded like a presentation's) as a log line writes it. */
export function loggedPath(p: string): string {
  return p.slice(0, MAX_LOGGED).replace(TOKEN_SEGMENTS, `/${REDACTED}`);
}

/** The raw URL of a request (path and query) as a log line writes it. */
export function loggedUrl(rawUrl: string): string {
  const q = rawUrl.indexOf('?');
  const logged = loggedPath(q < 0 ? rawUrl : rawUrl.slice(0, q));
  if (q < 0) return logged;
  const query = rawUrl
    .slice(q + 1, q + 1 + MAX_LOGGED)
    .split('&')
    .map(loggedParameter)
    .join('&');
  return `${logged}?${query}`;
}

/** A parameter name kept when its value is not: a short word, nothing like a key or a hash. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}$/;
const HEX_RUN = /[0-9a-fA-F]{16}/;

function loggedParameter(part: string): string {
  if (part === '') return part;
  const eq = part.indexOf('=');
  const name = eq < 0 ? part : part.slice(0, eq);
  if (LOGGED_VALUES.has(decodedName(name))) return part;
  return eq < 0 || !PLAIN_NAME.test(name) || HEX_RUN.test(name) ? REDACTED : `${name}=${REDACTED}`;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return '';
  }
}
