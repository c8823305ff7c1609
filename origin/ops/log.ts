// The log of `origin serve`: one interface, two formats. The human format is the one the origin
// has always printed (a request line `GET /x.ism/.mpd 200 0.4 ms`, other events as sentences) and
// stays the default on a terminal; JSON lines (pino) carry the same events with their fields, for
// a log collector. Levels are pino's. What goes in is decided by the callers, which never hand
// over a secret: request lines carry the URL as loggedUrl() writes it (redact.ts), a few named
// request headers and no other, and no event carries an option value of a server manifest.
// docs/guide/operations.md lists the fields.

import { randomUUID } from 'node:crypto';
import pino from 'pino';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = 'json' | 'human';

/** pino's numbers for the levels: a line is written when its level is at least the threshold's. */
const RANK: Readonly<Record<LogLevel, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

/** An event's fields besides its message. `err` (a stack or a reason) follows the message in the human format. */
export type LogFields = Record<string, string | number | boolean | undefined>;

/** One answered request: the request line of the log (docs/guide/operations.md#log-fields). */
export interface RequestLine {
  /** The request's `x-request-id` (Envoy's, or the inline edge's), else undefined and one is made. */
  requestId: string | undefined;
  method: string;
  /** The path and query as loggedUrl() writes them. */
  url: string;
  /** The route kind (routes.ts), or static, player, ops, other. */
  kind: string;
  /** The `.ism` path of a presentation URL. */
  presentation?: string;
  status: number;
  /** Body bytes sent (0 for HEAD, 304, a response cut off before its end). */
  bytes: number;
  durationMs: number;
  /** hit, view-hit, miss (the rendered-manifest cache) or coalesced (joined an identical request). */
  cache?: string;
  /** The `X-Origin-Error` code of an error response. */
  error?: string;
  /** The client went away before the response ended. */
  aborted?: boolean;
  /** Debug level only: the peer address, User-Agent and Range. */
  remote?: string;
  userAgent?: string;
  range?: string;
}

export interface OriginLogger {
  readonly format: LogFormat;
  readonly level: LogLevel;
  /** Request lines are written (info enabled, and not `--quiet`). */
  readonly requests: boolean;
  enabled(level: LogLevel): boolean;
  log(level: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields): void;
  request(line: RequestLine): void;
  /** Writes out what is buffered (before the process exits). */
  flush(): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Request lines (default true): `--quiet` turns them off. */
  requests?: boolean;
}

/** `--log-format`'s default: human on a terminal, JSON lines otherwise. */
export function defaultLogFormat(stream: NodeJS.WritableStream): LogFormat {
  return (stream as { isTTY?: boolean }).isTTY === true ? 'human' : 'json';
}

/** The human format: each line as `write` gets it, without its newline. */
export function humanLogger(write: (line: string) => void, o: LoggerOptions = {}): OriginLogger {
  const level = o.level ?? 'info';
  const threshold = RANK[level];
  return {
    format: 'human',
    level,
    requests: (o.requests ?? true) && RANK.info >= threshold,
    enabled: (l) => RANK[l] >= threshold,
    log: (l, msg, fields) => {
      if (RANK[l] < threshold) return;
      const err = fields?.['err'];
      write(err === undefined ? msg : `${msg}: ${String(err)}`);
    },
    request: (r) => write(`${r.method} ${r.url} ${r.status} ${r.durationMs.toFixed(1)} ms`),
    flush: () => undefined,
  };
}

/**
 * JSON lines through pino, to `stream` (process.stderr: pino's own asynchronous writer on fd 2,
 * flushed by flush()). Each line: level (its name), time (ISO 8601), pid, msg, and the event's fields.
 */
export function jsonLogger(stream: NodeJS.WritableStream, o: LoggerOptions = {}): OriginLogger {
  const level = o.level ?? 'info';
  const destination = stream === process.stderr ? pino.destination({ dest: 2, sync: false }) : stream;
  const p = pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination as pino.DestinationStream,
  );
  return {
    format: 'json',
    level,
    requests: (o.requests ?? true) && p.isLevelEnabled('info'),
    enabled: (l) => l !== 'silent' && p.isLevelEnabled(l),
    log: (l, msg, fields) => p[l](fields ?? {}, msg),
    request: (r) => p.info({ ...r, requestId: r.requestId ?? randomUUID() }, 'request'),
    flush: () => {
      try {
        if ('flushSync' in destination) (destination as { flushSync(): void }).flushSync();
      } catch {
        // Nothing to flush to (stderr closed): the process is stopping anyway.
      }
    },
  };
}

/** The logger of a format. */
export function makeLogger(format: LogFormat, stream: NodeJS.WritableStream, o: LoggerOptions = {}): OriginLogger {
  return format === 'json' ? jsonLogger(stream, o) : humanLogger((line) => void stream.write(`${line}\n`), o);
}
