// The closed set of error kinds of the whole origin, and their one mapping to HTTP status
// (house style §7). Code anywhere throws an OriginError with a kind; the HTTP layer and the CLI
// are the only places that turn a kind into a status code or an exit code.

export type ErrorKind =
  | 'bad-request' // malformed URL, query parameter or option value
  | 'not-found' // no such presentation, track or fragment
  | 'unsupported-media' // a codec or layout we do not handle (the reference answers 415)
  | 'corrupt-media' // bytes that do not parse as the format they claim to be
  | 'io' // storage could not be read or written
  | 'forbidden'
  | 'method-not-allowed' // only GET and HEAD exist
  | 'too-long' // a URL beyond the bound we read
  | 'internal';

const HTTP_STATUS: Record<ErrorKind, number> = {
  'bad-request': 400,
  forbidden: 403,
  'not-found': 404,
  'unsupported-media': 415,
  'method-not-allowed': 405,
  'too-long': 414,
  'corrupt-media': 500,
  io: 500,
  internal: 500,
};

export class OriginError extends Error {
  readonly kind: ErrorKind;
  /** What the error is about: a file name, an option name, a box path. */
  readonly subject: string | undefined;
  /** Stable machine-readable code (HTTP `X-Origin-Error`); defaults to the kind. */
  readonly code: string;

  constructor(kind: ErrorKind, message: string, subject?: string, code?: string) {
    super(subject !== undefined ? `${subject}: ${message}` : message);
    this.name = 'OriginError';
    this.kind = kind;
    this.subject = subject;
    this.code = code ?? kind;
  }

  /** The same error, attributed to an outer subject (e.g. the file a box error came from). */
  within(subject: string): OriginError {
    return new OriginError(this.kind, this.message, subject, this.code);
  }
}

export function httpStatusOf(error: unknown): number {
  return error instanceof OriginError ? HTTP_STATUS[error.kind] : 500;
}

export function isOriginError(error: unknown): error is OriginError {
  return error instanceof OriginError;
}
