// `origin serve` as its own process for the hardening suite (the built CLI, bin/origin.js → dist/):
// a crash is a dead process, not a dead test runner; its memory and descriptors are read from /proc;
// its JSON log is kept to check that every 5xx has a logged cause.

import * as http from 'node:http';
import { Cli, startCli, stopCli } from '../../origin/server/cli-origin';
import { fdsOf, rssOf } from './proc';

export interface OriginProcess {
  cli: Cli;
  url: string;
  pid: number;
  /** Whether the process is still running. */
  alive(): boolean;
  rss(): number;
  fds(): number;
  /** The log lines at level error or above (JSON objects). */
  errorLines(): Array<Record<string, unknown>>;
  stop(): Promise<number | string | null>;
}

/**
 * `origin serve --root <root> <extra>` in one process (`--workers 1`: a crash ends it, and /proc
 * shows all of it) on a free loopback port, JSON log, no request lines.
 */
export async function startOriginProcess(root: string, extra: string[] = []): Promise<OriginProcess> {
  const cli = await startCli([
    '--root',
    root,
    '--port',
    '0',
    '--warm-up-rounds',
    '0',
    '--log-format',
    'json',
    '-q',
    '--workers',
    '1',
    ...extra,
  ]);
  const pid = cli.child.pid!;
  return {
    cli,
    url: cli.url,
    pid,
    alive: () => cli.child.exitCode === null && cli.child.signalCode === null,
    rss: () => rssOf(pid),
    fds: () => fdsOf(pid),
    errorLines: () => cli.jsonLines().filter((l) => l['level'] === 'error' || l['level'] === 'fatal'),
    stop: () => stopCli(cli),
  };
}

/** A keep-alive agent for a run's requests. */
export const keepAlive = (sockets = 16): http.Agent => new http.Agent({ keepAlive: true, maxSockets: sockets });
