// The origin's error: a kind (which decides the HTTP status, or the CLI's exit code) and a code (what
// a client reads in `X-Origin-Error`), from the closed sets of origin/error-codes.ts. Code anywhere
// throws `originError(code, message, { subject })`; the HTTP layer and the CLI are the only places that turn
// an error into a status or an exit code.

import { ERROR_CODES, ErrorCode, ErrorKind, HTTP_STATUS, LIVE_FRAGMENT_STATUS, LiveFragmentCode } from './error-codes';

export type { ErrorCode, ErrorKind } from './error-codes';

/** The kinds whose generic code is their own name: every kind but too-long (its one code is url-too-long). */
type GenericKind = ErrorKind & ErrorCode;

export interface OriginErrorOptions {
  /** What the error is about: a file name, an option name, a box path. */
  subject?: string;
}

export class OriginError extends Error {
  readonly kind: ErrorKind;
  /** What the error is about: a file name, an option name, a box path. */
  readonly subject: string | undefined;
  /** Stable machine-readable code (HTTP `X-Origin-Error`), one of ERROR_CODES. */
  readonly code: ErrorCode;
  /** The HTTP status when it is not the kind's: a live fragment refusal's format status (liveFragmentError). */
  status?: number;

  /**
   * Code throws originError(); this positional form stays for host-glue/, whose errors carry their
   * kind's generic code.
   */
  constructor(kind: GenericKind, message: string, subject?: string);
  constructor(kind: ErrorKind, message: string, subject: string | undefined, code: ErrorCode);
  constructor(kind: ErrorKind, message: string, subject?: string, code?: ErrorCode) {
    super(subject !== undefined ? `${subject}: ${message}` : message);
    this.name = 'OriginError';
    this.kind = kind;
    this.subject = subject;
    this.code = code ?? (kind as GenericKind);
  }

  /** The same error, attributed to an outer subject (e.g. the file a box error came from). */
  within(subject: string): OriginError {
    return new OriginError(this.kind, this.message, subject, this.code);
  }
}

/** The error of `code` (its kind from ERROR_CODES); the message reads "subject: message". */
export function originError(code: ErrorCode, message: string, opts: OriginErrorOptions = {}): OriginError {
  return new OriginError(ERROR_CODES[code].kind, message, opts.subject, code);
}

export function httpStatusOf(error: unknown): number {
  return error instanceof OriginError ? (error.status ?? HTTP_STATUS[error.kind]) : 500;
}

/** A live segment refused with the status the format's column of LIVE_FRAGMENT_STATUS gives. */
export function liveFragmentError(
  code: LiveFragmentCode,
  format: keyof typeof LIVE_FRAGMENT_STATUS,
  message: string,
): OriginError {
  const e = originError(code, message);
  e.status = LIVE_FRAGMENT_STATUS[format][code];
  return e;
}

export function isOriginError(error: unknown): error is OriginError {
  return error instanceof OriginError;
}
