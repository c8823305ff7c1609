// `origin serve` as its own process for the hardening suite (the built CLI, bin/origin.js → dist/):
// a crash is a dead process, not a dead test runner; its memory and descriptors are read from /proc;
// its JSON log is kept to check that every 5xx has a logged cause.

import * as http from 'node:http';
import { Cli, startCli, stopCli } from '../../origin/server/cli-origin';
import { fdsOf, rssOf } from './proc';
import { request } from './http';

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
  /**
   * Lines on stderr that are not the origin's JSON log: Node's own warnings (a descriptor closed on
   * garbage collection, an unhandled rejection), which a run must not produce.
   */
  strayLines(): string[];
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
    errorLines: () => jsonLines(cli).filter((l) => l['level'] === 'error' || l['level'] === 'fatal'),
    strayLines: () => stderrLines(cli).filter((l) => !l.startsWith('{')),
    stop: () => stopCli(cli),
  };
}

function stderrLines(cli: Cli): string[] {
  return cli.stderr().split('\n').slice(0, -1);
}

function jsonLines(cli: Cli): Array<Record<string, unknown>> {
  return stderrLines(cli)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A keep-alive agent for a run's requests. */
export const keepAlive = (sockets = 16): http.Agent => new http.Agent({ keepAlive: true, maxSockets: sockets });

/** The lines of the origin's /metrics about its caches and its heap, for a run's figures. */
export async function memoryFigures(url: string): Promise<string> {
  const text = (await request(url, '/metrics')).body.toString('utf8');
  return text
    .split('\n')
    .filter((l) =>
      /^(origin_cache_bytes|origin_cache_entries|nodejs_heap_size_used_bytes|nodejs_external_memory_bytes)/.test(l),
    )
    .join('\n');
}
