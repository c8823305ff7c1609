// `origin edge-config <description> [--config envoy.yaml] [--print]`: builds the edge plugin's
// JSON configuration from a small description (the configuration itself, as YAML or JSON, in
// which a location's rewrite maps may name map files) and the map files it names, checks it
// with the plugin itself (build/edge.wasm through the proxy-wasm host, as Envoy would load it),
// and writes it into the `configuration` StringValue of the wasm filter of an envoy.yaml, leaving
// every other byte of that file (comments, layout) as it was. The work is origin/edge-config/'s
// (map-file.ts, description.ts, envoy-yaml.ts, plugin-check.ts); this file is the command line.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { buildConfiguration } from '../edge-config/description';
import { readConfiguration, writeConfiguration } from '../edge-config/envoy-yaml';
import { EdgeConfigFileError } from '../edge-config/file-error';
import { checkWithPlugin } from '../edge-config/plugin-check';
import { eachOption, UsageError } from './args';

export const EDGE_CONFIG_USAGE = `Usage: origin edge-config <description.yaml|.json> [options]

Builds the edge plugin's JSON configuration and writes it into the wasm filter of an Envoy
bootstrap (the \`configuration\` StringValue), keeping the rest of that file as it is.

The description is the plugin configuration itself (YAML or JSON). Inside any "rewrite" member,
a map of "maps" may be a file name instead of an object: the file (relative to the description)
is read as a rewrite map, one "key value" per line, # comments (docs/guide/edge.md, "Rewrite maps").
envoy-config/maps/edge-config.yaml is the demo's description.

Options:
  --config <file>   the Envoy bootstrap to write into (default envoy-config/envoy.yaml)
  --print           print the JSON instead of writing it
  --no-check        do not load the plugin to check the configuration (by default the module
                    the bootstrap names, e.g. build/edge.wasm, must accept it, as Envoy would)
  -h, --help        this text

Exit codes: 0 written (or printed); 1 a file is wrong (the message names the file and line) or
the plugin refuses the configuration (with its reason); 2 bad command line.
`;

export interface EdgeConfigArgs {
  description: string;
  config: string;
  print: boolean;
  check: boolean;
  help: boolean;
}

export function parseEdgeConfigArgs(argv: readonly string[]): EdgeConfigArgs {
  const a: EdgeConfigArgs = {
    description: '',
    config: path.join('envoy-config', 'envoy.yaml'),
    print: false,
    check: true,
    help: false,
  };
  eachOption(argv, a, ({ arg, flag, value }) => {
    switch (flag) {
      case '--print':
        a.print = true;
        break;
      case '--no-check':
        a.check = false;
        break;
      case '--config':
      case '-c': {
        const v = value();
        if (v === '') throw new UsageError(`${flag} needs a value`);
        a.config = v;
        break;
      }
      default:
        if (arg.startsWith('-')) throw new UsageError(`unknown option "${arg}" (origin edge-config --help)`);
        if (a.description !== '') throw new UsageError(`one description file, not "${a.description}" and "${arg}"`);
        a.description = arg;
    }
  });
  if (!a.help && a.description === '')
    throw new UsageError("a description file is required (the demo's is envoy-config/maps/edge-config.yaml)");
  return a;
}

export async function runEdgeConfig(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  cwd = process.cwd(),
): Promise<number> {
  const a = parseEdgeConfigArgs(argv);
  if (a.help) {
    out.write(EDGE_CONFIG_USAGE);
    return 0;
  }
  try {
    const built = await buildConfiguration(path.resolve(cwd, a.description));
    const yamlFile = path.resolve(cwd, a.config);
    let yamlText: string | undefined;
    if (!a.print || a.check) {
      try {
        yamlText = await fs.readFile(yamlFile, 'utf8');
      } catch (e) {
        throw new EdgeConfigFileError(
          `${a.config}: cannot read the Envoy bootstrap: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        );
      }
    }
    const written = yamlText !== undefined ? writeConfiguration(yamlText, a.config, built.json) : undefined;
    if (a.check && written !== undefined) await checkWithPlugin(written.text, a.config, cwd, built);
    const entries = built.maps.reduce((n, m) => n + m.entries.length, 0);
    const summary = `${Buffer.byteLength(built.json)} bytes, ${built.maps.length} map file${built.maps.length === 1 ? '' : 's'} (${entries} entries)${a.check ? ', accepted by the plugin' : ''}`;
    if (a.print) {
      out.write(`${built.json}\n`);
      err.write(`origin edge-config: ${summary}\n`);
      return 0;
    }
    const readBack = readConfiguration(written!.text);
    if (readBack === undefined || !isDeepStrictEqual(JSON.parse(readBack), built.value)) {
      throw new Error('the written configuration does not read back as written');
    }
    // Atomic: a proxy reading the file sees the old or the new one.
    const temp = `${yamlFile}.${process.pid}.tmp`;
    await fs.writeFile(temp, written!.text);
    await fs.rename(temp, yamlFile);
    out.write(`origin edge-config: wrote the plugin configuration into ${a.config}:${written!.line} (${summary})\n`);
    return 0;
  } catch (e) {
    if (e instanceof EdgeConfigFileError) {
      err.write(`origin edge-config: error: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
