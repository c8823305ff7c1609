// HTTP to one storage host: the only code that talks to remote storage (http-storage.ts decides
// what to ask). Per worker and location one keep-alive Agent bounds the connections (no socket per
// request, no TIME_WAIT storm); identical requests in flight share one exchange; idempotent reads
// are retried with backoff on a reset, a short body or a 5xx; a total deadline per exchange turns a
// stalled storage into 504. Every answer is checked before anyone reads it: the status, and the
// body's length against Content-Length (a body cut short is an error, never data). S3 locations
// sign each exchange (s3-signer.ts); the rest is the same HTTP.

import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import { performance } from 'node:perf_hooks';
import { OriginError, originError } from '../../errors';
import { encodeS3 } from './s3-address';
import type { Sign } from './s3-signer';
import { outcomeOf, StorageStats } from './storage-stats';

export interface StorageClientOptions {
  /** Connections to the host kept and used at most. */
  connections: number;
  /** Deadline of one exchange (headers and the whole body), ms. */
  timeoutMs: number;
  /** Delays before the retries, ms (their count is the number of retries). */
  retryDelaysMs?: readonly number[];
  /** Signs each exchange (S3): its headers are sent instead of the given ones. */
  sign?: Sign;
  /** Where exchanges, bytes, retries, errors and durations are counted (/metrics). */
  stats?: StorageStats;
}

export interface StorageAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The whole body (empty for HEAD); shared by coalesced callers: never written to. */
  body: Buffer;
}

/** 5xx answers worth asking again (a proxy or a storage node restarting). */
const RETRY_STATUS = new Set([500, 502, 503, 504]);

/** Larger bodies are refused: segments and indexes are far smaller (a runaway storage answer). */
const MAX_BODY = 256 << 20;

export class StorageClient {
  private readonly agent: http.Agent;
  private readonly inFlight = new Map<string, Promise<StorageAnswer>>();
  private readonly retryDelays: readonly number[];
  /** Exchanges made (after coalescing, retries included) and joined: tests and benches. */
  exchanges = 0;
  joined = 0;

  constructor(
    private readonly base: URL,
    private readonly opts: StorageClientOptions,
  ) {
    const agentOptions: https.AgentOptions = {
      keepAlive: true,
      maxSockets: opts.connections,
      maxFreeSockets: opts.connections,
      // The most recently used socket first: idle ones time out instead of all staying warm.
      scheduling: 'lifo',
      timeout: 60_000,
      lookup: localhostLookup,
    };
    this.agent = base.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.retryDelays = opts.retryDelaysMs ?? [50, 200];
  }

  /**
   * `method` of `url` with `headers`; answers of any status come back (the caller decides), but a
   * reset, a short body, a timeout or a 5xx that outlasts the retries throw storage errors.
   * Identical requests in flight are made once.
   */
  request(method: 'GET' | 'HEAD', url: URL, headers: Record<string, string>): Promise<StorageAnswer> {
    const key = `${method} ${url.href}\n${JSON.stringify(headers)}`;
    const pending = this.inFlight.get(key);
    if (pending !== undefined) {
      this.joined++;
      return pending;
    }
    const answer = this.withRetries(method, url, headers);
    this.inFlight.set(key, answer);
    const forget = (): void => void this.inFlight.delete(key);
    answer.then(forget, (e: unknown) => {
      forget();
      this.opts.stats?.error(e instanceof OriginError ? e.code : 'internal');
    });
    return answer;
  }

  private async withRetries(method: 'GET' | 'HEAD', url: URL, headers: Record<string, string>): Promise<StorageAnswer> {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.retryDelays.length;
      try {
        const a = await this.measured(method, url, headers);
        if (!RETRY_STATUS.has(a.status)) return a;
        if (last) throw originError('storage-unavailable', `storage answered ${a.status} to ${method} ${url.href}`);
      } catch (e) {
        // A timeout is not retried: the answer would come after twice the bound.
        if (last || !(e instanceof OriginError) || e.code !== 'storage-unavailable') throw e;
      }
      await new Promise((r) => setTimeout(r, this.retryDelays[attempt]));
      if (this.opts.stats !== undefined) this.opts.stats.retries++;
    }
  }

  /** An exchange, counted in the stats: its outcome, body bytes and duration. */
  private async measured(method: string, url: URL, headers: Record<string, string>): Promise<StorageAnswer> {
    const stats = this.opts.stats;
    if (stats === undefined) return this.exchange(method, url, headers);
    const started = performance.now();
    try {
      const a = await this.exchange(method, url, headers);
      stats.exchange(outcomeOf(a.status), (performance.now() - started) / 1000, a.body.byteLength);
      return a;
    } catch (e) {
      const timeout = e instanceof OriginError && e.code === 'storage-timeout';
      stats.exchange(timeout ? 'timeout' : 'failed', (performance.now() - started) / 1000, 0);
      throw e;
    }
  }

  private async exchange(method: string, url: URL, given: Record<string, string>): Promise<StorageAnswer> {
    this.exchanges++;
    const lib = url.protocol === 'https:' ? https : http;
    const headers = this.opts.sign === undefined ? given : await this.opts.sign(method, url, given);
    return new Promise((resolve, reject) => {
      let settled = false;
      const done = (e: Error | undefined, a?: StorageAnswer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (e !== undefined) reject(e);
        else resolve(a!);
      };
      const req = lib.request(url, { method, headers, agent: this.agent });
      const timer = setTimeout(() => {
        done(originError('storage-timeout', `no whole answer to ${method} ${url.href} in ${this.opts.timeoutMs} ms`));
        req.destroy();
      }, this.opts.timeoutMs);
      req.on('error', (e) => done(unreachable(method, url, e)));
      req.on('response', (res) => {
        const declared = res.headers['content-length'];
        const expected = declared === undefined ? undefined : Number(declared);
        // A HEAD's Content-Length is the object's size, not a body: any size is fine.
        const bound = method === 'HEAD' ? Number.MAX_SAFE_INTEGER : MAX_BODY;
        if (expected !== undefined && !(Number.isSafeInteger(expected) && expected >= 0 && expected <= bound)) {
          res.destroy();
          return done(originError('storage-error', `storage sent Content-Length "${declared}" for ${url.href}`));
        }
        const chunks: Buffer[] = [];
        let length = 0;
        res.on('data', (c: Buffer) => {
          length += c.byteLength;
          if (length > MAX_BODY || (expected !== undefined && length > expected)) {
            res.destroy();
            return done(originError('storage-error', `storage sent more than announced for ${url.href}`));
          }
          chunks.push(c);
        });
        res.on('error', (e) => done(unreachable(method, url, e)));
        res.on('close', () => {
          // 'close' without a complete message: the connection ended mid-body (a short read).
          if (!res.complete || (method !== 'HEAD' && expected !== undefined && length !== expected))
            return done(
              originError('storage-unavailable', `the answer to ${method} ${url.href} was cut off at ${length} bytes`),
            );
          done(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks, length) });
        });
      });
      req.end();
    });
  }

  /**
   * The URL of a path relative to the base, each segment percent-encoded as S3's canonical URI
   * does (what is sent is what is signed; any HTTP server decodes it the same).
   */
  urlOf(relative: readonly string[]): URL {
    return new URL(relative.map(encodeS3).join('/'), this.base);
  }

  /** Closes the kept connections (a reload dropped this location, or the server stops). */
  close(): void {
    this.agent.destroy();
  }

  /** Sockets open to the host now (in use and idle): tests and /metrics. */
  get sockets(): number {
    let n = 0;
    for (const list of Object.values(this.agent.sockets)) n += list?.length ?? 0;
    for (const list of Object.values(this.agent.freeSockets)) n += list?.length ?? 0;
    return n;
  }
}

/**
 * `*.localhost` names resolve to loopback (RFC 6761 §6.3), whatever the resolver says: an S3
 * store on this machine in virtual-host style (`bucket.s3.localhost`) without a hosts entry.
 */
function localhostLookup(
  hostname: string,
  options: dns.LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
): void {
  if (!hostname.endsWith('.localhost')) return void dns.lookup(hostname, options, callback);
  if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}

function unreachable(method: string, url: URL, e: Error): OriginError {
  if (e instanceof OriginError) return e;
  const code = (e as NodeJS.ErrnoException).code ?? e.message;
  return originError('storage-unavailable', `${method} ${url.href}: ${code}`);
}
