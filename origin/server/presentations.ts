// Finds the server manifests under the root for the index page (bounded: a root with a million
// files must not stall the page), how each is protected and what its tracks are.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { protectionOf } from '../drm/protection';
import { ismTrackToProperties } from '../ism/ism-tracks';
import { parseServerManifest, ServerManifest } from '../ism/server-manifest';
import type { TrackProperties } from '../model/media';
import type { Protection } from '../model/protection';
import { optionsFromManifest } from '../options/registry';

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

/** Server manifests bigger than this are not read for the index page (a .ism is a few KiB). */
const MAX_ISM_BYTES = 1 << 20;

/** The server manifest at a URL path (`/dir/x.ism`), parsed; undefined when too big or unreadable. */
async function manifestAt(root: string, urlPath: string): Promise<ServerManifest | undefined> {
  const file = path.join(
    root,
    ...urlPath
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent),
  );
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile() || stat.size > MAX_ISM_BYTES) return undefined;
    return parseServerManifest(await fs.readFile(file, 'utf8'), path.basename(file));
  } catch {
    return undefined;
  }
}

/**
 * How the .ism at a URL path is protected (its DRM options, origin/drm/protection.ts), for the
 * index page; undefined when it is clear, too big or unreadable (its requests then say why).
 */
export async function protectionAt(root: string, urlPath: string): Promise<Protection | undefined> {
  const manifest = await manifestAt(root, urlPath);
  if (manifest === undefined) return undefined;
  const name = path.basename(urlPath);
  try {
    // Without the tracks (the sources are not read for the index): what the options alone say.
    return protectionOf(optionsFromManifest(manifest.meta, name), [], name);
  } catch {
    return undefined;
  }
}

/**
 * The tracks of the .ism at a URL path with the properties a filter sees (as `origin filter`
 * reads them, from the server manifest alone); undefined when it cannot be read or a track is
 * malformed (its requests then say why).
 */
export async function tracksAt(root: string, urlPath: string): Promise<TrackProperties[] | undefined> {
  const manifest = await manifestAt(root, urlPath);
  try {
    return manifest?.tracks.map((t, i) => ismTrackToProperties(t, i));
  } catch {
    return undefined;
  }
}
