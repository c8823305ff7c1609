// Paths to the committed fixture media and helpers to run the real CLI.

import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { DEMO_CLASSES } from '../../origin/cli/demo-command';
import { main } from '../../origin/cli/main';

export const ROOT = path.resolve(__dirname, '..', '..');
export const MEDIA = path.join(ROOT, 'fixtures', 'media');

export const media = (name: string): string => path.join(MEDIA, name);

/**
 * The single-track fixture files, as fixtures/README.md lists them: the demo's set-top class
 * (origin/cli/demo-command.ts) holds every one of them, in this order.
 */
export const FIXTURE_FILES: string[] = [...DEMO_CLASSES.settop!];

export function tempDir(prefix = 'origin-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export function listDir(dir: string): string[] {
  return readdirSync(dir).sort();
}

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** Runs `origin <args>` in-process through the same entry point as bin/origin.js. */
export async function runOrigin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new Capture();
  const err = new Capture();
  const code = await main(args, out, err);
  return { code, stdout: out.text, stderr: err.text };
}
