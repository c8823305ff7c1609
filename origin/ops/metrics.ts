// The origin's metrics: what a Prometheus server scrapes from /metrics (docs/guide/operations.md
// lists them). A request adds to plain typed arrays (request(): no label hashing, no object made);
// the registry's collectors read those, and the caches' and pools' own counters, when a scrape
// asks. prom-client's labelled metrics cost 1 to 1.8 µs of CPU a request for the same three
// series (inc, inc, observe with label objects; measured on the bench machine) against about 40 ns
// here, next to the ~23 µs of a cached manifest.
// prom-client writes the exposition format and merges the workers' series (cluster-metrics.ts).
// Every label has a bounded set of values: the route kinds (origin/server/routes.ts) and four
// more, the status codes the server sends, the names of the caches and pools; never a URL, a
// presentation or anything else a client chooses.

import { IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { VERSION } from '../version';
import { BackendKind, OUTCOMES, STORAGE_DURATION_BUCKETS, StorageStats } from '../io/remote/storage-stats';

/** Upper bounds of the request-duration buckets, seconds (a cached manifest: the first few). */
export const DURATION_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Request kinds besides the route kinds: files, the player page, these endpoints, and the rest. */
export const OTHER_KINDS = ['static', 'player', 'ops', 'other'] as const;

export type CacheName =
  'manifest' | 'presentation' | 'media-index' | 'view' | 'segment-boxes' | 'encryption-layout' | 'encrypted-segment';
export type PoolName = 'segment' | 'stream';

export interface CacheFigures {
  hits: number;
  misses: number;
  evictions: number;
  entries: number;
  /** Bytes held; undefined for a cache bounded by its number of entries. */
  bytes: number | undefined;
}

/** What the collectors read at a scrape: the server's caches, coalescer, handles and pools. */
export interface MetricSources {
  caches(): Record<CacheName, CacheFigures>;
  coalesced(): number;
  sourceHandles(): number;
  pools(): Record<PoolName, { idle: number; lent: number }>;
  /** Remote storage's counters per backend kind (undefined: no remote location). */
  storage?(): Readonly<Record<BackendKind, StorageStats>> | undefined;
}

/** One sample of a family, as prom-client's registries exchange them. */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

type Aggregator = 'sum' | 'max';

/** The event-loop monitor's period, ms. */
const LOOP_RESOLUTION_MS = 10;

/** Status codes 100..599, one slot each. */
const STATUSES = 500;
const BUCKETS = DURATION_BUCKETS.length + 1;

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export class OriginMetrics {
  /** The origin's series; include() adds other registries (the edge plugin's) to what /metrics shows. */
  readonly registry = new Registry();
  private readonly extra: Registry[] = [];
  private readonly kinds: readonly string[];
  private readonly slot: Readonly<Record<string, number>>;
  private readonly other: number;
  private readonly requests: Float64Array;
  private readonly bytes: Float64Array;
  private readonly aborted: Float64Array;
  private readonly buckets: Float64Array;
  private readonly sums: Float64Array;
  private readonly loop: IntervalHistogram;
  private sources: MetricSources | undefined;
  /**
   * Where /metrics gets its text: this process's series, or, in a worker of `origin serve
   * --workers`, every worker's summed by the primary (cluster-metrics.ts sets it).
   */
  scrape: () => Promise<string> = () => this.text();

  /** `routeKinds`: the kinds of origin/server/routes.ts; OTHER_KINDS are added. */
  constructor(routeKinds: readonly string[]) {
    this.kinds = [...routeKinds, ...OTHER_KINDS];
    this.slot = Object.fromEntries(this.kinds.map((k, i) => [k, i]));
    this.other = this.kinds.length - 1;
    const n = this.kinds.length;
    this.requests = new Float64Array(n * STATUSES);
    this.bytes = new Float64Array(n);
    this.aborted = new Float64Array(n);
    this.buckets = new Float64Array(n * BUCKETS);
    this.sums = new Float64Array(n);
    this.loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.loop.enable();
    this.register();
  }

  /** One answered request: its kind, status, body bytes sent, seconds taken, and whether the client left first. */
  request(kind: string, status: number, bytes: number, seconds: number, aborted: boolean): void {
    const k = this.slot[kind] ?? this.other;
    this.requests[k * STATUSES + (status >= 100 && status < 600 ? status - 100 : 0)]!++;
    this.bytes[k]! += bytes;
    if (aborted) this.aborted[k]!++;
    let b = 0;
    while (b < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[b]!) b++;
    this.buckets[k * BUCKETS + b]!++;
    this.sums[k]! += seconds;
  }

  /** The server's caches and pools, read at each scrape. */
  bind(sources: MetricSources): void {
    this.sources = sources;
  }

  /**
   * Shows another registry's series on /metrics too, summed over workers like the origin's: how
   * the edge plugin's counters (proxy_define_metric) join the origin's under `origin serve
   * --edge-config`. Its names must not clash with the origin's (`origin_`) or the process's.
   */
  include(registry: Registry): void {
    if (!this.extra.includes(registry)) this.extra.push(registry);
  }

  /** The process's own series (CPU, memory, descriptors, heap, GC: prom-client's defaults), once per process. */
  includeProcessMetrics(): void {
    this.include(processRegistry());
  }

  /** Every series of this process, as registries exchange them (a worker's answer to its primary). */
  async json(): Promise<Awaited<ReturnType<Registry['getMetricsAsJSON']>>> {
    const all = await Promise.all([this.registry, ...this.extra].map((r) => r.getMetricsAsJSON()));
    return all.flat();
  }

  /** This process's series in the Prometheus text format. */
  text(): Promise<string> {
    return Registry.merge([this.registry, ...this.extra]).metrics();
  }

  /** Stops the event-loop monitor (the server closed). */
  close(): void {
    this.loop.disable();
  }

  private register(): void {
    const family = (name: string, help: string, type: string, aggregator: Aggregator, values: () => Sample[]): void =>
      addFamily(this.registry, { name, help, type, aggregator, values });
    const perKind = (values: Float64Array): Sample[] =>
      this.kinds.flatMap((kind, k) => (values[k]! > 0 ? [{ labels: { kind }, value: values[k]! }] : []));
    family('origin_build_info', 'The origin version: 1.', 'gauge', 'max', () => [
      { labels: { version: VERSION }, value: 1 },
    ]);
    family('origin_http_requests_total', 'Requests answered, by route kind and status.', 'counter', 'sum', () =>
      this.requestSamples(),
    );
    family(
      'origin_http_request_duration_seconds',
      'Time from a request to its last byte, by route kind.',
      'histogram',
      'sum',
      () => this.durationSamples(),
    );
    family(
      'origin_http_response_bytes_total',
      'Body bytes of the responses sent in full, by route kind.',
      'counter',
      'sum',
      () => perKind(this.bytes),
    );
    family(
      'origin_http_aborted_total',
      'Responses the client closed before their end, by route kind.',
      'counter',
      'sum',
      () => perKind(this.aborted),
    );
    this.registerSources(family);
    this.registerStorage(family);
    family(
      'origin_event_loop_delay_seconds',
      'Event-loop delay since the previous scrape (the worst worker).',
      'gauge',
      'max',
      () => this.loopSamples(),
    );
  }

  private registerSources(
    family: (name: string, help: string, type: string, aggregator: Aggregator, values: () => Sample[]) => void,
  ): void {
    const caches = (pick: (f: CacheFigures) => number | undefined) => (): Sample[] => {
      const all = this.sources?.caches();
      if (all === undefined) return [];
      return Object.entries(all).flatMap(([cache, f]) => {
        const value = pick(f);
        return value === undefined ? [] : [{ labels: { cache }, value }];
      });
    };
    family(
      'origin_cache_hits_total',
      'Lookups answered from a cache, by cache.',
      'counter',
      'sum',
      caches((f) => f.hits),
    );
    family(
      'origin_cache_misses_total',
      'Lookups that loaded or rendered, by cache.',
      'counter',
      'sum',
      caches((f) => f.misses),
    );
    family(
      'origin_cache_evictions_total',
      'Entries dropped to stay within the bound, by cache.',
      'counter',
      'sum',
      caches((f) => f.evictions),
    );
    family(
      'origin_cache_entries',
      'Entries held, by cache.',
      'gauge',
      'sum',
      caches((f) => f.entries),
    );
    family(
      'origin_cache_bytes',
      'Bytes held, by cache (the byte-bounded ones).',
      'gauge',
      'sum',
      caches((f) => f.bytes),
    );
    const one = (read: (s: MetricSources) => number) => (): Sample[] =>
      this.sources === undefined ? [] : [{ labels: {}, value: read(this.sources) }];
    family(
      'origin_coalesced_requests_total',
      'Requests answered by joining an identical request in flight.',
      'counter',
      'sum',
      one((s) => s.coalesced()),
    );
    family(
      'origin_source_handles_open',
      'Source file descriptors open for segment reads.',
      'gauge',
      'sum',
      one((s) => s.sourceHandles()),
    );
    family('origin_buffer_pool_bytes', 'Bytes of pooled buffers, idle or lent, by pool.', 'gauge', 'sum', () => {
      const pools = this.sources?.pools();
      if (pools === undefined) return [];
      return Object.entries(pools).flatMap(([pool, p]) => [
        { labels: { pool, state: 'idle' }, value: p.idle },
        { labels: { pool, state: 'lent' }, value: p.lent },
      ]);
    });
  }

  private registerStorage(
    family: (name: string, help: string, type: string, aggregator: Aggregator, values: () => Sample[]) => void,
  ): void {
    // Every series from 0, remote storage or not (a dashboard's rate() needs the zero).
    const each = (f: (backend: string, s: StorageStats) => Sample[]) => (): Sample[] =>
      Object.entries(this.sources?.storage?.() ?? NO_STORAGE).flatMap(([backend, s]) => f(backend, s));
    const one = (value: (s: StorageStats) => number) =>
      each((backend, s) => [{ labels: { backend }, value: value(s) }]);
    family(
      'origin_storage_requests_total',
      'Exchanges with remote storage (retries included), by backend kind and outcome.',
      'counter',
      'sum',
      each((backend, s) =>
        OUTCOMES.map((outcome) => ({
          labels: { backend, outcome },
          value: s.exchanges[outcome],
        })),
      ),
    );
    family(
      'origin_storage_response_bytes_total',
      'Body bytes received from remote storage, by backend kind.',
      'counter',
      'sum',
      one((s) => s.bytes),
    );
    family(
      'origin_storage_retries_total',
      'Storage exchanges made again after a reset, a short body or a 5xx, by backend kind.',
      'counter',
      'sum',
      one((s) => s.retries),
    );
    family(
      'origin_storage_errors_total',
      'Storage reads that failed for the origin, by backend kind and error code.',
      'counter',
      'sum',
      each((backend, s) => [...s.errors].map(([code, value]) => ({ labels: { backend, code }, value }))),
    );
    family(
      'origin_storage_negative_hits_total',
      'Stats answered from remembered misses without asking storage, by backend kind.',
      'counter',
      'sum',
      one((s) => s.negativeHits),
    );
    family(
      'origin_storage_request_duration_seconds',
      'Duration of one exchange with remote storage, by backend kind.',
      'histogram',
      'sum',
      each((backend, s) => storageHistogram(backend, s)),
    );
  }

  private requestSamples(): Sample[] {
    const out: Sample[] = [];
    for (let k = 0; k < this.kinds.length; k++) {
      for (let s = 0; s < STATUSES; s++) {
        const value = this.requests[k * STATUSES + s]!;
        if (value > 0) out.push({ labels: { kind: this.kinds[k]!, status: s + 100 }, value });
      }
    }
    return out;
  }

  private durationSamples(): Sample[] {
    const name = 'origin_http_request_duration_seconds';
    const out: Sample[] = [];
    for (let k = 0; k < this.kinds.length; k++) {
      const kind = this.kinds[k]!;
      let count = 0;
      for (let b = 0; b < BUCKETS; b++) count += this.buckets[k * BUCKETS + b]!;
      if (count === 0) continue;
      let below = 0;
      for (let b = 0; b < BUCKETS; b++) {
        below += this.buckets[k * BUCKETS + b]!;
        const le = b < DURATION_BUCKETS.length ? DURATION_BUCKETS[b]! : '+Inf';
        out.push({ metricName: `${name}_bucket`, labels: { kind, le }, value: below });
      }
      out.push({ metricName: `${name}_sum`, labels: { kind }, value: this.sums[k]! });
      out.push({ metricName: `${name}_count`, labels: { kind }, value: count });
    }
    return out;
  }

  /**
   * The delay's median, 99th percentile and maximum since the previous scrape; then it starts
   * again. The monitor records the time between its timer's runs, so the delay is that less the
   * timer's period.
   */
  private loopSamples(): Sample[] {
    const h = this.loop;
    if (h.count === 0) return [];
    const delay = (ns: number): number => Math.max(0, ns / 1e9 - LOOP_RESOLUTION_MS / 1000);
    const out = [
      { labels: { quantile: '0.5' }, value: delay(h.percentile(50)) },
      { labels: { quantile: '0.99' }, value: delay(h.percentile(99)) },
      { labels: { quantile: '1' }, value: delay(h.max) },
    ];
    h.reset();
    return out;
  }
}

/** The storage counters shown when the server has no remote location: all 0. */
const NO_STORAGE: Readonly<Record<BackendKind, StorageStats>> = { http: new StorageStats(), s3: new StorageStats() };

function storageHistogram(backend: string, s: StorageStats): Sample[] {
  const name = 'origin_storage_request_duration_seconds';
  let count = 0;
  for (const n of s.buckets) count += n;
  const out: Sample[] = [];
  let below = 0;
  s.buckets.forEach((n, b) => {
    below += n;
    const le = b < STORAGE_DURATION_BUCKETS.length ? STORAGE_DURATION_BUCKETS[b]! : '+Inf';
    out.push({ metricName: `${name}_bucket`, labels: { backend, le }, value: below });
  });
  out.push({ metricName: `${name}_sum`, labels: { backend }, value: s.seconds });
  out.push({ metricName: `${name}_count`, labels: { backend }, value: count });
  return out;
}

/** A family of samples computed at each scrape, registered as prom-client registries take metrics. */
function addFamily(
  registry: Registry,
  f: { name: string; help: string; type: string; aggregator: Aggregator; values: () => Sample[] },
): void {
  const { name, help, type, aggregator, values } = f;
  const metric = {
    name,
    help,
    type,
    aggregator,
    get: async () => ({ name, help, type, aggregator, values: values() }),
    reset: () => undefined,
  };
  registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
}

let processSeries: Registry | undefined;

/** prom-client's default process metrics, in one registry per process (they observe process-wide state). */
export function processRegistry(): Registry {
  if (processSeries === undefined) {
    processSeries = new Registry();
    collectDefaultMetrics({ register: processSeries });
  }
  return processSeries;
}
