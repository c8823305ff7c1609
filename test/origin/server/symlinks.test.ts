// Static files, presentations and symbolic links (origin/io/confine.ts): a link under the root that
// resolves outside it (a path to /etc/passwd planted in a content folder, a .ism or a source linked
// in from elsewhere) is as if nothing were there, unless --follow-symlinks allows it; links that
// stay inside the root are served, and a source the .ism names outside the root by its own path is
// the operator's choice. Real links, real files, real presentations.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { startServer } from '../../../origin/server/server';
import { parseServeArgs } from '../../../origin/cli/serve-command';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';
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

/** A root with presentations reached through links: the .ism itself, a source, a directory. */
async function presentationLinks(): Promise<string> {
  const root = tempDir('symlink-pres-root-');
  const outside = tempDir('symlink-pres-outside-');
  const files = ['video_baseline_400k.ismv', 'audio_eng_64k.isma'];
  for (const f of files) await fs.copyFile(media(f), path.join(outside, f));
  const pack = async (ism: string, sources: string[]): Promise<void> => {
    const r = await runOrigin(['package', '-q', '-o', ism, ...sources]);
    if (r.code !== 0) throw new Error(r.stderr);
  };
  // Named outside the root by the .ism's own src paths: the operator's choice, served.
  await pack(
    path.join(root, 'named-outside.ism'),
    files.map((f) => path.join(outside, f)),
  );
  // The .ism is a link out of the root.
  // Its sources as `../<outside>/<file>`: the same files read from the link's folder or the target's.
  await pack(
    path.join(outside, 'elsewhere.ism'),
    files.map((f) => path.join(outside, f)),
  );
  const elsewhere = path.join(outside, 'elsewhere.ism');
  let text = await fs.readFile(elsewhere, 'utf8');
  for (const f of files) text = text.replace(`src="${f}"`, `src="../${path.basename(outside)}/${f}"`);
  await fs.writeFile(elsewhere, text);
  await fs.symlink(path.join(outside, 'elsewhere.ism'), path.join(root, 'linked.ism'));
  // An in-root .ism whose video is an in-root link to a file outside.
  await fs.symlink(path.join(outside, files[0]!), path.join(root, 'video-link.ismv'));
  await fs.copyFile(media(files[1]!), path.join(root, files[1]!));
  await pack(path.join(root, 'source-linked.ism'), [path.join(root, 'video-link.ismv'), path.join(root, files[1]!)]);
  // A directory link out, with a presentation in it (its sources beside it).
  await pack(
    path.join(outside, 'inner.ism'),
    files.map((f) => path.join(outside, f)),
  );
  await fs.symlink(outside, path.join(root, 'linked-dir'));
  // A link that stays inside the root.
  await fs.symlink('named-outside.ism', path.join(root, 'inside-link.ism'));
  return root;
}

test('presentations through links out of the root are refused; named paths and inside links are served', async () => {
  const root = await presentationLinks();
  const server = await startServer(testServerOptions(root, []));
  try {
    const answer = async (p: string): Promise<[string, number, unknown]> => {
      const r = await get(server.url, p);
      return [p, r.status, r.headers['x-origin-error']];
    };
    expect(await answer('/named-outside.ism/.mpd')).toEqual(['/named-outside.ism/.mpd', 200, undefined]);
    expect(await answer('/inside-link.ism/.mpd')).toEqual(['/inside-link.ism/.mpd', 200, undefined]);
    // The .ism through a link, or a directory link: as if absent.
    expect(await answer('/linked.ism/.mpd')).toEqual(['/linked.ism/.mpd', 404, 'unknown-presentation']);
    expect(await answer('/linked-dir/inner.ism/.mpd')).toEqual([
      '/linked-dir/inner.ism/.mpd',
      404,
      'unknown-presentation',
    ]);
    // A source through a link: the .ism names a file that is not there for the origin.
    expect(await answer('/source-linked.ism/.mpd')).toEqual(['/source-linked.ism/.mpd', 500, 'missing-source']);
  } finally {
    await server.close();
  }
  const following = await startServer({ ...testServerOptions(root, []), followSymlinks: true });
  try {
    for (const p of ['/linked.ism/.mpd', '/linked-dir/inner.ism/.mpd', '/source-linked.ism/.mpd'])
      expect([p, (await get(following.url, p)).status]).toEqual([p, 200]);
  } finally {
    await following.close();
  }
});
