// What a client of the embedded edge gets when the plugin traps, under each failure policy of
// envoy-config/README.md (docs/specs.md ABI §5.1), end to end: an envoy.yaml carrying the
// scriptable test plugin of the host tests (test/wasm/plugins/, inline_bytes) whose script
// (the StringValue configuration) traps in on_request_headers for one path, the real host, and an
// upstream the test controls.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { testPlugin } from '../proxy-wasm/helpers/test-plugins';
import { tempDir } from '../../helpers/fixtures';
import { EdgeUnderTest, emptiedEnvoyYaml, request, startTestEdge, startUpstream, Upstream } from './edge-helpers';

let upstream: Upstream;
const edges: EdgeUnderTest[] = [];

beforeAll(async () => {
  upstream = await startUpstream((req, res) => res.end(`origin ${req.url}`));
});

afterAll(async () => {
  for (const e of edges) await e.close();
  await upstream.close();
});

/** The shipped envoy.yaml with the test plugin inline, this script as its configuration, this policy. */
async function edgeWith(script: string, policy: string, extra = ''): Promise<EdgeUnderTest> {
  const shipped = await emptiedEnvoyYaml();
  const wasm = Buffer.from(testPlugin('script-plugin')).toString('base64');
  const yaml = shipped
    .replace('local: { filename: build/edge.wasm }', `local: { inline_bytes: ${wasm} }`)
    .replace(
      /value: \|\n(\s+)\{\}\n/,
      (_m, indent: string) =>
        `value: |\n${script
          .split('\n')
          .map((l) => indent + l)
          .join('\n')}\n`,
    )
    .replace('failure_policy: FAIL_CLOSED', `failure_policy: ${policy}${extra}`);
  const file = path.join(tempDir('edge-failure-'), 'envoy.yaml');
  await fs.writeFile(file, yaml);
  const e = await startTestEdge(upstream.url, { config: file });
  edges.push(e);
  return e;
}

const answer = async (e: EdgeUnderTest, p: string): Promise<[number, string]> => {
  const r = await request(e.url, p);
  return [r.status, r.body.toString()];
};

test('FAIL_CLOSED: the request that trapped and every later one get 503 with an empty body', async () => {
  const e = await edgeWith('request_headers@/boom trap', 'FAIL_CLOSED');
  expect(await answer(e, '/ok')).toEqual([200, 'origin /ok']);
  const before = upstream.requests.length;
  const boom = await request(e.url, '/boom');
  expect([boom.status, boom.body.length, boom.headers.server]).toEqual([503, 0, 'envoy']);
  expect(await answer(e, '/ok')).toEqual([503, '']);
  expect(upstream.requests.length).toBe(before); // nothing went upstream after the trap
  expect(e.pluginLogs.map(([, line]) => line).join('\n')).toContain(
    'Function: proxy_on_request_headers failed: Uncaught RuntimeError: unreachable',
  );
  expect(e.logs.some((l) => l.startsWith('GET /boom 503 ') && l.includes('local wasm_fail_stream'))).toBe(true);
});

test('FAIL_OPEN: the request that trapped continues, later ones skip the plugin', async () => {
  const e = await edgeWith('request_headers@/boom trap', 'FAIL_OPEN');
  expect(await answer(e, '/boom')).toEqual([200, 'origin /boom']);
  expect(await answer(e, '/ok')).toEqual([200, 'origin /ok']);
  expect(await answer(e, '/boom')).toEqual([200, 'origin /boom']);
});

test('FAIL_RELOAD: the request that trapped gets 503, then a new VM serves after reload_config.backoff', async () => {
  const e = await edgeWith(
    'request_headers@/boom trap',
    'FAIL_RELOAD',
    '\n                reload_config: { backoff: { base_interval: 0.2s } }',
  );
  expect(await answer(e, '/boom')).toEqual([503, '']);
  await new Promise((r) => setTimeout(r, 250));
  expect(await answer(e, '/ok')).toEqual([200, 'origin /ok']);
});

test('a trap in on_response_body after the headers went out resets the client connection', async () => {
  const e = await edgeWith('response_body@/late trap', 'FAIL_CLOSED');
  await expect(request(e.url, '/late')).rejects.toThrow(/aborted|socket hang up|ECONNRESET/);
  expect(await answer(e, '/ok')).toEqual([503, '']);
});
