// The closed set of answers the edge plugin gives instead of passing a request on, and their
// one mapping to HTTP (CONTRIBUTING.md design rule 7): status, the response-code details Envoy logs
// (`%RESPONSE_CODE_DETAILS%`, docs/specs.md ABI §2.6) and the
// `x-origin-error` code a client can switch on. Codes the origin also uses (bad-path,
// url-too-long, bad-query, bad-filter) mean the same thing there, so a client sees one
// vocabulary with or without the edge.

export enum Refusal {
  /** Path shape the edge refuses before any rule: dot segments, `//`, encoded `.` `/` `\` NUL, ... */
  BadPath = 0,
  /** Path longer than MAX_PATH_BYTES (the origin's bound and status). */
  UrlTooLong,
  /** Query longer than MAX_QUERY_BYTES, bad percent-encoding, characters no URL carries. */
  BadQuery,
  /** validate_filter: `filter=` does not parse. */
  BadFilter,
  /** auth_token: no token, or not <32 hex>/<8 hex>/ after the prefix (mod_auth_token: 401). */
  TokenMalformed,
  /** auth_token: now > timestamp + timeout (mod_auth_token: 410 Gone). */
  TokenExpired,
  /** auth_token: the hash is not MD5(secret + path + timestamp) (mod_auth_token: 403). */
  TokenMismatch,
  /** auth_token: the timestamp is further ahead of the edge's clock than the allowed skew. */
  TokenFuture,
  /** auth_basic: no usable credentials. */
  BasicMissing,
  /** auth_basic: unknown user or wrong password (the same answer, on purpose). */
  BasicFailed,
  /** A rewrite rule produced a path the edge would refuse from a client. */
  RewriteBadPath, // the last one: REFUSAL_KINDS counts up to it
}

/** How many refusals there are (the enum runs 0 .. REFUSAL_KINDS - 1). */
export const REFUSAL_KINDS: i32 = <i32>Refusal.RewriteBadPath + 1;

/** The `reason` of the refusal counter (edge/metrics.ts): the details without `edge_`. */
export function refusalReason(r: Refusal): string {
  return refusalDetails(r).substring(5);
}

export function refusalStatus(r: Refusal): u32 {
  switch (r) {
    case Refusal.UrlTooLong:
      return 414;
    case Refusal.TokenMalformed:
      return 401;
    case Refusal.TokenExpired:
      return 410;
    case Refusal.TokenMismatch:
      return 403;
    case Refusal.TokenFuture:
      return 403;
    case Refusal.BasicMissing:
      return 401;
    case Refusal.BasicFailed:
      return 401;
    default:
      return 400;
  }
}

/** Envoy response-code details (no spaces: Envoy would turn them into '_'). */
export function refusalDetails(r: Refusal): string {
  switch (r) {
    case Refusal.BadPath:
      return 'edge_bad_path';
    case Refusal.UrlTooLong:
      return 'edge_url_too_long';
    case Refusal.BadQuery:
      return 'edge_bad_query';
    case Refusal.BadFilter:
      return 'edge_bad_filter';
    case Refusal.TokenMalformed:
      return 'edge_token_malformed';
    case Refusal.TokenExpired:
      return 'edge_token_expired';
    case Refusal.TokenMismatch:
      return 'edge_token_mismatch';
    case Refusal.TokenFuture:
      return 'edge_token_future';
    case Refusal.BasicMissing:
      return 'edge_basic_auth_missing';
    case Refusal.BasicFailed:
      return 'edge_basic_auth_failed';
    default:
      return 'edge_rewrite_bad_path';
  }
}

/** The `x-origin-error` value. */
export function refusalCode(r: Refusal): string {
  switch (r) {
    case Refusal.BadPath:
      return 'bad-path';
    case Refusal.UrlTooLong:
      return 'url-too-long';
    case Refusal.BadQuery:
      return 'bad-query';
    case Refusal.BadFilter:
      return 'bad-filter';
    case Refusal.TokenMalformed:
      return 'token-malformed';
    case Refusal.TokenExpired:
      return 'token-expired';
    case Refusal.TokenMismatch:
      return 'token-invalid';
    case Refusal.TokenFuture:
      return 'token-not-yet-valid';
    case Refusal.BasicMissing:
      return 'unauthorized';
    case Refusal.BasicFailed:
      return 'unauthorized';
    default:
      return 'bad-path';
  }
}

/** What a request ended as: passed on (possibly with a new `:path`) or refused. */
export class Verdict {
  /** A refusal, or -1 when the request goes on. */
  refusal: i32 = -1;
  /** One line for the body and the debug log (no secrets, no credentials). */
  message: string = '';
  /** The `:path` to send upstream (path and query, percent-encoded), when it goes on. */
  target: string = '';
  /** auth_basic refusals: the WWW-Authenticate value. */
  challenge: string = '';

  static pass(target: string): Verdict {
    const v = new Verdict();
    v.target = target;
    return v;
  }

  static refuse(refusal: Refusal, message: string): Verdict {
    const v = new Verdict();
    v.refusal = <i32>refusal;
    v.message = message;
    return v;
  }

  /** A rewrite rule matched (an alias hit), whether or not its result was then refused. */
  rewritten: bool = false;
  /** validate_filter: `filter=` values answered from the cache of checked filters, and checked anew. */
  filterHits: i32 = 0;
  filterMisses: i32 = 0;

  get refused(): bool {
    return this.refusal >= 0;
  }
}
