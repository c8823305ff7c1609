// `origin package -o <out>.ism <input> [--track_type=video|audio|text] <input> ... [options]`

import * as path from 'node:path';
import { FilterSyntaxError, filterEngine } from '../../host-glue/filter/filter-engine';
import { OriginError } from '../errors';
import { writeServerManifest } from '../ism/server-manifest';
import { KEY_SERVER_OPTIONS } from '../options/key-server-options';
import { applyCliOption, OPTIONS, OptionSpec, optionByCli, StreamOptions } from '../options/registry';
import {
  buildServerManifest,
  checkOutput,
  creatorLine,
  PackageInput,
  STDOUT,
  TrackTypeOption,
  writeServerManifestFile,
} from '../package/packager';
import { acquiredKeyOptions } from '../drm/key-request';
import { protectionOf } from '../drm/protection';
import { storeCpixDocument } from '../package/cpix-input';
import { closest, UsageError } from './args';
import { acquire, KeyServerArgs } from './key-server-args';
import { showFilterError } from './filter-command';

export const PACKAGE_USAGE = `Usage: origin package -o <output>.ism <input> [--track_type=video|audio|text] <input> ... [options]
       origin package -o stdout: <input> ...            print the server manifest
       origin package -o stdout: <x.ism> <client-manifest path>[?query]
                                                        print a client manifest (Manifest, .mpd, .m3u8, .f4m),
                                                        exactly as the HTTP origin would serve it

Inputs are fragmented MP4 files (.ismv, .isma, .ismt, .mp4). An input followed by
--track_type=<type> contributes only its tracks of that type; otherwise all its tracks.
--track_filter=<expression> keeps only the tracks it selects (and is stored: the origin applies it
to every request); --variant_set=<expression> is checked and stored as given. Try an expression
on a server manifest with origin filter '<expression>' <x.ism>.

Options:
  -o, --output <path>   the server manifest to write (.ism, .isml), or stdout:
  -q, --quiet           no progress lines on stderr
      --show-keys       print key and IV values in a dry run (-o stdout:); they are masked otherwise
  -h, --help            this text
`;

export function packageHelp(): string {
  const lines = OPTIONS.filter((o) => o.stored).map(optionHelp);
  return (
    `${PACKAGE_USAGE}\nStream options (stored as <meta> in the server manifest head; most may also be query parameters):\n${lines.join('\n')}\n` +
    `\nKey acquisition (never stored; origin keys takes the same options; docs/guide/drm.md):\n${KEY_SERVER_OPTIONS.map(optionHelp).join('\n')}\n`
  );
}

/** One option as --help lists it: its shape, then its description (and default). */
export function optionHelp(o: OptionSpec): string {
  const shape =
    o.type === 'boolean'
      ? '[=true|false]'
      : o.type === 'enum'
        ? `=${o.values!.join('|')}`
        : o.type === 'integer'
          ? '=<integer>'
          : o.type === 'rational'
            ? '=<seconds>'
            : '=<text>';
  const dflt = o.default !== undefined && o.default !== '' ? ` (default ${o.default})` : '';
  return `  --${o.cli}${shape}${o.repeatable ? ' (repeatable)' : ''}\n      ${o.description}${dflt}`;
}

interface ParsedPackageArgs {
  output: string | undefined;
  inputs: PackageInput[];
  options: StreamOptions;
  quiet: boolean;
  help: boolean;
  showKeys: boolean;
  /** Key acquisition options: the drm_a key pair is asked for before anything is written. */
  keys: KeyServerArgs;
}

const TRACK_TYPES: readonly TrackTypeOption[] = ['video', 'audio', 'text'];

export function parsePackageArgs(argv: readonly string[]): ParsedPackageArgs {
  const parsed: ParsedPackageArgs = {
    output: undefined,
    inputs: [],
    options: new StreamOptions(),
    quiet: false,
    help: false,
    showKeys: false,
    keys: new KeyServerArgs(),
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      parsed.help = true;
    } else if (arg === '-q' || arg === '--quiet') {
      parsed.quiet = true;
    } else if (arg === '--show-keys') {
      parsed.showKeys = true;
    } else if (arg === '-o' || arg === '--output' || arg.startsWith('-o=') || arg.startsWith('--output=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (value === undefined || value === '') throw new UsageError(`${arg} needs a path`);
      if (parsed.output !== undefined) throw new UsageError('-o is given twice');
      parsed.output = value;
    } else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const flag = arg.slice(2, eq < 0 ? undefined : eq);
      let value = eq < 0 ? undefined : arg.slice(eq + 1);
      if (flag === 'track_type') {
        value ??= argv[++i];
        const last = parsed.inputs[parsed.inputs.length - 1];
        if (last === undefined) throw new UsageError('--track_type must follow the input it applies to');
        if (!TRACK_TYPES.includes(value as TrackTypeOption))
          throw new UsageError(`--track_type=${value ?? ''}: use one of ${TRACK_TYPES.join(', ')}`);
        if (last.trackType !== undefined) throw new UsageError(`--track_type is given twice for ${last.path}`);
        last.trackType = value as TrackTypeOption;
        continue;
      }
      if (KeyServerArgs.isOption(flag)) {
        parsed.keys.take(flag, value ?? argv[++i]);
        continue;
      }
      const spec = optionByCli(flag);
      if (spec === undefined) {
        const names = ['track_type', ...OPTIONS.filter((o) => o.stored).map((o) => o.cli)];
        names.push(...KEY_SERVER_OPTIONS.map((o) => o.cli));
        const guess = closest(flag, names);
        throw new UsageError(
          `unknown option --${flag}${guess ? `; did you mean --${guess}?` : ''} (see origin package --help)`,
        );
      }
      // `--opt value` for options that need a value; booleans take only the `=` form.
      if (value === undefined && spec.type !== 'boolean') value = argv[++i];
      try {
        applyCliOption(parsed.options, spec, value, `--${flag}`);
      } catch (e) {
        if (e instanceof OriginError) throw new UsageError(e.message);
        throw e;
      }
      if (FILTER_OPTIONS.has(spec.name)) checkFilterExpression(`--${flag}`, value!);
    } else if (arg.startsWith('-') && arg !== '-') {
      throw new UsageError(`unknown option ${arg} (see origin package --help)`);
    } else {
      parsed.inputs.push({ path: arg, trackType: undefined });
    }
  }
  if (parsed.keys.given) {
    for (const name of ['drm_a_key', 'drm_a_drm_specific_data'])
      if (parsed.options.isSet(name))
        throw new UsageError(
          `--${name.replace('drm_a_', 'drm_a.')} is what the key server gives: give it or --key_server_url, not both`,
        );
  }
  return parsed;
}

/** Options whose value is a filter expression: checked when stored, kept as given (docs/reference/options.md). */
const FILTER_OPTIONS = new Set(['track_filter', 'variant_set']);

function checkFilterExpression(shownAs: string, expression: string): void {
  try {
    filterEngine().canonical(expression);
  } catch (e) {
    if (e instanceof FilterSyntaxError) throw new UsageError(showFilterError(e, shownAs));
    throw e;
  }
}

export async function runPackage(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const args = parsePackageArgs(argv);
  if (args.help) {
    out.write(packageHelp());
    return 0;
  }
  if (args.output === undefined) throw new UsageError('no output: give -o <output>.ism or -o stdout:');
  const progress = args.quiet ? () => {} : (line: string) => err.write(`${line}\n`);
  // --cpix=<file or URL> is read now and stored as the document (origin/package/cpix-input.ts).
  if (args.options.isSet('cpix')) {
    if (args.keys.given)
      throw new UsageError('--cpix and a key server cannot be combined: the CPIX document gives the keys');
    await storeCpixDocument(args.options);
  }

  checkOutput({ output: args.output, inputs: args.inputs, options: args.options });
  const first = args.inputs[0];
  if (first !== undefined && /\.isml?$/i.test(first.path)) {
    if (args.keys.given) throw new UsageError('key acquisition options make a server manifest, not a client manifest');
    return renderClientManifest(args, out);
  }
  // The key first: nothing is written unless the key server answered with a usable key pair.
  if (args.keys.given) await addAcquiredKey(args, progress);

  const manifest = await buildServerManifest(
    { output: args.output, inputs: args.inputs, options: args.options },
    progress,
  );
  if (args.output === STDOUT) {
    const shown = args.showKeys ? manifest : { ...manifest, meta: manifest.meta.map(maskSecret) };
    out.write(writeServerManifest(shown, creatorLine()));
  } else {
    await writeServerManifestFile(args.output, manifest);
    progress(`wrote ${args.output}: ${manifest.tracks.length} tracks`);
  }
  return 0;
}

/** Asks the key server and adds its answer as the drm_a options; checks they go with the others. */
async function addAcquiredKey(args: ParsedPackageArgs, progress: (line: string) => void): Promise<void> {
  const key = await acquire(args.keys, progress);
  for (const { cli, value } of acquiredKeyOptions(key))
    applyCliOption(args.options, optionByCli(cli)!, value, `--${cli} (from the key server)`);
  // What the presentation will check when it loads (a different --iss.key, say), refused now
  // (no tracks yet: the checks of the options alone).
  protectionOf(args.options, [], args.output!);
}

const SECRET = new Set(OPTIONS.filter((o) => o.secret).map((o) => o.name));

/** A key option's value with the key masked (a KID is not secret and helps to check the output). */
function maskSecret(m: { name: string; content: string }): { name: string; content: string } {
  if (!SECRET.has(m.name)) return m;
  const colon = m.content.lastIndexOf(':');
  const kid = colon < 0 ? '' : m.content.slice(0, colon + 1);
  return { ...m, content: `${kid}${'*'.repeat(colon < 0 ? 16 : m.content.length - colon - 1)}` };
}

/** Client-manifest formats we recognise in a `<x.ism> <path>` request. */
const CLIENT_MANIFEST = /(^|\/)(manifest|[^/]*\.mpd|[^/]*\.m3u8|[^/]*\.f4m)$/i;

async function renderClientManifest(args: ParsedPackageArgs, out: NodeJS.WritableStream): Promise<number> {
  const [ism, request, ...rest] = args.inputs;
  if (args.output !== STDOUT)
    throw new UsageError('a server manifest as input renders a client manifest: use -o stdout:');
  if (request === undefined || rest.length > 0)
    throw new UsageError(
      `give exactly one client-manifest path after ${ism!.path}, e.g. .mpd, Manifest or .m3u8?filter=...`,
    );
  const q = request.path.indexOf('?');
  const pathPart = q < 0 ? request.path : request.path.slice(0, q);
  const query = q < 0 ? '' : request.path.slice(q + 1);
  if (!CLIENT_MANIFEST.test(pathPart))
    throw new UsageError(
      `"${request.path}" is not a client-manifest path (Manifest, <name>.mpd, <name>.m3u8, <name>.f4m)`,
    );
  // The same code as HTTP: the route table, the playout handler, the filter engine.
  const { decodePath, matchPresentationRoute } = require('../server/routes') as typeof import('../server/routes');
  const { handlePlayout, newPlayoutContext } = require('../server/handlers') as typeof import('../server/handlers');
  const { PresentationStore } = require('../cache/presentation-store') as typeof import('../cache/presentation-store');
  const { wasmTrackSelector } = require('../server/select') as typeof import('../server/select');
  const absolute = path.resolve(ism!.path);
  const segments = decodePath(
    `/${encodeURIComponent(path.basename(absolute))}/${pathPart.split('/').map(encodeURIComponent).join('/')}`,
  );
  const route = matchPresentationRoute(segments);
  if (route === undefined) throw new UsageError(`"${request.path}" is not a client-manifest path`);
  const ctx = newPlayoutContext(new PresentationStore(), wasmTrackSelector);
  let reply;
  try {
    reply = await handlePlayout(ctx, route, absolute, query);
  } finally {
    ctx.files.close();
  }
  if (reply.body.type !== 'text') throw new UsageError(`"${request.path}" is a segment, not a client manifest`);
  out.write(reply.body.text);
  return 0;
}

/** A feature that is wired but not built yet (exit code 3). */
export class NotAvailableError extends Error {}
