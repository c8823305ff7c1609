// The real edge plugin (build/edge.wasm, from assembly/) under the host: it passes Envoy's load
// checks and a request goes through it. `npm run build:wasm` first if it is missing.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createProxyWasmPlugin } from '../../../host-glue/proxy-wasm/host';
import { PluginLoadError } from '../../../host-glue/proxy-wasm/http-filter';
import { bytes, closeAll, INFO, LogCapture, request, response, spec, text } from './helpers/harness';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const EDGE = path.join(ROOT, 'build', 'edge.wasm');

beforeAll(() => {
  if (!existsSync(EDGE)) execFileSync('npm', ['run', 'build:wasm'], { cwd: ROOT, stdio: 'pipe' });
});
afterEach(closeAll);

test('build/edge.wasm loads and passes a request and its response through', async () => {
  const logs = new LogCapture();
  const plugin = await createProxyWasmPlugin({
    ...spec({ wasm: new Uint8Array(readFileSync(EDGE)) }, logs),
    pluginConfiguration: bytes('{}'),
  });
  try {
    const s = plugin.newStream(INFO);
    const req = await s.requestHeaders(request('/video/a.ism/Manifest'), true);
    expect(req).toEqual({ kind: 'continue', headers: request('/video/a.ism/Manifest') });
    const res = await s.responseHeaders(response(200, [['content-type', 'text/xml']]), false);
    expect(res).toEqual({ kind: 'continue', headers: response(200, [['content-type', 'text/xml']]) });
    const body = await s.responseBody(bytes('<SmoothStreamingMedia/>'), true);
    expect(body.kind === 'continue' && text(body.data)).toBe('<SmoothStreamingMedia/>');
    s.end();
    expect(plugin.failState).toBe(0);
    expect(logs.lines.filter((l) => l.level === 'error' || l.level === 'critical')).toEqual([]);
  } finally {
    await plugin.shutdown();
  }
});

test('build/edge.wasm refuses a configuration that is not JSON (Envoy refuses the filter)', async () => {
  const logs = new LogCapture();
  const refused = createProxyWasmPlugin({
    ...spec({ wasm: new Uint8Array(readFileSync(EDGE)) }, logs),
    pluginConfiguration: bytes('{not json'),
  });
  await expect(refused).rejects.toBeInstanceOf(PluginLoadError);
  await expect(refused).rejects.toThrow('Failed to configure base Wasm plugin');
});

test('build/edge.wasm lets the response of a request it lets through pass (it has no response callbacks), not that of one it refuses', async () => {
  const plugin = await createProxyWasmPlugin({
    ...spec({ wasm: new Uint8Array(readFileSync(EDGE)) }, new LogCapture()),
    pluginConfiguration: bytes('{}'),
  });
  try {
    const ok = plugin.newStream(INFO);
    await ok.requestHeaders(request('/video/a.ism/Manifest'), true);
    expect(ok.responsePassesThrough!()).toBe(true);
    ok.end();
    const refused = plugin.newStream(INFO);
    expect(await refused.requestHeaders(request('/video/../etc/passwd'), true)).toMatchObject({ kind: 'respond' });
    expect(refused.responsePassesThrough!()).toBe(false);
    refused.end();
    expect(plugin.liveContexts).toBe(2);
  } finally {
    await plugin.shutdown();
  }
});

test("build/edge.wasm's lines carry Envoy's prefixes: root without the plugin name, streams with it", async () => {
  const logs = new LogCapture();
  const plugin = await createProxyWasmPlugin({
    ...spec({ wasm: new Uint8Array(readFileSync(EDGE)), logLevel: 'debug' }, logs),
    pluginConfiguration: bytes('{}'),
  });
  try {
    for (const target of ['/video/a.ism/Manifest', '/a/../b']) {
      const s = plugin.newStream(INFO);
      await s.requestHeaders(request(target), true);
      s.end();
    }
    // on_configure runs on the root context (canary and worker); the request lines on streams.
    expect(logs.text()).toEqual([
      'wasm log test_root test_vm: edge: no locations: paths are normalised, no location rules',
      'wasm log test_root test_vm: edge: no locations: paths are normalised, no location rules',
      'wasm log test_plugin test_root test_vm: edge: GET /video/a.ism/Manifest',
      'wasm log test_plugin test_root test_vm: edge: GET /a/../b -> 400 edge_bad_path: dot segment (. or ..) in the path',
    ]);
  } finally {
    await plugin.shutdown();
  }
});
