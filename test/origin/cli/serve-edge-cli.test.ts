// `origin serve --edge-config`: the command line of the edge in the origin's process. What the
// filter does there is test/host-glue/envoy/edge-inline.test.ts; here: the options reach it, and a file or
// module that does not load stops the command with Envoy's reason.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseServeArgs, serve } from '../../../origin/cli/serve-command';
import { ROOT, runOrigin, tempDir } from '../../helpers/fixtures';
import { PLAYABLE } from '../../helpers/presentations';
import { startTestOrigin, TestOrigin } from '../server/server-helpers';
import { ENVOY_YAML, request } from '../../host-glue/envoy/edge-helpers';

let origin: TestOrigin;

beforeAll(async () => {
  origin = await startTestOrigin({ p: PLAYABLE });
}, 60_000);

afterAll(async () => {
  await origin?.server.close();
});

test('--edge-config runs the filter in front of the origin (server: envoy, the origin bytes)', async () => {
  const cwd = process.cwd();
  process.chdir(ROOT); // the module path in envoy.yaml is relative to the working directory, as in Envoy
  const lines: string[] = [];
  try {
    const a = parseServeArgs([
      '--root',
      origin.root,
      '--port',
      '0',
      '--workers',
      '1',
      '-q',
      '--edge-config',
      ENVOY_YAML,
      '--edge-log-level',
      'warn',
    ]);
    expect([a.edgeConfig, a.edgeLogLevel]).toEqual([ENVOY_YAML, 'warn']);
    const server = await serve(a, (l) => lines.push(l));
    try {
      const [viaEdge, direct] = await Promise.all([
        request(server.url, '/p.ism/.mpd'),
        request(origin.url, '/p.ism/.mpd'),
      ]);
      expect([viaEdge.status, viaEdge.headers.server]).toEqual([200, 'envoy']);
      expect(viaEdge.body.equals(direct.body)).toBe(true);
      expect(direct.headers.server).toBeUndefined();
    } finally {
      await server.close();
    }
  } finally {
    process.chdir(cwd);
  }
});

test('a configuration that does not load: exit 1 with the file and line, before listening', async () => {
  const dir = tempDir('serve-edge-');
  const bad = path.join(dir, 'envoy.yaml');
  await fs.writeFile(
    bad,
    (await fs.readFile(ENVOY_YAML, 'utf8')).replace(/filename: .*edge\.wasm/, 'filename: /nonexistent/edge.wasm'),
  );
  const r = await runOrigin(['serve', '--root', origin.root, '--port', '0', '--workers', '1', '--edge-config', bad]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^origin serve: error: .*envoy\.yaml:\d+: .*\/nonexistent\/edge\.wasm: no such file/m);
  const missing = await runOrigin([
    'serve',
    '--root',
    origin.root,
    '--port',
    '0',
    '--workers',
    '1',
    '--edge-config',
    path.join(dir, 'none.yaml'),
  ]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/origin serve: error: .*none\.yaml/);
});

test.each([
  [
    ['--edge-log-level', 'loud'],
    /--edge-log-level must be one of trace, debug, info, warn, error, critical, not "loud"/,
  ],
  [['--edge-config'], /--edge-config/],
])('bad arguments %j: exit 2 with the reason', async (extra, message) => {
  const r = await runOrigin(['serve', '--root', origin.root, ...extra]);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
});

test('--help documents the options', async () => {
  const r = await runOrigin(['serve', '--help']);
  expect(r.stdout).toMatch(/--edge-config <envoy\.yaml>/);
  expect(r.stdout).toMatch(/--edge-log-level <level>/);
});
