// What the remote-storage tests share: a storage directory of packaged presentations (sources
// beside their .ism, as a storage holds them) and locations as `--config` gives them.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LocationConfig, LOCATION_DEFAULTS } from '../../../origin/config/config-file';
import { media, runOrigin } from '../../helpers/fixtures';
import { smoothWritten } from '../server/written-urls';

export function location(prefix: string, proxyPass: string, extra: Partial<LocationConfig> = {}): LocationConfig {
  return {
    prefix,
    proxyPass,
    ...LOCATION_DEFAULTS,
    proxyInsecureKeys: false,
    issPassThrough: false,
    preferStatic: false,
    line: 1,
    ...extra,
  };
}

/** `files` copied into `dir` and packaged there as `<name>.ism` (sources beside it), with `extra` options. */
export async function storagePresentation(
  dir: string,
  name: string,
  files: readonly string[],
  extra: string[] = [],
): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  for (const f of files) await fs.copyFile(media(f), path.join(dir, f));
  const target = path.join(dir, `${name}.ism`);
  const r = await runOrigin(['package', '-q', '-o', target, ...extra, ...files.map((f) => path.join(dir, f))]);
  if (r.code !== 0) throw new Error(r.stderr);
}

/** The tail (after `<ism>/`) of a presentation's first Smooth video fragment, from its manifest. */
export function firstVideoFragment(manifest: string, n = 0): string {
  const base = 'http://x/p.ism/';
  const video = smoothWritten(manifest, `${base}Manifest`).filter((w) => w.key.startsWith('video'));
  return video[n]!.url.slice(base.length);
}
