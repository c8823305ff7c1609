// The error a function throws, for assertions on its class, code and message.

import { OriginError } from '../../origin/errors';

/** The error a function throws; fails when it throws none. */
export function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error, none was thrown');
}

/** The OriginError a function throws; fails when it throws none, rethrows any other error. */
export function thrownOriginError(f: () => unknown): OriginError {
  const e = thrown(f);
  if (e instanceof OriginError) return e;
  throw e;
}

/** The OriginError a promise rejects with; fails when it resolves, rethrows any other error. */
export async function rejectedOriginError(p: Promise<unknown>): Promise<OriginError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OriginError) return e;
    throw e;
  }
  throw new Error('expected a rejection, the promise resolved');
}
