// Static files and symbolic links: a link under the root that resolves outside it (a path to
// /etc/passwd planted in a content folder) is 404, as if nothing were there, unless
// --follow-symlinks allows it; links that stay inside the root are served. Real links, real files.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { startServer } from '../../../origin/server/server';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { tempDir } from '../../helpers/fixtures';
import { get, testServerOptions } from './server-helpers';

const OUTSIDE = 'a file outside the root\n';

async function rootWithLinks(): Promise<{ root: string; outside: string }> {
  const root = tempDir('symlink-root-');
  const outsideDir = tempDir('symlink-outside-');
  const outside = path.join(outsideDir, 'secret.txt');
  await fs.writeFile(outside, OUTSIDE);
  await fs.writeFile(path.join(root, 'real.txt'), 'inside\n');
  await fs.mkdir(path.join(root, 'dir'));
  await fs.symlink(outside, path.join(root, 'out.txt')); // absolute link out
  await fs.symlink(path.relative(path.join(root, 'dir'), outside), path.join(root, 'dir', 'rel.txt')); // relative link out
  await fs.symlink(outsideDir, path.join(root, 'linked-dir')); // a directory link out
  await fs.symlink('real.txt', path.join(root, 'in.txt')); // a link that stays inside
  await fs.symlink('/etc/passwd', path.join(root, 'passwd.txt'));
  return { root, outside };
}

test('links that resolve outside the root are 404; links inside are served', async () => {
  const { root } = await rootWithLinks();
  const server = await startServer(testServerOptions(root, []));
  try {
    for (const p of ['/out.txt', '/dir/rel.txt', '/linked-dir/secret.txt', '/passwd.txt']) {
      const r = await get(server.url, p);
      expect([p, r.status, r.headers['x-origin-error']]).toEqual([p, 404, 'unknown-url']);
      expect(r.text).not.toContain(OUTSIDE.trim());
      expect(r.text).not.toContain('root:');
    }
    const inside = await get(server.url, '/in.txt');
    expect([inside.status, inside.text]).toEqual([200, 'inside\n']);
    expect((await get(server.url, '/real.txt')).status).toBe(200);
  } finally {
    await server.close();
  }
});

test('--follow-symlinks serves them', async () => {
  const { root } = await rootWithLinks();
  expect(parseServeArgs(['--root', root, '--follow-symlinks']).followSymlinks).toBe(true);
  expect(parseServeArgs(['--root', root]).followSymlinks).toBeUndefined();
  const server = await startServer({ ...testServerOptions(root, []), followSymlinks: true });
  try {
    for (const p of ['/out.txt', '/dir/rel.txt', '/linked-dir/secret.txt']) {
      const r = await get(server.url, p);
      expect([p, r.status, r.text]).toEqual([p, 200, OUTSIDE]);
    }
  } finally {
    await server.close();
  }
});
