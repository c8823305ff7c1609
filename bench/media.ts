// Long test sources for the benchmarks, generated with ffmpeg at bench time and cached in
// bench/.cache/ (git-ignored; never committed). Three single-track fragmented MP4 (Smooth ismv/isma)
// files of `hours` hours each: two small H.264 renditions and one AAC track, 2 s fragments.
//
//   ensureLongSources(1)  -> [video_320x180_1h.ismv, video_160x90_1h.ismv, audio_aac_1h.isma]
//
// A cached file is reused when its sidecar <file>.json records the same recipe and the file's
// size and mtime still match, and the file still indexes (mfra) to the expected duration.
// Anything else regenerates it (into a temp name, renamed into place when complete).

import { existsSync, promises as fs, readFileSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readMediaFile } from '../origin/media/media-file';
import { FileSource } from '../origin/io/source';
import { trackDuration } from '../origin/model/media';
import { checkFfmpeg, runFfmpeg } from './ffmpeg';

/** Bump when a recipe changes in a way the args below do not show. */
const RECIPE_VERSION = 1;

export interface LongSourceSpec {
  /** File name in the cache directory. */
  file: string;
  kind: 'video' | 'audio';
  /** One line for logs and the README. */
  description: string;
  /** ffmpeg arguments for the inputs and the encoder (no output, no duration). */
  args: string[];
  /** Relative encoding cost (seconds per hour on one EPYC core, measured): longest are started first. */
  cost: number;
}

const GOP = 48; // 2 s at 24 fps
const x264 = (w: number, h: number, kbps: number): string[] => [
  '-f',
  'lavfi',
  '-i',
  `testsrc2=size=${w}x${h}:rate=24`,
  '-map_metadata',
  '-1',
  '-fflags',
  '+bitexact',
  '-c:v',
  'libx264',
  '-threads',
  '1',
  '-preset',
  'ultrafast',
  '-pix_fmt',
  'yuv420p',
  '-g',
  String(GOP),
  '-keyint_min',
  String(GOP),
  '-sc_threshold',
  '0',
  '-x264-params',
  'open_gop=0',
  '-b:v',
  `${kbps}k`,
  '-maxrate',
  `${kbps}k`,
  '-bufsize',
  `${2 * kbps}k`,
];

/** AAC-LC stereo at 48 kHz of an `hz` sine, the fast coder, 2 s fragments. */
const aac = (hz: number, kbps: number): string[] => [
  '-f',
  'lavfi',
  '-i',
  `sine=frequency=${hz}:sample_rate=48000`,
  '-map_metadata',
  '-1',
  '-fflags',
  '+bitexact',
  '-ac',
  '2',
  '-c:a',
  'aac',
  '-aac_coder',
  'fast',
  '-b:a',
  `${kbps}k`,
  '-frag_duration',
  '2000000',
];

/** The three tracks of one long presentation (file names carry the duration). */
export function longSourceSpecs(hours = 1): LongSourceSpec[] {
  const tag = `${hours}h`;
  return [
    {
      file: `video_320x180_250k_${tag}.ismv`,
      kind: 'video',
      description: 'H.264 320x180 24 fps ultrafast ~250 kb/s, closed 2 s GOPs (one fragment per GOP)',
      args: x264(320, 180, 250),
      cost: 25,
    },
    {
      file: `video_160x90_100k_${tag}.ismv`,
      kind: 'video',
      description: 'H.264 160x90 24 fps ultrafast ~100 kb/s, closed 2 s GOPs (one fragment per GOP)',
      args: x264(160, 90, 100),
      cost: 10,
    },
    {
      file: `audio_aac_64k_${tag}.isma`,
      kind: 'audio',
      description: 'AAC-LC stereo 48 kHz 64 kb/s (440 Hz sine, fast coder), 2 s fragments (-frag_duration 2000000)',
      args: aac(440, 64),
      cost: 22, // the native AAC encoder; its default 'twoloop' coder takes twice as long
    },
  ];
}

export interface EnsureOptions {
  /** Default: <repo>/bench/.cache */
  cacheDir?: string;
  /** Parallel ffmpeg processes; default min(3, cpu count). Each encoder runs single-threaded. */
  concurrency?: number;
  log?: (line: string) => void;
  /** Seconds between progress lines while a file encodes. Default 10. */
  progressEvery?: number;
  /** The files to make (default longSourceSpecs(hours)). */
  specs?: LongSourceSpec[];
}

/**
 * The http suite's presentation (bench/http-bench.ts): 3 H.264 renditions up to 720p and 2 AAC
 * tracks of `minutes` minutes, 2 s closed GOPs (one fragment each), one track per file.
 */
export function httpBenchSpecs(minutes = 30): LongSourceSpec[] {
  const tag = `${minutes}m`;
  return [
    {
      file: `video_1280x720_1500k_${tag}.ismv`,
      kind: 'video',
      description: 'H.264 1280x720 24 fps ultrafast ~1500 kb/s, closed 2 s GOPs',
      args: x264(1280, 720, 1500),
      cost: 300,
    },
    {
      file: `video_854x480_800k_${tag}.ismv`,
      kind: 'video',
      description: 'H.264 854x480 24 fps ultrafast ~800 kb/s, closed 2 s GOPs',
      args: x264(854, 480, 800),
      cost: 140,
    },
    {
      file: `video_640x360_400k_${tag}.ismv`,
      kind: 'video',
      description: 'H.264 640x360 24 fps ultrafast ~400 kb/s, closed 2 s GOPs',
      args: x264(640, 360, 400),
      cost: 80,
    },
    {
      file: `audio_aac_128k_${tag}.isma`,
      kind: 'audio',
      description: 'AAC-LC stereo 48 kHz 128 kb/s (440 Hz sine, fast coder), 2 s fragments',
      args: aac(440, 128),
      cost: 22,
    },
    {
      file: `audio_aac_64k_${tag}.isma`,
      kind: 'audio',
      description: 'AAC-LC stereo 48 kHz 64 kb/s (660 Hz sine, fast coder), 2 s fragments',
      args: aac(660, 64),
      cost: 22,
    },
  ];
}

/** The repository root: the nearest directory above this file (src or dist) with our package.json. */
export function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        const name = (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name;
        if (name === 'streaming-origin') return dir;
      } catch {
        // keep walking
      }
    }
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

export function defaultCacheDir(): string {
  return path.join(repoRoot(), 'bench', '.cache');
}

interface Sidecar {
  recipeVersion: number;
  args: string[];
  seconds: number;
  ffmpeg: string;
  size: number;
  mtimeMs: number;
  generatedAt: string;
  generationSeconds: number;
}

const sidecarPath = (file: string): string => `${file}.json`;

/** Fully encoding arguments for one file (everything but the output path). */
function fullArgs(spec: LongSourceSpec, seconds: number): string[] {
  return [...spec.args, '-t', String(seconds), '-f', 'ismv'];
}

/** Opens the file and checks it indexes via mfra to one track of at least `seconds`. Returns a reason when not. */
async function verify(file: string, spec: LongSourceSpec, seconds: number): Promise<string | undefined> {
  let source: FileSource | undefined;
  try {
    source = await FileSource.open(file);
    const media = await readMediaFile(source, 'fast');
    if (media.indexedBy !== 'mfra') return `indexed by ${media.indexedBy}, expected an mfra index`;
    if (media.tracks.length !== 1) return `${media.tracks.length} tracks, expected 1`;
    const track = media.tracks[0]!;
    if (track.properties.type !== spec.kind) return `a ${track.properties.type} track, expected ${spec.kind}`;
    const got = Number(trackDuration(track.fragments)) / track.properties.TimeScale;
    if (got < seconds - 0.5) return `${got.toFixed(1)} s of media, expected ${seconds} s`;
    return undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await source?.close();
  }
}

async function cachedIsValid(file: string, spec: LongSourceSpec, seconds: number): Promise<string | undefined> {
  if (!existsSync(file)) return 'absent';
  let sidecar: Sidecar;
  try {
    sidecar = JSON.parse(await fs.readFile(sidecarPath(file), 'utf8')) as Sidecar;
  } catch {
    return 'no valid sidecar';
  }
  const st = statSync(file);
  if (
    sidecar.recipeVersion !== RECIPE_VERSION ||
    JSON.stringify(sidecar.args) !== JSON.stringify(fullArgs(spec, seconds))
  )
    return 'recipe changed';
  if (sidecar.size !== st.size || Math.abs(sidecar.mtimeMs - st.mtimeMs) > 1) return 'file changed since generation';
  return verify(file, spec, seconds);
}

function fmtMB(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

async function generate(
  spec: LongSourceSpec,
  file: string,
  seconds: number,
  opts: Required<Pick<EnsureOptions, 'log' | 'progressEvery'>>,
): Promise<Sidecar> {
  const ffmpeg = await checkFfmpeg();
  const tmp = `${file}.partial-${process.pid}`;
  const args = fullArgs(spec, seconds);
  const started = process.hrtime.bigint();
  const elapsed = (): number => Number(process.hrtime.bigint() - started) / 1e9;
  let lastPrint = 0;
  opts.log(`generating ${path.basename(file)}: ${spec.description}, ${seconds} s`);
  const result = await runFfmpeg(
    ['-nostdin', '-hide_banner', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1', '-y', ...args, tmp],
    (line) => {
      const m = /^out_time_us=(\d+)/.exec(line);
      if (!m) return;
      const t = elapsed();
      if (t - lastPrint < opts.progressEvery) return;
      lastPrint = t;
      const done = Number(m[1]) / 1e6;
      opts.log(`  ${path.basename(file)}: ${done.toFixed(0)}/${seconds} s encoded, ${t.toFixed(1)} s elapsed`);
    },
  );
  if (result.code !== 0) {
    await fs.rm(tmp, { force: true });
    throw new Error(`ffmpeg failed (exit ${result.code}) generating ${file}:\n${result.stderr.trim()}`);
  }
  const problem = await verify(tmp, spec, seconds);
  if (problem !== undefined) {
    await fs.rm(tmp, { force: true });
    throw new Error(`generated ${file} does not verify: ${problem}`);
  }
  await fs.rename(tmp, file);
  const st = statSync(file);
  const sidecar: Sidecar = {
    recipeVersion: RECIPE_VERSION,
    args,
    seconds,
    ffmpeg,
    size: st.size,
    mtimeMs: st.mtimeMs,
    generatedAt: new Date().toISOString(),
    generationSeconds: Number(elapsed().toFixed(2)),
  };
  await fs.writeFile(sidecarPath(file), `${JSON.stringify(sidecar, null, 2)}\n`);
  opts.log(`  ${path.basename(file)}: done in ${elapsed().toFixed(1)} s, ${fmtMB(st.size)}`);
  return sidecar;
}

/** Deletes `*.partial-<pid>` leftovers of interrupted runs whose process is gone. */
async function removeStalePartials(cacheDir: string): Promise<void> {
  for (const name of await fs.readdir(cacheDir)) {
    const m = /\.partial-(\d+)$/.exec(name);
    if (!m) continue;
    let alive = true;
    try {
      process.kill(Number(m[1]), 0);
    } catch {
      alive = false;
    }
    if (!alive) await fs.rm(path.join(cacheDir, name), { force: true });
  }
}

export interface LongSourcesReport {
  files: string[];
  /** Files generated by this call (the rest came from the cache). */
  generated: string[];
  /** Wall-clock seconds this call spent generating (0 when all were cached). */
  generationSeconds: number;
  /** Per file, as recorded when it was generated (possibly by an earlier run). */
  details: Array<{ file: string; size: number; generationSeconds: number; generatedAt: string; description: string }>;
}

/**
 * Ensures the three long sources of `hours` hours exist in the cache and returns their paths
 * (video 320x180, video 160x90, audio). Reuses valid cached files; generates the rest with up to
 * `concurrency` parallel ffmpeg processes.
 */
export async function ensureLongSources(hours = 1, options: EnsureOptions = {}): Promise<string[]> {
  return (await ensureLongSourcesReport(hours, options)).files;
}

/** As ensureLongSources, with what was generated and how long it took. */
export async function ensureLongSourcesReport(hours = 1, options: EnsureOptions = {}): Promise<LongSourcesReport> {
  if (!(hours > 0)) throw new Error(`hours must be positive, got ${hours}`);
  const log = options.log ?? ((line: string) => console.log(`[bench/media] ${line}`));
  const progressEvery = options.progressEvery ?? 10;
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const concurrency = Math.max(1, options.concurrency ?? Math.min(3, os.cpus().length));
  const seconds = Math.round(hours * 3600);
  await fs.mkdir(cacheDir, { recursive: true });
  await removeStalePartials(cacheDir);

  const specs = options.specs ?? longSourceSpecs(hours);
  const files = specs.map((s) => path.join(cacheDir, s.file));
  const todo: number[] = [];
  for (let i = 0; i < specs.length; i++) {
    const reason = await cachedIsValid(files[i]!, specs[i]!, seconds);
    if (reason === undefined)
      log(`cached: ${path.relative(process.cwd(), files[i]!)} (${fmtMB(statSync(files[i]!).size)})`);
    else {
      if (reason !== 'absent') log(`regenerating ${specs[i]!.file}: ${reason}`);
      todo.push(i);
    }
  }

  const started = process.hrtime.bigint();
  // Longest first, so the parallel processes finish together.
  todo.sort((a, b) => specs[b]!.cost - specs[a]!.cost);
  if (todo.length > 0) {
    log(
      `generating ${todo.length} file(s) of ${seconds} s into ${cacheDir} with ${Math.min(concurrency, todo.length)} parallel ffmpeg process(es)`,
    );
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < todo.length) {
        const i = todo[next++]!;
        await generate(specs[i]!, files[i]!, seconds, { log, progressEvery });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, todo.length) }, worker));
  }
  const generationSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (todo.length > 0) log(`generated ${todo.length} file(s) in ${generationSeconds.toFixed(1)} s`);

  const details = await Promise.all(
    specs.map(async (s, i) => {
      const sidecar = JSON.parse(await fs.readFile(sidecarPath(files[i]!), 'utf8')) as Sidecar;
      return {
        file: files[i]!,
        size: sidecar.size,
        generationSeconds: sidecar.generationSeconds,
        generatedAt: sidecar.generatedAt,
        description: s.description,
      };
    }),
  );
  return {
    files,
    generated: todo.map((i) => files[i]!),
    generationSeconds: todo.length > 0 ? Number(generationSeconds.toFixed(2)) : 0,
    details,
  };
}
