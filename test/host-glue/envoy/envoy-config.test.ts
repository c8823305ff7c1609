// The Envoy bootstrap reader (host-glue/envoy/envoy-config.ts): the shipped envoy-config/envoy.yaml
// stays what Envoy expects (checked both through the reader and on the raw YAML against the
// type URLs of envoyproxy/data-plane-api), the configuration encodings of §5.1, the failure
// policy rules, and an error naming file, line and field for everything wrong.

import { readFileSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { EdgeConfigError, loadEdgeConfig, parseEnvoyConfig, TYPE_URL } from '../../../host-glue/envoy/envoy-config';
import { writeConfiguration } from '../../../origin/edge-config/envoy-yaml';
import { parseConfig } from '../../../origin/config/config-file';
import { ROOT, tempDir } from '../../helpers/fixtures';
import { ENVOY_YAML } from './edge-helpers';
import { RouteTable } from '../../../host-glue/envoy/edge-routes';

const SHIPPED = readFileSync(ENVOY_YAML, 'utf8');

describe('the shipped envoy-config/envoy.yaml', () => {
  test('reads as listener 127.0.0.1:8080 → wasm filter (build/edge.wasm, JSON StringValue, FAIL_CLOSED) → router → cluster origin at 127.0.0.1:8081', async () => {
    const c = await loadEdgeConfig(ENVOY_YAML, { cwd: ROOT });
    expect(c.listener).toEqual({ name: 'edge', host: '127.0.0.1', port: 8080 });
    expect(c.plugin).toMatchObject({
      name: 'edge',
      rootId: 'edge',
      vmId: 'edge',
      runtime: 'envoy.wasm.runtime.v8',
      failurePolicy: 'FAIL_CLOSED',
      pluginConfigurationType: 'StringValue',
    });
    expect(c.plugin.code).toEqual({
      kind: 'file',
      filename: path.join(ROOT, 'build', 'edge.wasm'),
      line: expect.any(Number),
    });
    expect(Buffer.from(c.wasm).equals(readFileSync(path.join(ROOT, 'build', 'edge.wasm')))).toBe(true);
    // The plugin refuses anything but a JSON object (assembly/index.ts onConfigure).
    expect(typeof JSON.parse(new TextDecoder().decode(c.plugin.pluginConfiguration))).toBe('object');
    expect(c.virtualHosts).toEqual([
      {
        name: 'origin',
        domains: ['*'],
        routes: [
          {
            // Playlists wait longer: an LL-HLS blocking reload holds up to three target durations.
            match: { kind: 'safe_regex', value: '.*\\.m3u8', caseSensitive: true },
            cluster: 'origin',
            prefixRewrite: undefined,
            hostRewrite: undefined,
            timeoutMs: 40_000,
          },
          {
            match: { kind: 'prefix', value: '/', caseSensitive: true },
            cluster: 'origin',
            prefixRewrite: undefined,
            hostRewrite: undefined,
            timeoutMs: 15_000,
          },
        ],
      },
    ]);
    expect([...c.clusters.values()]).toEqual([
      { name: 'origin', endpoints: [{ host: '127.0.0.1', port: 8081 }], connectTimeoutMs: 1000 },
    ]);
    expect(c.server).toEqual({ name: 'envoy', transformation: 'OVERWRITE' });
    expect([c.generateRequestId, c.suppressEnvoyHeaders, c.plugin.reloadBackoffMs]).toEqual([true, false, undefined]);
    expect(c.admin).toEqual({ host: '127.0.0.1', port: 9901 });
    // The plugin's counters carry reason and cache in their names (assembly/edge/metrics.ts).
    expect(c.stats).toEqual({
      tags: [
        { name: 'reason', regex: '^wasmcustom\\.edge_[a-z_]+(\\.reason\\.([a-z_]+))$' },
        { name: 'cache', regex: '^wasmcustom\\.edge_[a-z_]+(\\.cache\\.([a-z_]+))$' },
      ],
      useAllDefaultTags: true,
    });
    expect(c.warnings).toEqual([]);
  });

  test('origin edge routes playlists (and only them) by the safe_regex route, with its 40 s timeout', async () => {
    const c = await loadEdgeConfig(ENVOY_YAML, { cwd: ROOT });
    const table = new RouteTable(c.virtualHosts, c.clusters);
    const timeout = (p: string): number | undefined => table.resolve('127.0.0.1:8080', p)?.route.timeoutMs;
    expect(timeout('/live/ch.isml/ch-video=800000.m3u8?_HLS_msn=5&_HLS_part=1')).toBe(40_000);
    expect(timeout('/tears.ism/.m3u8')).toBe(40_000);
    // The whole path must match, the query is not part of it.
    expect(timeout('/tears.ism/.m3u8.bak')).toBe(15_000);
    expect(timeout('/tears.ism/hls/tears-video=800000-1.m4s?x=.m3u8')).toBe(15_000);
  });

  test('its typed_config types are the v3 type URLs Envoy registers (raw YAML, not through the reader)', () => {
    type Any = { '@type': string; [k: string]: unknown };
    const doc = parseYaml(SHIPPED) as {
      static_resources: {
        listeners: Array<{
          filter_chains: Array<{
            filters: Array<{
              name: string;
              typed_config: Any & {
                http_filters: Array<{
                  name: string;
                  typed_config: Any & { config?: { configuration: Any; vm_config: { runtime: string } } };
                }>;
              };
            }>;
          }>;
        }>;
      };
    };
    const hcm = doc.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!;
    expect([hcm.name, hcm.typed_config['@type']]).toEqual([
      'envoy.filters.network.http_connection_manager',
      'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    ]);
    const [wasm, router] = hcm.typed_config.http_filters;
    expect([wasm!.name, wasm!.typed_config['@type']]).toEqual([
      'envoy.filters.http.wasm',
      'type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm',
    ]);
    expect(wasm!.typed_config.config!.configuration['@type']).toBe('type.googleapis.com/google.protobuf.StringValue');
    expect(wasm!.typed_config.config!.vm_config.runtime).toBe('envoy.wasm.runtime.v8');
    expect([router!.name, router!.typed_config['@type']]).toEqual([
      'envoy.filters.http.router',
      'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
    ]);
    expect(Object.values(TYPE_URL)).toEqual(
      expect.arrayContaining([hcm.typed_config['@type'], wasm!.typed_config['@type'], router!.typed_config['@type']]),
    );
  });
});

/** The shipped file with one edit (a string replacement that must apply). */
/** The shipped file with its plugin configuration (the demo's locations) emptied to `{}`. */
const EMPTIED = writeConfiguration(SHIPPED, 'envoy.yaml', '{}').text;

function variant(from: string | RegExp, to: string): string {
  const out = EMPTIED.replace(from, to);
  if (out === EMPTIED) throw new Error(`variant: ${String(from)} not found`);
  return out;
}

const configuration = (yaml: string): string =>
  new TextDecoder().decode(parseEnvoyConfig(yaml, 'v.yaml').plugin.pluginConfiguration);

describe('configurations and failure policy (docs/specs.md ABI §5.1)', () => {
  test('StringValue reaches the plugin raw, Struct as JSON, BytesValue decoded from base64, none as 0 bytes', () => {
    // The shipped value is the demo's JSON object, a block scalar read as written.
    expect(JSON.parse(configuration(SHIPPED)).locations).toHaveLength(3);
    expect(configuration(EMPTIED)).toBe('{}\n');
    const struct = variant(
      /"@type": type\.googleapis\.com\/google\.protobuf\.StringValue\n\s+value: \|\n\s+\{\}\n/,
      '"@type": type.googleapis.com/google.protobuf.Struct\n                  value:\n                    aliases: { "/old": "/new" }\n                    ttl: 60\n',
    );
    expect(JSON.parse(configuration(struct))).toEqual({ aliases: { '/old': '/new' }, ttl: 60 });
    const bytes = variant(
      /"@type": type\.googleapis\.com\/google\.protobuf\.StringValue\n\s+value: \|\n\s+\{\}\n/,
      `"@type": type.googleapis.com/google.protobuf.BytesValue\n                  value: ${Buffer.from('{"a":1}').toString('base64')}\n`,
    );
    expect(configuration(bytes)).toBe('{"a":1}');
    const none = variant(
      /\s+configuration:\n\s+"@type": type\.googleapis\.com\/google\.protobuf\.StringValue\n\s+value: \|\n\s+\{\}\n/,
      '\n',
    );
    expect(parseEnvoyConfig(none, 'v.yaml').plugin).toMatchObject({
      pluginConfigurationType: 'none',
      pluginConfiguration: new Uint8Array(0),
    });
  });

  test.each([
    ['failure_policy: FAIL_OPEN', 'FAIL_OPEN'],
    ['failure_policy: FAIL_RELOAD', 'FAIL_RELOAD'],
    ['failure_policy: UNSPECIFIED', 'FAIL_CLOSED'],
    ['fail_open: true', 'FAIL_OPEN'],
    ['fail_open: false', 'FAIL_CLOSED'],
    ['failure_policy: FAIL_CLOSED\n                fail_open: true', 'FAIL_CLOSED'],
    ['failure_policy: 3', 'FAIL_OPEN'],
  ])('%s → %s', (line, policy) => {
    expect(parseEnvoyConfig(variant('failure_policy: FAIL_CLOSED', line), 'v.yaml').plugin.failurePolicy).toBe(policy);
  });
});

function errorOf(yaml: string): EdgeConfigError {
  try {
    parseEnvoyConfig(yaml, 'envoy-config/envoy.yaml');
  } catch (e) {
    if (e instanceof EdgeConfigError) return e;
    throw e;
  }
  throw new Error('no error');
}

const lineOf = (yaml: string, text: string): number => yaml.slice(0, yaml.indexOf(text)).split('\n').length;

describe('admin and stats_config', () => {
  const STATS = /stats_config:\n(?: .*\n|#.*\n)*/;

  test('no admin: none; no stats_config: no tags, the default extractors on', () => {
    const c = parseEnvoyConfig(variant(/admin:\n(?: .*\n)*/, '').replace(STATS, ''), 'v.yaml');
    expect([c.admin, c.stats]).toEqual([undefined, { tags: [], useAllDefaultTags: true }]);
  });

  test('fixed_value, a tag without regex that Envoy knows, use_all_default_tags as a BoolValue', () => {
    const c = parseEnvoyConfig(
      variant(
        STATS,
        'stats_config:\n  use_all_default_tags: { value: false }\n  stats_tags:\n  - { tag_name: pod, fixed_value: edge-1 }\n  - { tag_name: envoy.response_code }\n',
      ),
      'v.yaml',
    );
    expect(c.stats).toEqual({
      tags: [{ name: 'pod', fixedValue: 'edge-1' }, { name: 'envoy.response_code' }],
      useAllDefaultTags: false,
    });
  });

  test('fields origin edge reads past are warnings', () => {
    const c = parseEnvoyConfig(variant(STATS, 'stats_config:\n  stats_matcher: { reject_all: true }\n'), 'v.yaml');
    expect(c.warnings).toEqual([
      "stats_config.stats_matcher: origin edge exports every plugin stat with Envoy's defaults",
    ]);
  });

  test.each([
    [
      '  stats_tags:\n  - { tag_name: reason }\n',
      "No regex specified for tag specifier and no default regex for name: 'reason'",
    ],
    ['  stats_tags:\n  - { regex: "^a(b)" }\n', 'tag_name cannot be empty'],
    ['  stats_tags:\n  - { tag_name: t, regex: "^a(b", fixed_value: x }\n', 'regex and fixed_value are one of a kind'],
    ['  stats_tags:\n  - { tag_name: t, regex: "^a(b" }\n', 'a regex does not compile: Invalid regular expression'],
    ['  stats_tags:\n  - { tag_name: t, rgx: "^a(b)" }\n', 'unknown field of envoy.config.metrics.v3.TagSpecifier'],
    ['  sinks: []\n', 'unknown field of envoy.config.metrics.v3.StatsConfig'],
  ])('stats_config %j: refused like Envoy (%s)', (body, message) => {
    const yaml = variant(STATS, `stats_config:\n${body}`);
    const e = errorOf(yaml);
    expect(e.message).toContain(message);
    expect(e.message).toMatch(/^envoy-config\/envoy\.yaml:\d+: stats_config/);
  });

  test('a regex over 1024 bytes is refused (Envoy validates max_bytes)', () => {
    const e = errorOf(
      variant(STATS, `stats_config:\n  stats_tags:\n  - { tag_name: t, regex: "^(${'a'.repeat(1030)})" }\n`),
    );
    expect(e.message).toContain('stats_config.stats_tags[0].regex: at most 1024 bytes');
  });
});

describe('errors name the file, the line and the field', () => {
  test.each([
    [
      'not YAML',
      variant('stat_prefix: edge_http', 'stat_prefix: [edge_http'),
      /^envoy-config\/envoy\.yaml:\d+: not valid YAML: /,
    ],
    [
      'a duplicate key',
      variant('stat_prefix: edge_http', 'stat_prefix: edge_http\n          stat_prefix: again'),
      /not valid YAML: Map keys must be unique/,
    ],
    [
      'no wasm filter',
      variant(
        'type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm',
        'type.googleapis.com/envoy.extensions.filters.http.wasmx.v3.Wasm',
      ),
      /static_resources\.listeners: no listener has an HTTP connection manager with an envoy\.filters\.http\.wasm filter/,
    ],
    [
      'the router not last',
      variant(
        /( {10}- name: envoy\.filters\.http\.wasm\n)/,
        '          - name: envoy.filters.http.router\n            typed_config:\n              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router\n$1',
      ),
      /http_filters\[envoy\.filters\.http\.router\]: the router \(envoy\.filters\.http\.router\) must be the last HTTP filter/,
    ],
    [
      'another HTTP filter',
      variant(
        /( {10}- name: envoy\.filters\.http\.router\n)/,
        '          - name: envoy.filters.http.cors\n            typed_config:\n              "@type": type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors\n$1',
      ),
      /http_filters\[envoy\.filters\.http\.cors\]\.typed_config\.@type: origin edge runs only the wasm filter and the router; it cannot run type\.googleapis\.com\/envoy\.extensions\.filters\.http\.cors\.v3\.Cors/,
    ],
    [
      'a typo in PluginConfig',
      variant('failure_policy: FAIL_CLOSED', 'failure_polcy: FAIL_CLOSED'),
      /typed_config\.config\.failure_polcy: unknown field of PluginConfig/,
    ],
    [
      'a bad failure policy',
      variant('failure_policy: FAIL_CLOSED', 'failure_policy: FAIL_SOFTLY'),
      /config\.failure_policy: expected one of UNSPECIFIED, FAIL_RELOAD, FAIL_CLOSED, FAIL_OPEN, found "FAIL_SOFTLY"/,
    ],
    [
      'remote code',
      variant(
        'local: { filename: build/edge.wasm }',
        'remote: { http_uri: { uri: "https://x/edge.wasm", cluster: origin, timeout: 5s }, sha256: abc }',
      ),
      /vm_config\.code\.remote: origin edge loads local modules only/,
    ],
    [
      'no code',
      variant('local: { filename: build/edge.wasm }', 'local: {}'),
      /vm_config\.code\.local: expected filename \(or inline_bytes\)/,
    ],
    [
      'the null runtime',
      variant('runtime: envoy.wasm.runtime.v8', 'runtime: envoy.wasm.runtime.null'),
      /vm_config\.runtime: "envoy\.wasm\.runtime\.null" is not a WebAssembly runtime/,
    ],
    [
      'an Any of another type',
      variant('type.googleapis.com/google.protobuf.StringValue', 'type.googleapis.com/google.protobuf.Int32Value'),
      /config\.configuration\.@type: origin edge passes .*Int32Value would reach the plugin as serialized protobuf/,
    ],
    [
      'a route to an unknown cluster',
      variant('cluster: origin\n', 'cluster: orign\n'),
      /routes\[0\]\.route\.cluster: unknown cluster "orign" \(static_resources\.clusters has "origin"\)/,
    ],
    [
      'rds',
      variant(
        /route_config:\n\s+name: origin_route/,
        'rds:\n            route_config_name: x\n          route_config:\n            name: origin_route',
      ),
      /typed_config\.rds: origin edge needs an inline route_config/,
    ],
    [
      'a bad port',
      variant('port_value: 8081', 'port_value: 80810'),
      /socket_address\.port_value: expected an integer 0\.\.65535, found 80810/,
    ],
    [
      'a bad timeout',
      variant('timeout: 15s', 'timeout: 15 seconds'),
      /route\.timeout: expected a duration such as "5s"/,
    ],
    [
      'a safe_regex with a lookahead (RE2 has none)',
      variant('regex: ".*\\\\.m3u8"', 'regex: "(?!x).*"'),
      /safe_regex\.regex: RE2 has no lookaround or backreferences/,
    ],
    [
      'a safe_regex that does not compile',
      variant('regex: ".*\\\\.m3u8"', 'regex: "(.*"'),
      /safe_regex\.regex: not a regular expression/,
    ],
    [
      'no listeners',
      variant(/ {2}listeners:[\s\S]*? {2}clusters:/, '  clusters:'),
      /static_resources: missing "listeners"/,
    ],
    [
      'a direct response',
      variant(/route:\n[\s\S]*?timeout: 15s\n/, 'direct_response: { status: 200 }\n'),
      /routes\[0\]: origin edge supports routes to a cluster only/,
    ],
  ])('%s', (_what, yaml, message) => {
    const e = errorOf(yaml);
    expect(e.message).toMatch(message);
    expect(e.message).toMatch(/^envoy-config\/envoy\.yaml:\d+: /);
    expect(e.file).toBe('envoy-config/envoy.yaml');
  });

  test("the line is the offending field's (or, for a missing one, its parent's)", () => {
    const typo = variant('failure_policy: FAIL_CLOSED', 'failure_polcy: FAIL_CLOSED');
    expect(errorOf(typo).line).toBe(lineOf(typo, 'failure_polcy'));
    const unknown = variant('cluster: origin\n', 'cluster: orign\n');
    expect(errorOf(unknown).line).toBe(lineOf(unknown, 'cluster: orign'));
    const noCode = variant('local: { filename: build/edge.wasm }', 'local: {}');
    expect(errorOf(noCode).line).toBe(lineOf(noCode, 'local: {}'));
  });

  test('a module file that is not there: its absolute path, the working directory it was resolved against, the line', async () => {
    const dir = tempDir('edge-config-');
    const file = path.join(dir, 'envoy.yaml');
    await fs.writeFile(file, variant('filename: build/edge.wasm', 'filename: build/missing.wasm'));
    const e = await loadEdgeConfig(file, { cwd: dir }).then(
      () => undefined,
      (x: unknown) => x as EdgeConfigError,
    );
    expect(e).toBeInstanceOf(EdgeConfigError);
    expect(e?.message).toBe(
      `${file}:${lineOf(SHIPPED, 'filename: build/edge.wasm')}: vm_config.code.local.filename: ${path.join(dir, 'build', 'missing.wasm')}: no such file (a relative path resolves against the working directory ${dir}, as in Envoy)`,
    );
    const noYaml = await loadEdgeConfig(path.join(dir, 'nope.yaml')).then(
      () => undefined,
      (x: unknown) => x as EdgeConfigError,
    );
    expect(noYaml?.message).toBe(`${path.join(dir, 'nope.yaml')}: cannot read the Envoy configuration: ENOENT`);
  });
});

test('the shipped istio-wasmplugin.yaml is a WasmPlugin for the same plugin (root_id, JSON object config, a valid failStrategy)', () => {
  const shipped = parseEnvoyConfig(SHIPPED, 'envoy.yaml');
  const istio = parseYaml(readFileSync(path.join(ROOT, 'envoy-config', 'istio-wasmplugin.yaml'), 'utf8')) as {
    apiVersion: string;
    kind: string;
    spec: Record<string, unknown>;
  };
  expect([istio.apiVersion, istio.kind]).toEqual(['extensions.istio.io/v1alpha1', 'WasmPlugin']);
  expect(istio.spec.pluginName).toBe(shipped.plugin.rootId);
  expect(istio.spec.url).toMatch(/^(oci|https?|file):\/\//);
  expect(['FAIL_CLOSE', 'FAIL_OPEN', 'FAIL_RELOAD']).toContain(istio.spec.failStrategy);
  expect(['AUTHN', 'AUTHZ', 'STATS', 'UNSPECIFIED_PHASE']).toContain(istio.spec.phase);
  expect(istio.spec.type).toBe('HTTP');
  // Istio hands pluginConfig (a Struct) to the plugin as JSON: the same object envoy.yaml passes.
  expect(istio.spec.pluginConfig).toEqual(JSON.parse(new TextDecoder().decode(shipped.plugin.pluginConfiguration)));
});

describe('the scale-out example envoy-config/scale-out/', () => {
  test('envoy.yaml reads: three origins; hashing, retries and health checks named in the warnings', async () => {
    const c = await loadEdgeConfig(path.join(ROOT, 'envoy-config', 'scale-out', 'envoy.yaml'), { cwd: ROOT });
    expect([...c.clusters.values()]).toEqual([
      {
        name: 'origins',
        endpoints: [8081, 8082, 8083].map((port) => ({ host: '127.0.0.1', port })),
        connectTimeoutMs: 1000,
      },
    ]);
    expect(c.virtualHosts[0]!.routes[0]).toMatchObject({ cluster: 'origins', timeoutMs: 15_000 });
    const warned = c.warnings.join('\n');
    for (const key of ['hash_policy', 'retry_policy', 'lb_policy', 'health_checks'])
      expect([key, warned.includes(key)]).toEqual([key, true]);
    expect(warned).toMatch(/RING_HASH: origin edge balances round robin/);
  });

  test('its hash key is the path up to .ism, the same for every URL of a presentation', () => {
    const raw = parseYaml(readFileSync(path.join(ROOT, 'envoy-config', 'scale-out', 'envoy.yaml'), 'utf8'));
    const route =
      raw.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0]
        .route;
    const h = route.hash_policy[0].header;
    expect(h.header_name).toBe(':path');
    // RE2 and JavaScript agree on this pattern; Envoy's `\1` is JavaScript's `$1`.
    const key = (p: string): string =>
      p.replace(new RegExp(h.regex_rewrite.pattern.regex), h.regex_rewrite.substitution.replace('\\1', '$1'));
    expect(key('/vod/a/x.ism/.mpd')).toBe('/vod/a/x.ism');
    expect(key('/vod/a/x.ism/QualityLevels(410594)/Fragments(video=0)')).toBe('/vod/a/x.ism');
    expect(key('/vod/a/x.ism/.m3u8?filter=type%3D%3D%22audio%22')).toBe('/vod/a/x.ism');
    expect(key('/vod/a/y.ism/.mpd')).not.toBe(key('/vod/a/x.ism/.mpd'));
    expect(key('/index.html')).toBe('/index.html');
  });

  test('origin.yaml reads: an s3:// location with the player off', () => {
    const file = path.join(ROOT, 'envoy-config', 'scale-out', 'origin.yaml');
    const c = parseConfig(readFileSync(file, 'utf8'), file);
    expect(c.server.get('player')).toBe(false);
    expect(c.locations.map((l) => [l.prefix, l.proxyPass, l.s3Region])).toEqual([
      ['/vod/', 's3://media-bucket/packaged/', 'eu-west-1'],
    ]);
  });
});
