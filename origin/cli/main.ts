// `origin <command> ...`: the one CLI of the product. Exit codes: 0 success, 1 the input or the
// environment is wrong (file missing, not an MP4, a key server failing, ...), 2 the command line is wrong, 3 the
// feature is not available yet.

import { KeyServerError } from '../drm/key-server-error';
import { isOriginError } from '../errors';
import { VERSION } from '../version';
import { UsageError } from './args';
import { runDemo } from './demo-command';
import { runFilter } from './filter-command';
import { NotAvailableError, runPackage } from './package-command';

const USAGE = `Usage: origin <command> [arguments]

Commands:
  package   write a server manifest (.ism) from fragmented MP4 files (origin package --help)
  capture   record a client manifest's tracks and time range into a fragmented MP4 (origin capture --help)
  keys      ask a key server for the drm_a key pair and print its options (origin keys --help)
  serve     serve presentations over HTTP as Smooth, DASH, HLS and HDS (origin serve --help)
  filter    show which tracks of a server manifest a filter expression keeps (origin filter --help)
  edge      run the edge plugin in front of the origin from an Envoy config (origin edge --help)
  edge-config  write the edge plugin's JSON from map files into an envoy.yaml (origin edge-config --help)
  sign-url  print a URL signed for the edge's auth_token (origin sign-url --help)
  demo      package the sample content and serve it with a player page (npm start)
  version   print the version

`;

type Command = (argv: readonly string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  package: runPackage,
  capture: (argv, out, err) =>
    (require('./capture-command') as typeof import('./capture-command')).runCapture(argv, out, err),
  filter: runFilter,
  keys: (argv, out, err) => (require('./keys-command') as typeof import('./keys-command')).runKeys(argv, out, err),
  // Loaded on use: the packaging and filter commands need none of the HTTP stack.
  serve: (argv, out, err) => (require('./serve-command') as typeof import('./serve-command')).runServe(argv, out, err),
  edge: (argv, out, err) => (require('./edge-command') as typeof import('./edge-command')).runEdge(argv, out, err),
  'sign-url': (argv, out, err) =>
    (require('./sign-url-command') as typeof import('./sign-url-command')).runSignUrl(argv, out, err),
  'edge-config': (argv, out, err) =>
    (require('./edge-config-command') as typeof import('./edge-config-command')).runEdgeConfig(argv, out, err),
  demo: runDemo,
  version: async (_argv, out) => {
    out.write(`${VERSION}\n`);
    return 0;
  },
};

export async function main(
  argv: readonly string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    out.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    err.write(`origin: unknown command '${name}'\n${USAGE}`);
    return 2;
  }
  try {
    return await command(rest, out, err);
  } catch (e) {
    if (e instanceof UsageError) {
      err.write(`origin ${name}: ${e.message}\n`);
      return 2;
    }
    if (e instanceof NotAvailableError) {
      err.write(`origin ${name}: ${e.message}\n`);
      return 3;
    }
    if (isOriginError(e) || e instanceof KeyServerError) {
      err.write(`origin ${name}: error: ${e.message}\n`);
      return 1;
    }
    err.write(`origin ${name}: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`origin: ${String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
