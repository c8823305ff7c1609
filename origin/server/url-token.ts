// The edge's signed URLs (mod_auth_token's format, scoped to the server manifest) on the Node
// side: what `origin sign-url` writes and the ingest listener checks. The edge plugin checks the
// same URLs in AssemblyScript (assembly/edge/token.ts states the format and the order of the
// checks; docs/reference/edge-config.md#auth_token). Pure: no clock, no I/O.
//
//   /<prefix>/<hash>/<timestamp>/<path>          timestamp = 8 hex digits, seconds since the epoch
//   hash = hex MD5(secret ‖ scope ‖ timestamp as written), scope = the decoded path up to and
//          including its first segment ending in .ism or .isml (the whole path if none)

import { createHash, timingSafeEqual } from 'node:crypto';

export const HASH_DIGITS = 32;
export const TIMESTAMP_DIGITS = 8;

/** auth_token as the edge configures it (docs/reference/edge-config.md#auth_token). */
export interface TokenRule {
  secret: string;
  /** "token", "/token/" or "/vod/protected": read as normalisePrefix says. */
  prefix: string;
  /** Seconds a URL stays valid after its timestamp. */
  timeout: number;
  /** Seconds a timestamp may lie ahead of the clock. */
  skew: number;
}

/** "token" -> "/token/" (as the edge reads auth_token.prefix). */
export function normalisePrefix(prefix: string): string {
  let p = prefix.startsWith('/') ? prefix : `/${prefix}`;
  if (!p.endsWith('/')) p += '/';
  return p;
}

/** The path up to and including its first segment ending in .ism or .isml, else all of it. */
export function manifestScope(path: string): string {
  const segments = path.split('/');
  for (let i = 1; i < segments.length; i++) {
    if (/\.isml?$/i.test(segments[i]!)) return segments.slice(0, i + 1).join('/');
  }
  return path;
}

/** Lower-case hex MD5(secret ‖ scope ‖ timestamp), scope as the UTF-8 of the decoded path. */
export function tokenDigest(secret: string, scope: string, timestamp: string): string {
  return createHash('md5')
    .update(Buffer.from(secret, 'utf8'))
    .update(Buffer.from(scope, 'utf8'))
    .update(timestamp)
    .digest('hex');
}

export type TokenOutcome =
  | { ok: true; /** The decoded segments after the timestamp. */ rest: string[] }
  | { ok: false; why: 'missing' | 'malformed' | 'expired' | 'mismatch' | 'future' };

/**
 * Checks the decoded segments of a path (routes.ts decodePath) against a rule at `now` (seconds
 * since the epoch), in the edge's order: form, expiry, hash (in constant time), future timestamp.
 * 'missing': the path is not under the prefix at all.
 */
export function checkUrlToken(rule: TokenRule, segments: readonly string[], now: number): TokenOutcome {
  const prefix = normalisePrefix(rule.prefix).slice(1, -1).split('/');
  if (!prefix.every((p, i) => segments[i] === p)) return { ok: false, why: 'missing' };
  const hash = segments[prefix.length];
  const ts = segments[prefix.length + 1];
  const rest = segments.slice(prefix.length + 2);
  if (
    hash === undefined ||
    ts === undefined ||
    !new RegExp(`^[0-9a-fA-F]{${HASH_DIGITS}}$`).test(hash) ||
    !new RegExp(`^[0-9a-fA-F]{${TIMESTAMP_DIGITS}}$`).test(ts) ||
    rest.length === 0
  )
    return { ok: false, why: 'malformed' };
  const issued = parseInt(ts, 16);
  if (now > issued + rule.timeout) return { ok: false, why: 'expired' };
  const expected = Buffer.from(tokenDigest(rule.secret, manifestScope('/' + rest.join('/')), ts), 'latin1');
  if (!timingSafeEqual(expected, Buffer.from(hash.toLowerCase(), 'latin1'))) return { ok: false, why: 'mismatch' };
  if (issued > now + rule.skew) return { ok: false, why: 'future' };
  return { ok: true, rest };
}
