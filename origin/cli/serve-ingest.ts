// `origin serve --ingest-port <n>`: the ingest listener next to the serving port. It runs in one
// process only — the single process, or the primary of `--workers N` — because that process owns
// every channel's archive (the one writer); the workers read the archive through the storage
// seam (docs/design/live.md#workers).

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { OriginError } from '../errors';
import type { LivePublished } from '../live/fragment-table';
import { OriginLogger } from '../ops/log';
import { DEFAULT_INGEST_IDLE_MS, RunningIngest, startIngestServer } from '../server/ingest-server';
import type { TokenRule } from '../server/url-token';
import { UsageError } from './args';
import type { ServeArgs } from './serve-command';

export const INGEST_USAGE = `  --ingest-port <n>                take live ingest on this port (0 = any free port):
                                   POST/PUT <ch>.isml/Streams(<name>), docs/guide/live.md
  --ingest-host <address>          address of the ingest listener (default: --host); without
                                   --ingest-credentials or --ingest-token only a loopback
                                   address is allowed
  --ingest-credentials <file>      Basic credentials the ingest listener accepts, one
                                   user:password a line
  --ingest-token <file>            also accept the edge's signed URLs (origin sign-url):
                                   a JSON file {"secret": "…", "prefix": "token",
                                   "timeout": 60, "skew": 60}, the edge's auth_token
  --ingest-idle-timeout <s>        close an ingest body that sends nothing for s seconds
                                   (default ${DEFAULT_INGEST_IDLE_MS / 1000})
`;

/** Reads a credentials file: one `user:password` a line; blank lines and `#` comments skipped. */
export async function readCredentials(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--ingest-credentials ${file}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  // The line itself is never shown: it holds a password.
  lines.forEach((l, i) => {
    if (!/^[^:\s]{1,256}:\S{1,256}$/.test(l))
      throw new UsageError(`--ingest-credentials ${file}: entry ${i + 1} is not user:password`);
  });
  if (lines.length === 0) throw new UsageError(`--ingest-credentials ${file}: no user:password line`);
  return lines;
}

const TOKEN_MEMBERS = ['secret', 'prefix', 'timeout', 'skew'];
const MAX_SECONDS = 2147483647;

/**
 * Reads an --ingest-token file: the edge's auth_token object (docs/reference/edge-config.md
 * #auth_token; prefix default "token", timeout and skew 60 s as there). The secret is never shown.
 */
export async function readTokenRule(file: string): Promise<TokenRule> {
  const fail = (why: string): never => {
    throw new UsageError(`--ingest-token ${file}: ${why}`);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    fail(code === undefined ? 'not JSON' : code);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('not a JSON object');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!TOKEN_MEMBERS.includes(k)) fail(`unknown member "${k.slice(0, 32)}"`);
  const secret = o.secret;
  if (typeof secret !== 'string' || secret === '' || Buffer.byteLength(secret) > 1024)
    fail('secret: must be a string of 1 to 1024 bytes');
  const prefix = o.prefix ?? 'token';
  if (typeof prefix !== 'string' || !/^\/?[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/?$/.test(prefix))
    fail('prefix: must be one or more path segments (letters, digits, . _ ~ -)');
  const seconds = (k: 'timeout' | 'skew', min: number): number => {
    const v = o[k] ?? 60;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > MAX_SECONDS)
      fail(`${k}: must be an integer from ${min} to ${MAX_SECONDS} (seconds)`);
    return v as number;
  };
  return {
    secret: secret as string,
    prefix: prefix as string,
    timeout: seconds('timeout', 1),
    skew: seconds('skew', 0),
  };
}

/** Starts the ingest listener when --ingest-port is given. */
export async function startIngestFromArgs(
  a: ServeArgs,
  logger: OriginLogger,
  onPublish: (m: LivePublished) => void,
): Promise<RunningIngest | undefined> {
  if (a.ingestPort === undefined) return undefined;
  const credentials = a.ingestCredentials === undefined ? [] : await readCredentials(a.ingestCredentials);
  const token = a.ingestToken === undefined ? undefined : await readTokenRule(a.ingestToken);
  try {
    const ingest = await startIngestServer({
      root: path.resolve(a.root),
      host: a.ingestHost ?? a.host,
      port: a.ingestPort,
      credentials,
      token,
      idleTimeoutMs: (a.ingestIdleSeconds ?? DEFAULT_INGEST_IDLE_MS / 1000) * 1000,
      logger,
      onPublish,
    });
    logger.log('info', `origin: taking live ingest at ${ingest.url}/<channel>.isml/Streams(<name>)`);
    return ingest;
  } catch (e) {
    if (e instanceof OriginError && e.kind === 'bad-request') throw new UsageError(e.message);
    throw e;
  }
}
