// `origin serve --workers N`: N worker processes behind one port (node:cluster). The workers share
// nothing but the listening port (the primary accepts and hands connections round-robin,
// cluster.SCHED_RR, Node's default on Linux); each has its own caches. The primary:
// - replaces a worker that dies, after a delay that grows while deaths come close together, and
//   reports a crash loop (origin/ops/backoff.ts);
// - answers the workers' /metrics with every worker's series summed (origin/ops/cluster-metrics.ts);
// - on SIGTERM or SIGINT has every worker drain (--drain-seconds), kills what is left past the
//   bound, then exits.
// A worker never outlives its primary: when the IPC channel closes without the primary having
// asked (it exited, or was killed with SIGKILL and could tell no one), Node's cluster module exits
// the worker at once (lib/internal/cluster/child.js, on 'disconnect'); test/origin/server/
// lifecycle.test.ts holds it to that. Its responses in flight are cut off: the primary held the
// listening socket, and whatever supervises the primary starts the origin again.
// `startServer()` stays single-process: workers exist only through this command.

import cluster, { Worker } from 'node:cluster';
import * as path from 'node:path';
import { isLivePublished, LivePublished } from '../live/fragment-table';
import { RestartBackoff } from '../ops/backoff';
import { PrimaryMetrics, scrapeThroughPrimary } from '../ops/cluster-metrics';
import { OriginLogger } from '../ops/log';
import { cliMetrics, DEFAULT_DRAIN_SECONDS, edgeLoadFailure, serve, ServeArgs, untilSignal } from './serve-command';
import type { Reconfiguration, RunningServer } from '../server/server';
import { startIngestFromArgs } from './serve-ingest';
import { reloadOnHangUp, WORKER_ARGS_ENV } from './serve-config';

/** A reload the primary hands its workers (SIGHUP, serve-config.ts). */
interface WorkerReconfigure {
  origin: 'reconfigure';
  reconfiguration: Reconfiguration;
}

interface WorkerReady {
  origin: 'ready';
  url: string;
}

/** How long the primary waits past --drain-seconds for its workers to exit before it kills them, ms. */
const EXIT_GRACE_MS = 2000;

/** A worker: serve, tell the primary where, drain and exit on a signal. */
export async function runWorker(a: ServeArgs, logger: OriginLogger): Promise<number> {
  let server: RunningServer | undefined;
  // On SIGTERM or SIGINT: from the primary, or from whoever signals the whole process group (a
  // terminal's Ctrl-C, systemd's control-group stop), after which the primary's own SIGTERM
  // follows. Further signals are ignored while draining: the primary bounds the stop (it kills
  // what is left after --drain-seconds), and its death ends this process anyway.
  void untilSignal().then(async () => {
    process.on('SIGTERM', ignore);
    process.on('SIGINT', ignore);
    const boundMs = (a.drainSeconds ?? DEFAULT_DRAIN_SECONDS) * 1000;
    const clean = server === undefined ? true : await server.drain(boundMs);
    if (!clean)
      logger.log('warn', `origin: worker ${process.pid} cut off responses still in flight after ${boundMs / 1000} s`);
    logger.flush();
    // Nothing else may keep this process: the IPC channel, kept source handles, the plugin's VM.
    process.exit(0);
  });
  // SIGHUP is the primary's to act on (a terminal's hangup reaches the whole group): ignored here.
  process.on('SIGHUP', ignore);
  // Fault injection for the tests (test/origin/live/fragment-table-cli.test.ts): every k-th
  // message of the ingest process is ignored, as if lost; the worker must recover from the index.
  const dropEvery = Number(process.env.ORIGIN_TEST_DROP_LIVE_MESSAGES ?? 0);
  let published = 0;
  process.on('message', (m: WorkerReconfigure | LivePublished) => {
    if (isLivePublished(m)) {
      if (dropEvery > 0 && ++published % dropEvery === 0) return;
      // Before the server runs: its table reads the index on first use.
      return server?.live.apply(m);
    }
    if (m?.origin !== 'reconfigure' || server === undefined) return;
    try {
      server.reconfigure(m.reconfiguration);
    } catch (e) {
      logger.log('error', `origin: worker ${process.pid} could not reload: ${(e as Error).message}`);
    }
  });
  const metrics = a.metrics === false ? undefined : cliMetrics();
  if (metrics !== undefined) scrapeThroughPrimary(metrics);
  try {
    server = await serve(a, logger, metrics);
  } catch (e) {
    const why = edgeLoadFailure(e, a);
    if (why === undefined) throw e;
    process.stderr.write(`${why}\n`);
    process.exit(1);
  }
  process.send!({ origin: 'ready', url: server.url } satisfies WorkerReady);
  return new Promise<number>(() => undefined); // stop() exits
}

function ignore(): void {}

/** The primary: start the workers, keep them running, stop them on a signal. */
export async function runPrimary(
  argv: readonly string[],
  a: ServeArgs,
  out: NodeJS.WritableStream,
  logger: OriginLogger,
): Promise<number> {
  // What every worker runs, the ones started later included (a reload changes it): the primary is
  // the one reader of --config.
  let handed: ServeArgs = a;
  let stopping = false;
  const backoff = new RestartBackoff();
  const pending = new Set<NodeJS.Timeout>();
  const metrics = a.metrics === false ? undefined : new PrimaryMetrics(live, () => backoff.inCrashLoop(Date.now()));
  if (metrics !== undefined) cluster.on('message', (w, m) => void metrics.onMessage(w, m));

  const fork = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const w: Worker = cluster.fork({ [WORKER_ARGS_ENV]: JSON.stringify(handed) });
      const early = (code: number | null, signal: string | null): void =>
        reject(new Error(`worker ${w.process.pid} exited (${signal ?? `exit ${code}`}) before listening`));
      w.once('exit', early);
      w.on('message', (m: WorkerReady) => {
        if (m?.origin !== 'ready') return;
        w.off('exit', early);
        w.once('exit', (code, signal) => died(`worker ${w.process.pid} died (${signal ?? `exit ${code}`})`));
        logger.log('info', `origin: worker ${w.process.pid} listening`);
        resolve(m.url);
      });
    });

  /** A worker is gone (or a replacement did not start): another, after the backoff's delay. */
  const died = (what: string): void => {
    if (stopping) return;
    const r = backoff.died(Date.now());
    const loop = r.crashLoop ? ` (crash loop: ${r.recent} deaths within a minute)` : '';
    logger.log(r.crashLoop ? 'error' : 'warn', `origin: ${what}; starting another in ${r.delayMs} ms${loop}`);
    const timer = setTimeout(() => {
      pending.delete(timer);
      if (stopping) return;
      metrics?.restarts.inc();
      fork().catch((e: unknown) => died(`could not restart a worker: ${(e as Error).message}`));
    }, r.delayMs);
    pending.add(timer);
  };

  let urls: string[];
  try {
    urls = await Promise.all(Array.from({ length: a.workers ?? 1 }, fork));
  } catch (e) {
    stopping = true;
    await stopWorkers(0);
    throw e;
  }
  // The primary owns the live archive: it alone takes ingest; the workers read what it writes,
  // told of each published fragment (origin/live/fragment-table.ts; a worker that misses a
  // message, or starts later, reads the index files).
  const notify = (m: LivePublished): void => {
    for (const w of live()) if (w.isConnected()) w.send(m);
  };
  const ingest = await startIngestFromArgs(a, logger, notify).catch(async (e: unknown) => {
    stopping = true;
    await stopWorkers(0);
    throw e;
  });
  out.write(`origin serving ${path.resolve(a.root)} at ${urls[0]}/ with ${a.workers} workers (Ctrl-C stops)\n`);
  if (ingest !== undefined) out.write(`origin taking live ingest at ${ingest.url}/\n`);
  const hangUp = reloadOnHangUp(argv, a, logger, (r) => {
    handed = { ...handed, ...r };
    for (const w of live()) w.send({ origin: 'reconfigure', reconfiguration: r } satisfies WorkerReconfigure);
  });
  await untilSignal();
  process.off('SIGHUP', hangUp);
  stopping = true;
  await ingest?.close();
  for (const t of pending) clearTimeout(t);
  const boundMs = (a.drainSeconds ?? DEFAULT_DRAIN_SECONDS) * 1000;
  logger.log('info', `origin: stopping ${live().length} workers (draining at most ${boundMs / 1000} s)`);
  const killed = await stopWorkers(boundMs + EXIT_GRACE_MS);
  if (killed > 0) logger.log('warn', `origin: killed ${killed} workers that had not exited in time`);
  logger.flush();
  return 0;
}

/** The workers alive now. */
function live(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
}

/**
 * SIGTERM to every worker (each drains within --drain-seconds); those still alive after `waitMs`
 * get SIGKILL. Resolves with the number killed, once all have exited.
 */
async function stopWorkers(waitMs: number): Promise<number> {
  const workers = live();
  const exited = workers.map(
    (w) =>
      new Promise<void>((resolve) => {
        if (w.isDead()) return resolve();
        w.once('exit', () => resolve());
        w.process.kill('SIGTERM');
      }),
  );
  let killed = 0;
  const timer = setTimeout(() => {
    for (const w of live()) {
      killed++;
      w.process.kill('SIGKILL');
    }
  }, waitMs);
  await Promise.all(exited);
  clearTimeout(timer);
  return killed;
}
