// The plugin configuration (docs/reference/edge-config.md): an ordered list of
// locations, the longest matching prefix wins, like web-server Location blocks.
//
//   { "locations": [ {
//       "prefix": "/vod/",                      required; a decoded path, "/" matches everything
//       "skip_rewrite": false,                  default true: URL rewriting (token stripping,
//                                               rewrite rules) is off unless set to false
//       "rewrite": { ... },                     rewrite rules (edge/rewrite.ts); needs skip_rewrite false
//       "auth_token": { "secret": "…",          required, 1-1024 bytes
//                       "prefix": "/token/",    required; "token" means "/token/"; inside the location
//                       "timeout": 3600,        seconds, default 60 (mod_auth_token's default)
//                       "skew": 60 },           seconds, default 60
//       "auth_basic": { "realm": "Origin",      required, 1-256 characters
//                       "users": ["alice:{SHA}…", "bob:$apr1$…"] },   1-10000 htpasswd entries
//       "validate_filter": true                 default false
//   } ] }
//
// Anything else is refused with the member's path (`locations[1].auth_token.timeout: must be an
// integer from 1 to 2147483647`): unknown members, wrong types, missing required members,
// duplicate prefixes or users, auth_token or rewrite without "skip_rewrite": false. The root
// context then returns false from on_configure and Envoy refuses the configuration.
// The message never contains a secret or a password hash.

import { JsonValue } from '../json';
import { parseRewriteConfig, lastRewriteConfigError } from './rewrite';
import { RewriteConfig } from './rewrite-rules';
import { BasicRule } from './basic';
import { SCHEME_APR1, SCHEME_SHA, decoyCredential, lastEntryError, parseEntry } from './htpasswd';
import { TokenRule } from './token';
import { checkDecodedPath } from './target';
import { utf8Bytes } from './bytes';

export const MAX_LOCATIONS: i32 = 256;
export const MAX_USERS: i32 = 10000;
export const MAX_SECRET_BYTES: i32 = 1024;
export const MAX_REALM_CHARS: i32 = 256;
export const MAX_SECONDS: i64 = 2147483647;
export const DEFAULT_TIMEOUT: i64 = 60;
export const DEFAULT_SKEW: i64 = 60;

export class Location {
  skipRewrite: bool = true;
  rewrite: RewriteConfig | null = null;
  token: TokenRule | null = null;
  basic: BasicRule | null = null;
  validateFilter: bool = false;
  /** The prefix without a final "/" ("" for "/"). */
  readonly base: string;

  constructor(
    /** As configured, for logs. */
    public readonly prefix: string,
    /** Position in the configuration's list. */
    public readonly index: i32,
  ) {
    this.base = prefix.endsWith('/') ? prefix.substring(0, prefix.length - 1) : prefix;
  }

  /** Segment-wise prefix match: /vod matches /vod and /vod/x, not /vodka. */
  matches(path: string): bool {
    const base = this.base;
    if (base.length == 0) return true;
    if (!path.startsWith(base)) return false;
    return path.length == base.length || path.charCodeAt(base.length) == 0x2f;
  }

  /** One line for the log: prefix and what is on (no secrets). */
  describe(): string {
    const on = new Array<string>(0);
    if (this.token !== null) on.push('auth_token ' + this.token!.prefix);
    if (this.basic !== null) on.push('auth_basic (' + this.basic!.users.size.toString() + ' users)');
    if (this.rewrite !== null) on.push('rewrite');
    if (this.validateFilter) on.push('validate_filter');
    if (!this.skipRewrite && this.rewrite === null && this.token === null) on.push('skip_rewrite off');
    return this.prefix + (on.length > 0 ? ' [' + on.join(', ') + ']' : ' [nothing]');
  }
}

export class EdgeConfig {
  /** Longest prefix first: the first match is the one that wins. */
  readonly locations: Location[] = new Array<Location>(0);
  hasToken: bool = false;
  hasBasic: bool = false;

  match(path: string): Location | null {
    const all = this.locations;
    for (let i = 0, n = all.length; i < n; i++) {
      const location = all[i];
      if (location.matches(path)) return location;
    }
    return null;
  }
}

/** The configuration, or null with `error` saying which member is wrong. */
export class ConfigResult {
  constructor(
    public config: EdgeConfig | null,
    public error: string,
  ) {}
}

export function parseEdgeConfig(root: JsonValue): ConfigResult {
  const reader = new Reader();
  const config = reader.config(root);
  return reader.error.length > 0 || config === null
    ? new ConfigResult(null, reader.error)
    : new ConfigResult(config, '');
}

class Reader {
  error: string = '';

  private fail(path: string, message: string): void {
    if (this.error.length == 0) this.error = message.startsWith('.') ? path + message : path + ': ' + message;
  }

  /** Refuses members not in `allowed`; true if there were none. */
  private onlyMembers(value: JsonValue, path: string, allowed: string[]): bool {
    const names = value.keys();
    for (let i = 0; i < names.length; i++) {
      if (!allowed.includes(names[i])) {
        this.fail(
          path.length > 0 ? path + '.' + names[i] : names[i],
          'unknown member (allowed: ' + allowed.join(', ') + ')',
        );
        return false;
      }
    }
    return true;
  }

  config(root: JsonValue): EdgeConfig | null {
    const config = new EdgeConfig();
    if (!root.isObject()) {
      this.fail('(configuration)', 'must be a JSON object');
      return null;
    }
    if (!this.onlyMembers(root, '', ['locations'])) return null;
    const list = root.get('locations');
    if (list === null) return config; // {}: no location, only path normalisation
    if (!list.isArray()) {
      this.fail('locations', 'must be an array of objects');
      return null;
    }
    if (list.length > MAX_LOCATIONS) {
      this.fail('locations', 'at most ' + MAX_LOCATIONS.toString() + ' locations');
      return null;
    }
    const seen = new Set<string>();
    for (let i = 0, n = list.length; i < n; i++) {
      const path = 'locations[' + i.toString() + ']';
      const location = this.location(list.at(i)!, path, i);
      if (location === null) return null;
      if (seen.has(location.base)) {
        this.fail(path + '.prefix', '"' + location.prefix + '" is the prefix of an earlier location too');
        return null;
      }
      seen.add(location.base);
      config.locations.push(location);
      if (location.token !== null) config.hasToken = true;
      if (location.basic !== null) config.hasBasic = true;
    }
    // Longest prefix first (stable for equal lengths, which cannot both match one path).
    config.locations.sort((a: Location, b: Location): i32 => b.base.length - a.base.length);
    return config;
  }

  private location(value: JsonValue, path: string, index: i32): Location | null {
    if (!value.isObject()) {
      this.fail(path, 'must be an object');
      return null;
    }
    if (
      !this.onlyMembers(value, path, [
        'prefix',
        'skip_rewrite',
        'rewrite',
        'auth_token',
        'auth_basic',
        'validate_filter',
      ])
    )
      return null;
    const prefixValue = value.get('prefix');
    if (prefixValue === null || !prefixValue.isString()) {
      this.fail(
        path + '.prefix',
        prefixValue === null ? 'required (a path such as "/" or "/vod/")' : 'must be a string',
      );
      return null;
    }
    const prefix = prefixValue.asString()!;
    const problem = checkDecodedPath(prefix);
    if (problem.length > 0) {
      this.fail(path + '.prefix', problem);
      return null;
    }
    const location = new Location(prefix, index);

    const skip = value.get('skip_rewrite');
    if (skip !== null) {
      if (!skip.isBool()) return this.failed(path + '.skip_rewrite', 'must be true or false');
      location.skipRewrite = skip.asBool();
    }
    const validate = value.get('validate_filter');
    if (validate !== null) {
      if (!validate.isBool()) return this.failed(path + '.validate_filter', 'must be true or false');
      location.validateFilter = validate.asBool();
    }
    const rewrite = value.get('rewrite');
    if (rewrite !== null) {
      const compiled = parseRewriteConfig(rewrite);
      if (compiled === null) return this.failed(path, rewriteError(lastRewriteConfigError()));
      if (location.skipRewrite) {
        return this.failed(
          path + '.rewrite',
          'needs "skip_rewrite": false in the same location (URL rewriting is off by default)',
        );
      }
      location.rewrite = compiled;
    }
    const token = value.get('auth_token');
    if (token !== null) {
      location.token = this.token(token, path + '.auth_token', location);
      if (location.token === null) return null;
      if (location.skipRewrite) {
        return this.failed(
          path + '.auth_token',
          'needs "skip_rewrite": false in the same location: token authentication rewrites the URL (the reference\'s SkipRewrite off)',
        );
      }
    }
    const basic = value.get('auth_basic');
    if (basic !== null) {
      location.basic = this.basic(basic, path + '.auth_basic');
      if (location.basic === null) return null;
    }
    return location;
  }

  private failed(path: string, message: string): Location | null {
    this.fail(path, message);
    return null;
  }

  private token(value: JsonValue, path: string, location: Location): TokenRule | null {
    if (!value.isObject()) {
      this.fail(path, 'must be an object');
      return null;
    }
    if (!this.onlyMembers(value, path, ['secret', 'prefix', 'timeout', 'skew'])) return null;
    const secret = value.get('secret');
    if (secret === null || !secret.isString() || secret.asString()!.length == 0) {
      this.fail(path + '.secret', secret === null ? 'required' : 'must be a non-empty string');
      return null;
    }
    const secretBytes = utf8Bytes(secret.asString()!);
    if (secretBytes.length > MAX_SECRET_BYTES) {
      this.fail(path + '.secret', 'longer than ' + MAX_SECRET_BYTES.toString() + ' bytes');
      return null;
    }
    const prefixValue = value.get('prefix');
    if (prefixValue === null || !prefixValue.isString()) {
      this.fail(
        path + '.prefix',
        prefixValue === null ? 'required (e.g. "token" for URLs /token/<hash>/<timestamp>/...)' : 'must be a string',
      );
      return null;
    }
    let prefix = prefixValue.asString()!;
    if (!prefix.startsWith('/')) prefix = '/' + prefix;
    if (!prefix.endsWith('/')) prefix += '/';
    const problem = checkDecodedPath(prefix);
    if (problem.length > 0) {
      this.fail(path + '.prefix', problem);
      return null;
    }
    const tokenBase = prefix.substring(0, prefix.length - 1);
    if (!location.matches(tokenBase.length > 0 ? tokenBase : '/')) {
      this.fail(
        path + '.prefix',
        '"' +
          prefix +
          '" lies outside the location "' +
          location.prefix +
          '": no request of the location could carry a token',
      );
      return null;
    }
    const timeout = this.seconds(value, 'timeout', path, 1, DEFAULT_TIMEOUT);
    const skew = this.seconds(value, 'skew', path, 0, DEFAULT_SKEW);
    if (timeout < 0 || skew < 0) return null;
    return new TokenRule(secretBytes, prefix, timeout, skew);
  }

  /** An integer member in [lowest, MAX_SECONDS], `fallback` if absent; -1 after a failure. */
  private seconds(value: JsonValue, name: string, path: string, lowest: i64, fallback: i64): i64 {
    const member = value.get(name);
    if (member === null) return fallback;
    const n = member.asNumber(-1);
    if (!member.isNumber() || Math.floor(n) != n || n < <f64>lowest || n > <f64>MAX_SECONDS) {
      this.fail(
        path + '.' + name,
        'must be an integer from ' + lowest.toString() + ' to ' + MAX_SECONDS.toString() + ' (seconds)',
      );
      return -1;
    }
    return <i64>n;
  }

  private basic(value: JsonValue, path: string): BasicRule | null {
    if (!value.isObject()) {
      this.fail(path, 'must be an object');
      return null;
    }
    if (!this.onlyMembers(value, path, ['realm', 'users'])) return null;
    const realmValue = value.get('realm');
    if (realmValue === null || !realmValue.isString()) {
      this.fail(path + '.realm', realmValue === null ? 'required' : 'must be a string');
      return null;
    }
    const realm = realmValue.asString()!;
    if (realm.length == 0 || realm.length > MAX_REALM_CHARS) {
      this.fail(path + '.realm', 'must have 1 to ' + MAX_REALM_CHARS.toString() + ' characters');
      return null;
    }
    for (let i = 0; i < realm.length; i++) {
      const c = realm.charCodeAt(i);
      if (c < 0x20 || c >= 0x7f) {
        this.fail(path + '.realm', 'printable ASCII only (it goes into a response header)');
        return null;
      }
    }
    const users = value.get('users');
    if (users === null || !users.isArray() || users.length == 0) {
      this.fail(
        path + '.users',
        users === null
          ? 'required (htpasswd lines "user:hash")'
          : 'must be a non-empty array of htpasswd lines "user:hash"',
      );
      return null;
    }
    if (users.length > MAX_USERS) {
      this.fail(path + '.users', 'at most ' + MAX_USERS.toString() + ' entries');
      return null;
    }
    const rule = new BasicRule(realm, decoyCredential(SCHEME_SHA));
    let costliest = SCHEME_SHA;
    for (let i = 0, n = users.length; i < n; i++) {
      const itemPath = path + '.users[' + i.toString() + ']';
      const line = users.at(i)!.asString();
      if (line === null) {
        this.fail(itemPath, 'must be a string "user:hash"');
        return null;
      }
      const entry = parseEntry(line);
      if (entry === null) {
        this.fail(itemPath, lastEntryError());
        return null;
      }
      if (rule.users.has(entry.user)) {
        this.fail(itemPath, 'user "' + entry.user + '" is listed twice');
        return null;
      }
      rule.users.set(entry.user, entry.credential);
      if (entry.credential.scheme == SCHEME_APR1) costliest = SCHEME_APR1;
    }
    rule.decoy = decoyCredential(costliest);
    return rule;
  }
}

/** The rewrite engine names the member from "rewrite" down ("rewrite.rules[2].to: ..."): it is
 * appended to the location's path; a bare message is the rewrite member's own. */
function rewriteError(message: string): string {
  if (message.startsWith('rewrite')) return '.' + message;
  return '.rewrite: ' + (message.length > 0 ? message : 'invalid');
}
