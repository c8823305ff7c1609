// ffmpeg for the benches' media: running it (a clear message when it is absent), checking the
// encoders the recipes need, and joining copies of a cached source by stream copy.

import { spawn } from 'node:child_process';
import { existsSync, promises as fs, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

export const ffmpegBin = (): string => process.env['FFMPEG'] ?? 'ffmpeg';

/** Runs `ffmpeg args`, collecting stdout/stderr; rejects with a clear message when ffmpeg is absent. */
export function runFfmpeg(
  args: string[],
  onStdoutLine?: (line: string) => void,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegBin(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (!onStdoutLine) {
        stdout += chunk;
        return;
      }
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        onStdoutLine(pending.slice(0, nl).trim());
        pending = pending.slice(nl + 1);
      }
    });
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-8000);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') {
        reject(
          new Error(
            `ffmpeg not found (looked for '${ffmpegBin()}' on PATH): the benchmarks generate their long test media with it. ` +
              'Install it with: apt-get install -y ffmpeg   (or set FFMPEG=/path/to/ffmpeg)',
          ),
        );
      } else {
        reject(e);
      }
    });
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

let ffmpegChecked: Promise<string> | undefined;

/** The `ffmpeg -version` first line; checks that libx264 and aac are available. */
export function checkFfmpeg(): Promise<string> {
  ffmpegChecked ??= (async () => {
    const version = await runFfmpeg(['-hide_banner', '-version']);
    if (version.code !== 0)
      throw new Error(`'${ffmpegBin()} -version' failed (exit ${version.code}): ${version.stderr.trim()}`);
    const encoders = await runFfmpeg(['-hide_banner', '-encoders']);
    if (!/\blibx264\b/.test(encoders.stdout)) {
      throw new Error(
        `this ffmpeg (${ffmpegBin()}) has no libx264 encoder; install a build with it: apt-get install -y ffmpeg`,
      );
    }
    if (!/\baac\b/.test(encoders.stdout)) throw new Error(`this ffmpeg (${ffmpegBin()}) has no aac encoder`);
    return version.stdout.split('\n')[0]?.trim() ?? 'ffmpeg (unknown version)';
  })();
  return ffmpegChecked;
}
/**
 * `copies` back-to-back copies of a cached source as one file, by stream copy (ffmpeg's concat
 * demuxer: no re-encoding, seconds): the long presentation of the "first manifest" measurement.
 */
export async function concatCopies(source: string, copies: number, out: string): Promise<string> {
  const st = statSync(source);
  const stamp = `${out}.json`;
  const want = JSON.stringify({ source: path.basename(source), size: st.size, mtimeMs: st.mtimeMs, copies });
  if (existsSync(out) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return out;
  const list = `${out}.list-${process.pid}`;
  const tmp = `${out}.partial-${process.pid}`;
  await fs.writeFile(list, Array.from({ length: copies }, () => `file '${source.replace(/'/g, "'\\''")}'\n`).join(''));
  const r = await runFfmpeg([
    '-nostdin',
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    list,
    '-c',
    'copy',
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    '-frag_duration',
    '2000000',
    '-f',
    'ismv',
    tmp,
  ]);
  await fs.rm(list, { force: true });
  if (r.code !== 0) {
    await fs.rm(tmp, { force: true });
    throw new Error(`ffmpeg concat of ${source} failed (exit ${r.code}): ${r.stderr.trim()}`);
  }
  await fs.rename(tmp, out);
  await fs.writeFile(stamp, want);
  return out;
}
