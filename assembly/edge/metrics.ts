// The plugin's own counters, defined through the proxy-wasm metrics ABI (proxy_define_metric,
// proxy_increment_metric; docs/specs.md ABI §2.3) so that they are Envoy stats. Envoy stores each
// as `wasmcustom.<name>` and its Prometheus output drops the `wasmcustom.` (docs/guide/edge.md#metrics).
//
//   edge_requests_total                    every request the plugin decided on
//   edge_refusals_total.reason.<reason>    refusals, one per reason of refusals.ts
//   edge_rewrites_total                    requests a rewrite rule matched (alias hits)
//   edge_filter_checks_total.cache.hit     validate_filter: `filter=` values found checked
//   edge_filter_checks_total.cache.miss    … and checked anew
//
// Labels are written into the name as `.<tag>.<value>`; an Envoy `stats_config.stats_tags`
// entry per tag turns them into labels (envoy-config/envoy.yaml has them). Every name and value
// comes from this closed table, never from a request, so the number of stats is fixed: 15.
//
// Defined once per VM (Envoy runs on_vm_start per root context; a second one finds them
// defined). A definition the host refuses leaves that counter out: the plugin works on, one
// warning line says so. Counting never fails a request: a refused increment is ignored.

import { MetricType, defineMetric, incrementMetric, logWarn } from '../proxy';
import { REFUSAL_KINDS, Refusal, Verdict, refusalReason } from './refusals';

export const REQUESTS: string = 'edge_requests_total';
export const REFUSALS: string = 'edge_refusals_total';
export const REWRITES: string = 'edge_rewrites_total';
export const FILTER_CHECKS: string = 'edge_filter_checks_total';

/** -1: not defined (the host refused it, or metrics were never defined). */
let requests: i64 = -1;
let rewrites: i64 = -1;
let filterHits: i64 = -1;
let filterMisses: i64 = -1;
const refusals = new StaticArray<i64>(REFUSAL_KINDS);
let defined = false;

function counter(name: string): i64 {
  const id = defineMetric(MetricType.Counter, name);
  if (id < 0) logWarn('edge: the host refused the counter ' + name + '; the plugin goes on without it');
  return id;
}

/** Defines the counters (first call in this VM only). */
export function defineEdgeMetrics(): void {
  if (defined) return;
  defined = true;
  requests = counter(REQUESTS);
  for (let r = 0; r < REFUSAL_KINDS; r++) {
    unchecked((refusals[r] = counter(REFUSALS + '.reason.' + refusalReason(<Refusal>r))));
  }
  rewrites = counter(REWRITES);
  filterHits = counter(FILTER_CHECKS + '.cache.hit');
  filterMisses = counter(FILTER_CHECKS + '.cache.miss');
}

function add(id: i64, n: i64): void {
  if (id >= 0 && n > 0) incrementMetric(<u32>id, n);
}

/** Counts one decided request. */
export function countVerdict(verdict: Verdict): void {
  if (!defined) return;
  add(requests, 1);
  const r = verdict.refusal;
  if (r >= 0 && r < REFUSAL_KINDS) add(unchecked(refusals[r]), 1);
  if (verdict.rewritten) add(rewrites, 1);
  add(filterHits, verdict.filterHits);
  add(filterMisses, verdict.filterMisses);
}
