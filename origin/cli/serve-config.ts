// `origin serve --config origin.yaml`: the file read (origin/config/ checks it), its settings laid
// under the flags, and SIGHUP's reload. A reload changes what can change while serving — the
// locations (Cache-Control, proxy_pass targets) and the server's Cache-Control values — and keeps
// the rest (port, workers, root, ...) with a warning: those need a restart. A file that does not
// read keeps the old configuration; the error names file, line and key. Under --workers the primary
// reads the file and hands the workers the result (serve-cluster.ts); a worker never reads it.

import cluster from 'node:cluster';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ConfigFileError, ConfigValue, OriginConfig, parseConfig } from '../config/config-file';
import { SERVER_KEYS } from '../config/schema';
import type { OriginLogger } from '../ops/log';
import type { Reconfiguration } from '../server/server';
import { UsageError } from './args';
import { parseServeArgs, ServeArgs } from './serve-command';

/** The ServeArgs field each server key of the file sets. */
const FIELDS: Record<string, keyof ServeArgs> = {
  root: 'root',
  host: 'host',
  port: 'port',
  workers: 'workers',
  manifest_cache_control: 'manifestCacheControl',
  segment_cache_control: 'segmentCacheControl',
  player: 'playerPage',
  serve_sources: 'serveSources',
  follow_symlinks: 'followSymlinks',
  stat_ttl_ms: 'statTtlMs',
  manifest_cache_bytes: 'manifestCacheBytes',
  encrypted_segment_cache_bytes: 'encryptedSegmentCacheBytes',
  edge_config: 'edgeConfig',
  warm_up_rounds: 'warmUpRounds',
  log_format: 'logFormat',
  log_level: 'logLevel',
  metrics: 'metrics',
  drain_seconds: 'drainSeconds',
  fragment_expired_status: 'fragmentExpiredStatus',
  fragment_missing_status: 'fragmentMissingStatus',
  fragment_not_yet_status: 'fragmentNotYetStatus',
};

/** Keys naming files: relative to the configuration file's directory. */
const PATH_KEYS = new Set(['root', 'edge_config']);

/** The environment variable through which the primary hands a worker its arguments. */
export const WORKER_ARGS_ENV = 'ORIGIN_SERVE_ARGS';

/** Reads and checks a configuration file; errors are ConfigFileErrors naming file and line. */
export async function readConfigFile(file: string): Promise<OriginConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigFileError(`${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  return parseConfig(text, file);
}

/** The settings of a file as ServeArgs fields (paths resolved against the file's directory). */
export function fileArgs(config: OriginConfig): Partial<ServeArgs> {
  const out: Partial<Record<keyof ServeArgs, ConfigValue>> = {};
  for (const [key, value] of config.server) {
    const field = FIELDS[key];
    if (field === undefined) continue;
    out[field] = PATH_KEYS.has(key) ? path.resolve(path.dirname(config.file), String(value)) : value;
  }
  return { ...(out as Partial<ServeArgs>), locations: config.locations };
}

/**
 * The arguments of `origin serve`: the flags over --config's settings over the defaults. A worker
 * takes those its primary resolved (WORKER_ARGS_ENV), so every worker runs what the primary runs.
 */
export async function resolveServeArgs(argv: readonly string[]): Promise<ServeArgs> {
  const handed = process.env[WORKER_ARGS_ENV];
  if (cluster.isWorker && handed !== undefined) return JSON.parse(handed) as ServeArgs;
  const first = parseServeArgs(argv);
  if (first.help || first.config === undefined) return first;
  const a = parseServeArgs(argv, fileArgs(await readConfigFile(first.config)));
  if (a.root === '') throw new UsageError(`--root <dir> is required (on the command line or as root: in ${a.config})`);
  return a;
}

/** The message of a configuration error for stderr, or undefined for any other error. */
export function configFailure(e: unknown): string | undefined {
  return e instanceof ConfigFileError ? `origin serve: error: ${e.message}` : undefined;
}

/** What of `next` a running server takes. */
export function reconfiguration(next: ServeArgs): Reconfiguration {
  return {
    manifestCacheControl: next.manifestCacheControl,
    segmentCacheControl: next.segmentCacheControl,
    locations: next.locations ?? [],
  };
}

/** The settings a reload cannot change (they need a restart): each key the new file changes. */
export function unreloadable(running: ServeArgs, next: ServeArgs): string[] {
  const changed: string[] = [];
  for (const k of SERVER_KEYS) {
    const field = FIELDS[k.name];
    if (k.reload || field === undefined) continue;
    if (JSON.stringify(running[field]) !== JSON.stringify(next[field])) changed.push(k.name);
  }
  return changed;
}

/**
 * Reads --config again: the arguments to run with (the running ones with what may change
 * replaced), or undefined when the file does not read (logged, with file, line and key).
 */
export async function reread(
  argv: readonly string[],
  running: ServeArgs,
  logger: OriginLogger,
): Promise<ServeArgs | undefined> {
  let next: ServeArgs;
  try {
    next = await resolveServeArgs(argv);
  } catch (e) {
    const why = e instanceof ConfigFileError || e instanceof UsageError ? e.message : String(e);
    logger.log('error', `origin: reload failed, the configuration stays as it was: ${why}`);
    return undefined;
  }
  for (const key of unreloadable(running, next)) {
    const field = FIELDS[key]!;
    logger.log(
      'warn',
      `origin: reload: ${running.config}: ${key} changed; it takes a restart (kept ${JSON.stringify(running[field])})`,
    );
  }
  return { ...running, ...reconfiguration(next) };
}

/**
 * SIGHUP reloads --config into `apply` (without --config it only says so); the listener, for
 * process.off. One reload at a time: a signal during one runs another after it.
 */
export function reloadOnHangUp(
  argv: readonly string[],
  a: ServeArgs,
  logger: OriginLogger,
  apply: (r: Reconfiguration) => void,
): () => void {
  let running = a;
  let queue = Promise.resolve();
  const listener = (): void => {
    queue = queue.then(async () => {
      if (running.config === undefined) {
        logger.log('warn', 'origin: SIGHUP: no --config to reload');
        return;
      }
      const next = await reread(argv, running, logger);
      if (next === undefined) return;
      try {
        apply(reconfiguration(next));
        running = next;
        logger.log('info', `origin: reloaded ${running.config}`);
      } catch (e) {
        logger.log('error', `origin: reload failed: ${(e as Error).message}`);
      }
    });
  };
  process.on('SIGHUP', listener);
  return listener;
}
