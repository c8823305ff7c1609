// `origin package --cpix=<file or http(s) URL>`: the CPIX document is read when packaging and
// stored in the server manifest head as the `cpix` option (the document, Base64), so the origin
// never fetches keys while serving and the .ism says everything. Its usage rules are evaluated
// against the tracks being written (drm/cpix-protection.ts, the code the origin runs when it loads
// the presentation), so a track that no rule matches, or two rules give different keys, stops
// packaging (exit 1) naming the input file and track before anything is written.
// Signed and encrypted documents are refused (drm/cpix.ts): fetch over HTTPS instead.

import { promises as fs } from 'node:fs';
import { originError } from '../errors';
import type { MediaTrack } from '../model/media';
import type { StreamOptions } from '../options/registry';
import { MAX_CPIX_BYTES, parseCpix } from '../drm/cpix';
import { cpixPlan } from '../drm/cpix-protection';
import { keyOptionsBesideCpix } from '../drm/protection';
import { uuidString } from '../drm/systems';

/** Seconds a key server has to answer. */
const FETCH_TIMEOUT_MS = 30_000;

/** Replaces the `cpix` option's file or URL by the document it names, checked (Base64). */
export async function storeCpixDocument(options: StreamOptions): Promise<void> {
  const source = options.str('cpix')!;
  const mixed = keyOptionsBesideCpix(options);
  if (mixed.length > 0) {
    throw originError('bad-option', `cannot be combined with ${mixed.join(', ')}: the CPIX document gives the keys`, {
      subject: '--cpix',
    });
  }
  const shown = shownSource(source);
  const bytes = await readSource(source, shown);
  parseCpix(bytes.toString('utf8'), shown);
  options.set('cpix', bytes.toString('base64'));
}

/** Evaluates the stored document's usage rules against the tracks to write; one progress line each. */
export function checkCpixTracks(
  chosen: ReadonlyArray<{ input: string; track: MediaTrack }>,
  options: StreamOptions,
  progress: (line: string) => void,
): void {
  const doc = parseCpix(Buffer.from(options.str('cpix')!, 'base64').toString('utf8'), '--cpix');
  const tracks = chosen.map((c) => {
    const p = c.track.properties;
    return {
      properties: p,
      describe: `${c.input} track ${p.trackID} (${p.trackName}, ${p.systemBitrate} bit/s)`,
      encrypted: p.type === 'video' || p.type === 'audio',
    };
  });
  const plan = cpixPlan(doc, tracks, options, '--cpix');
  tracks.forEach((t, i) => {
    const p = plan.tracks[i];
    progress(`cpix: ${t.describe}: ${p === undefined ? 'clear' : `key ${uuidString(p.key.kid)} (${p.scheme})`}`);
  });
  if (plan.smooth === undefined) {
    progress('cpix: Smooth Streaming is not encrypted (several keys or cbcs): it is refused for this presentation');
  }
}

async function readSource(source: string, shown: string): Promise<Buffer> {
  const fail = (why: string): never => {
    throw originError('bad-option', `cannot read the CPIX document: ${why}`, { subject: `--cpix ${shown}` });
  };
  if (/^https?:\/\//i.test(source)) {
    let response: Response;
    try {
      response = await fetch(source, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'follow' });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      return fail(cause?.code ?? cause?.message ?? (e as Error).message);
    }
    if (!response.ok) fail(`HTTP ${response.status}`);
    const body = Buffer.from(await response.arrayBuffer());
    if (body.byteLength > MAX_CPIX_BYTES) fail(`longer than ${MAX_CPIX_BYTES} bytes`);
    return body;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) fail('give a file path or an http(s) URL');
  const io = (e: unknown): never => {
    const code = (e as NodeJS.ErrnoException).code;
    return fail(code === 'ENOENT' ? 'no such file' : (code ?? String(e)));
  };
  const stat = await fs.stat(source).catch(io);
  if (!stat.isFile()) fail('not a regular file');
  if (stat.size > MAX_CPIX_BYTES) fail(`longer than ${MAX_CPIX_BYTES} bytes`);
  return fs.readFile(source).catch(io);
}

/** A URL without its query and credentials (they may hold a token); a path as given. */
function shownSource(source: string): string {
  if (!/^https?:\/\//i.test(source)) return source;
  try {
    const u = new URL(source);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(a malformed URL)';
  }
}
