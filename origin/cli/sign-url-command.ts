// `origin sign-url --secret <s> [--prefix token] [--time T | --expires E --timeout S] [--base URL] <path>`:
// a URL the edge's auth_token accepts (assembly/edge/token.ts; docs/guide/edge.md#signing-urls),
// and the ingest listener's --ingest-token (origin/server/url-token.ts checks it there).
//
//   /<prefix>/<hash>/<timestamp>/<path>       timestamp = 8 hex digits, seconds since the epoch
//   hash = hex MD5(secret + scope + timestamp), scope = the path up to and including its first
//          segment ending in .ism or .isml (the whole path if none): one signature covers the
//          manifest and every playlist and segment URL under it
//
// The edge accepts the URL until timestamp + the location's timeout, and refuses it while the
// timestamp is more than the location's skew ahead of its clock. --expires E therefore needs
// the location's --timeout S and signs with timestamp E - S.
// The path is read as it would appear in a URL (percent-escapes decoded once, with the edge's
// refusals: dot and empty segments, encoded / \ . NUL %, backslashes); the digest covers the
// decoded path and the printed URL spells it the way the edge forwards it. A query after the
// path is kept, unsigned (mod_auth_token signs paths only).

import { manifestScope, normalisePrefix, tokenDigest } from '../server/url-token';
import { eachOption, UsageError } from './args';

export const SIGN_URL_USAGE = `Usage: origin sign-url --secret <secret> [options] <path>

Prints a URL signed for the edge's auth_token (mod_auth_token's format, scoped to the server
manifest as the reference does): /<prefix>/<hash>/<timestamp><path>, where <path> starts at
the directory of the presentation, e.g. /vod/tears.ism/.m3u8. One signature covers the
manifest and every playlist and segment under the same .ism.

Options:
  --secret <secret>     the location's auth_token.secret (required)
  --prefix <prefix>     the location's auth_token.prefix (default: token, i.e. /token/)
  --time <seconds>      the timestamp to sign with, seconds since the epoch (default: now)
  --expires <time>      when the URL should stop working: seconds since the epoch or an ISO
                        8601 date; needs --timeout (the URL is signed with expires - timeout)
  --timeout <seconds>   the location's auth_token.timeout (also prints when the URL expires)
  --base <url>          put this in front, e.g. http://127.0.0.1:8080
  -h, --help            this text

Exit codes: 0 printed, 2 bad command line (or a path the edge would refuse).
`;

export interface SignUrlArgs {
  secret: string | undefined;
  prefix: string;
  time: number | undefined;
  expires: number | undefined;
  timeout: number | undefined;
  base: string;
  path: string | undefined;
  help: boolean;
}

const MAX_TIMESTAMP = 0xffffffff;

export function parseSignUrlArgs(argv: readonly string[]): SignUrlArgs {
  const a: SignUrlArgs = {
    secret: undefined,
    prefix: 'token',
    time: undefined,
    expires: undefined,
    timeout: undefined,
    base: '',
    path: undefined,
    help: false,
  };
  eachOption(argv, a, ({ arg, flag, value }) => {
    switch (flag) {
      case '--secret':
        a.secret = value();
        break;
      case '--prefix':
        a.prefix = value();
        break;
      case '--time':
        a.time = seconds(flag, value(), 0, MAX_TIMESTAMP);
        break;
      case '--timeout':
        a.timeout = seconds(flag, value(), 1, 2147483647);
        break;
      case '--expires':
        a.expires = parseTime(value());
        break;
      case '--base':
        a.base = value().replace(/\/+$/, '');
        break;
      default:
        if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg}`);
        if (a.path !== undefined) throw new UsageError(`one path only (got "${a.path}" and "${arg}")`);
        a.path = arg;
    }
  });
  return a;
}

function seconds(flag: string, text: string, min: number, max: number): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) < min || Number(text) > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, not "${text}"`);
  return Number(text);
}

/** Seconds since the epoch, or an ISO 8601 date. */
function parseTime(text: string): number {
  if (/^\d{1,10}$/.test(text)) return Number(text);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms))
    throw new UsageError(`--expires must be seconds since the epoch or an ISO 8601 date, not "${text}"`);
  return Math.floor(ms / 1000);
}

export interface SignRequest {
  secret: string;
  /** auth_token.prefix as configured ("token", "/token/", "/vod/protected"). */
  prefix: string;
  /** The path as in a URL (may carry a query, which stays unsigned). */
  path: string;
  /** Seconds since the epoch (the timestamp written into the URL). */
  timestamp: number;
}

/** The signed path and query (no scheme or host). Throws UsageError for a path the edge refuses. */
export function signUrl(r: SignRequest): string {
  const q = r.path.indexOf('?');
  const rawPath = q < 0 ? r.path : r.path.slice(0, q);
  const query = q < 0 ? '' : r.path.slice(q);
  const decoded = decodePathOnce(rawPath);
  if (!Number.isInteger(r.timestamp) || r.timestamp < 0 || r.timestamp > MAX_TIMESTAMP)
    throw new UsageError(`the timestamp must fit in 8 hex digits (0 to ${MAX_TIMESTAMP}), not ${r.timestamp}`);
  const ts = r.timestamp.toString(16).padStart(8, '0');
  const hash = tokenDigest(r.secret, manifestScope(decoded), ts);
  return `${normalisePrefix(r.prefix)}${hash}/${ts}${encodePath(decoded)}${query}`;
}

/** Decodes once with the edge's refusals (assembly/edge/target.ts). */
function decodePathOnce(raw: string): string {
  if (!raw.startsWith('/'))
    throw new UsageError(`the path must start with / (the directory of the presentation), not "${raw}"`);
  const segments = raw.slice(1).split('/');
  return (
    '/' +
    segments
      .map((segment, i) => {
        if (/%(2f|5c|00|2e|25)/i.test(segment))
          throw new UsageError(`"${segment}": the edge refuses encoded / \\ NUL . and % in paths`);
        if (/[\\#\s]|[^\x21-\x7e]/.test(segment))
          throw new UsageError(`"${segment}": backslash, "#", space or non-ASCII character (percent-encode it)`);
        let s: string;
        try {
          s = decodeURIComponent(segment);
        } catch {
          throw new UsageError(`"${segment}": malformed percent-encoding`);
        }
        if (s === '.' || s === '..') throw new UsageError('dot segments (. and ..) are refused by the edge');
        if (s === '' && i < segments.length - 1) throw new UsageError('empty segments (//) are refused by the edge');
        if (/[\x00-\x1f\x7f]/.test(s)) throw new UsageError(`"${segment}": encoded control character`);
        return s;
      })
      .join('/')
  );
}

/** The edge's canonical spelling: RFC 3986 segment characters raw, everything else %XX. */
function encodePath(path: string): string {
  let out = '';
  for (const byte of Buffer.from(path, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export async function runSignUrl(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const a = parseSignUrlArgs(argv);
  if (a.help) {
    out.write(SIGN_URL_USAGE);
    return 0;
  }
  if (a.secret === undefined || a.secret === '')
    throw new UsageError("--secret is required (the location's auth_token.secret)");
  if (a.path === undefined) throw new UsageError('give the path to sign, e.g. /vod/tears.ism/.m3u8');
  if (a.expires !== undefined && a.time !== undefined) throw new UsageError('give --time or --expires, not both');
  if (a.expires !== undefined && a.timeout === undefined)
    throw new UsageError(
      "--expires needs --timeout (the location's auth_token.timeout): the URL is signed with expires - timeout",
    );
  const now = Math.floor(Date.now() / 1000);
  const timestamp = a.expires !== undefined ? a.expires - a.timeout! : (a.time ?? now);
  out.write(`${a.base}${signUrl({ secret: a.secret, prefix: a.prefix, path: a.path, timestamp })}\n`);
  if (a.timeout !== undefined) {
    err.write(
      `valid until ${new Date((timestamp + a.timeout) * 1000).toISOString()} (timestamp + timeout ${a.timeout} s)\n`,
    );
  }
  if (timestamp > now)
    err.write(
      `note: the timestamp is ${timestamp - now} s in the future; the edge refuses it while that exceeds the location's skew\n`,
    );
  return 0;
}
