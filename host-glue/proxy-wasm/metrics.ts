// A plugin's custom metrics as Envoy keeps them (proxy_define_metric, proxy_increment_metric,
// proxy_record_metric, proxy_get_metric; §2.3). Facts from Envoy
// source/extensions/common/wasm/context.cc (defineMetric … getMetric) and cpp-host
// include/proxy-wasm/wasm.h:
//
//   * a metric lives in Envoy's stats store as `wasmcustom.<name>` (the custom stat namespace
//     Envoy registers for wasm, source/extensions/common/wasm/plugin.cc), shared by every VM
//     and plugin that defines the same name and type: canary and worker VMs count into one stat;
//   * ids are per VM and carry the type in their low 2 bits: the n-th definition of a type gets
//     type + 4n (counters 4, 8, …, gauges 5, 9, …, histograms 6, 10, …; the counter starts at the
//     type and is incremented before use). Defining a name again is no error: it gets a new id
//     naming the same stat;
//   * type > 2 is BAD_ARGUMENT; an unknown id NOT_FOUND (before any other check); incrementing
//     a counter by <= 0 or a histogram at all BAD_ARGUMENT; a gauge goes down with a negative
//     delta; recording adds to a counter, sets a gauge, samples a histogram; reading a
//     histogram BAD_ARGUMENT.
//
// Envoy's stat values are uint64: they wrap as Envoy's release builds do. A histogram keeps the
// sample count, the sum and cumulative counts at Envoy's default bucket bounds
// (HistogramSettingsImpl::defaultBuckets, what its Prometheus output lists); Envoy computes those
// counts from an approximate histogram, this host counts exactly.

import { MetricType, WasmResult } from './abi';

/** The namespace Envoy puts in front of every custom metric name. */
export const CUSTOM_STAT_NAMESPACE = 'wasmcustom';

/** Envoy's default histogram bucket bounds (source/common/stats/histogram_impl.cc). */
export const DEFAULT_HISTOGRAM_BUCKETS: readonly number[] = [
  0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000,
];

export interface CounterStat {
  readonly type: MetricType.Counter;
  /** The stat's name in Envoy's store: `wasmcustom.<name the plugin gave>`. */
  readonly name: string;
  value: bigint;
}

export interface GaugeStat {
  readonly type: MetricType.Gauge;
  readonly name: string;
  value: bigint;
}

export interface HistogramStat {
  readonly type: MetricType.Histogram;
  readonly name: string;
  count: number;
  sum: number;
  /** Samples <= DEFAULT_HISTOGRAM_BUCKETS[i], per bound. */
  readonly buckets: number[];
}

export type CustomStat = CounterStat | GaugeStat | HistogramStat;

const U64 = (v: bigint): bigint => BigInt.asUintN(64, v);

/**
 * The stats store of one plugin: one stat per (type, name), in definition order. Listeners hear
 * of each new stat once (an exporter registers it); they run inside the hostcall, so they must
 * not throw.
 */
export class CustomStats {
  private readonly byType: [Map<string, CounterStat>, Map<string, GaugeStat>, Map<string, HistogramStat>] = [
    new Map(),
    new Map(),
    new Map(),
  ];
  private readonly ordered: CustomStat[] = [];
  private readonly listeners: Array<(stat: CustomStat) => void> = [];

  /** The stat of this type and plugin-given name, made on first use. */
  define(type: MetricType, pluginName: string): CustomStat {
    const name = `${CUSTOM_STAT_NAMESPACE}.${pluginName}`;
    const map = this.byType[type] as Map<string, CustomStat>;
    const known = map.get(name);
    if (known !== undefined) return known;
    const stat: CustomStat =
      type === MetricType.Counter
        ? { type, name, value: 0n }
        : type === MetricType.Gauge
          ? { type, name, value: 0n }
          : { type: MetricType.Histogram, name, count: 0, sum: 0, buckets: DEFAULT_HISTOGRAM_BUCKETS.map(() => 0) };
    map.set(name, stat);
    this.ordered.push(stat);
    for (const listener of this.listeners) listener(stat);
    return stat;
  }

  /** Every stat, in the order they were first defined. */
  list(): readonly CustomStat[] {
    return this.ordered;
  }

  /** A counter or gauge by its Envoy name (`wasmcustom.<name>`); counters first. */
  find(name: string): CounterStat | GaugeStat | undefined {
    return this.byType[MetricType.Counter].get(name) ?? this.byType[MetricType.Gauge].get(name);
  }

  onDefine(listener: (stat: CustomStat) => void): void {
    this.listeners.push(listener);
  }
}

/** One VM's metric ids (cpp-host WasmBase next_*_metric_id_): id & 3 is the type, id >> 2 the
 * definition's number within its type. */
export class MetricIds {
  private readonly next = [MetricType.Counter, MetricType.Gauge, MetricType.Histogram] as number[];
  private readonly stats: Array<Array<CustomStat | undefined>> = [[], [], []];

  constructor(private readonly store: CustomStats) {}

  /** Envoy Context::defineMetric; the new id, or a status for a bad type. */
  define(type: number, name: string): { result: WasmResult; id: number } {
    if (type >>> 0 > MetricType.Histogram) return { result: WasmResult.BadArgument, id: 0 };
    const id = (this.next[type]! += 4);
    this.stats[type]![id >>> 2] = this.store.define(type, name);
    return { result: WasmResult.Ok, id };
  }

  private stat(id: number): CustomStat | undefined {
    return this.stats[(id >>> 0) & 3]?.[(id >>> 0) >>> 2];
  }

  /** Envoy Context::incrementMetric. */
  increment(id: number, delta: bigint): WasmResult {
    const type = (id >>> 0) & 3;
    if (type !== MetricType.Counter && type !== MetricType.Gauge) return WasmResult.BadArgument;
    const stat = this.stat(id) as CounterStat | GaugeStat | undefined;
    if (stat === undefined) return WasmResult.NotFound;
    if (type === MetricType.Counter && delta <= 0n) return WasmResult.BadArgument;
    stat.value = U64(stat.value + delta);
    return WasmResult.Ok;
  }

  /** Envoy Context::recordMetric (`value` is a u64). */
  record(id: number, value: bigint): WasmResult {
    const stat = this.stat(id);
    if (stat === undefined) return WasmResult.NotFound;
    const v = U64(value);
    if (stat.type === MetricType.Counter) stat.value = U64(stat.value + v);
    else if (stat.type === MetricType.Gauge) stat.value = v;
    else {
      const sample = Number(v);
      stat.count++;
      stat.sum += sample;
      DEFAULT_HISTOGRAM_BUCKETS.forEach((bound, i) => {
        if (sample <= bound) stat.buckets[i]!++;
      });
    }
    return WasmResult.Ok;
  }

  /** Envoy Context::getMetric. */
  get(id: number): { result: WasmResult; value: bigint } {
    const type = (id >>> 0) & 3;
    if (type !== MetricType.Counter && type !== MetricType.Gauge) return { result: WasmResult.BadArgument, value: 0n };
    const stat = this.stat(id) as CounterStat | GaugeStat | undefined;
    if (stat === undefined) return { result: WasmResult.NotFound, value: 0n };
    return { result: WasmResult.Ok, value: stat.value };
  }
}
