// Who may push to the ingest listener (origin/server/ingest-server.ts): Basic credentials
// (RFC 7617), the edge's signed URLs (origin/server/url-token.ts, the scheme of `origin sign-url`
// and the edge's auth_token), either, or anyone when neither is configured (the listener is then
// on loopback only). Statuses as the DASH-IF live media ingest spec says for refused credentials
// (403), with 401 when none came: a Basic challenge when Basic is configured (ffmpeg sends its
// credentials only when challenged), a malformed token like the edge's. Secrets are compared in
// constant time and never appear in an answer or a log line.

import { timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import { originError } from '../errors';
import { checkUrlToken, normalisePrefix, TokenRule } from './url-token';

export interface IngestAuth {
  /** Accepted Basic credentials, `user:password`. */
  credentials: readonly Buffer[];
  /** Signed URLs accepted, when set. */
  token: TokenRule | undefined;
  /** Milliseconds since the epoch. */
  now: () => number;
}

/** Whether anything is asked of an encoder. */
export function authRequired(a: IngestAuth): boolean {
  return a.credentials.length > 0 || a.token !== undefined;
}

/**
 * Checks a request against the configured schemes and returns the decoded path segments to
 * route: without the prefix, hash and timestamp of a signed URL (the channel is the same whether
 * its encoder signs URLs or sends credentials). A URL under the token prefix must carry a valid
 * token; any other is checked for Basic credentials when those are configured.
 */
export function authorizeIngest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  a: IngestAuth,
  segments: string[],
): string[] {
  if (!authRequired(a)) return segments;
  if (a.token !== undefined) {
    const t = checkUrlToken(a.token, segments, Math.floor(a.now() / 1000));
    if (t.ok) return t.rest;
    const signed = `${normalisePrefix(a.token.prefix)}<hash>/<timestamp>/…`;
    if (t.why === 'malformed')
      throw originError('ingest-unauthorized', `malformed token: expected ${signed} (origin sign-url)`);
    if (t.why === 'expired') throw originError('ingest-token-expired', 'token expired: sign the URL again');
    if (t.why === 'mismatch') throw originError('ingest-forbidden', 'token does not match this URL');
    if (t.why === 'future')
      throw originError('ingest-forbidden', "token not valid yet: its timestamp is ahead of the origin's clock");
    if (a.credentials.length === 0)
      throw originError('ingest-unauthorized', `this ingest listener takes signed URLs: ${signed} (origin sign-url)`);
  }
  basic(req, res, a.credentials);
  return segments;
}

/** Basic credentials against the configured ones. */
function basic(req: http.IncomingMessage, res: http.ServerResponse, credentials: readonly Buffer[]): void {
  const header = req.headers.authorization;
  const m = header === undefined ? null : /^Basic\s+([A-Za-z0-9+/=]{1,1024})$/i.exec(header);
  if (m === null) {
    // Only with no credentials at all: a challenge (clients retry with them).
    if (header === undefined) res.setHeader('WWW-Authenticate', 'Basic realm="origin ingest", charset="UTF-8"');
    throw header === undefined
      ? originError('ingest-unauthorized', 'this ingest listener needs credentials (Basic)')
      : originError('ingest-forbidden', 'credentials not accepted');
  }
  const given = Buffer.from(m[1]!, 'base64');
  const ok = credentials.some((c) => c.byteLength === given.byteLength && timingSafeEqual(c, given));
  if (!ok) throw originError('ingest-forbidden', 'credentials not accepted');
}
