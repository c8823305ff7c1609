// Reads the capture's inputs: `file://` from disk, `http(s)://` with retries, so a capture survives
// an origin or a storage that restarts under it (what the issue calls resumable: the segment that
// failed is asked for again and the capture goes on from there). A 5xx, a timeout or a broken
// connection is retried with a growing wait; a 4xx is an answer and is not. Messages name the URL
// without its query, which may carry a token.

import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { originError } from '../errors';

export interface FetchOptions {
  /** Attempts after the first before giving up. */
  retries: number;
  /** Wait before the first retry, doubled each time up to 4 s. */
  firstWaitMs: number;
  /** Per request. */
  timeoutMs: number;
  onRetry: (line: string) => void;
}

export const DEFAULT_FETCH: Omit<FetchOptions, 'onRetry'> = { retries: 10, firstWaitMs: 250, timeoutMs: 30_000 };

/** Cap on one manifest or segment body: a segment is seconds of media, never a gigabyte. */
const MAX_BODY_BYTES = 256 << 20;

export function shownUrl(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?…`;
}

class Retryable extends Error {}

export async function fetchBytes(url: string, opts: FetchOptions): Promise<Uint8Array> {
  if (url.startsWith('file:')) return readLocal(url);
  let wait = opts.firstWaitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetchOnce(url, opts.timeoutMs);
    } catch (e) {
      if (!(e instanceof Retryable)) throw e;
      if (attempt >= opts.retries)
        throw originError('storage-unavailable', `${shownUrl(url)}: ${e.message}, still after ${opts.retries} retries`);
      opts.onRetry(
        `retrying ${shownUrl(url)} in ${(wait / 1000).toFixed(2)} s: ${e.message} (${attempt + 1}/${opts.retries})`,
      );
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 4000);
    }
  }
}

export async function fetchText(url: string, opts: FetchOptions): Promise<string> {
  return Buffer.from(await fetchBytes(url, opts)).toString('utf8');
}

async function fetchOnce(url: string, timeoutMs: number): Promise<Uint8Array> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    throw new Retryable(cause ?? (e as Error).name ?? 'network error');
  }
  if (res.status >= 500 || res.status === 408 || res.status === 429) {
    await res.body?.cancel();
    throw new Retryable(`HTTP ${res.status}`);
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    const code = res.status === 404 || res.status === 410 ? 'not-found' : 'storage-error';
    throw originError(code, `${shownUrl(url)}: HTTP ${res.status} ${res.headers.get('x-origin-error') ?? ''}`.trim());
  }
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES)
    throw originError('segment-too-large', `${shownUrl(url)}: ${declared} bytes, over ${MAX_BODY_BYTES}`);
  try {
    return new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    // A body cut short (the server died mid-answer) is a network error like any other.
    throw new Retryable(`body cut short (${(e as Error).message})`);
  }
}

async function readLocal(url: string): Promise<Uint8Array> {
  const file = fileURLToPath(url);
  try {
    return await fs.readFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'not-found' : 'io';
    throw originError(code, `${file}: ${(e as Error).message}`);
  }
}
