// htpasswd entries (Apache's password file format, one `user:hash` per line) for auth_basic:
//
//   {SHA}<base64 of the 20-byte SHA-1 of the password>        htpasswd -s (unsalted; legacy)
//   $apr1$<salt, 1-8 chars of ./0-9A-Za-z>$<22 chars>          htpasswd -m (Apache's default)
//
// bcrypt ($2y$), crypt(3) DES and plain text are refused when the configuration is read, with
// the entry's member path: an entry the edge cannot check must not silently lock a user out.
// Verification compares digests in constant time (bytes.ts).

import { base64Decode } from './base64';
import { APR1_HASH_LENGTH, APR1_SALT_MAX, apr1Hash, isCrypt64 } from './apr1';
import { constantTimeEqual, constantTimeEqualText, utf8Bytes } from './bytes';
import { SHA1_BYTES, sha1 } from './sha1';

export const SCHEME_SHA: i32 = 1;
export const SCHEME_APR1: i32 = 2;

/** Longest user name and whole entry accepted in the configuration. */
export const MAX_USER_BYTES: i32 = 256;
export const MAX_ENTRY_BYTES: i32 = 1024;

export class Credential {
  constructor(
    public scheme: i32,
    /** {SHA}: the 20-byte digest. */
    public digest: Uint8Array,
    /** $apr1$: the salt bytes and the 22-character hash. */
    public salt: Uint8Array,
    public hash: string,
  ) {}

  /** True if `password` matches; the work done does not depend on where a digest differs. */
  verify(password: Uint8Array): bool {
    if (this.scheme == SCHEME_SHA) return constantTimeEqual(sha1(password), this.digest);
    return constantTimeEqualText(apr1Hash(password, this.salt), this.hash);
  }
}

export class UserEntry {
  constructor(
    public user: string,
    public credential: Credential,
  ) {}
}

let entryError: string = '';

/** Why the last parseEntry failed ("" after success). */
export function lastEntryError(): string {
  return entryError;
}

/** Parses one `user:hash` line; null with entryError set if it is not usable. */
export function parseEntry(line: string): UserEntry | null {
  entryError = '';
  if (utf8Bytes(line).length > MAX_ENTRY_BYTES)
    return fail<UserEntry>('longer than ' + MAX_ENTRY_BYTES.toString() + ' bytes');
  const colon = line.indexOf(':');
  if (colon < 0) return fail<UserEntry>('expected "user:hash" (a line of an htpasswd file)');
  const user = line.substring(0, colon);
  if (user.length == 0) return fail<UserEntry>('empty user name');
  if (utf8Bytes(user).length > MAX_USER_BYTES)
    return fail<UserEntry>('user name longer than ' + MAX_USER_BYTES.toString() + ' bytes');
  for (let i = 0; i < user.length; i++) {
    const c = user.charCodeAt(i);
    if (c < 0x20 || c == 0x7f) return fail<UserEntry>('control character in the user name');
  }
  const credential = parseHash(line.substring(colon + 1));
  return credential === null ? null : new UserEntry(user, credential);
}

function parseHash(hash: string): Credential | null {
  if (hash.startsWith('{SHA}')) {
    const digest = base64Decode(hash.substring(5));
    if (digest === null || digest.length != SHA1_BYTES)
      return fail<Credential>('{SHA} needs the base64 of a 20-byte SHA-1 digest (htpasswd -s)');
    return new Credential(SCHEME_SHA, digest, new Uint8Array(0), '');
  }
  if (hash.startsWith('$apr1$')) {
    const rest = hash.substring(6);
    const dollar = rest.indexOf('$');
    if (dollar < 1 || dollar > APR1_SALT_MAX)
      return fail<Credential>('$apr1$ needs a salt of 1 to 8 characters, then "$"');
    const salt = rest.substring(0, dollar);
    const digest = rest.substring(dollar + 1);
    if (digest.length != APR1_HASH_LENGTH) return fail<Credential>('$apr1$ needs a 22-character hash after the salt');
    for (let i = 0; i < salt.length; i++) {
      if (!isCrypt64(salt.charCodeAt(i))) return fail<Credential>('$apr1$ salt characters must be in ./0-9A-Za-z');
    }
    for (let i = 0; i < digest.length; i++) {
      if (!isCrypt64(digest.charCodeAt(i))) return fail<Credential>('$apr1$ hash characters must be in ./0-9A-Za-z');
    }
    return new Credential(SCHEME_APR1, new Uint8Array(0), utf8Bytes(salt), digest);
  }
  if (hash.startsWith('$2y$') || hash.startsWith('$2a$') || hash.startsWith('$2b$')) {
    return fail<Credential>('bcrypt entries are not supported: use htpasswd -m ($apr1$) or -s ({SHA})');
  }
  return fail<Credential>(
    'unsupported hash: use htpasswd -m ($apr1$) or -s ({SHA}); crypt(3) and plain text are not accepted',
  );
}

function fail<T>(message: string): T | null {
  entryError = message;
  return null;
}

/** A credential no password matches, of the given scheme's cost: checked for unknown users so
 * that the answer takes as long as for a known one (no user enumeration by timing). */
export function decoyCredential(scheme: i32): Credential {
  if (scheme == SCHEME_APR1)
    return new Credential(SCHEME_APR1, new Uint8Array(0), utf8Bytes('decoy./'), '......................');
  return new Credential(SCHEME_SHA, new Uint8Array(SHA1_BYTES), new Uint8Array(0), '');
}
