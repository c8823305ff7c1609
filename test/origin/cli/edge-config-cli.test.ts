// Map files and `origin edge-config` (in-process through the CLI's entry point): the map-file
// format with its errors (file:line), the shipped demo maps and description, the JSON checked by
// the real plugin (build/edge.wasm through the proxy-wasm host) with map errors traced back to
// their line, and the envoy.yaml rewritten in place with every other byte kept.

import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseEnvoyConfig } from '../../../host-glue/envoy/envoy-config';
import { parseEdgeConfigArgs } from '../../../origin/cli/edge-config-command';
import { buildConfiguration } from '../../../origin/edge-config/description';
import { readConfiguration, writeConfiguration } from '../../../origin/edge-config/envoy-yaml';
import { parseMapFile } from '../../../origin/edge-config/map-file';
import { ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { RewriteEngine } from '../../assembly/edge/rewrite-probe';

const ENVOY_YAML = path.join(ROOT, 'envoy-config', 'envoy.yaml');
const DESCRIPTION = path.join(ROOT, 'envoy-config', 'maps', 'edge-config.yaml');

describe('map files', () => {
  test('key, whitespace, value; # comments, blank lines, CRLF, a BOM, tabs, a comment after the value', () => {
    const text =
      '\uFEFF# profiles\r\n\r\nhd\tfilter=systemBitrate>1000000\r\n  sd   filter=(type=="video"%26%26systemBitrate<1000000)||type!="video"   # the SD ladder\n\n#end\nx y';
    expect(parseMapFile(text, 'f.map')).toEqual([
      { key: 'hd', value: 'filter=systemBitrate>1000000', line: 3 },
      { key: 'sd', value: 'filter=(type=="video"%26%26systemBitrate<1000000)||type!="video"', line: 4 },
      { key: 'x', value: 'y', line: 7 },
    ]);
    expect(parseMapFile('', 'empty.map')).toEqual([]);
  });

  test.each([
    ['hd\n', 'f.map:1: "hd" has no value (a line is: key, whitespace, a query fragment such as hls_fmp4=true)'],
    ['# c\nhd filter=a b\n', 'f.map:2: more than a key and a value: "b" (a value holds no whitespace: write %20)'],
    [
      'hd filter=a&&b',
      'f.map:1: the value of "hd" has an empty parameter at character 8 (a leading, trailing or doubled \'&\'; inside a filter write && as %26%26)',
    ],
    [
      'hd &filter=a',
      'f.map:1: the value of "hd" has an empty parameter at character 0 (a leading, trailing or doubled \'&\'; inside a filter write && as %26%26)',
    ],
    [
      'hd filter=100%',
      'f.map:1: the value of "hd" has \'%\' at character 10 not followed by two hex digits (write %25)',
    ],
    ['hd filter=a#b', 'f.map:1: the value of "hd" has \'#\' at character 8 (write %23)'],
    [
      'hd filter=é',
      'f.map:1: the value of "hd" has character U+00E9 at character 7 (a value is percent-encoded ASCII)',
    ],
    ['a x=1\nb y=2\na z=3', 'f.map:3: "a" again (first on line 1); each key once'],
    [`${'k'.repeat(257)} a=1`, 'f.map:1: the key is longer than 256 characters'],
    [`k ${'a'.repeat(4097)}`, 'f.map:1: the value is longer than 4096 characters'],
  ])('%j: %s', (text, message) => {
    expect(() => parseMapFile(text, 'f.map')).toThrow(message);
  });

  test('the demo maps parse, and the demo description builds the plugin JSON the engine accepts', async () => {
    const built = await buildConfiguration(DESCRIPTION);
    expect(built.maps.map((m) => [m.member, path.relative(ROOT, m.file), m.entries.map((e) => e.key)])).toEqual([
      ['locations[2].rewrite.maps.filter', 'envoy-config/maps/filter.map', ['avc', 'sd', 'audio']],
      ['locations[2].rewrite.maps.timeline', 'envoy-config/maps/timeline.map', ['intro', 'late']],
      ['locations[2].rewrite.maps.alter', 'envoy-config/maps/alter.map', ['fmp4', 'ts']],
    ]);
    // The aliases are the last location, after the demo's /token/ and /secure/ (edge-config-demo.test.ts).
    const locations = (built.value as { locations: Array<{ prefix: string; rewrite: unknown }> }).locations;
    expect(locations.map((l) => l.prefix)).toEqual(['/token/', '/secure/', '/']);
    expect({ locations: [locations[2]] }).toEqual({
      locations: [
        {
          prefix: '/',
          skip_rewrite: false,
          rewrite: {
            rules: 'default',
            maps: {
              filter: {
                avc: 'filter=FourCC=="AVC1"||FourCC=="AACL"',
                sd: 'filter=(type=="video"%26%26systemBitrate<1000000)||FourCC=="AACL"||type=="textstream"',
                audio: 'filter=type!="video"%26%26(systemLanguage=="en"||systemLanguage=="eng")',
              },
              timeline: { intro: 't=0-0:00:06', late: 'vbegin=0:00:04' },
              alter: {
                fmp4: 'hls_fmp4=true&hls_client_manifest_version=7',
                ts: 'hls_fmp4=false&hls_client_manifest_version=4',
              },
            },
          },
          validate_filter: true,
        },
      ],
    });
    expect(JSON.parse(built.json)).toEqual(built.value);
    const engine = new RewriteEngine();
    expect(engine.configure(locations[2]!.rewrite)).toBe('');
    expect(engine.rewrite('/tablets.ism/fmp4/avc@intro.m3u8')?.query).toBe(
      'hls_fmp4=true&hls_client_manifest_version=7&filter=FourCC==%22AVC1%22%7C%7CFourCC==%22AACL%22&presentation_name=intro&suppress_query_parameters',
    );
  });
});

/**
 * A scratch directory with a copy of the shipped envoy.yaml (module path made absolute, the
 * plugin configuration emptied to `{}`) and the demo maps.
 */
async function scratch(): Promise<{ dir: string; yaml: string; original: string; description: string }> {
  const dir = tempDir('edge-config-');
  const yaml = path.join(dir, 'envoy.yaml');
  const shipped = (await fs.readFile(ENVOY_YAML, 'utf8')).replace(
    'filename: build/edge.wasm',
    `filename: ${path.join(ROOT, 'build', 'edge.wasm')}`,
  );
  const original = writeConfiguration(shipped, 'envoy.yaml', '{}').text;
  await fs.writeFile(yaml, original);
  for (const f of ['filter.map', 'timeline.map', 'alter.map', 'edge-config.yaml'])
    await fs.copyFile(path.join(ROOT, 'envoy-config', 'maps', f), path.join(dir, f));
  return { dir, yaml, original, description: path.join(dir, 'edge-config.yaml') };
}

describe('origin edge-config', () => {
  test('writes the JSON into the configuration value; every other line stays byte for byte', async () => {
    const s = await scratch();
    const r = await runOrigin(['edge-config', s.description, '--config', s.yaml]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const written = await fs.readFile(s.yaml, 'utf8');
    const built = await buildConfiguration(s.description);
    const line = s.original.split('\n').findIndex((l) => /^\s+value: \|$/.test(l)) + 1;
    expect(r.stdout).toBe(
      `origin edge-config: wrote the plugin configuration into ${s.yaml}:${line} (${Buffer.byteLength(built.json)} bytes, 3 map files (7 entries), accepted by the plugin)\n`,
    );
    // The old value was the one line "{}"; everything before and after it is unchanged.
    const before = s.original.split('\n');
    const after = written.split('\n');
    const valueLine = before.findIndex((l) => /^\s+value: \|$/.test(l));
    expect(before[valueLine + 1]!.trim()).toBe('{}');
    const added = built.json.split('\n').length;
    expect(after.slice(0, valueLine + 1)).toEqual(before.slice(0, valueLine + 1));
    expect(after.slice(valueLine + 1 + added)).toEqual(before.slice(valueLine + 2));
    const indent = /^(\s*)/.exec(before[valueLine + 1]!)![1]!;
    expect(after.slice(valueLine + 1, valueLine + 1 + added)).toEqual(built.json.split('\n').map((l) => indent + l));
    // Envoy's reader (origin edge's) hands the plugin exactly that JSON.
    const config = parseEnvoyConfig(written, s.yaml);
    expect(JSON.parse(Buffer.from(config.plugin.pluginConfiguration).toString('utf8'))).toEqual(built.value);
    expect(written).toContain("# The plugin's JSON configuration, handed over as is");
    // Running it again changes nothing.
    expect((await runOrigin(['edge-config', s.description, '--config', s.yaml])).code).toBe(0);
    expect(await fs.readFile(s.yaml, 'utf8')).toBe(written);
  });

  test('--print prints the JSON and leaves the file alone', async () => {
    const s = await scratch();
    const r = await runOrigin(['edge-config', s.description, '--config', s.yaml, '--print']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual((await buildConfiguration(s.description)).value);
    expect(r.stderr).toMatch(/^origin edge-config: \d+ bytes, 3 map files \(7 entries\), accepted by the plugin\n$/);
    expect(await fs.readFile(s.yaml, 'utf8')).toBe(s.original);
  });

  test('a JSON description, inline maps next to map files', async () => {
    const s = await scratch();
    const description = path.join(s.dir, 'edge.json');
    await fs.writeFile(
      description,
      JSON.stringify({
        locations: [
          {
            prefix: '/vod/',
            skip_rewrite: false,
            rewrite: { maps: { filter: { all: 'filter=true' }, alter: 'alter.map' } },
          },
        ],
      }),
    );
    const r = await runOrigin(['edge-config', description, '--config', s.yaml, '--print']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).locations[0].rewrite.maps).toEqual({
      filter: { all: 'filter=true' },
      alter: {
        fmp4: 'hls_fmp4=true&hls_client_manifest_version=7',
        ts: 'hls_fmp4=false&hls_client_manifest_version=4',
      },
    });
  });

  test('a flow-style value becomes a quoted JSON string that reads back', () => {
    const yaml = `static_resources:\n  listeners:\n  - filter_chains:\n    - filters:\n      - typed_config:\n          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\n          http_filters:\n          - typed_config:\n              "@type": type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm\n              config:\n                configuration: { "@type": type.googleapis.com/google.protobuf.StringValue, value: "{}" }  # keep me\n`;
    const json = JSON.stringify(
      { locations: [{ prefix: '/', rewrite: { maps: { filter: { a: 'filter="x"' } } } }] },
      null,
      2,
    );
    const w = writeConfiguration(yaml, 'e.yaml', json);
    expect(w.text).toContain('# keep me');
    expect(JSON.parse(readConfiguration(w.text)!)).toEqual(JSON.parse(json));
    expect(w.line).toBe(11);
  });

  test("a map entry the plugin refuses: exit 1, the plugin's reason with the map file's line; nothing written", async () => {
    const s = await scratch();
    await fs.appendFile(
      path.join(s.dir, 'filter.map'),
      '\n# a key the default rules cannot reach\nhd-only filter=true\n',
    );
    const r = await runOrigin(['edge-config', s.description, '--config', s.yaml]);
    expect(r.code).toBe(1);
    const line =
      (await fs.readFile(path.join(s.dir, 'filter.map'), 'utf8')).split('\n').indexOf('hd-only filter=true') + 1;
    expect(r.stderr).toBe(
      `origin edge-config: error: the plugin refuses the configuration: edge: configuration refused: locations[2].rewrite.maps.filter.hd-only: no rule can look this key up: the parts that read map filter (<bundle> (name: no '-', '@' or '/'), <dir> (name: no '-', '@' or '/')) cannot hold it (${path.join(s.dir, 'filter.map')}:${line})\n`,
    );
    expect(await fs.readFile(s.yaml, 'utf8')).toBe(s.original);
    // --no-check writes what the plugin would refuse (the lead's call, e.g. before a build).
    expect((await runOrigin(['edge-config', s.description, '--config', s.yaml, '--no-check'])).code).toBe(0);
  });

  test('a configuration the rest of the plugin refuses is reported as the plugin says it', async () => {
    const s = await scratch();
    const description = path.join(s.dir, 'bad.yaml');
    await fs.writeFile(description, 'locations:\n  - prefix: /\n    rewrite: { maps: { alter: alter.map } }\n');
    const r = await runOrigin(['edge-config', description, '--config', s.yaml]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^origin edge-config: error: the plugin refuses the configuration: .*locations\[0\]\.rewrite: needs "skip_rewrite": false/,
    );
  });

  test.each([
    [
      'a bad map line',
      async (s: { dir: string }) => fs.appendFile(path.join(s.dir, 'timeline.map'), 'oops\n'),
      (s: { dir: string }) =>
        `origin edge-config: error: ${path.join(s.dir, 'timeline.map')}:${readFileSync(path.join(s.dir, 'timeline.map'), 'utf8').split('\n').indexOf('oops') + 1}: "oops" has no value (a line is: key, whitespace, a query fragment such as hls_fmp4=true)\n`,
    ],
    [
      'a missing map file',
      async (s: { dir: string }) => fs.rm(path.join(s.dir, 'alter.map')),
      (s: { dir: string }) =>
        `origin edge-config: error: ${path.join(s.dir, 'edge-config.yaml')}: locations[2].rewrite.maps.alter: cannot read the map file ${path.join(s.dir, 'alter.map')}: ENOENT\n`,
    ],
    [
      'a description that is not YAML',
      async (s: { dir: string }) =>
        fs.writeFile(path.join(s.dir, 'edge-config.yaml'), 'locations:\n  - prefix: /\n   bad: [\n'),
      (s: { dir: string }) => `origin edge-config: error: ${path.join(s.dir, 'edge-config.yaml')}:3: not valid YAML: `,
    ],
    [
      'a description that is no object',
      async (s: { dir: string }) => fs.writeFile(path.join(s.dir, 'edge-config.yaml'), '- 1\n'),
      (s: { dir: string }) =>
        `origin edge-config: error: ${path.join(s.dir, 'edge-config.yaml')}: the description must be an object (the plugin configuration)\n`,
    ],
    [
      'an envoy.yaml without a wasm filter',
      async (s: { yaml: string }) => fs.writeFile(s.yaml, 'static_resources: {}\n'),
      (s: { yaml: string }) =>
        `origin edge-config: error: ${s.yaml}: no envoy.filters.http.wasm filter (typed_config "@type": type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm) in an HTTP connection manager\n`,
    ],
  ])('%s: exit 1 naming the file (and line)', async (_what, damage, message) => {
    const s = await scratch();
    await damage(s as never);
    const r = await runOrigin(['edge-config', s.description, '--config', s.yaml]);
    expect(r.code).toBe(1);
    expect(r.stderr.startsWith(message(s as never))).toBe(true);
  });

  test('a configuration value of another type is not replaced', async () => {
    const s = await scratch();
    await fs.writeFile(s.yaml, s.original.replace('google.protobuf.StringValue', 'google.protobuf.Struct'));
    const r = await runOrigin(['edge-config', s.description, '--config', s.yaml]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /envoy\.yaml:\d+: configuration "@type" must be type\.googleapis\.com\/google\.protobuf\.StringValue/,
    );
  });

  test('--help, and command-line mistakes exit 2', async () => {
    const help = await runOrigin(['edge-config', '--help']);
    expect(help.code).toBe(0);
    for (const option of ['--config <file>', '--print', '--no-check', 'envoy-config/maps/edge-config.yaml'])
      expect(help.stdout).toContain(option);
    for (const [args, message] of [
      [[], /a description file is required/],
      [['a.yaml', 'b.yaml'], /one description file, not "a.yaml" and "b.yaml"/],
      [['a.yaml', '--config'], /--config needs a value/],
      [['a.yaml', '--bogus'], /unknown option "--bogus"/],
    ] as Array<[string[], RegExp]>) {
      const r = await runOrigin(['edge-config', ...args]);
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
    expect(parseEdgeConfigArgs(['d.yaml', '--config=e.yaml', '--print', '--no-check'])).toEqual({
      description: 'd.yaml',
      config: 'e.yaml',
      print: true,
      check: false,
      help: false,
    });
  });
});
