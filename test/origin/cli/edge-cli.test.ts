// `origin edge` as a user runs it (in-process through the CLI's entry point): --help documents
// every option, command-line mistakes exit 2, a wrong configuration or module exits 1 with the
// file and line, and a good one listens, says what it loaded, proxies, and stops on Ctrl-C.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../../origin/cli/main';
import { parseEdgeArgs } from '../../../origin/cli/edge-command';
import { parseEnvoyConfig } from '../../../host-glue/envoy/envoy-config';
import { ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { emptiedEnvoyYaml, ENVOY_YAML, request, startUpstream } from '../../host-glue/envoy/edge-helpers';

test('--help names every option, and `origin --help` lists the command', async () => {
  const r = await runOrigin(['edge', '--help']);
  expect(r.code).toBe(0);
  for (const option of [
    '--config <file>',
    '--port <n>',
    '--host <address>',
    '--upstream <url>',
    '--admin-port <n>',
    '--log-level <level>',
    '-q, --quiet',
    '-h, --help',
  ])
    expect(r.stdout).toContain(option);
  expect(r.stdout).toContain('envoy-config/README.md');
  expect((await runOrigin(['--help'])).stdout).toMatch(/^ {2}edge {6}run the edge plugin in front of the origin/m);
});

test.each([
  [[], /--config <envoy\.yaml> is required/],
  [['--config'], /--config needs a value/],
  [['--config', 'x.yaml', '--port', '70000'], /--port must be 0\.\.65535, not "70000"/],
  [['--config', 'x.yaml', '--admin-port', '-1'], /--admin-port must be 0\.\.65535, not "-1"/],
  [
    ['--config', 'x.yaml', '--upstream', 'https://origin:443'],
    /--upstream: origin edge speaks plain HTTP to the origin, not https/,
  ],
  [
    ['--config', 'x.yaml', '--upstream', 'http://origin:8081/base'],
    /--upstream names a server \(http:\/\/host:port\), not a path/,
  ],
  [['--config', 'x.yaml', '--upstream', 'origin:8081x'], /--upstream must be a URL such as http:\/\/127\.0\.0\.1:8081/],
  [
    ['--config', 'x.yaml', '--log-level', 'loud'],
    /--log-level must be one of trace, debug, info, warn, error, critical, not "loud"/,
  ],
  [['--config', 'x.yaml', '--bogus'], /unknown argument "--bogus" \(origin edge --help\)/],
])('origin edge %j: exit 2, %s', async (args, message) => {
  const r = await runOrigin(['edge', ...args]);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
});

test('options parse in both spellings, -c as Envoy spells it', () => {
  expect(
    parseEdgeArgs([
      '-c',
      'e.yaml',
      '--port=0',
      '--host',
      '::1',
      '--upstream=http://[::1]:9000',
      '--log-level',
      'debug',
      '-q',
      '--admin-port=9902',
    ]),
  ).toEqual({
    config: 'e.yaml',
    port: 0,
    host: '::1',
    upstream: new URL('http://[::1]:9000'),
    adminPort: 9902,
    logLevel: 'debug',
    quiet: true,
    help: false,
  });
});

test('a configuration Envoy would refuse: exit 1, the file, the line and the field', async () => {
  const dir = tempDir('edge-cli-');
  const file = path.join(dir, 'envoy.yaml');
  const text = (await fs.readFile(ENVOY_YAML, 'utf8')).replace('cluster: origin\n', 'cluster: orign\n');
  await fs.writeFile(file, text);
  const line = text.slice(0, text.indexOf('cluster: orign')).split('\n').length;
  const r = await runOrigin(['edge', '--config', file]);
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(
    `origin edge: error: ${file}:${line}: static_resources.listeners[edge].filter_chains[0].filters[envoy.filters.network.http_connection_manager].typed_config.route_config.virtual_hosts[origin].routes[0].route.cluster: unknown cluster "orign" (static_resources.clusters has "origin")\n`,
  );
  const missing = await runOrigin(['edge', '--config', path.join(dir, 'nope.yaml')]);
  expect([missing.code, missing.stderr]).toEqual([
    1,
    `origin edge: error: ${path.join(dir, 'nope.yaml')}: cannot read the Envoy configuration: ENOENT\n`,
  ]);
});

test("a configuration the plugin refuses (invalid JSON): exit 1 with Envoy's reason, as Envoy would not start", async () => {
  const dir = tempDir('edge-cli-');
  const file = path.join(dir, 'envoy.yaml');
  await fs.writeFile(
    file,
    (await emptiedEnvoyYaml())
      .replace(/value: \|\n(\s+)\{\}\n/, 'value: |\n$1{"aliases": \n')
      .replace('build/edge.wasm', path.join(ROOT, 'build', 'edge.wasm')),
  );
  const r = await runOrigin(['edge', '--config', file, '--port', '0']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/wasm log edge edge: edge: invalid JSON configuration at byte \d+/);
  expect(r.stderr).toContain(
    `origin edge: error: ${file}: the wasm filter does not load: Failed to configure base Wasm plugin\n`,
  );
});

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

test('with the real host: listens, prints what it loaded, proxies, a busy port is exit 1, Ctrl-C stops it', async () => {
  const upstream = await startUpstream((req, res) => res.end(`origin saw ${req.url}`));
  const out = new Capture();
  const err = new Capture();
  const cwd = process.cwd();
  process.chdir(ROOT); // the module path in envoy.yaml is relative to the working directory, as in Envoy
  const running = main(
    ['edge', '--config', 'envoy-config/envoy.yaml', '--port', '0', '--upstream', upstream.url, '--admin-port', '0'],
    out,
    err,
  );
  try {
    for (let i = 0; i < 200 && !out.text.includes('listening on'); i++) await new Promise((r) => setTimeout(r, 25));
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(out.text)![1]!;
    expect(out.text).toContain('  plugin         name "edge", root_id "edge", vm_id "edge", FAIL_CLOSED');
    expect(out.text).toContain(`  module         ${path.join(ROOT, 'build', 'edge.wasm')} (`);
    // The demo's locations (envoy-config/maps/edge-config.yaml), as the block scalar holds them.
    const shipped = parseEnvoyConfig(await fs.readFile(ENVOY_YAML, 'utf8'), ENVOY_YAML).plugin.pluginConfiguration;
    expect(out.text).toContain(`  configuration  StringValue, ${shipped.byteLength} bytes`);
    expect(out.text).toContain(`  clusters       origin → 127.0.0.1:${upstream.port} (--upstream)`);
    expect((await request(url, '/x.ism/Manifest')).body.toString()).toBe('origin saw /x.ism/Manifest');
    const admin =
      /admin {10}(http:\/\/127\.0\.0\.1:\d+)\/stats\/prometheus and \/metrics \(the plugin's metrics\)/.exec(
        out.text,
      )![1]!;
    expect((await request(admin, '/metrics')).body.toString()).toContain('\nedge_requests_total 1\n');
    const adminBusy = await runOrigin([
      'edge',
      '--config',
      'envoy-config/envoy.yaml',
      '--port',
      '0',
      '--admin-port',
      new URL(admin).port,
    ]);
    expect(adminBusy.code).toBe(1);
    expect(adminBusy.stderr).toMatch(
      /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE \(something already listens there: pick another with --admin-port\)/,
    );
    const busy = await runOrigin(['edge', '--config', 'envoy-config/envoy.yaml', '--port', new URL(url).port]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(
      /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE \(something already listens there: pick another with --port\)/,
    );
  } finally {
    process.emit('SIGINT');
    expect(await running).toBe(0);
    process.chdir(cwd);
    await upstream.close();
  }
  expect(err.text).toMatch(/GET \/x\.ism\/Manifest 200 [\d.]+ ms 127\.0\.0\.1:\d+/);
});
