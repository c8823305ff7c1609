// The closed sets of the origin's errors and their one mapping to HTTP. A kind says what went wrong
// and decides the status; a code is what a client reads in `X-Origin-Error` and can switch on. Every
// code belongs to one kind; the code named after a kind is that kind's generic code. The shape
// follows the edge plugin's assembly/edge/refusals.ts (one closed set, one mapping), and the codes
// both use (bad-path, url-too-long, bad-query, bad-filter) mean the same thing in both.
//
// docs/reference/errors.md prints ERROR_CODES (errorCodesMarkdown); test/origin/error-codes.test.ts
// keeps it in step.

export type ErrorKind =
  | 'bad-request' // malformed URL, query parameter or option value
  | 'not-found' // no such presentation, track or fragment
  | 'unsupported-media' // a codec or layout we do not handle (the reference answers 415)
  | 'corrupt-media' // bytes that do not parse as the format they claim to be
  | 'io' // storage could not be read or written
  | 'forbidden'
  | 'method-not-allowed' // only GET and HEAD exist
  | 'too-long' // a URL beyond the bound we read
  | 'unavailable' // the origin cannot answer this now (the primary of its workers did not answer)
  | 'bad-gateway' // remote storage failed or answered what the origin cannot use
  | 'gateway-timeout' // remote storage did not answer in time
  | 'internal'
  | 'unauthorized' // live ingest without credentials (401 with a Basic challenge)
  | 'precondition-failed' // live ingest: media the channel cannot take yet or at all (DASH-IF ingest: 412)
  | 'timeout'; // live ingest: a body idle past the ingest idle timeout

/** The one mapping of kinds to HTTP status. */
export const HTTP_STATUS: Readonly<Record<ErrorKind, number>> = {
  'bad-request': 400,
  forbidden: 403,
  'not-found': 404,
  'unsupported-media': 415,
  'method-not-allowed': 405,
  'too-long': 414,
  'corrupt-media': 500,
  io: 500,
  unavailable: 503,
  'bad-gateway': 502,
  'gateway-timeout': 504,
  internal: 500,
  unauthorized: 401,
  'precondition-failed': 412,
  timeout: 408,
};

/** Every `X-Origin-Error` value the origin sends. */
export type ErrorCode =
  | 'bad-request'
  | 'bad-path'
  | 'bad-query'
  | 'bad-option'
  | 'bad-filter'
  | 'bad-variant-set'
  | 'bad-time'
  | 'bad-delivery-directive'
  | 'bad-parameter'
  | 'forbidden'
  | 'protected-format'
  | 'not-found'
  | 'unknown-presentation'
  | 'unknown-url'
  | 'unknown-track'
  | 'unknown-time'
  | 'empty-clip'
  | 'method-not-allowed'
  | 'url-too-long'
  | 'unsupported-media'
  | 'passthrough-smooth-only'
  | 'passthrough-no-index'
  | 'segment-too-large'
  | 'corrupt-media'
  | 'passthrough-bad-layout'
  | 'bad-track-filter'
  | 'io'
  | 'missing-source'
  | 'unavailable'
  | 'client-gone'
  | 'storage-unavailable'
  | 'reload-timeout'
  | 'storage-error'
  | 'storage-denied'
  | 'storage-changed'
  | 'storage-insecure'
  | 'storage-timeout'
  | 'internal'
  | 'clip-numbering'
  | 'unknown-channel'
  | 'ingest-unauthorized'
  | 'ingest-forbidden'
  | 'ingest-token-expired'
  | 'channel-stopped'
  | 'ingest-media-type'
  | 'ingest-bad-box'
  | 'ingest-box-too-large'
  | 'ingest-not-utc'
  | 'ingest-no-header'
  | 'ingest-header-mismatch'
  | 'ingest-idle'
  | LiveFragmentCode;

/** The live fragment refusals, whose status depends on the format (LIVE_FRAGMENT_STATUS). */
export type LiveFragmentCode = 'fragment-expired' | 'fragment-missing' | 'fragment-not-yet';

export interface ErrorCodeSpec {
  kind: ErrorKind;
  /** HTTP status: the kind's, from HTTP_STATUS. */
  status: number;
  /** When the origin answers with this code (one line of Markdown). */
  meaning: string;
}

const SPECS: Record<ErrorCode, Omit<ErrorCodeSpec, 'status'>> = {
  'bad-request': {
    kind: 'bad-request',
    meaning:
      'malformed input with no more specific code: a server manifest, a packaging input or option, a path that is not a regular file',
  },
  'bad-path': {
    kind: 'bad-request',
    meaning:
      '`..` or `.` segments (also encoded), encoded `/` or `\\`, NUL, empty segments, bad percent-encoding, a path outside the root',
  },
  'bad-query': { kind: 'bad-request', meaning: 'bad percent-encoding in the query, query longer than 16 KiB' },
  'bad-option': {
    kind: 'bad-request',
    meaning: 'a stream option with a bad value, or one that is not allowed in a query (`track_filter`)',
  },
  'bad-filter': {
    kind: 'bad-request',
    meaning: 'a filter syntax error (message, position, hint) or a filter that keeps no track',
  },
  'bad-variant-set': {
    kind: 'bad-request',
    meaning:
      "a `variant_set` syntax error, or a set that keeps none of the request's tracks (the message names the set)",
  },
  'bad-delivery-directive': {
    kind: 'bad-request',
    meaning:
      'an LL-HLS `_HLS_msn`/`_HLS_part`/`_HLS_skip` that is malformed, given twice, a part without a segment, or too far past the live edge (rfc8216bis §6.2.5.2)',
  },
  'bad-time': {
    kind: 'bad-request',
    meaning:
      'a malformed `t`/`vbegin`/`vend` (live: also an ISO 8601 date that does not exist), end not after start, `t` with `vbegin`/`vend`',
  },
  'bad-parameter': { kind: 'bad-request', meaning: 'a bad player-page parameter (`/play`, `/_filter`)' },
  forbidden: { kind: 'forbidden', meaning: 'storage refused to read a file (permission denied)' },
  'protected-format': {
    kind: 'forbidden',
    meaning:
      'an encrypted presentation asked for in a format that has no key configured, or that is never encrypted (HDS): refused rather than served clear',
  },
  'not-found': { kind: 'not-found', meaning: 'no such file, with no more specific code' },
  'unknown-presentation': { kind: 'not-found', meaning: 'no `.ism` at that path' },
  'unknown-url': { kind: 'not-found', meaning: 'no output has a URL like that; no static file there' },
  'unknown-track': {
    kind: 'not-found',
    meaning: 'no track with that name and bitrate (or the filter removed it)',
  },
  'unknown-time': { kind: 'not-found', meaning: 'no fragment/segment at that time or number' },
  'empty-clip': { kind: 'not-found', meaning: 'the sub-clip selects no media' },
  'method-not-allowed': { kind: 'method-not-allowed', meaning: 'anything but GET, HEAD, OPTIONS' },
  'url-too-long': { kind: 'too-long', meaning: 'a path longer than 4096 characters' },
  'passthrough-smooth-only': {
    kind: 'unsupported-media',
    meaning:
      'a DASH, HLS or HDS request under an `iss_pass_through` location: its legacy Smooth content is served as stored, never parsed, so only Smooth Streaming plays',
  },
  'passthrough-no-index': {
    kind: 'unsupported-media',
    meaning:
      'a source under an `iss_pass_through` location with neither the `mfra` random-access index at its end nor any `moof`+`mdat` fragment found by the scan of its top-level boxes',
  },
  'unsupported-media': {
    kind: 'unsupported-media',
    meaning:
      'media the origin cannot serve (e.g. a track without fragments; an HDS request keeping neither H.264 nor AAC)',
  },
  'segment-too-large': {
    kind: 'unsupported-media',
    meaning:
      'a generated segment (MPEG-TS, packed audio, HDS fragment) would exceed its size limit: refused before any read',
  },
  'corrupt-media': {
    kind: 'corrupt-media',
    meaning: 'a source file or server manifest does not parse as the format it claims to be',
  },
  'passthrough-bad-layout': {
    kind: 'corrupt-media',
    meaning:
      'a source under an `iss_pass_through` location without `mfra` whose top-level boxes cannot be scanned: a box size below its header or past the end of the file, a moof over 4 MiB, more than 2^20 boxes',
  },
  'bad-track-filter': {
    kind: 'corrupt-media',
    meaning: "the server manifest's `track_filter` does not parse or keeps no track: the operator's error",
  },
  io: { kind: 'io', meaning: 'storage could not be read or written (e.g. a file shrank while being read)' },
  'missing-source': { kind: 'io', meaning: 'a source the server manifest names cannot be read' },
  unavailable: {
    kind: 'unavailable',
    meaning:
      "`/metrics` of a worker whose primary process did not answer in time (`origin serve --workers`): the workers' sum cannot be made now",
  },
  'client-gone': {
    kind: 'unavailable',
    meaning:
      'a generated segment waiting for its turn (server/work-gate.ts) whose every client closed its connection is not made; no client reads this answer, the access log does',
  },
  'reload-timeout': {
    kind: 'unavailable',
    meaning:
      'an LL-HLS blocking playlist reload or preload-hinted part whose part did not arrive within three target durations (rfc8216bis §6.2.5.2)',
  },
  'storage-unavailable': {
    kind: 'bad-gateway',
    meaning: 'remote storage (`proxy_pass`) could not be reached, reset the connection or answered 5xx, after retries',
  },
  'storage-error': {
    kind: 'bad-gateway',
    meaning:
      'remote storage answered what the origin cannot use: a status it does not expect, a range it did not ask for, a body shorter or longer than announced',
  },
  'storage-denied': {
    kind: 'bad-gateway',
    meaning:
      'remote storage refused the origin (401, 403: for `s3://`, wrong or missing credentials, a bad signature, no permission; the S3 error code is logged), or no S3 credentials were found',
  },
  'storage-changed': {
    kind: 'bad-gateway',
    meaning:
      'a remote source changed while it was read (`If-Match` failed, 412) and again on the one retry with a fresh index: no old index is mixed with new bytes',
  },
  'storage-insecure': {
    kind: 'bad-gateway',
    meaning:
      'a server manifest with DRM keys on plain `http://` storage: refused unless its location sets `proxy_insecure_keys`',
  },
  'storage-timeout': {
    kind: 'gateway-timeout',
    meaning: 'remote storage did not answer, or stalled mid-body, within `proxy_timeout_ms`',
  },
  internal: {
    kind: 'internal',
    meaning: "a check of the origin's own invariants failed, or an error that is not an `OriginError`",
  },
  'clip-numbering': {
    kind: 'internal',
    meaning: "a sub-clip's segments do not fall in the unclipped presentation's segments (HLS numbering)",
  },
  // Live ingest (docs/guide/live.md; the statuses of the DASH-IF live media ingest spec).
  'unknown-channel': {
    kind: 'not-found',
    meaning: 'ingest to, or the state of, a publishing point (`.isml`) that does not exist',
  },
  'ingest-unauthorized': {
    kind: 'unauthorized',
    meaning:
      'ingest without credentials or with a malformed token on a listener that requires them (with a Basic challenge when Basic is configured)',
  },
  'ingest-forbidden': {
    kind: 'forbidden',
    meaning: 'ingest with wrong credentials, or a signed URL whose token does not match it or is not valid yet',
  },
  'ingest-token-expired': {
    kind: 'forbidden',
    meaning: 'ingest to a signed URL past its timestamp plus the token timeout (`--ingest-token`)',
  },
  'channel-stopped': {
    kind: 'forbidden',
    meaning: 'ingest to a stopped channel whose publishing point lacks `restart_on_encoder_reconnect`',
  },
  'ingest-media-type': {
    kind: 'unsupported-media',
    meaning: 'an ingest body with a Content-Type that is not fragmented MP4, or media the origin cannot archive',
  },
  'ingest-bad-box': {
    kind: 'bad-request',
    meaning: 'an ingest body that does not parse as fragmented MP4 (a truncated or malformed box)',
  },
  'ingest-box-too-large': {
    kind: 'bad-request',
    meaning: 'an ingest box declaring more bytes than the ingest bound (refused before it is read)',
  },
  'ingest-not-utc': {
    kind: 'bad-request',
    meaning: 'ingest times that are not on the UTC (Unix epoch) timeline within a day of now',
  },
  'ingest-no-header': {
    kind: 'precondition-failed',
    meaning: 'a fragment for a track whose header (ftyp + moov, the CMAF header) was never sent',
  },
  'ingest-header-mismatch': {
    kind: 'precondition-failed',
    meaning: "an encoder header whose track differs from the channel's (another codec, timescale or configuration)",
  },
  'ingest-idle': {
    kind: 'timeout',
    meaning: 'an ingest body that sent nothing for longer than the ingest idle timeout',
  },
  // Live output: the status is the format's, from LIVE_FRAGMENT_STATUS (404 where it says so).
  'fragment-expired': {
    kind: 'not-found',
    meaning: "a live segment older than the channel's DVR window (DASH 410, else 404: see the table below)",
  },
  'fragment-missing': {
    kind: 'not-found',
    meaning: 'a live segment inside the DVR window where the channel has no media (a gap)',
  },
  'fragment-not-yet': {
    kind: 'not-found',
    meaning:
      'a live segment past the live edge (moved back by `time_shift`), any output of a channel with no media yet, or a time range that starts after the live edge',
  },
};

export type LiveFormat = 'smooth' | 'dash' | 'hls' | 'hds';

/** A status per format per live fragment refusal: LIVE_FRAGMENT_STATUS, or `origin serve`'s own. */
export type LiveFragmentStatusTable = Readonly<Record<LiveFormat, Readonly<Record<LiveFragmentCode, number>>>>;

/**
 * The reference's per-format statuses of live fragment requests (its FragmentNotFound,
 * FragmentMissing and FragmentNotAvailable directives, origin-reference.md §8): the one place
 * where a code's status depends on the format it was asked in.
 */
export const LIVE_FRAGMENT_STATUS: LiveFragmentStatusTable = {
  smooth: { 'fragment-expired': 404, 'fragment-missing': 412, 'fragment-not-yet': 412 },
  hds: { 'fragment-expired': 404, 'fragment-missing': 503, 'fragment-not-yet': 503 },
  hls: { 'fragment-expired': 404, 'fragment-missing': 404, 'fragment-not-yet': 404 },
  dash: { 'fragment-expired': 410, 'fragment-missing': 404, 'fragment-not-yet': 404 },
};

/** Every code with its kind, HTTP status and meaning: the one table of what a client can see. */
export const ERROR_CODES: Readonly<Record<ErrorCode, Readonly<ErrorCodeSpec>>> = Object.fromEntries(
  Object.entries(SPECS).map(([code, s]) => [code, { kind: s.kind, status: HTTP_STATUS[s.kind], meaning: s.meaning }]),
) as Record<ErrorCode, ErrorCodeSpec>;

/** The table of docs/reference/errors.md, in ERROR_CODES order. */
export function errorCodesMarkdown(): string {
  const rows = Object.entries(ERROR_CODES).map(
    ([code, s]) => `| \`${code}\` | \`${s.kind}\` | ${s.status} | ${s.meaning} |`,
  );
  const formats = Object.keys(LIVE_FRAGMENT_STATUS) as LiveFormat[];
  const live = (['fragment-expired', 'fragment-missing', 'fragment-not-yet'] as const).map(
    (code) => `| \`${code}\` | ${formats.map((f) => LIVE_FRAGMENT_STATUS[f][code]).join(' | ')} |`,
  );
  return [
    '| code | kind | HTTP status | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    "Live segment refusals by format (the reference's defaults; `origin serve --fragment-expired-status`,",
    '`--fragment-missing-status` and `--fragment-not-yet-status` set others):',
    '',
    `| code | ${formats.join(' | ')} |`,
    `|---|${formats.map(() => '---|').join('')}`,
    ...live,
  ].join('\n');
}
