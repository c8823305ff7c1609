// Why key acquisition failed: a closed set, so a caller (and a test) can tell the failures apart
// and the CLI reports every one the same way (exit code 1, origin/cli/main.ts). A message never
// carries a key, the signing key or IV, or the key server's answer: only its status, the field
// that is wrong and why.

export type KeyServerFailure =
  /** No connection (refused, unknown host, reset before an answer). */
  | 'unreachable'
  /** No complete answer within the timeout. */
  | 'timeout'
  /** An HTTP status other than 200. */
  | 'http-status'
  /** The answer's `status` is not "OK" (and not a signature failure). */
  | 'status'
  /** The key server rejected the request's signature. */
  | 'signature'
  /** The answer is not JSON, lacks a field, has bad Base64 or a key of the wrong length. */
  | 'malformed'
  /** More than one key pair where one is used (several keys are CPIX's job). */
  | 'several-keys';

export class KeyServerError extends Error {
  constructor(
    readonly failure: KeyServerFailure,
    message: string,
  ) {
    super(message);
    this.name = 'KeyServerError';
  }

  /** The same failure, its message prefixed with the key server it came from. */
  at(where: string): KeyServerError {
    return new KeyServerError(this.failure, `key server ${where}: ${this.message}`);
  }
}

export const keyServerError = (failure: KeyServerFailure, message: string): KeyServerError =>
  new KeyServerError(failure, message);
