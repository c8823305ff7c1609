// The plugin's custom metrics (host-glue/proxy-wasm/metrics.ts) in the Prometheus text format, named
// as Envoy's admin endpoint /stats/prometheus names them (source/server/admin/prometheus_stats.cc):
//
//   stat `wasmcustom.edge_refusals_total.reason.bad_path`
//   → tag extraction with the bootstrap's stats_config (stats-tags.ts):
//     name `wasmcustom.edge_refusals_total`, tag reason=bad_path
//   → PrometheusStatsFormatter::metricName: a registered custom namespace (`wasmcustom`) is
//     stripped and the rest is not prefixed with `envoy_`; every character outside [a-zA-Z0-9_]
//     becomes `_`; a name that is then empty or starts with a digit is left out
//   → `edge_refusals_total{reason="bad_path"} 1`, label names sanitised the same way.
//
// Stats with one metric name form one family (one # TYPE line), counters, gauges and histograms
// (cumulative buckets at Envoy's default bounds, _sum, _count) alike. The families are prom-client
// metrics whose values are read from the plugin's store when the registry is collected, so one
// Registry can carry them next to the origin's own metrics (`origin serve --edge-config`) or alone
// (the admin listener of `origin edge`, edge-admin.ts). prom-client writes # HELP lines and no
// `{}` for a series without labels, where Envoy writes none and `name{} 1`: the same samples for
// Prometheus.

import {
  Counter,
  Gauge,
  Histogram,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
  type MetricValueWithName,
  type Registry,
} from 'prom-client';
import { MetricType } from '../proxy-wasm/abi';
import type { HttpFilterFactory } from '../proxy-wasm/http-filter';
import { CUSTOM_STAT_NAMESPACE, DEFAULT_HISTOGRAM_BUCKETS, type CustomStat } from '../proxy-wasm/metrics';
import { TagProducer, type StatsTagConfig } from './stats-tags';

const sanitize = (name: string): string => name.replace(/[^a-zA-Z0-9_]/g, '_');

/** PrometheusStatsFormatter::metricName for a stat in Envoy's wasm namespace; undefined: left out. */
export function prometheusName(extractedName: string): string | undefined {
  const prefix = `${CUSTOM_STAT_NAMESPACE}.`;
  if (!extractedName.startsWith(prefix)) return `envoy_${sanitize(extractedName)}`;
  const name = sanitize(extractedName.slice(prefix.length));
  return name === '' || /^[0-9]/.test(name) ? undefined : name;
}

type Labels = Record<string, string>;

interface Member {
  stat: CustomStat;
  labels: Labels;
}

/** prom-client's histogram get() merges `sharedLabels` into `labels` (in place): present, empty. */
type Value = MetricValueWithName<string> & { sharedLabels?: Labels };
type Read = () => Value[];

// prom-client metrics whose get() (the one method a Registry, and prom-client's cluster
// aggregation, reads values through) answers from the plugin's store.
class StoreCounter extends Counter {
  constructor(
    config: CounterConfiguration<string>,
    private readonly read: Read,
  ) {
    super(config);
  }
  override async get(): ReturnType<Counter['get']> {
    return { ...(await super.get()), values: this.read() };
  }
}

class StoreGauge extends Gauge {
  constructor(
    config: GaugeConfiguration<string>,
    private readonly read: Read,
  ) {
    super(config);
  }
  override async get(): ReturnType<Gauge['get']> {
    return { ...(await super.get()), values: this.read() };
  }
}

class StoreHistogram extends Histogram {
  constructor(
    private readonly config: HistogramConfiguration<string>,
    private readonly read: Read,
  ) {
    super(config);
  }
  /** prom-client's Registry formats a histogram through this, and its get() reads it too
   * (absent from its typings). */
  async getForPromString(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    values: Value[];
  }> {
    return {
      name: this.config.name,
      help: this.config.help,
      type: 'histogram',
      aggregator: 'sum',
      values: this.read(),
    };
  }
}

/** One metric family: the stats that share a Prometheus name, of the first one's type. */
class Family {
  readonly members: Member[] = [];
  readonly metric: Counter | Gauge | Histogram;

  constructor(
    readonly name: string,
    readonly type: MetricType,
  ) {
    const read: Read = () => this.values();
    const config = {
      name,
      help: `${name}: a metric the Envoy wasm plugin defined (proxy_define_metric)`,
      registers: [],
      aggregator: 'sum' as const,
    };
    this.metric =
      type === MetricType.Counter
        ? new StoreCounter(config, read)
        : type === MetricType.Gauge
          ? new StoreGauge(config, read)
          : new StoreHistogram({ ...config, buckets: [...DEFAULT_HISTOGRAM_BUCKETS] }, read);
  }

  private values(): Value[] {
    const out: Value[] = [];
    for (const { stat, labels } of this.members) {
      if (stat.type !== MetricType.Histogram) {
        out.push({ value: Number(stat.value), labels });
        continue;
      }
      const bucket = `${this.name}_bucket`;
      const value = (metricName: string, extra: Labels, v: number): Value => ({
        metricName,
        labels: { ...labels, ...extra },
        sharedLabels: {},
        value: v,
      });
      DEFAULT_HISTOGRAM_BUCKETS.forEach((le, i) => out.push(value(bucket, { le: String(le) }, stat.buckets[i]!)));
      out.push(value(bucket, { le: '+Inf' }, stat.count));
      out.push(value(`${this.name}_sum`, {}, stat.sum));
      out.push(value(`${this.name}_count`, {}, stat.count));
    }
    return out;
  }
}

export interface PluginStatsOptions {
  /** A stat that cannot be exported (a name clash, a name Envoy leaves out); once per stat. */
  warn?: (line: string) => void;
}

/**
 * Adds the plugin's metrics to `registry`: those defined so far, and each one the plugin defines
 * later. Names and labels follow `stats` (the bootstrap's stats_config). A factory without
 * metrics (not the wasm host) adds nothing.
 */
export function registerPluginStats(
  registry: Registry,
  factory: Pick<HttpFilterFactory, 'stats'>,
  stats: StatsTagConfig,
  o: PluginStatsOptions = {},
): void {
  const store = factory.stats;
  if (store === undefined) return;
  const tags = new TagProducer(stats);
  const families = new Map<string, Family>();
  const add = (stat: CustomStat): void => {
    const { extractedName, tags: found } = tags.produce(stat.name);
    const name = prometheusName(extractedName);
    if (name === undefined) {
      o.warn?.(`${stat.name}: no Prometheus name (Envoy leaves it out of /stats/prometheus too)`);
      return;
    }
    let family = families.get(name);
    if (family === undefined) {
      family = new Family(name, stat.type);
      try {
        registry.registerMetric(family.metric);
      } catch (e) {
        o.warn?.(`${stat.name}: not exported as ${name}: ${(e as Error).message}`);
        return;
      }
      families.set(name, family);
    }
    if (family.type !== stat.type) {
      o.warn?.(`${stat.name}: not exported: ${name} is already a ${MetricType[family.type].toLowerCase()}`);
      return;
    }
    family.members.push({ stat, labels: Object.fromEntries(found.map((t) => [sanitize(t.name), t.value])) });
  };
  for (const stat of store.list()) add(stat);
  // Called inside the plugin's proxy_define_metric: add() must not throw.
  store.onDefine((stat) => {
    try {
      add(stat);
    } catch (e) {
      o.warn?.(`${stat.name}: not exported: ${(e as Error).message}`);
    }
  });
}

/**
 * For `origin serve --edge-config`: the plugin's metrics of the in-process edge on the origin's
 * registry. `edge` is what loadEdgeFilter (origin/cli/edge-command.ts) returns.
 */
export function addEdgeMetrics(
  registry: Registry,
  edge: { factory: Pick<HttpFilterFactory, 'stats'>; config: { stats: StatsTagConfig } },
  o: PluginStatsOptions = {},
): void {
  registerPluginStats(registry, edge.factory, edge.config.stats, o);
}
