// The shipped envoy-config/envoy.yaml carries the demo configuration that `origin edge-config`
// writes from envoy-config/maps/edge-config.yaml and its map files (issue 25): regenerated from
// them, the file comes out byte for byte as committed, so the two cannot drift apart. It stays
// a file Envoy reads as it is: one wasm filter whose configuration is a StringValue holding the
// JSON object the plugin accepts, with the locations the demo prints URLs for.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseEnvoyConfig } from '../../../host-glue/envoy/envoy-config';
import { demoLocations } from '../../../origin/cli/demo-examples';
import { ROOT, runOrigin, tempDir } from '../../helpers/fixtures';

const ENVOY_YAML = path.join(ROOT, 'envoy-config', 'envoy.yaml');
const MAPS = path.join(ROOT, 'envoy-config', 'maps');

/** Runs `origin edge-config` on a copy of the shipped envoy.yaml with the given maps directory; the result. */
async function regenerate(mapsDir: string): Promise<{ code: number; stderr: string; text: string }> {
  const dir = tempDir('edge-config-demo-');
  const yaml = path.join(dir, 'envoy.yaml');
  await fs.copyFile(ENVOY_YAML, yaml);
  // The module path stays relative, as shipped: the check resolves it from the working directory.
  const cwd = process.cwd();
  process.chdir(ROOT);
  try {
    const r = await runOrigin(['edge-config', path.join(mapsDir, 'edge-config.yaml'), '--config', yaml]);
    return { code: r.code, stderr: r.stderr, text: await fs.readFile(yaml, 'utf8') };
  } finally {
    process.chdir(cwd);
  }
}

test('envoy.yaml is what origin edge-config writes from maps/edge-config.yaml (regenerated, byte for byte)', async () => {
  const r = await regenerate(MAPS);
  expect([r.code, r.stderr]).toEqual([0, '']);
  expect(r.text).toBe(await fs.readFile(ENVOY_YAML, 'utf8'));
});

test('a changed map file makes the regenerated file differ: the comparison above can fail', async () => {
  const dir = tempDir('edge-config-maps-');
  for (const f of await fs.readdir(MAPS)) await fs.copyFile(path.join(MAPS, f), path.join(dir, f));
  await fs.appendFile(path.join(dir, 'filter.map'), '\nhd      filter=systemBitrate>1000000\n');
  const r = await regenerate(dir);
  expect(r.code).toBe(0);
  expect(r.text).not.toBe(await fs.readFile(ENVOY_YAML, 'utf8'));
  expect(r.text).toContain('"hd": "filter=systemBitrate>1000000"');
});

test('the shipped file holds the demo locations as a StringValue Envoy hands to the plugin raw', async () => {
  const config = parseEnvoyConfig(await fs.readFile(ENVOY_YAML, 'utf8'), ENVOY_YAML);
  expect(config.plugin.pluginConfigurationType).toBe('StringValue');
  const json = Buffer.from(config.plugin.pluginConfiguration).toString('utf8');
  const value = JSON.parse(json) as { locations: Array<Record<string, unknown>> };
  expect(value.locations.map((l) => [l.prefix, Object.keys(l).sort().join(' ')])).toEqual([
    ['/token/', 'auth_token prefix rewrite skip_rewrite validate_filter'],
    ['/secure/', 'auth_basic prefix rewrite skip_rewrite validate_filter'],
    ['/', 'prefix rewrite skip_rewrite validate_filter'],
  ]);
  expect(demoLocations(json)).toEqual({
    token: { prefix: 'token', secret: 'demo-only-token-secret', timeout: 3600 },
    basic: { prefix: '/secure/' },
  });
  // The file says the secrets are demo-only, where a reader of the plugin configuration looks.
  expect(await fs.readFile(ENVOY_YAML, 'utf8')).toMatch(/demo-only.*edge-config\.yaml/s);
});
