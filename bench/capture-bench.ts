// Capture speed: `origin capture` of 120 s of a 720p presentation (the http suite's 1500 kb/s
// H.264 and 128 kb/s AAC, bench/media.ts httpBenchSpecs) from `origin serve` on loopback, next to
// `ffmpeg -i <the same MPD URL> -map 0 -c copy` in the same run, the passes interleaved so that
// machine load hits both alike. Each run is its own process under /usr/bin/time (wall seconds and
// peak RSS, `%e %M`); the origin runs as one pinned worker. Reports × real time (120 s / wall
// seconds) per tool, the capture's ratio to ffmpeg (the median of the passes' own ratios), peak RSS
// of each, and the capture's output size against ffmpeg's. BENCH_PASSES (default 5),
// BENCH_CAPTURE_SECONDS (default 120).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { main as cli } from '../origin/cli/main';
import { Sink } from './in-process';
import { ffmpegBin } from './ffmpeg';
import { originCliPath, startOrigin, stop } from './http-processes';
import { machine, machineLine } from './machine';
import { ensureLongSourcesReport, httpBenchSpecs, repoRoot } from './media';
import { round, stats } from './stats';

interface Run {
  seconds: number;
  rssBytes: number;
  outBytes: number;
}

/** `cmd args` under /usr/bin/time: wall seconds and peak RSS from its last stderr line. */
function timed(cmd: string, args: string[], out: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%e %M', cmd, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => {
      const m = /(\d+(?:\.\d+)?) (\d+)\s*$/.exec(err);
      if (code !== 0 || m === null) return reject(new Error(`${cmd} ${args.join(' ')} (exit ${code}): ${err}`));
      resolve({ seconds: Number(m[1]), rssBytes: Number(m[2]) * 1024, outBytes: statSync(out).size });
    });
  });
}

export async function runCaptureBench(options: { log?: (l: string) => void } = {}): Promise<unknown> {
  const log = options.log ?? ((line: string) => console.log(line));
  const passes = Number(process.env['BENCH_PASSES'] ?? 5);
  const seconds = Number(process.env['BENCH_CAPTURE_SECONDS'] ?? 120);
  const report = await ensureLongSourcesReport(0.5, { specs: httpBenchSpecs(30), log: (l) => log(`[media] ${l}`) });
  const video = report.files.find((f) => f.includes('1280x720'))!;
  const audio = report.files.find((f) => f.includes('aac_128k'))!;
  const dir = mkdtempSync(path.join(tmpdir(), 'capture-bench-'));
  let origin: Awaited<ReturnType<typeof startOrigin>> | undefined;
  try {
    const err = new Sink();
    if ((await cli(['package', '-q', '-o', path.join(dir, 'p.ism'), video, audio], new Sink(), err)) !== 0)
      throw new Error(`packaging failed: ${err.text}`);
    origin = await startOrigin(dir, 1);
    // From 60 s in: a range in the middle, as a highlight is.
    const url = `${origin.url}/p.ism/.mpd?t=60-${60 + seconds}`;
    const ours = path.join(dir, 'ours.ismv');
    const theirs = path.join(dir, 'ffmpeg.mp4');
    const kinds = {
      capture: (): Promise<Run> => timed(process.execPath, [originCliPath(), 'capture', '-q', url, '-o', ours], ours),
      ffmpeg: (): Promise<Run> =>
        timed(ffmpegBin(), ['-v', 'error', '-y', '-i', url, '-map', '0', '-c', 'copy', '-f', 'mp4', theirs], theirs),
    };
    const runs: Record<keyof typeof kinds, Run[]> = { capture: [], ffmpeg: [] };
    // One untimed run each (the origin's caches, the page cache), then the passes, the order alternating.
    await kinds.capture();
    await kinds.ffmpeg();
    for (let p = 0; p < passes; p++) {
      const order: Array<keyof typeof kinds> = p % 2 === 0 ? ['capture', 'ffmpeg'] : ['ffmpeg', 'capture'];
      for (const k of order) runs[k].push(await kinds[k]());
      log(
        `pass ${p + 1}/${passes}: capture ${runs.capture[p]!.seconds} s, ffmpeg -c copy ${runs.ffmpeg[p]!.seconds} s`,
      );
    }
    const realTime = (r: Run[]): ReturnType<typeof stats> => stats(r.map((x) => seconds / Math.max(x.seconds, 0.01)));
    const ratios = runs.capture.map((c, i) => runs.ffmpeg[i]!.seconds / Math.max(c.seconds, 0.01));
    const peak = (r: Run[]): number => round(Math.max(...r.map((x) => x.rssBytes)) / 2 ** 20, 1);
    const result = {
      suite: 'capture',
      date: new Date().toISOString(),
      machine: machine(),
      seconds,
      passes,
      url: '/p.ism/.mpd?t=60-180 (720p 1500 kb/s H.264 + 128 kb/s AAC)',
      captureRealTime: realTime(runs.capture),
      ffmpegRealTime: realTime(runs.ffmpeg),
      /** > 1: the capture is faster than ffmpeg -c copy. */
      speedRatioMedian: stats(ratios).median,
      capturePeakRssMiB: peak(runs.capture),
      ffmpegPeakRssMiB: peak(runs.ffmpeg),
      captureBytes: runs.capture[0]!.outBytes,
      ffmpegBytes: runs.ffmpeg[0]!.outBytes,
    };
    log(machineLine());
    log(
      `capture: ${result.captureRealTime.median}x real time (median of ${passes}), ffmpeg -c copy ${result.ffmpegRealTime.median}x; ` +
        `capture/ffmpeg speed ${result.speedRatioMedian}; peak RSS ${result.capturePeakRssMiB} MiB vs ${result.ffmpegPeakRssMiB} MiB`,
    );
    writeFileSync(path.join(repoRoot(), 'bench', 'results', 'capture.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    await stop(origin);
    rmSync(dir, { recursive: true, force: true });
  }
}
