// `origin serve --config`: the file under the flags, its errors at start, and SIGHUP's reload
// through the primary to two real workers (origin/cli/serve-config.ts, serve-cluster.ts).

import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { resolveServeArgs } from '../../../origin/cli/serve-config';
import { runOrigin, tempDir } from '../../helpers/fixtures';
import { haveNginx, Nginx, startNginx } from '../../helpers/nginx';
import { storagePresentation } from '../remote/remote-setup';
import { childrenOf, linux, startCli, stopCli, waitFor } from './cli-origin';

const FILES = ['video_baseline_400k.ismv', 'audio_eng_64k.isma'];

test('flags override the file; root and edge_config are relative to the file', async () => {
  const dir = tempDir('origin-config-');
  const file = path.join(dir, 'origin.yaml');
  await fs.writeFile(file, 'root: media\nport: 9000\nworkers: 3\nlocations:\n  - prefix: /a/\n');
  const a = await resolveServeArgs(['--config', file, '--port', '9001']);
  expect([a.root, a.port, a.workers, a.locations?.map((l) => l.prefix)]).toEqual([
    path.join(dir, 'media'),
    9001,
    3,
    ['/a/'],
  ]);
  await fs.writeFile(file, 'port: 9000\n');
  await expect(resolveServeArgs(['--config', file])).rejects.toThrow(/--root <dir> is required/);
  expect((await resolveServeArgs(['--config', file, '--root', 'x'])).root).toBe('x');
});

test.each([
  [
    'locations:\n  - prefix: /legacy/\n    iss_pass_through: "on"\n',
    'o.yaml:3: locations[0].iss_pass_through: expected true or false, found "on"',
  ],
  [
    'root: .\nlocations:\n  - prefix: /a/\n    proxy_pass: 12\n',
    'o.yaml:4: locations[0].proxy_pass: expected a string, found 12',
  ],
])('origin serve refuses %j at start: exit 1, file, line and key', async (text, message) => {
  const dir = tempDir('origin-config-');
  await fs.writeFile(path.join(dir, 'o.yaml'), text);
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const r = await runOrigin(['serve', '--config', 'o.yaml', '--root', dir]);
    expect([r.code, r.stderr]).toEqual([1, `origin serve: error: ${message}\n`]);
  } finally {
    process.chdir(cwd);
  }
});

/** `path`'s status and Cache-Control, each on a new connection (the workers take turns). */
function head(url: string, p: string): Promise<[number, string | undefined]> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}${p}`, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve([res.statusCode ?? 0, res.headers['cache-control']]));
      })
      .on('error', reject);
  });
}

(linux ? test : test.skip)(
  'SIGHUP reloads --config in both workers; a bad file keeps the old one; the port keeps its value',
  async () => {
    const root = tempDir('origin-root-');
    await storagePresentation(path.join(root, 'v'), 'p', FILES);
    let nginx: Nginx | undefined;
    let storageUrl = 'http://127.0.0.1:9/none/';
    if (haveNginx) {
      const storage = tempDir('origin-storage-');
      await storagePresentation(path.join(storage, 'r'), 'p', FILES);
      nginx = await startNginx(storage);
      storageUrl = nginx.url;
    }
    const file = path.join(tempDir('origin-config-'), 'origin.yaml');
    const config = (manifest: string, extra = ''): string =>
      `root: ${root}\nport: 0\nlocations:\n  - prefix: /v/\n    manifest_cache_control: ${manifest}\n${extra}`;
    await fs.writeFile(file, config('one'));
    const cli = await startCli(['--config', file, '--workers', '2', '-q', '--no-player', '--warm-up-rounds', '0']);
    const primary = cli.child.pid!;
    const all = async (p: string): Promise<Array<[number, string | undefined]>> =>
      Promise.all(Array.from({ length: 8 }, () => head(cli.url, p)));
    try {
      expect(childrenOf(primary)).toHaveLength(2);
      expect(new Set((await all('/v/p.ism/.mpd')).map(([, c]) => c))).toEqual(new Set(['one']));
      expect((await head(cli.url, '/r/p.ism/.mpd'))[0]).toBe(404);
      // The new file: another Cache-Control, a remote location, and a port (which needs a restart).
      const remote = `  - prefix: /r/\n    proxy_pass: ${storageUrl}r/\n`;
      await fs.writeFile(file, config('two', remote).replace('port: 0', 'port: 1'));
      process.kill(primary, 'SIGHUP');
      await waitFor(() => /reloaded/.test(cli.stderr()));
      // Every worker answers with the new settings (8 connections: both workers, several times).
      expect(new Set((await all('/v/p.ism/.mpd')).map(([, c]) => c))).toEqual(new Set(['two']));
      if (nginx !== undefined) expect(new Set((await all('/r/p.ism/.mpd')).map(([s]) => s))).toEqual(new Set([200]));
      expect(cli.stderr()).toMatch(/reload: .*origin\.yaml: port changed; it takes a restart \(kept 0\)/);
      // A file that does not read: the error with file, line and key; the old settings stay.
      await fs.writeFile(file, config('[three'));
      process.kill(primary, 'SIGHUP');
      await waitFor(() => /reload failed/.test(cli.stderr()));
      expect(cli.stderr()).toMatch(
        /reload failed, the configuration stays as it was: .*origin\.yaml:6: not valid YAML/,
      );
      await fs.writeFile(file, config('"a\\nb"'));
      process.kill(primary, 'SIGHUP');
      await waitFor(() => /locations\[0\]\.manifest_cache_control: expected one header line/.test(cli.stderr()));
      expect(new Set((await all('/v/p.ism/.mpd')).map(([, c]) => c))).toEqual(new Set(['two']));
      expect(childrenOf(primary)).toHaveLength(2);
    } finally {
      await stopCli(cli);
      await nginx?.stop();
    }
  },
  60_000,
);
