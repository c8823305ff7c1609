// auth_token: mod_auth_token's signed URLs, scoped to the server manifest as Unified Origin uses
// them (../shared/reference/origin-reference.md §4, service-description.md "Token
// authentication on URLs").
//
//   <prefix><hash>/<timestamp><rel-path>          e.g. /token/0f3c…9a/65f1c2a0/vod/tears.ism/.m3u8
//   hash      32 hex digits (either case): MD5(secret ‖ scope ‖ timestamp as written), where
//             scope = rel-path up to and including its first segment ending in .ism or .isml
//             (any case), or the whole rel-path if it has none (a progressive file)
//   timestamp 8 hex digits (either case): seconds since the epoch when the URL was signed
//   rel-path  starts with "/"; decoded once (target.ts), which is what the digest covers
//
// Checked in mod_auth_token's order, with its statuses:
//   not <prefix><32 hex>/<8 hex>/...   401  (malformed or missing token)
//   now > timestamp + timeout          410  (expired)
//   hash differs                       403  (compared in constant time)
//   timestamp > now + skew             403  (an improvement on mod_auth_token, which accepts any
//                                            future timestamp, i.e. URLs that never expire)
// Then the hash and timestamp segments are removed: /token/<hash>/<ts>/vod/x.ism/.m3u8 goes on
// as /token/vod/x.ism/.m3u8. Every playlist and segment URL the origin writes is relative, so a
// player resolves them under the same /<prefix>/<hash>/<timestamp>/ and each one is checked the
// same way against the same scope.

import { constantTimeEqualIgnoreCase, hexValue, isHex, toHex, utf8Bytes } from "./bytes";
import { Md5 } from "./md5";
import { Refusal, Verdict } from "./refusals";

export const HASH_DIGITS: i32 = 32;
export const TIMESTAMP_DIGITS: i32 = 8;

export class TokenRule {
  /** "/token/": starts and ends with "/". */
  readonly prefix: string;
  /** The prefix without its final "/" ("" for "/"): what stays in the path after stripping. */
  readonly base: string;

  constructor(
    public readonly secret: Uint8Array,
    prefix: string,
    /** Seconds a URL stays valid after its timestamp. */
    public readonly timeout: i64,
    /** Seconds a timestamp may lie ahead of the edge's clock. */
    public readonly skew: i64,
  ) {
    this.prefix = prefix;
    this.base = prefix.substring(0, prefix.length - 1);
  }
}

/** The outcome: a refusal, or the path with the token segments removed. */
export class TokenCheck {
  verdict: Verdict | null = null;
  path: string = "";
}

/** Checks the token of a decoded path at `now` (seconds since the epoch). */
export function checkToken(rule: TokenRule, path: string, now: i64): TokenCheck {
  const result = new TokenCheck();
  const prefix = rule.prefix;
  if (!path.startsWith(prefix)) {
    result.verdict = Verdict.refuse(Refusal.TokenMalformed, "missing token: this location needs URLs of the form " + prefix + "<hash>/<timestamp>/...");
    return result;
  }
  const at = prefix.length;
  // <32 hex> "/" <8 hex> "/" and at least the "/" of the rel-path (mod_auth_token's minimum).
  const hash = path.substring(at, at + HASH_DIGITS);
  const timestamp = path.substring(at + HASH_DIGITS + 1, at + HASH_DIGITS + 1 + TIMESTAMP_DIGITS);
  const relStart = at + HASH_DIGITS + 1 + TIMESTAMP_DIGITS;
  if (hash.length != HASH_DIGITS || !isHex(hash) || path.charCodeAt(at + HASH_DIGITS) != 0x2f ||
      timestamp.length != TIMESTAMP_DIGITS || !isHex(timestamp) || path.charCodeAt(relStart) != 0x2f) {
    result.verdict = Verdict.refuse(Refusal.TokenMalformed, "malformed token: expected " + prefix + "<32 hex digits>/<8 hex digits>/...");
    return result;
  }
  const issued = parseHex(timestamp);
  const rel = path.substring(relStart);
  if (now > issued + rule.timeout) {
    result.verdict = Verdict.refuse(Refusal.TokenExpired, "token expired");
    return result;
  }
  const expected = tokenHash(rule.secret, manifestScope(rel), timestamp);
  if (!constantTimeEqualIgnoreCase(hash, expected)) {
    result.verdict = Verdict.refuse(Refusal.TokenMismatch, "token does not match this URL");
    return result;
  }
  if (issued > now + rule.skew) {
    result.verdict = Verdict.refuse(Refusal.TokenFuture, "token not valid yet: its timestamp is ahead of the edge's clock");
    return result;
  }
  result.path = rule.base + rel;
  return result;
}

/** Lower-case hex MD5(secret ‖ scope ‖ timestamp) (scope as UTF-8 of the decoded path). */
export function tokenHash(secret: Uint8Array, scope: string, timestamp: string): string {
  return toHex(new Md5().update(secret).update(utf8Bytes(scope)).update(utf8Bytes(timestamp)).digest());
}

/** rel-path up to and including its first segment ending in .ism or .isml, else all of it. */
export function manifestScope(rel: string): string {
  const n = rel.length;
  let segmentStart = 1;
  for (let i = 1; i <= n; i++) {
    if (i < n && rel.charCodeAt(i) != 0x2f) continue;
    if (endsWithManifest(rel, segmentStart, i)) return rel.substring(0, i);
    segmentStart = i + 1;
  }
  return rel;
}

/** rel[start, end) ends with ".ism" or ".isml", ASCII case-insensitively (as the origin's /\.ism$/i). */
function endsWithManifest(rel: string, start: i32, end: i32): bool {
  const size = end - start;
  if (size >= 4 && lowerAt(rel, end - 4) == 0x2e && lowerAt(rel, end - 3) == 0x69 && lowerAt(rel, end - 2) == 0x73 && lowerAt(rel, end - 1) == 0x6d) return true;
  return size >= 5 && lowerAt(rel, end - 5) == 0x2e && lowerAt(rel, end - 4) == 0x69 && lowerAt(rel, end - 3) == 0x73 &&
    lowerAt(rel, end - 2) == 0x6d && lowerAt(rel, end - 1) == 0x6c;
}

function lowerAt(text: string, i: i32): i32 {
  const c = text.charCodeAt(i);
  return c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
}

/** Value of a string already checked to hold 1-8 hex digits. */
function parseHex(digits: string): i64 {
  let value: i64 = 0;
  for (let i = 0; i < digits.length; i++) value = (value << 4) | <i64>hexValue(digits.charCodeAt(i));
  return value;
}
