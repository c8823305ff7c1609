// auth_token: mod_auth_token's signed URLs, scoped to the server manifest as Unified Origin uses
// them (unifiedstreaming/mod-auth-token mod_auth_token.c; docs/specs.md reference §4;
// docs/reference/edge-config.md#auth_token).
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

import { codeUnit, constantTimeEqualHexIgnoreCase, hexValue, toHex, utf8Bytes } from './bytes';
import { MD5_BYTES, Md5 } from './md5';
import { Refusal, Verdict } from './refusals';

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
  path: string = '';
}

/** The digest of the current check: one hasher and one output block per VM (one request at a
 * time), so a check allocates nothing for the MD5. */
const HASHER = new Md5();
const DIGEST = new Uint8Array(MD5_BYTES);

/** Checks the token of a decoded path at `now` (seconds since the epoch). */
export function checkToken(rule: TokenRule, path: string, now: i64): TokenCheck {
  const result = new TokenCheck();
  const prefix = rule.prefix;
  if (!path.startsWith(prefix)) {
    result.verdict = Verdict.refuse(
      Refusal.TokenMalformed,
      'missing token: this location needs URLs of the form ' + prefix + '<hash>/<timestamp>/...',
    );
    return result;
  }
  const at = prefix.length;
  // <32 hex> "/" <8 hex> "/" and at least the "/" of the rel-path (mod_auth_token's minimum).
  // Checked in place: charCodeAt answers -1 past the end, which is neither hex nor "/".
  const tsStart = at + HASH_DIGITS + 1;
  const relStart = tsStart + TIMESTAMP_DIGITS;
  if (
    !isHexRange(path, at, HASH_DIGITS) ||
    path.charCodeAt(at + HASH_DIGITS) != 0x2f ||
    !isHexRange(path, tsStart, TIMESTAMP_DIGITS) ||
    path.charCodeAt(relStart) != 0x2f
  ) {
    result.verdict = Verdict.refuse(
      Refusal.TokenMalformed,
      'malformed token: expected ' + prefix + '<32 hex digits>/<8 hex digits>/...',
    );
    return result;
  }
  const issued = parseHex(path, tsStart, TIMESTAMP_DIGITS);
  if (now > issued + rule.timeout) {
    result.verdict = Verdict.refuse(Refusal.TokenExpired, 'token expired');
    return result;
  }
  digestInto(DIGEST, rule.secret, path, relStart, relStart + manifestScopeLength(path, relStart), tsStart, relStart);
  if (!constantTimeEqualHexIgnoreCase(path, at, DIGEST)) {
    result.verdict = Verdict.refuse(Refusal.TokenMismatch, 'token does not match this URL');
    return result;
  }
  if (issued > now + rule.skew) {
    result.verdict = Verdict.refuse(
      Refusal.TokenFuture,
      "token not valid yet: its timestamp is ahead of the edge's clock",
    );
    return result;
  }
  result.path = baseAndRest(rule.base, path, relStart);
  return result;
}

/** MD5(secret ‖ UTF-8 of text[scopeStart, scopeEnd) ‖ text[tsStart, tsEnd)) into out (16 bytes).
 * The timestamp is hex digits (ASCII); the scope is fed without a copy when it is ASCII. */
function digestInto(
  out: Uint8Array,
  secret: Uint8Array,
  text: string,
  scopeStart: i32,
  scopeEnd: i32,
  tsStart: i32,
  tsEnd: i32,
): void {
  const md5 = HASHER.reset().update(secret);
  if (isAsciiRange(text, scopeStart, scopeEnd)) md5.updateAscii(text, scopeStart, scopeEnd);
  else md5.update(utf8Bytes(text.substring(scopeStart, scopeEnd)));
  md5.updateAscii(text, tsStart, tsEnd).digestInto(out);
}

/** Lower-case hex MD5(secret ‖ scope ‖ timestamp) (scope as UTF-8 of the decoded path). */
export function tokenHash(secret: Uint8Array, scope: string, timestamp: string): string {
  return toHex(new Md5().update(secret).update(utf8Bytes(scope)).update(utf8Bytes(timestamp)).digest());
}

/** rel-path up to and including its first segment ending in .ism or .isml, else all of it. */
export function manifestScope(rel: string): string {
  return rel.substring(0, manifestScopeLength(rel, 0));
}

/** Length of the scope of the rel-path text[relStart, end): see manifestScope. */
function manifestScopeLength(text: string, relStart: i32): i32 {
  const n = text.length;
  let segmentStart = relStart + 1;
  for (let i = relStart + 1; i <= n; i++) {
    if (i < n && codeUnit(text, i) != 0x2f) continue;
    if (endsWithManifest(text, segmentStart, i)) return i - relStart;
    segmentStart = i + 1;
  }
  return n - relStart;
}

/** base + text.substring(start) in one allocation (0 <= start <= text.length). */
function baseAndRest(base: string, text: string, start: i32): string {
  const b = base.length;
  const r = text.length - start;
  const out = changetype<string>(__new((<usize>(b + r)) << 1, idof<string>()));
  const o = changetype<usize>(out);
  memory.copy(o, changetype<usize>(base), (<usize>b) << 1);
  memory.copy(o + ((<usize>b) << 1), changetype<usize>(text) + ((<usize>start) << 1), (<usize>r) << 1);
  return out;
}

/** text[start, end) holds only ASCII (so its UTF-8 bytes are its char codes). */
function isAsciiRange(text: string, start: i32, end: i32): bool {
  for (let i = max(start, 0), n = min(end, text.length); i < n; i++) if (codeUnit(text, i) >= 0x80) return false;
  return true;
}

/** text[start, start + count) are all hex digits (false if it runs past the end). */
function isHexRange(text: string, start: i32, count: i32): bool {
  if (start < 0 || start + count > text.length) return false;
  for (let i = start; i < start + count; i++) if (hexValue(codeUnit(text, i)) < 0) return false;
  return true;
}

/** rel[start, end) ends with ".ism" or ".isml", ASCII case-insensitively (as the origin's /\.ism$/i). */
function endsWithManifest(rel: string, start: i32, end: i32): bool {
  const size = end - start;
  if (
    size >= 4 &&
    lowerAt(rel, end - 4) == 0x2e &&
    lowerAt(rel, end - 3) == 0x69 &&
    lowerAt(rel, end - 2) == 0x73 &&
    lowerAt(rel, end - 1) == 0x6d
  )
    return true;
  return (
    size >= 5 &&
    lowerAt(rel, end - 5) == 0x2e &&
    lowerAt(rel, end - 4) == 0x69 &&
    lowerAt(rel, end - 3) == 0x73 &&
    lowerAt(rel, end - 2) == 0x6d &&
    lowerAt(rel, end - 1) == 0x6c
  );
}

function lowerAt(text: string, i: i32): i32 {
  const c = codeUnit(text, i); // start <= i < end <= text.length
  return c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
}

/** Value of text[start, start + count), already checked to be 1-8 hex digits. */
function parseHex(text: string, start: i32, count: i32): i64 {
  let value: i64 = 0;
  for (let i = start; i < start + count; i++) value = (value << 4) | (<i64>hexValue(codeUnit(text, i)));
  return value;
}
