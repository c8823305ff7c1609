// A served root for the fuzzing and abuse runs: real presentations packaged from the fixtures, a
// static file, and things planted to be refused (origin/io/confine.ts): a canary file outside the
// root, links to it and to /etc/passwd, a directory link out, a .ism that is a link out of the
// root, and an in-root .ism whose video is an in-root link to a file outside. The canary's token
// and the outside presentation's track name are random per run; no answer may ever carry them.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { media, runOrigin, tempDir } from '../../helpers/fixtures';

export interface PlantedRoot {
  root: string;
  outside: string;
  /** In the canary file and in the outside presentation's track names. */
  token: string;
  /** URL paths of the presentations that must answer. */
  presentations: string[];
  /** URL paths (first segment) of what must never answer 2xx. */
  planted: string[];
  /** Relative paths from the root to the planted files outside it. */
  escapes: string[];
}

export const PLANTED_SOURCES = ['video_baseline_400k.ismv', 'audio_eng_64k.isma', 'text_eng.ismt'];

async function pack(ism: string, sources: string[]): Promise<void> {
  const r = await runOrigin(['package', '-q', '-o', ism, ...sources]);
  if (r.code !== 0) throw new Error(`packaging ${ism}: ${r.stderr}`);
}

export async function plantedRoot(token: string): Promise<PlantedRoot> {
  // Siblings with fixed names: the escapes (`../outside/canary.txt`) are the same text in every
  // run, so a seed replays the same requests (the mutator draws per character and digit).
  const base = tempDir('hardening-');
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  await fs.mkdir(root);
  await fs.mkdir(outside);
  for (const f of PLANTED_SOURCES) await fs.copyFile(media(f), path.join(root, f));
  await pack(
    path.join(root, 'p.ism'),
    PLANTED_SOURCES.map((f) => path.join(root, f)),
  );
  await fs.mkdir(path.join(root, 'sub', 'dir'), { recursive: true });
  await pack(
    path.join(root, 'sub', 'dir', 'q.ism'),
    PLANTED_SOURCES.map((f) => path.join(root, f)),
  );
  await fs.writeFile(path.join(root, 'hello.txt'), 'hello\n');

  await fs.writeFile(path.join(outside, 'canary.txt'), `${token}\n`);
  for (const f of PLANTED_SOURCES) await fs.copyFile(media(f), path.join(outside, f));
  await pack(
    path.join(outside, 'outside.ism'),
    PLANTED_SOURCES.map((f) => path.join(outside, f)),
  );
  // The outside presentation's track names carry the token: a manifest of it would show it.
  const outsideIsm = path.join(outside, 'outside.ism');
  await fs.writeFile(
    outsideIsm,
    (await fs.readFile(outsideIsm, 'utf8')).replace(/value="(\w+_eng)"/g, `value="$1${token}"`),
  );

  await fs.symlink(path.join(outside, 'canary.txt'), path.join(root, 'canary.txt'));
  await fs.symlink('/etc/passwd', path.join(root, 'passwd.txt'));
  await fs.symlink(outside, path.join(root, 'outdir'));
  await fs.symlink(outsideIsm, path.join(root, 'linked.ism'));
  await fs.symlink(path.join(outside, PLANTED_SOURCES[0]!), path.join(root, 'video-link.ismv'));
  await pack(path.join(root, 'viasym.ism'), [
    path.join(root, 'video-link.ismv'),
    ...PLANTED_SOURCES.slice(1).map((f) => path.join(root, f)),
  ]);
  const up = path.relative(root, outside);
  return {
    root,
    outside,
    token,
    presentations: ['/p.ism', '/sub/dir/q.ism'],
    planted: ['canary.txt', 'passwd.txt', 'outdir', 'linked.ism', 'viasym.ism', 'video-link.ismv'],
    escapes: [
      `${up}/canary.txt`,
      `${up}/outside.ism/.mpd`,
      `${up}/outside.ism/Manifest`,
      '../../../../../../etc/passwd',
    ],
  };
}
