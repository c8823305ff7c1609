// Compiles the AssemblyScript test plugins (test/wasm/plugins/) on demand with the asc CLI,
// flags as in docs/specs.md ABI §4.2, into build/test-plugins/ keyed by a hash of the sources,
// the flags and the compiler version (so a changed plugin is rebuilt, an unchanged one reused).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const PLUGINS = path.resolve(__dirname, '..', '..', '..', 'wasm', 'plugins');
const CACHE = path.join(ROOT, 'build', 'test-plugins');
const ASC = path.join(ROOT, 'node_modules', '.bin', 'asc');
const FLAGS = ['-O3', '--runtime', 'incremental', '--use', 'abort=pluginAbort', '--exportStart', '_initialize'];

export type TestPluginEntry = 'script-plugin' | 'script-plugin-malloc' | 'script-plugin-request-only';

const compiled = new Map<TestPluginEntry, Uint8Array>();

export function testPlugin(entry: TestPluginEntry = 'script-plugin'): Uint8Array {
  const known = compiled.get(entry);
  if (known !== undefined) return known;
  const hash = createHash('sha256');
  for (const f of readdirSync(PLUGINS).sort()) hash.update(f).update(readFileSync(path.join(PLUGINS, f)));
  hash.update(entry).update(FLAGS.join(' '));
  hash.update(readFileSync(path.join(ROOT, 'node_modules', 'assemblyscript', 'package.json')));
  const out = path.join(CACHE, `${entry}-${hash.digest('hex').slice(0, 16)}.wasm`);
  if (!existsSync(out)) {
    mkdirSync(CACHE, { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    // cwd = plugins/: asc must not pick up the project's asconfig.json (its abort handler).
    execFileSync(ASC, [`${entry}.ts`, '-o', tmp, ...FLAGS], { cwd: PLUGINS, stdio: 'pipe' });
    renameSync(tmp, out); // atomic: parallel jest workers may compile the same plugin
  }
  const bytes = new Uint8Array(readFileSync(out));
  compiled.set(entry, bytes);
  return bytes;
}
