// auth_basic: HTTP Basic authentication (RFC 7617) against htpasswd entries, as Apache's
// `AuthType basic` + `AuthUserFile` + `Require valid-user` protect one Location
// (RFC 7617; docs/reference/edge-config.md#auth_basic).
//
// Missing credentials and wrong ones get the same 401 with `WWW-Authenticate: Basic realm="…"`
// (only the response-code details tell them apart, for the operator's log). An unknown user
// costs as much as a known one: the password is checked against a decoy entry of the same
// scheme. Digests are compared in constant time (htpasswd.ts).
//
// $apr1$ costs 1 002 MD5 computations per check, and a player sends the same credentials with
// every segment. Successful checks of $apr1$ entries are therefore remembered, keyed by the
// SHA-1 of the credentials (the plain credentials are not kept), in a bounded set that is
// emptied when full and dropped with the configuration.

import { base64Decode } from './base64';
import { toHex, utf8Bytes } from './bytes';
import { Credential, SCHEME_APR1 } from './htpasswd';
import { Refusal, Verdict } from './refusals';
import { sha1 } from './sha1';

/** Longest Authorization header value looked at (longer ones are refused unread). */
export const MAX_AUTHORIZATION_BYTES: i32 = 4096;
/** Remembered successful $apr1$ checks per location. */
export const MAX_REMEMBERED: i32 = 1024;

export class BasicRule {
  readonly users: Map<string, Credential> = new Map<string, Credential>();
  /** The WWW-Authenticate value. */
  readonly challenge: string;
  private readonly remembered: Set<string> = new Set<string>();

  constructor(
    public readonly realm: string,
    /** Checked for unknown users: as costly as the costliest entry, matches nothing. */
    public decoy: Credential,
  ) {
    this.challenge = 'Basic realm="' + quotedStringBody(realm) + '"';
  }

  /** null if `header` (the Authorization value's raw bytes, or null if absent) is accepted; else the 401. */
  check(header: Uint8Array | null): Verdict | null {
    if (header === null) return this.refuse(Refusal.BasicMissing, 'authentication required');
    const authorization = asciiText(header);
    if (authorization === null) return this.refuse(Refusal.BasicFailed, 'authentication failed');
    const token = basicToken(authorization);
    if (token === null) return this.refuse(Refusal.BasicMissing, 'authentication required (Basic)');
    const decoded = base64Decode(token);
    if (decoded === null) return this.refuse(Refusal.BasicFailed, 'authentication failed');
    let colon = -1;
    for (let i = 0, n = decoded.length; i < n; i++) {
      if (decoded[i] == 0x3a) {
        colon = i;
        break;
      }
    }
    if (colon < 0) return this.refuse(Refusal.BasicFailed, 'authentication failed');
    const user = String.UTF8.decode(decoded.buffer.slice(0, colon), false);
    const password = decoded.slice(colon + 1);
    const known = this.users.has(user);
    const credential = known ? this.users.get(user) : this.decoy;
    const rememberable = known && credential.scheme == SCHEME_APR1;
    const key = rememberable ? toHex(sha1(utf8Bytes(token))) : '';
    if (rememberable && this.remembered.has(key)) return null;
    const ok = credential.verify(password) && known;
    if (!ok) return this.refuse(Refusal.BasicFailed, 'authentication failed');
    if (rememberable) {
      if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
      this.remembered.add(key);
    }
    return null;
  }

  private refuse(refusal: Refusal, message: string): Verdict {
    const v = Verdict.refuse(refusal, message);
    v.challenge = this.challenge;
    return v;
  }
}

/** The header as text if it is short enough and every byte is printable ASCII or a tab (the
 * Basic syntax is ASCII; other bytes would be decoded leniently into other characters). */
function asciiText(bytes: Uint8Array): string | null {
  const n = bytes.length;
  if (n > MAX_AUTHORIZATION_BYTES) return null;
  for (let i = 0; i < n; i++) {
    const b = <i32>bytes[i];
    if ((b < 0x20 && b != 0x09) || b >= 0x7f) return null;
  }
  return String.UTF8.decode(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + n), false);
}

/** The token68 of `Basic <token68>` (scheme case-insensitive, RFC 7235 §2.1), or null. */
function basicToken(value: string): string | null {
  let start = 0;
  let end = value.length;
  while (start < end && isSpace(value.charCodeAt(start))) start++;
  while (end > start && isSpace(value.charCodeAt(end - 1))) end--;
  if (end - start < 6) return null;
  const scheme = value.substring(start, start + 5);
  if (scheme.toLowerCase() != 'basic' || !isSpace(value.charCodeAt(start + 5))) return null;
  let at = start + 6;
  while (at < end && isSpace(value.charCodeAt(at))) at++;
  const token = value.substring(at, end);
  if (token.length == 0) return null;
  for (let i = 0; i < token.length; i++) if (isSpace(token.charCodeAt(i))) return null;
  return token;
}

function isSpace(c: i32): bool {
  return c == 0x20 || c == 0x09;
}

/** `text` escaped for a quoted-string (RFC 9110 §5.6.4): `"` and `\` get a backslash. */
function quotedStringBody(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c == 0x22 || c == 0x5c) out += '\\';
    out += String.fromCharCode(c);
  }
  return out;
}
