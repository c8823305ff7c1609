// The edge plugin's own counters as an operator sees them: `origin edge` (the real proxy-wasm host,
// build/edge.wasm) from the shipped envoy-config/envoy.yaml (its stats_tags) with the plugin
// configuration replaced, an upstream that answers 200, and the admin listener on a free port.
// A scripted run of requests (passed, aliased, refused for every reason, a forged token) must
// leave exactly these counts at /stats/prometheus and /metrics, named as Envoy's admin names the
// plugin's stats (wasmcustom. dropped, labels from the stats_tags).

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import YAML from 'yaml';
import { inlineEdge } from '../../../host-glue/envoy/edge-inline';
import { addEdgeMetrics } from '../../../host-glue/envoy/edge-stats';
import { loadEdgeFilter } from '../../../origin/cli/edge-command';
import { ROOT, basicHeader, nowSeconds, signed } from '../../assembly/edge/plugin-helpers';
import { EdgeUnderTest, request, startTestEdge, startUpstream, Upstream } from './edge-helpers';

const SECRET = 'metrics secret';
const CONFIG = {
  locations: [
    { prefix: '/token/', skip_rewrite: false, auth_token: { secret: SECRET, prefix: 'token', timeout: 600, skew: 30 } },
    {
      prefix: '/secure/',
      auth_basic: {
        realm: 'Origin',
        users: [`alice:{SHA}${createHash('sha1').update('wonderland').digest('base64')}`],
      },
    },
    {
      prefix: '/alias/',
      skip_rewrite: false,
      validate_filter: true,
      rewrite: { maps: { filter: { avc: 'filter=FourCC=="AVC1"' }, alter: { fmp4: 'hls_fmp4=true' } } },
    },
    { prefix: '/long/', skip_rewrite: false, rewrite: { rules: [{ match: '/long/<a>.ism', to: '/<a>/<a>' }] } },
    { prefix: '/', validate_filter: true },
  ],
};

/** envoy-config/envoy.yaml with the plugin's configuration replaced (a StringValue, as shipped). */
function bootstrapWith(config: unknown): string {
  const doc = YAML.parseDocument(readFileSync(path.join(ROOT, 'envoy-config', 'envoy.yaml'), 'utf8'));
  const filters = [
    'static_resources',
    'listeners',
    0,
    'filter_chains',
    0,
    'filters',
    0,
    'typed_config',
    'http_filters',
  ];
  const list = doc.getIn(filters) as YAML.YAMLSeq;
  const wasm = list.items.findIndex((f) => (f as YAML.YAMLMap).get('name') === 'envoy.filters.http.wasm');
  doc.setIn([...filters, wasm, 'typed_config', 'config', 'configuration', 'value'], JSON.stringify(config));
  return doc.toString();
}

let work: string;
let file: string;
let upstream: Upstream;
let edge: EdgeUnderTest;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'edge-metrics-'));
  file = path.join(work, 'envoy.yaml');
  writeFileSync(file, bootstrapWith(CONFIG));
  upstream = await startUpstream((_req, res) => res.end('ok'));
  edge = await startTestEdge(upstream.url, { config: file, adminPort: 0 });
});

afterAll(async () => {
  await edge?.close();
  await upstream?.close();
  rmSync(work, { recursive: true, force: true });
});

const AUDIO = encodeURIComponent('type=="audio"');

test('a scripted run of requests leaves exactly these counters at /stats/prometheus', async () => {
  const now = nowSeconds();
  const script: Array<[string, number, Record<string, string>?]> = [
    ['/alias/tos.ism/fmp4/avc.m3u8', 200], // alias: rewritten, its filter checked (miss)
    ['/alias/tos.ism/fmp4/avc.m3u8', 200], // again: rewritten, the filter found checked (hit)
    [`/vod/tos.ism/.mpd?filter=${AUDIO}`, 200], // miss
    ['/vod/tos.ism/.mpd?filter=((', 400], // bad_filter, miss
    ['/vod/tos.ism/.mpd?filter=((', 400], // bad_filter, hit (the error is cached too)
    ['/a/../b', 400], // bad_path
    ['/x?a=%zz', 400], // bad_query
    [`/${'a'.repeat(9000)}`, 414], // url_too_long
    ['/token/tos.ism/.mpd', 401], // token_malformed
    [signed(SECRET, 'token', '/tos.ism/.mpd', now - 10_000), 410], // token_expired
    [signed('forged', 'token', '/tos.ism/.mpd', now), 403], // token_mismatch: a refused token
    [signed(SECRET, 'token', '/tos.ism/.mpd', now + 10_000), 403], // token_future
    [signed(SECRET, 'token', '/tos.ism/.mpd', now), 200],
    ['/secure/tos.ism/.mpd', 401], // basic_auth_missing
    ['/secure/tos.ism/.mpd', 401, Object.fromEntries([basicHeader('alice', 'looking-glass')])], // basic_auth_failed
    ['/secure/tos.ism/.mpd', 200, Object.fromEntries([basicHeader('alice', 'wonderland')])],
    // a rule matched; its result (twice 2100 characters) is over the 4096 the edge accepts: rewrite_bad_path
    [`/long/${'a'.repeat(2100)}.ism`, 400],
  ];
  for (const [target, status, headers] of script) {
    const r = await request(edge.url, target, { headers: headers ?? {} });
    expect([target.slice(0, 60), r.status]).toEqual([target.slice(0, 60), status]);
  }
  expect(upstream.requests.length).toBe(5);

  const r = await request(edge.admin!.url, '/stats/prometheus');
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  const help = (name: string): string =>
    `# HELP ${name} ${name}: a metric the Envoy wasm plugin defined (proxy_define_metric)`;
  expect(r.body.toString()).toBe(
    [
      help('edge_requests_total'),
      '# TYPE edge_requests_total counter',
      'edge_requests_total 17',
      '',
      help('edge_refusals_total'),
      '# TYPE edge_refusals_total counter',
      'edge_refusals_total{reason="bad_path"} 1',
      'edge_refusals_total{reason="url_too_long"} 1',
      'edge_refusals_total{reason="bad_query"} 1',
      'edge_refusals_total{reason="bad_filter"} 2',
      'edge_refusals_total{reason="token_malformed"} 1',
      'edge_refusals_total{reason="token_expired"} 1',
      'edge_refusals_total{reason="token_mismatch"} 1',
      'edge_refusals_total{reason="token_future"} 1',
      'edge_refusals_total{reason="basic_auth_missing"} 1',
      'edge_refusals_total{reason="basic_auth_failed"} 1',
      'edge_refusals_total{reason="rewrite_bad_path"} 1',
      '',
      help('edge_rewrites_total'),
      '# TYPE edge_rewrites_total counter',
      'edge_rewrites_total 3',
      '',
      help('edge_filter_checks_total'),
      '# TYPE edge_filter_checks_total counter',
      'edge_filter_checks_total{cache="hit"} 2',
      'edge_filter_checks_total{cache="miss"} 3',
      '',
    ].join('\n'),
  );
  // The stats behind it, as Envoy's /stats would list them.
  expect(edge.factory.stats!.list().filter((s) => s.name.includes('token_mismatch'))).toMatchObject([
    { name: 'wasmcustom.edge_refusals_total.reason.token_mismatch', value: 1n },
  ]);

  const metrics = await request(edge.admin!.url, '/metrics');
  expect(metrics.body.toString()).toBe(r.body.toString());
});

test('the admin listener answers HEAD, refuses other methods and other paths', async () => {
  const head = await request(edge.admin!.url, '/metrics', { method: 'HEAD' });
  expect(head.status).toBe(200);
  expect(head.body.length).toBe(0);
  expect(Number(head.headers['content-length'])).toBeGreaterThan(100);
  const post = await request(edge.admin!.url, '/stats/prometheus', { method: 'POST' });
  expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD']);
  const other = await request(edge.admin!.url, '/stats');
  expect(other.status).toBe(404);
  expect(other.body.toString()).toBe('not an admin path: try /stats/prometheus or /metrics\n');
});

test('the admin paths are not taken from the proxied namespace', async () => {
  const before = upstream.requests.length;
  const r = await request(edge.url, '/metrics');
  expect(r.status).toBe(200);
  expect(r.body.toString()).toBe('ok');
  expect(upstream.requests.length).toBe(before + 1);
});

test('the edge in the origin process (origin serve --edge-config): addEdgeMetrics puts the series on its registry', async () => {
  const loaded = await loadEdgeFilter(file, { cwd: ROOT, logLevel: 'info', pluginLog: () => undefined });
  const registry = new Registry();
  const own = new Counter({ name: 'origin_requests_total', help: 'the origin', registers: [registry] });
  addEdgeMetrics(registry, loaded);
  const { listener, ServerResponse } = inlineEdge(
    { factory: loaded.factory, server: loaded.config.server, generateRequestId: true, suppressEnvoyHeaders: false },
    (_req, res) => {
      own.inc();
      res.end('ok');
    },
  );
  const server = http.createServer({ ServerResponse }, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await request(url, signed('forged', 'token', '/tos.ism/.mpd', nowSeconds()))).status).toBe(403);
    expect((await request(url, '/vod/tos.ism/.mpd')).status).toBe(200);
    const text = await registry.metrics();
    expect(text).toContain('\norigin_requests_total 1\n');
    expect(text).toContain('\nedge_requests_total 2\n');
    expect(text).toContain('\nedge_refusals_total{reason="token_mismatch"} 1\n');
    expect(text.match(/^edge_refusals_total\{/gm)).toHaveLength(11);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await loaded.factory.shutdown();
  }
});
