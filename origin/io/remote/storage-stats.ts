// What remote storage cost, per backend kind (`http` for http(s):// locations, `s3` for s3://):
// the counters /metrics shows as origin_storage_* (origin/ops/metrics.ts, listed in
// docs/guide/operations.md). One StorageStats per kind and server, shared by every location of
// that kind and kept across reloads, so the counters only grow. Plain numbers and a typed array:
// an exchange adds a few of them, no label objects.

/** Upper bounds of the storage-exchange duration buckets, seconds. */
export const STORAGE_DURATION_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

export type BackendKind = 'http' | 's3';

/** How an exchange ended: its status class, or no answer at all. */
export const OUTCOMES = ['2xx', '3xx', '4xx', '5xx', 'failed', 'timeout'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The codes storage failures usually carry: their series start at 0 (others appear when counted). */
export const STORAGE_ERROR_CODES = [
  'not-found',
  'storage-unavailable',
  'storage-error',
  'storage-denied',
  'storage-changed',
  'storage-timeout',
] as const;

export class StorageStats {
  /** Exchanges with storage by outcome (retries included, coalesced joins not). */
  readonly exchanges: Record<Outcome, number> = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, failed: 0, timeout: 0 };
  /** Body bytes received from storage. */
  bytes = 0;
  /** Exchanges made again after a reset, a short body or a 5xx. */
  retries = 0;
  /** Reads that failed for their caller (after the retries), by error code (the usual ones from 0). */
  readonly errors = new Map<string, number>(STORAGE_ERROR_CODES.map((c) => [c, 0]));
  /** Stats answered from the remembered misses (`proxy_negative_ttl_ms`) without asking storage. */
  negativeHits = 0;
  /** Exchange durations: counts per bucket (the last is +Inf) and their sum, seconds. */
  readonly buckets = new Float64Array(STORAGE_DURATION_BUCKETS.length + 1);
  seconds = 0;

  exchange(outcome: Outcome, seconds: number, bytes: number): void {
    this.exchanges[outcome]++;
    this.bytes += bytes;
    let b = 0;
    while (b < STORAGE_DURATION_BUCKETS.length && seconds > STORAGE_DURATION_BUCKETS[b]!) b++;
    this.buckets[b]!++;
    this.seconds += seconds;
  }

  error(code: string): void {
    this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
  }
}

/** The outcome of an answer's status. */
export function outcomeOf(status: number): Outcome {
  if (status >= 200 && status < 300) return '2xx';
  if (status >= 300 && status < 400) return '3xx';
  if (status >= 400 && status < 500) return '4xx';
  return '5xx';
}
