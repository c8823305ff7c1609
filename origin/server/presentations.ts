// Finds the server manifests under the root for the index page (bounded: a root with a million
// files must not stall the page).

import { promises as fs } from 'node:fs';
import * as path from 'node:path';

const MAX_DEPTH = 4;
const MAX_ENTRIES = 500;

/** URL paths (`/dir/x.ism`) of the .ism files under root, sorted. */
export async function listPresentations(root: string): Promise<string[]> {
  const found: string[] = [];
  async function walk(dir: string, rel: string[], depth: number): Promise<void> {
    if (depth > MAX_DEPTH || found.length >= MAX_ENTRIES) return;
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      if (e.isDirectory()) await walk(path.join(dir, e.name), [...rel, e.name], depth + 1);
      else if (e.isFile() && /\.ism$/i.test(e.name) && found.length < MAX_ENTRIES)
        found.push('/' + [...rel, e.name].map(encodeURIComponent).join('/'));
    }
  }
  await walk(root, [], 0);
  return found;
}
