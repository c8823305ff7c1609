// Custom metrics as Envoy hosts them (§2.3; Envoy context.cc defineMetric … getMetric, cpp-host
// wasm.h metric ids): the scriptable test plugin calls the raw hostcalls and reports each status,
// id and value; the store the exporters read is checked alongside.

import { MetricType } from '../../../host-glue/proxy-wasm/abi';
import { DEFAULT_HISTOGRAM_BUCKETS } from '../../../host-glue/proxy-wasm/metrics';
import { closeAll, INFO, load, request } from './helpers/harness';

afterEach(closeAll);

/** Runs one request through a plugin whose request_headers rules are `script`; the reports. */
async function run(script: string): Promise<{ reports: string[]; plugin: Awaited<ReturnType<typeof load>>['plugin'] }> {
  const { plugin, logs } = await load({ script: script.replace(/^/gm, 'request_headers ') });
  const s = plugin.newStream(INFO);
  await s.requestHeaders(request(), true);
  s.end();
  return { reports: logs.reports(2), plugin };
}

test('ids carry the type in the low 2 bits and count up by 4 per type from 4, 5, 6', async () => {
  const { reports } = await run(
    [
      'metric_define 0 c1',
      'metric_define 1 g1',
      'metric_define 2 h1',
      'metric_define 0 c2',
      'metric_define 2 h2',
      'metric_define 1 g2',
    ].join('\n'),
  );
  expect(reports).toEqual([
    'metric_define c1 status=0 id=4',
    'metric_define g1 status=0 id=5',
    'metric_define h1 status=0 id=6',
    'metric_define c2 status=0 id=8',
    'metric_define h2 status=0 id=10',
    'metric_define g2 status=0 id=9',
  ]);
});

test('a type above 2 is BAD_ARGUMENT and writes no id', async () => {
  const { reports, plugin } = await run('metric_define 3 bogus');
  expect(reports).toEqual(['metric_define bogus status=2 id=4294967295']);
  expect(plugin.stats.list()).toEqual([]);
});

test('defining a name again is no error: a new id, the same stat', async () => {
  const { reports, plugin } = await run(
    [
      'metric_define 0 edge_hits',
      'metric_define 0 edge_hits',
      'metric_increment 4 2',
      'metric_increment 8 3',
      'metric_get 4',
      'metric_get 8',
    ].join('\n'),
  );
  expect(reports).toEqual([
    'metric_define edge_hits status=0 id=4',
    'metric_define edge_hits status=0 id=8',
    'metric_increment 4 2 status=0',
    'metric_increment 8 3 status=0',
    'metric_get 4 status=0 value=5',
    'metric_get 8 status=0 value=5',
  ]);
  expect(plugin.stats.list().map((s) => s.name)).toEqual(['wasmcustom.edge_hits']);
  expect(plugin.metric('edge_hits')).toBe(5n);
});

test('a counter only grows; a gauge goes both ways and record sets it; unknown ids are NOT_FOUND', async () => {
  const { reports, plugin } = await run(
    [
      'metric_define 0 c',
      'metric_define 1 g',
      'metric_increment 4 0',
      'metric_increment 4 -1',
      'metric_record 4 7',
      'metric_increment 5 10',
      'metric_increment 5 -3',
      'metric_get 5',
      'metric_record 5 42',
      'metric_get 5',
      'metric_get 4',
      'metric_increment 12 1',
      'metric_increment 12 0',
      'metric_record 13 1',
      'metric_get 12',
    ].join('\n'),
  );
  expect(reports.slice(2)).toEqual([
    'metric_increment 4 0 status=2',
    'metric_increment 4 -1 status=2',
    'metric_record 4 7 status=0',
    'metric_increment 5 10 status=0',
    'metric_increment 5 -3 status=0',
    'metric_get 5 status=0 value=7',
    'metric_record 5 42 status=0',
    'metric_get 5 status=0 value=42',
    'metric_get 4 status=0 value=7',
    // NOT_FOUND comes before the delta check (Envoy looks the id up first)
    'metric_increment 12 1 status=1',
    'metric_increment 12 0 status=1',
    'metric_record 13 1 status=1',
    'metric_get 12 status=1',
  ]);
  expect(plugin.metric('c')).toBe(7n);
  expect(plugin.metric('g')).toBe(42n);
});

test('a histogram is recorded, never incremented or read; the store keeps count, sum and buckets', async () => {
  const { reports, plugin } = await run(
    [
      'metric_define 2 latency',
      'metric_record 6 3',
      'metric_record 6 700',
      'metric_increment 6 1',
      'metric_get 6',
      'metric_increment 7 1',
      'metric_get 7',
    ].join('\n'),
  );
  expect(reports.slice(1)).toEqual([
    'metric_record 6 3 status=0',
    'metric_record 6 700 status=0',
    'metric_increment 6 1 status=2',
    'metric_get 6 status=2',
    // id & 3 == 3 is no type: increment and get are BAD_ARGUMENT
    'metric_increment 7 1 status=2',
    'metric_get 7 status=2',
  ]);
  const [h] = plugin.stats.list();
  expect(h).toMatchObject({ type: MetricType.Histogram, name: 'wasmcustom.latency', count: 2, sum: 703 });
  const bucket = (bound: number): number =>
    (h as { buckets: number[] }).buckets[DEFAULT_HISTOGRAM_BUCKETS.indexOf(bound)]!;
  expect([bucket(1), bucket(5), bucket(500), bucket(1000)]).toEqual([0, 1, 1, 2]);
});

test('a counter and a gauge of the same name are two stats', async () => {
  const { plugin } = await run(['metric_define 0 same', 'metric_define 1 same', 'metric_increment 5 -2'].join('\n'));
  expect(plugin.stats.list().map((s) => [s.type, s.name])).toEqual([
    [MetricType.Counter, 'wasmcustom.same'],
    [MetricType.Gauge, 'wasmcustom.same'],
  ]);
  // Envoy's gauges are uint64: below zero wraps as its release builds do
  expect(plugin.stats.list()[1]).toMatchObject({ value: 2n ** 64n - 2n });
});

test('every VM of the plugin counts into one stat: canary and worker define it, requests count once', async () => {
  const { plugin, logs } = await load({
    script: 'configure metric_define 0 edge_requests\nrequest_headers metric_increment 4 1',
  });
  // the canary and the worker VM each defined it (id 4 in each VM: ids are per VM)
  expect(logs.reports(1)).toEqual([
    'metric_define edge_requests status=0 id=4',
    'metric_define edge_requests status=0 id=4',
  ]);
  for (let i = 0; i < 3; i++) {
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    s.end();
  }
  expect(plugin.metric('edge_requests')).toBe(3n);
  expect(plugin.stats.list()).toHaveLength(1);
});

test('the store tells listeners of each new stat once', async () => {
  const { plugin } = await load({
    script: 'request_headers metric_define 0 late\nrequest_headers metric_define 0 late',
  });
  const heard: string[] = [];
  plugin.stats.onDefine((s) => heard.push(s.name));
  for (let i = 0; i < 2; i++) {
    const s = plugin.newStream(INFO);
    await s.requestHeaders(request(), true);
    s.end();
  }
  expect(heard).toEqual(['wasmcustom.late']);
});
