// `origin serve --root <dir> [--host 127.0.0.1] [--port 8081] [...]`: the HTTP origin.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_CACHE_CONTROL, RunningServer, startServer } from '../server/server';
import { wasmTrackSelector } from '../server/select';
import { UsageError } from './args';

export const SERVE_USAGE = `Usage: origin serve --root <dir> [options]

Serves every server manifest (.ism) under <dir> as Smooth Streaming, DASH and HLS
(/<path>/<presentation>.ism/Manifest, /.mpd, /.m3u8, ...), other files under <dir> as
static files (with Range), and a player page at / .

Options:
  --root <dir>                     directory to serve (required)
  --host <address>                 address to listen on (default 127.0.0.1)
  --port <n>                       port, 0 = any free port (default 8081)
  --manifest-cache-control <v>     Cache-Control of manifests and playlists
                                   (default "${DEFAULT_CACHE_CONTROL.manifest}"; "" sends none)
  --segment-cache-control <v>      Cache-Control of segments and fragments
                                   (default "${DEFAULT_CACHE_CONTROL.segment}"; "" sends none)
  --no-player                      do not serve the player page (/, /play, /_players/)
  -q, --quiet                      no request log on stderr
  -h, --help                       this text
`;

export interface ServeArgs {
  root: string;
  host: string;
  port: number;
  manifestCacheControl: string;
  segmentCacheControl: string;
  playerPage: boolean;
  quiet: boolean;
  help: boolean;
}

export function parseServeArgs(argv: readonly string[]): ServeArgs {
  const a: ServeArgs = { root: '', host: '127.0.0.1', port: 8081, manifestCacheControl: DEFAULT_CACHE_CONTROL.manifest, segmentCacheControl: DEFAULT_CACHE_CONTROL.segment, playerPage: true, quiet: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq > 0 && arg.startsWith('--') ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '-h':
      case '--help':
        a.help = true;
        break;
      case '-q':
      case '--quiet':
        a.quiet = true;
        break;
      case '--root':
        a.root = value();
        break;
      case '--host':
        a.host = value();
        break;
      case '--port': {
        const v = value();
        if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new UsageError(`--port must be 0..65535, not "${v}"`);
        a.port = Number(v);
        break;
      }
      case '--manifest-cache-control':
        a.manifestCacheControl = headerValue(flag, value());
        break;
      case '--segment-cache-control':
        a.segmentCacheControl = headerValue(flag, value());
        break;
      case '--no-player':
        a.playerPage = false;
        break;
      default:
        throw new UsageError(`unknown argument "${arg}" (origin serve --help)`);
    }
  }
  if (!a.help && a.root === '') throw new UsageError('--root <dir> is required');
  return a;
}

function headerValue(flag: string, v: string): string {
  if (/[\r\n\0]/.test(v) || v.length > 256) throw new UsageError(`${flag} must be one header line of at most 256 characters`);
  return v;
}

/** Starts the server; resolves once listening. The CLI keeps the process alive while it runs. */
export async function serve(a: ServeArgs, log: (line: string) => void): Promise<RunningServer> {
  const root = path.resolve(a.root);
  const stat = await fs.stat(root).catch(() => undefined);
  if (stat === undefined || !stat.isDirectory()) throw new UsageError(`--root ${a.root} is not a directory`);
  return startServer({
    root,
    host: a.host,
    port: a.port,
    manifestCacheControl: a.manifestCacheControl,
    segmentCacheControl: a.segmentCacheControl,
    select: wasmTrackSelector,
    playerPage: a.playerPage,
    log: a.quiet ? undefined : log,
  });
}

export async function runServe(argv: readonly string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const a = parseServeArgs(argv);
  if (a.help) {
    out.write(SERVE_USAGE);
    return 0;
  }
  const server = await serve(a, (line) => err.write(`${line}\n`));
  out.write(`origin serving ${path.resolve(a.root)} at ${server.url}/ (Ctrl-C stops)\n`);
  await untilSignal();
  await server.close();
  return 0;
}

export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
