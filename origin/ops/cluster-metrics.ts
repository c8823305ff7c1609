// /metrics of `origin serve --workers N`: the sum over every worker. A scrape reaches one worker
// (the primary hands connections round-robin), which cannot see the others' counters, so it asks
// the primary over the IPC channel; the primary asks every live worker for its series
// (getMetricsAsJSON), waits for the answers at most COLLECT_MS, adds its own (the workers gauge,
// restarts, the primary's process series) and merges them with prom-client's AggregatorRegistry,
// each family by its aggregator (sums for counters and histograms, the worst worker for the
// event-loop delay). The text goes back to the worker that asked, which sends it.
//
// Messages, all `{ origin: <type>, id }` objects on the cluster's IPC channel:
//   worker → primary  metrics-scrape                   a worker was asked for /metrics
//   primary → worker  metrics-collect                  send your series
//   worker → primary  metrics-series  { series }       this worker's series
//   primary → worker  metrics-text    { text | error } the answer to metrics-scrape

import type { Worker } from 'node:cluster';
import { AggregatorRegistry, Gauge, Counter, Registry } from 'prom-client';
import { originError } from '../errors';
import { OriginMetrics, processRegistry } from './metrics';

/** How long the primary waits for a worker's series; a worker that has not answered by then is left out. */
export const COLLECT_MS = 2000;
/** How long a worker waits for the primary's text before its /metrics answers 503. */
export const SCRAPE_MS = COLLECT_MS + 2000;

type Series = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

interface ClusterMessage {
  origin: 'metrics-scrape' | 'metrics-collect' | 'metrics-series' | 'metrics-text';
  id: number;
  series?: Series;
  text?: string;
  error?: string;
}

function isClusterMessage(m: unknown): m is ClusterMessage {
  const o = (m as { origin?: unknown } | null)?.origin;
  return typeof o === 'string' && o.startsWith('metrics-') && typeof (m as { id?: unknown }).id === 'number';
}

/**
 * In a worker: /metrics answered with every worker's series through the primary, and the
 * primary's collections answered with this worker's series.
 */
export function scrapeThroughPrimary(metrics: OriginMetrics, scrapeMs = SCRAPE_MS): void {
  const waiting = new Map<number, (m: ClusterMessage) => void>();
  let next = 0;
  process.on('message', (m: unknown) => {
    if (!isClusterMessage(m)) return;
    if (m.origin === 'metrics-collect') {
      metrics.json().then(
        (series) => send({ origin: 'metrics-series', id: m.id, series }),
        (e: unknown) => send({ origin: 'metrics-series', id: m.id, error: String((e as Error)?.message ?? e) }),
      );
    } else if (m.origin === 'metrics-text') waiting.get(m.id)?.(m);
  });
  metrics.scrape = () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const fail = (why: string): void => {
        waiting.delete(id);
        reject(originError('unavailable', `metrics: ${why}`));
      };
      const timer = setTimeout(() => fail(`the primary process did not answer within ${scrapeMs} ms`), scrapeMs);
      waiting.set(id, (m) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (m.text !== undefined) resolve(m.text);
        else fail(m.error ?? 'no answer');
      });
      if (!send({ origin: 'metrics-scrape', id })) {
        clearTimeout(timer);
        fail('the primary process is gone');
      }
    });
}

function send(m: ClusterMessage): boolean {
  if (process.send === undefined || !process.connected) return false;
  try {
    process.send(m);
    return true;
  } catch {
    return false;
  }
}

/** In the primary: its own series, the collection of the workers' and the answers to their scrapes. */
export class PrimaryMetrics {
  readonly registry = new Registry();
  /** Replacements of dead workers started. */
  readonly restarts: Counter;
  private readonly waiting = new Map<number, { worker: Worker; resolve: (s: Series | undefined) => void }>();
  private next = 0;
  private missing = 0;

  constructor(
    /** The workers to collect from. */
    private readonly workers: () => Worker[],
    /** Whether the restarts are in a crash loop now (origin/ops/backoff.ts). */
    crashLoop: () => boolean,
  ) {
    const registers = [this.registry];
    new Gauge({
      name: 'origin_workers',
      help: 'Worker processes alive (the primary of origin serve --workers).',
      registers,
      collect() {
        this.set(workers().length);
      },
    });
    this.restarts = new Counter({ name: 'origin_worker_restarts_total', help: 'Dead workers replaced.', registers });
    new Gauge({
      name: 'origin_worker_crash_loop',
      help: '1 while workers die in a crash loop (restarts delayed), else 0.',
      registers,
      collect() {
        this.set(crashLoop() ? 1 : 0);
      },
    });
    const missing = (): number => this.missing;
    new Gauge({
      name: 'origin_metrics_workers_missing',
      help: `Workers whose series the last scrape lacks (no answer within ${COLLECT_MS} ms).`,
      registers,
      collect() {
        this.set(missing());
      },
    });
  }

  /** A message from a worker; true when it was one of these. */
  onMessage(worker: Worker, m: unknown): boolean {
    if (!isClusterMessage(m)) return false;
    if (m.origin === 'metrics-series') {
      const w = this.waiting.get(m.id);
      if (w !== undefined && w.worker === worker) w.resolve(m.series);
    } else if (m.origin === 'metrics-scrape') {
      this.text().then(
        (text) => trySend(worker, { origin: 'metrics-text', id: m.id, text }),
        (e: unknown) =>
          trySend(worker, { origin: 'metrics-text', id: m.id, error: String((e as Error)?.message ?? e) }),
      );
    }
    return true;
  }

  /** Every worker's series and the primary's, merged, in the Prometheus text format. */
  async text(): Promise<string> {
    const answers = await Promise.all(this.workers().map((w) => this.collect(w)));
    const series = answers.filter((s): s is Series => s !== undefined);
    this.missing = answers.length - series.length;
    const own = await Promise.all([this.registry, processRegistry()].map((r) => r.getMetricsAsJSON()));
    return AggregatorRegistry.aggregate([own.flat(), ...series]).metrics();
  }

  private collect(worker: Worker): Promise<Series | undefined> {
    const id = this.next++;
    return new Promise((resolve) => {
      const done = (s: Series | undefined): void => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(s);
      };
      const timer = setTimeout(() => done(undefined), COLLECT_MS);
      this.waiting.set(id, { worker, resolve: done });
      if (!trySend(worker, { origin: 'metrics-collect', id })) done(undefined);
    });
  }
}

function trySend(worker: Worker, m: ClusterMessage): boolean {
  if (!worker.isConnected()) return false;
  try {
    worker.send(m);
    return true;
  } catch {
    return false;
  }
}
