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
import { UsageError } from './args';
import type { ServeArgs } from './serve-command';

export const INGEST_USAGE = `  --ingest-port <n>                take live ingest on this port (0 = any free port):
                                   POST/PUT <ch>.isml/Streams(<name>), docs/guide/live.md
  --ingest-host <address>          address of the ingest listener (default: --host); without
                                   --ingest-credentials only a loopback address is allowed
  --ingest-credentials <file>      Basic credentials the ingest listener accepts, one
                                   user:password a line
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

/** Starts the ingest listener when --ingest-port is given. */
export async function startIngestFromArgs(
  a: ServeArgs,
  logger: OriginLogger,
  onPublish: (m: LivePublished) => void,
): Promise<RunningIngest | undefined> {
  if (a.ingestPort === undefined) return undefined;
  const credentials = a.ingestCredentials === undefined ? [] : await readCredentials(a.ingestCredentials);
  try {
    const ingest = await startIngestServer({
      root: path.resolve(a.root),
      host: a.ingestHost ?? a.host,
      port: a.ingestPort,
      credentials,
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
