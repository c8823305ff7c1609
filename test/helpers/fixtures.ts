// Paths to the committed fixture media and helpers to run the real CLI.

import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../origin/cli/main';

export const ROOT = path.resolve(__dirname, '..', '..');
export const MEDIA = path.join(ROOT, 'fixtures', 'media');

export const media = (name: string): string => path.join(MEDIA, name);

/** The single-track fixture files, as fixtures/README.md lists them. */
export const FIXTURE_FILES = [
  'video_baseline_400k.ismv',
  'video_main_900k.ismv',
  'video_high_1600k.ismv',
  'video_sar_500k.ismv',
  'video_2997_600k.ismv',
  'video_interlaced_800k.ismv',
  'audio_eng_64k.isma',
  'audio_eng_128k.isma',
  'audio_nld_128k.isma',
  'audio_ac3_384k.isma',
  'audio_eac3_256k.isma',
  'text_eng.ismt',
  'text_nld.ismt',
];

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
