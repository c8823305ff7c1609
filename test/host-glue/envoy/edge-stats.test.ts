// How a plugin's stats leave the process: Envoy's tag extraction (host-glue/envoy/stats-tags.ts,
// after source/common/stats/tag_producer_impl.cc and tag_extractor_impl.cc) and its Prometheus
// names (edge-stats.ts, after source/server/admin/prometheus_stats.cc), then the prom-client
// families over a real plugin's store (the scriptable test plugin through the real host).

import { Counter, Registry } from 'prom-client';
import { prometheusName, registerPluginStats } from '../../../host-glue/envoy/edge-stats';
import { TagProducer, regexPrefix, type StatsTagConfig } from '../../../host-glue/envoy/stats-tags';
import { closeAll, INFO, load, request } from '../proxy-wasm/helpers/harness';

afterEach(closeAll);

const SHIPPED_TAGS: StatsTagConfig = {
  tags: [
    { name: 'reason', regex: '^wasmcustom\\.edge_[a-z_]+(\\.reason\\.([a-z_]+))$' },
    { name: 'cache', regex: '^wasmcustom\\.edge_[a-z_]+(\\.cache\\.([a-z_]+))$' },
  ],
  useAllDefaultTags: true,
};

describe("Envoy's tag extraction", () => {
  const produce = (config: StatsTagConfig, name: string): [string, Array<[string, string]>] => {
    const { extractedName, tags } = new TagProducer(config).produce(name);
    return [extractedName, tags.map((t) => [t.name, t.value])];
  };

  test.each([
    ['wasmcustom.edge_refusals_total.reason.bad_path', 'wasmcustom.edge_refusals_total', [['reason', 'bad_path']]],
    ['wasmcustom.edge_filter_checks_total.cache.hit', 'wasmcustom.edge_filter_checks_total', [['cache', 'hit']]],
    ['wasmcustom.edge_requests_total', 'wasmcustom.edge_requests_total', []],
    // the regex must match the whole name: a trailing part keeps the name as it is
    ['wasmcustom.edge_refusals_total.reason.bad_path.x', 'wasmcustom.edge_refusals_total.reason.bad_path.x', []],
    // Envoy's built-in response-code extractors match a suffix, so a plugin's name can meet them
    ['wasmcustom.upstream_rq_503', 'wasmcustom.upstream_rq', [['envoy.response_code', '503']]],
    ['wasmcustom.upstream_rq_5xx', 'wasmcustom.upstream_rq_xx', [['envoy.response_code_class', '5']]],
  ])('%s → %s %j (the shipped stats_tags)', (name, extracted, tags) => {
    expect(produce(SHIPPED_TAGS, name)).toEqual([extracted, tags]);
  });

  test('without the default extractors the response code stays in the name', () => {
    expect(produce({ tags: [], useAllDefaultTags: false }, 'wasmcustom.upstream_rq_503')).toEqual([
      'wasmcustom.upstream_rq_503',
      [],
    ]);
  });

  test('one group: it is both the removed text and the value; fixed_value tags every stat, removes nothing', () => {
    const config: StatsTagConfig = {
      tags: [
        { name: 'pod', fixedValue: 'edge-1' },
        { name: 'kind', regex: '^wasmcustom\\.([a-z]+)\\.' },
      ],
      useAllDefaultTags: false,
    };
    expect(produce(config, 'wasmcustom.hits.total')).toEqual([
      'wasmcustom..total',
      [
        ['pod', 'edge-1'],
        ['kind', 'hits'],
      ],
    ]);
  });

  test('removals of several extractors are cut from the original name at once', () => {
    const config: StatsTagConfig = {
      tags: [
        { name: 'a', regex: '^wasmcustom\\.m(\\.a\\.([a-z]+))' },
        { name: 'b', regex: '(\\.b\\.([a-z]+))$' },
      ],
      useAllDefaultTags: false,
    };
    // the prefix-less extractor (b) runs first, then those of the first token "wasmcustom" (a)
    expect(produce(config, 'wasmcustom.m.a.x.b.y')).toEqual([
      'wasmcustom.m',
      [
        ['b', 'y'],
        ['a', 'x'],
      ],
    ]);
  });

  test('a tag name is extracted once: a later extractor of the same name is skipped', () => {
    const config: StatsTagConfig = {
      tags: [
        { name: 'reason', regex: '^wasmcustom\\.m(\\.r\\.([a-z]+))' },
        { name: 'reason', regex: '^wasmcustom\\.m\\.r\\.[a-z]+(\\.s\\.([a-z]+))' },
      ],
      useAllDefaultTags: false,
    };
    expect(produce(config, 'wasmcustom.m.r.x.s.y')).toEqual(['wasmcustom.m.s.y', [['reason', 'x']]]);
  });

  test('std::regex POSIX classes in brackets work as in Envoy', () => {
    const config: StatsTagConfig = {
      tags: [{ name: 'n', regex: '^wasmcustom\\.m(\\.n\\.([[:digit:]]+))$' }],
      useAllDefaultTags: false,
    };
    expect(produce(config, 'wasmcustom.m.n.42')).toEqual(['wasmcustom.m', [['n', '42']]]);
  });

  test.each([
    ['^wasmcustom\\.edge', 'wasmcustom'],
    ['^cluster(?=\\.).*', 'cluster'],
    ['^foo$', 'foo'],
    ['^foo(x)', ''],
    ['^\\.x', ''],
    ['foo\\.x', ''],
  ])('the prefix token of %s is "%s"', (regex, prefix) => {
    expect(regexPrefix(regex)).toBe(prefix);
  });

  test('a prefixed extractor never meets a name without a dot', () => {
    const config: StatsTagConfig = { tags: [{ name: 't', regex: '^foo$' }], useAllDefaultTags: false };
    expect(produce(config, 'foo')).toEqual(['foo', []]);
  });
});

describe("Envoy's Prometheus names", () => {
  test.each([
    ['wasmcustom.edge_requests_total', 'edge_requests_total'],
    ['wasmcustom.edge-x.y:z', 'edge_x_y_z'],
    ['wasmcustom.9lives', undefined],
    ['wasmcustom.', undefined],
    ['cluster.origin.upstream_rq', 'envoy_cluster_origin_upstream_rq'],
  ])('%s → %s', (name, prom) => {
    expect(prometheusName(name)).toBe(prom);
  });
});

describe('the prom-client families over a plugin store', () => {
  /** A plugin that defines what `configure` says and counts what `request_headers` says. */
  async function plugin(configure: string[], requestHeaders: string[]): Promise<Awaited<ReturnType<typeof load>>> {
    const script = [
      ...configure.map((l) => `configure ${l}`),
      ...requestHeaders.map((l) => `request_headers ${l}`),
    ].join('\n');
    return load({ script });
  }

  async function requests(p: Awaited<ReturnType<typeof load>>['plugin'], n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const s = p.newStream(INFO);
      await s.requestHeaders(request(), true);
      s.end();
    }
  }

  test('counters, gauges and histograms; labels from the tags; a stat defined later appears', async () => {
    const { plugin: p } = await plugin(
      [
        'metric_define 0 edge_refusals_total.reason.bad_path',
        'metric_define 0 edge_refusals_total.reason.bad_query',
        'metric_define 1 edge_open',
        'metric_define 2 edge_latency',
      ],
      ['metric_increment 4 1', 'metric_record 5 7', 'metric_record 6 3', 'metric_define 0 edge_late'],
    );
    const registry = new Registry();
    const warnings: string[] = [];
    registerPluginStats(registry, p, SHIPPED_TAGS, { warn: (l) => warnings.push(l) });
    await requests(p, 2);
    const text = await registry.metrics();
    const lines = text.split('\n').filter((l) => !l.startsWith('# HELP'));
    expect(lines).toEqual([
      '# TYPE edge_refusals_total counter',
      'edge_refusals_total{reason="bad_path"} 2',
      'edge_refusals_total{reason="bad_query"} 0',
      '',
      '# TYPE edge_open gauge',
      'edge_open 7',
      '',
      '# TYPE edge_latency histogram',
      'edge_latency_bucket{le="0.5"} 0',
      'edge_latency_bucket{le="1"} 0',
      ...[5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000].map(
        (le) => `edge_latency_bucket{le="${le}"} 2`,
      ),
      'edge_latency_bucket{le="+Inf"} 2',
      'edge_latency_sum 6',
      'edge_latency_count 2',
      '',
      '# TYPE edge_late counter',
      'edge_late 0',
      '',
    ]);
    expect(warnings).toEqual([]);
    // prom-client's cluster aggregation reads the same values through get()
    const json = await registry.getMetricsAsJSON();
    expect(json.find((m) => m.name === 'edge_refusals_total')).toMatchObject({
      type: 'counter',
      aggregator: 'sum',
      values: [
        { labels: { reason: 'bad_path' }, value: 2 },
        { labels: { reason: 'bad_query' }, value: 0 },
      ],
    });
  });

  test('a name the registry already has, or of another type, is left out with a warning, never thrown', async () => {
    const { plugin: p } = await plugin(
      ['metric_define 0 origin_taken', 'metric_define 0 mixed'],
      ['metric_define 1 mixed', 'metric_define 0 9lives'],
    );
    const registry = new Registry();
    new Counter({ name: 'origin_taken', help: 'the origin has it', registers: [registry] });
    const warnings: string[] = [];
    registerPluginStats(registry, p, SHIPPED_TAGS, { warn: (l) => warnings.push(l) });
    await requests(p, 1);
    expect(warnings).toEqual([
      'wasmcustom.origin_taken: not exported as origin_taken: A metric with the name origin_taken has already been registered.',
      'wasmcustom.mixed: not exported: mixed is already a counter',
      'wasmcustom.9lives: no Prometheus name (Envoy leaves it out of /stats/prometheus too)',
    ]);
    expect(p.failState).toBe(0);
    expect(await registry.metrics()).toContain('# TYPE mixed counter\nmixed 0\n');
  });

  test('a factory without metrics adds nothing', async () => {
    const registry = new Registry();
    registerPluginStats(registry, {}, SHIPPED_TAGS);
    expect(await registry.metrics()).toBe('\n');
  });
});
