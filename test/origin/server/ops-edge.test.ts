// `origin serve --edge-config`: /metrics, /healthz and /readyz are answered before the edge
// filter (origin/server/ops-endpoints.ts), so a plugin configuration that refuses every path
// without a token still lets the platform probe and scrape the origin; every other path goes
// through the filter, and the origin's own series show what reached it.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseServeArgs, serve } from '../../../origin/cli/serve-command';
import { ROOT, tempDir } from '../../helpers/fixtures';
import { parseExposition, valueOf } from '../../helpers/prometheus';
import { emptiedEnvoyYaml, request } from '../../host-glue/envoy/edge-helpers';
import { startTestOrigin, TestOrigin } from './server-helpers';

/** Every path needs a signed URL (assembly/edge/token.ts): anything else is 401 at the filter. */
const TOKENS_EVERYWHERE = JSON.stringify({
  locations: [{ prefix: '/', skip_rewrite: false, auth_token: { secret: 's3cret', prefix: 'token' } }],
});

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin({ p: ['video_baseline_400k.ismv', 'audio_eng_64k.isma'] });
}, 60_000);

afterAll(() => origin?.server.close());

test('the origin paths bypass the filter; the rest does not', async () => {
  const dir = tempDir('ops-edge-');
  const yaml = path.join(dir, 'envoy.yaml');
  const text = await emptiedEnvoyYaml();
  expect(text).toMatch(/value: \|\n\s+\{\}\n/);
  await fs.writeFile(yaml, text.replace(/(value: \|\n\s+)\{\}\n/, `$1${TOKENS_EVERYWHERE}\n`));
  const cwd = process.cwd();
  process.chdir(ROOT); // the module path in envoy.yaml is relative to the working directory
  const lines: string[] = [];
  try {
    const a = parseServeArgs(['--root', origin.root, '--port', '0', '--workers', '1', '--edge-config', yaml]);
    const server = await serve(a, (l) => lines.push(l));
    try {
      const refused = await request(server.url, '/p.ism/.mpd');
      expect([refused.status, refused.headers.server]).toEqual([401, 'envoy']);
      for (const p of ['/healthz', '/readyz', '/metrics']) {
        const r = await request(server.url, p);
        expect([p, r.status, r.headers.server]).toEqual([p, 200, undefined]);
      }
      expect((await request(server.url, '/healthz')).body.toString()).toBe('ok\n');
      // The refused request never reached the origin: only the probes are counted. The plugin's
      // own counters (host-glue/envoy/edge-stats.ts) show it: one request, refused for its token.
      const e = parseExposition((await request(server.url, '/metrics')).body.toString());
      expect(valueOf(e, 'origin_http_requests_total', { kind: 'dash-mpd', status: '401' })).toBeUndefined();
      expect(valueOf(e, 'edge_requests_total', {})).toBe(1);
      const refusals = e.samples.filter((x) => x.name === 'edge_refusals_total' && x.value > 0);
      expect(refusals.map((x) => [x.labels, x.value])).toEqual([[{ reason: expect.stringMatching(/^token/) }, 1]]);
      expect(valueOf(e, 'origin_http_requests_total', { kind: 'ops', status: '200' })).toBeGreaterThanOrEqual(3);
    } finally {
      await server.close();
    }
  } finally {
    process.chdir(cwd);
  }
  expect(lines.some((l) => l.startsWith('GET /healthz 200'))).toBe(true);
});
