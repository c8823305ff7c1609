// Remote storage over HTTP (`proxy_pass`): the Storage of one location. A path under the
// location's directory (root + prefix) is a URL under the storage's base; stat is a HEAD whose
// validators are trusted for `revalidateMs`, the .ism one GET, a source a RemoteSource of range
// reads (remote-source.ts). Consistency: the index of a source is read, and every later range read
// of it made, with `If-Match: <its ETag>` (RFC 9110 §13.1.1), so bytes of a replaced object never
// meet an index of the old one: storage answers 412, the read fails with storage-changed, and the
// server drops the index and tries once more (server/handlers.ts handlePlayout). A storage that
// ignores If-Match (s3rver, some S3-compatible stores) is caught by the answer's own ETag: a range
// answered with another strong ETag than the one asked for is the same storage-changed.
//
// An S3 location (`proxy_pass: s3://bucket/prefix/`) is this same storage under the bucket's HTTP
// base URL (s3-address.ts), its requests signed (s3-signer.ts) with the location's credentials
// (s3-credentials.ts); S3 answers HEAD, ranges, ETags and If-Match as any HTTP storage does.

import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { OriginError, originError } from '../../errors';
import type { FileStat } from '../storage';
import type { ByteSource } from '../source';
import { StorageAnswer, StorageClient } from './storage-client';
import { InFlightRanges } from './in-flight-ranges';
import { RemoteSource } from './remote-source';
import { resolveCredentials, S3Credentials } from './s3-credentials';
import { s3Signer } from './s3-signer';
import type { StorageStats } from './storage-stats';

/** An S3 location's signing settings. */
export interface S3Signing {
  region: string;
  /** The shared credentials file's profile; unset: the environment's keys, else AWS_PROFILE or "default". */
  profile?: string;
}

export interface HttpStorageOptions {
  /** Absolute local path of the location (root + prefix), ending with the path separator. */
  dir: string;
  /** The storage directory URL (ends with '/'). */
  base: string;
  connections: number;
  timeoutMs: number;
  revalidateMs: number;
  retryDelaysMs?: readonly number[];
  /** Set for S3 locations: every request is signed (SigV4). */
  s3?: S3Signing;
  /** How long a path storage does not have (404/410) is taken as missing without asking again, ms; 0: not. */
  negativeTtlMs?: number;
  /** Counters for /metrics (shared by the locations of one backend kind). */
  stats?: StorageStats;
}

interface Known {
  until: number;
  stat: Promise<FileStat>;
  /** The stat failed with not-found: kept for negativeTtlMs. */
  missing?: boolean;
}

/** Validators trusted at most this many paths per location (a bound, then forgotten at once). */
const MAX_KNOWN = 16384;

export class HttpStorage {
  readonly client: StorageClient;
  /** Whether the storage is reached over TLS (a presentation with keys needs it). */
  readonly secure: boolean;
  private readonly known = new Map<string, Known>();
  /** Range reads in flight, joined by the reads they contain (in-flight-ranges.ts). */
  readonly reads = new InFlightRanges();

  constructor(readonly opts: HttpStorageOptions) {
    const base = new URL(opts.base);
    this.secure = base.protocol === 'https:';
    const sign =
      opts.s3 === undefined ? undefined : s3Signer({ region: opts.s3.region, credentials: credentialsOf(opts.s3) });
    this.client = new StorageClient(base, { ...opts, sign });
  }

  /** Whether an absolute path is this location's. */
  holds(p: string): boolean {
    return p.startsWith(this.opts.dir);
  }

  private urlOf(p: string): URL {
    return this.client.urlOf(p.slice(this.opts.dir.length).split(path.sep));
  }

  /**
   * Size and validators of `p`, trusted for `revalidateMs`. A miss (404/410) is remembered for
   * `negativeTtlMs` (short: a file uploaded after a request for it shows up that much later), so
   * a client asking again and again for a missing presentation costs storage one HEAD per TTL.
   */
  stat(p: string): Promise<FileStat> {
    const now = performance.now();
    const hit = this.known.get(p);
    if (hit !== undefined && hit.until > now) {
      if (hit.missing === true && this.opts.stats !== undefined) this.opts.stats.negativeHits++;
      return hit.stat;
    }
    const stat = this.head(p);
    if (this.known.size >= MAX_KNOWN) this.known.clear();
    const entry: Known = { until: now + this.opts.revalidateMs, stat };
    this.known.set(p, entry);
    const negativeMs = this.opts.negativeTtlMs ?? 0;
    stat.catch((e: unknown) => {
      if (this.known.get(p) !== entry) return;
      if (negativeMs > 0 && e instanceof OriginError && e.code === 'not-found') {
        entry.missing = true;
        entry.until = performance.now() + negativeMs;
      } else this.known.delete(p);
    });
    return stat;
  }

  /** Forgets what is known of `p` (its object changed under a read): the next stat asks storage. */
  forget(p: string): void {
    this.known.delete(p);
  }

  private async head(p: string): Promise<FileStat> {
    const a = await this.client.request('HEAD', this.urlOf(p), {});
    if (a.status !== 200) throw this.statusError(p, 'HEAD', a);
    const size = Number(a.headers['content-length']);
    if (!Number.isSafeInteger(size) || size < 0)
      throw originError('storage-error', `HEAD ${this.urlOf(p).href}: no usable Content-Length`);
    const lastModified = a.headers['last-modified'];
    const mtimeMs = lastModified === undefined ? 0 : Date.parse(lastModified) || 0;
    return { mtimeMs, size, version: versionOf(a) };
  }

  async readText(p: string, version?: string): Promise<string> {
    const a = await this.client.request('GET', this.urlOf(p), conditionOf(version));
    if (a.status !== 200) throw this.statusError(p, 'GET', a);
    return a.body.toString('utf8');
  }

  async open(p: string, version?: string): Promise<ByteSource> {
    const stat = await this.stat(p);
    // A source opened without the index's validator takes the one storage has now.
    const v = version ?? stat.version;
    // Without a validator no read can be shown to be of the same object as another: none is joined.
    if (v === undefined) return new RemoteSource(p, stat.size, (offset, length) => this.range(p, offset, length, v));
    return new RemoteSource(p, stat.size, (offset, length) =>
      this.reads.read(p, v, offset, length, (at, n) => this.range(p, at, n, v)),
    );
  }

  /** Exactly `length` bytes at `offset` of the object `version` names. */
  private async range(p: string, offset: number, length: number, version: string | undefined): Promise<Uint8Array> {
    const url = this.urlOf(p);
    const end = offset + length - 1;
    const a = await this.client.request('GET', url, { Range: `bytes=${offset}-${end}`, ...conditionOf(version) });
    if (a.status === 206) {
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(a.headers['content-range'] ?? ''));
      if (m === null || Number(m[1]) !== offset || Number(m[2]) !== end || a.body.byteLength !== length)
        throw originError(
          'storage-error',
          `GET ${url.href}: asked bytes ${offset}-${end}, got "${a.headers['content-range']}"`,
        );
      this.checkVersion(p, version, a);
      return a.body;
    }
    // A storage that ignores Range answers the whole object: usable when that is what was asked.
    if (a.status === 200 && offset === 0 && a.body.byteLength === length) {
      this.checkVersion(p, version, a);
      return a.body;
    }
    throw this.statusError(p, `GET (bytes ${offset}-${end})`, a);
  }

  /** Bytes of another object than the one asked for (If-Match ignored): storage-changed. */
  private checkVersion(p: string, version: string | undefined, a: StorageAnswer): void {
    const etag = a.headers.etag;
    if (version === undefined || !version.startsWith('"') || etag === undefined || etag === version) return;
    this.forget(p);
    this.opts.stats?.error('storage-changed');
    throw originError('storage-changed', `GET ${this.urlOf(p).href}: ETag ${etag}, the index read ${version}`, {
      subject: p,
    });
  }

  private statusError(p: string, what: string, a: StorageAnswer): Error {
    const e = this.statusErrorOf(p, what, a);
    this.opts.stats?.error(e.code);
    return e;
  }

  private statusErrorOf(p: string, what: string, a: StorageAnswer): OriginError {
    const where = `${what} ${this.urlOf(p).href}`;
    if (a.status === 404 || a.status === 410) return originError('not-found', 'no such file', { subject: p });
    if (a.status === 401 || a.status === 403)
      return originError('storage-denied', `${where}: storage refused the origin (${a.status}${s3Code(a)})`);
    if (a.status === 412) {
      this.forget(p);
      return originError('storage-changed', `${where}: the object changed since it was indexed (412)`, { subject: p });
    }
    return originError('storage-error', `${where}: storage answered ${a.status}`);
  }

  close(): void {
    this.client.close();
  }
}

/**
 * The validator of an answer, as FileStat.version: a strong ETag as it came (If-Match takes it),
 * else the Last-Modified date marked `lm:` (If-Unmodified-Since); a weak ETag never matches in
 * If-Match (RFC 9110 §13.1.1), so it is not used for one.
 */
function versionOf(a: StorageAnswer): string | undefined {
  const etag = a.headers.etag;
  if (etag !== undefined && etag.startsWith('"')) return etag;
  const lastModified = a.headers['last-modified'];
  return lastModified === undefined ? undefined : `lm:${lastModified}`;
}

/** `: <Code>` of an S3 error body (InvalidAccessKeyId, SignatureDoesNotMatch, AccessDenied...). */
function s3Code(a: StorageAnswer): string {
  const m = /<Code>([A-Za-z]{1,64})<\/Code>/.exec(a.body.subarray(0, 4096).toString('utf8'));
  return m === null ? '' : ` ${m[1]}`;
}

/**
 * The credentials of an S3 location, asked for once and kept; a failure is not kept (the next
 * request reads the environment and the file again: a credentials file put in place later works).
 */
function credentialsOf(s3: S3Signing): () => Promise<S3Credentials> {
  let kept: Promise<S3Credentials> | undefined;
  return () => {
    if (kept === undefined) {
      const asked = resolveCredentials(s3.profile);
      kept = asked;
      asked.catch(() => {
        if (kept === asked) kept = undefined;
      });
    }
    return kept;
  };
}

function conditionOf(version: string | undefined): Record<string, string> {
  if (version === undefined) return {};
  return version.startsWith('lm:') ? { 'If-Unmodified-Since': version.slice(3) } : { 'If-Match': version };
}
