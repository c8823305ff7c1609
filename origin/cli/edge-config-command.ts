// `origin edge-config <description> [--config envoy.yaml] [--print]`: builds the edge plugin's
// JSON configuration from a small description (the configuration itself, as YAML or JSON, in
// which a location's rewrite maps may name map files) and the map files it names, checks it
// with the plugin itself (build/edge.wasm through the proxy-wasm host, as Envoy would load it),
// and writes it into the `configuration` StringValue of the wasm filter of an envoy.yaml, leaving
// every other byte of that file (comments, layout) as it was.
//
// Map files are the reference's rewrite-map text format (Apache RewriteMap `txt:`), README
// "Rewrite maps": one entry per line, a key, whitespace, a value that is a query fragment;
// blank lines and lines starting with `#` are comments, and so is `#…` after the value.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar, YAMLMap, Node as YamlNode } from 'yaml';
import { eachArg, UsageError } from './args';

export const EDGE_CONFIG_USAGE = `Usage: origin edge-config <description.yaml|.json> [options]

Builds the edge plugin's JSON configuration and writes it into the wasm filter of an Envoy
bootstrap (the \`configuration\` StringValue), keeping the rest of that file as it is.

The description is the plugin configuration itself (YAML or JSON). Inside any "rewrite" member,
a map of "maps" may be a file name instead of an object: the file (relative to the description)
is read as a rewrite map, one "key value" per line, # comments (README "Rewrite maps").
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
  eachArg(argv, ({ arg, flag, value }) => {
    switch (flag) {
      case '-h':
      case '--help':
        a.help = true;
        break;
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

/** A file the command reads is wrong; the message starts with `<file>:<line>:`. */
export class EdgeConfigFileError extends Error {
  override name = 'EdgeConfigFileError';
}

// ------------------------------------------------------------------------------------ map files

export interface MapEntry {
  key: string;
  value: string;
  /** 1-based. */
  line: number;
}

/** Bounds of the plugin (assembly/edge/rewrite.ts): refused here first, with the line. */
const MAX_KEY_CHARS = 256;
const MAX_VALUE_CHARS = 4096;
const MAX_MAP_ENTRIES = 65536;

/**
 * Why `value` cannot be a query fragment, or undefined: the checks of the plugin
 * (assembly/edge/rewrite-template.ts queryTextProblem), so that an error names the line.
 */
export function queryFragmentProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x20) return `a space at character ${i} (write %20)`;
    if (c < 0x20 || c >= 0x7f)
      return `character U+${c.toString(16).toUpperCase().padStart(4, '0')} at character ${i} (a value is percent-encoded ASCII)`;
    if (c === 0x23) return `'#' at character ${i} (write %23)`;
    if (c === 0x25 && !/^%[0-9A-Fa-f]{2}/.test(value.slice(i)))
      return `'%' at character ${i} not followed by two hex digits (write %25)`;
    if (c === 0x26 && (i === 0 || i === value.length - 1 || value[i + 1] === '&')) {
      return `an empty parameter at character ${i} (a leading, trailing or doubled '&'; inside a filter write && as %26%26)`;
    }
  }
  return undefined;
}

/** Parses a rewrite map file; throws EdgeConfigFileError naming `file:line`. */
export function parseMapFile(text: string, file: string): MapEntry[] {
  const entries: MapEntry[] = [];
  const seen = new Map<string, number>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const fail = (message: string): never => {
      throw new EdgeConfigFileError(`${file}:${line}: ${message}`);
    };
    const body = raw.replace(/^[ \t]+/, '');
    if (body === '' || body.startsWith('#')) return;
    const m = /^(\S+)(?:[ \t]+(\S+))?[ \t]*(.*)$/.exec(body)!;
    const key = m[1]!;
    const value = m[2];
    const rest = m[3]!;
    if (value === undefined)
      fail(`"${key.slice(0, 64)}" has no value (a line is: key, whitespace, a query fragment such as hls_fmp4=true)`);
    if (rest !== '' && !rest.startsWith('#'))
      fail(`more than a key and a value: "${rest.slice(0, 64)}" (a value holds no whitespace: write %20)`);
    if (key.length > MAX_KEY_CHARS) fail(`the key is longer than ${MAX_KEY_CHARS} characters`);
    if ([...key].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
      fail('the key holds a control character');
    if (value!.length > MAX_VALUE_CHARS) fail(`the value is longer than ${MAX_VALUE_CHARS} characters`);
    const problem = queryFragmentProblem(value!);
    if (problem !== undefined) fail(`the value of "${key.slice(0, 64)}" has ${problem}`);
    const before = seen.get(key);
    if (before !== undefined) fail(`"${key.slice(0, 64)}" again (first on line ${before}); each key once`);
    seen.set(key, line);
    entries.push({ key, value: value!, line });
    if (entries.length > MAX_MAP_ENTRIES) fail(`more than ${MAX_MAP_ENTRIES} entries`);
  });
  return entries;
}

// ---------------------------------------------------------------------------------- description

/** A map file that went into the configuration: where its keys came from. */
export interface LoadedMap {
  /** JSON member path of the map, e.g. `locations[0].rewrite.maps.filter`. */
  member: string;
  file: string;
  entries: MapEntry[];
}

export interface BuiltConfiguration {
  /** The plugin configuration with the map files read in. */
  value: unknown;
  /** Pretty JSON, as written. */
  json: string;
  maps: LoadedMap[];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Reads the description (YAML or JSON) and every map file it names. */
export async function buildConfiguration(descriptionFile: string): Promise<BuiltConfiguration> {
  let text: string;
  try {
    text = await fs.readFile(descriptionFile, 'utf8');
  } catch (e) {
    throw new EdgeConfigFileError(
      `${descriptionFile}: cannot read the description: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const value = parseDescription(text, descriptionFile);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EdgeConfigFileError(`${descriptionFile}: the description must be an object (the plugin configuration)`);
  }
  const maps: LoadedMap[] = [];
  await readMapFiles(value, '', path.dirname(descriptionFile), descriptionFile, maps);
  return { value, json: JSON.stringify(value, null, 2), maps };
}

function parseDescription(text: string, file: string): Json {
  if (/\.json$/i.test(file)) {
    try {
      return JSON.parse(text) as Json;
    } catch (e) {
      const at = /position (\d+)/.exec((e as Error).message);
      const line = at !== null ? text.slice(0, Number(at[1])).split('\n').length : undefined;
      throw new EdgeConfigFileError(
        `${file}${line !== undefined ? `:${line}` : ''}: not valid JSON: ${(e as Error).message}`,
      );
    }
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const line = first.linePos?.[0].line;
    throw new EdgeConfigFileError(
      `${file}${line !== undefined ? `:${line}` : ''}: not valid YAML: ${first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
    );
  }
  return doc.toJS() as Json;
}

/** Replaces every `rewrite.maps.<name>` that is a string by the map file it names. */
async function readMapFiles(
  node: Json,
  member: string,
  dir: string,
  description: string,
  out: LoadedMap[],
): Promise<void> {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) await readMapFiles(node[i]!, `${member}[${i}]`, dir, description, out);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, child] of Object.entries(node)) {
    const here = member === '' ? key : `${member}.${key}`;
    if (key === 'rewrite' && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      const maps = child.maps;
      if (maps !== undefined && maps !== null && typeof maps === 'object' && !Array.isArray(maps)) {
        for (const [name, source] of Object.entries(maps)) {
          if (typeof source !== 'string') continue; // an inline map: the plugin checks it
          const file = path.isAbsolute(source) ? source : path.join(dir, source);
          let text: string;
          try {
            text = await fs.readFile(file, 'utf8');
          } catch (e) {
            throw new EdgeConfigFileError(
              `${description}: ${here}.maps.${name}: cannot read the map file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
            );
          }
          const entries = parseMapFile(text, file);
          maps[name] = Object.fromEntries(entries.map((e) => [e.key, e.value]));
          out.push({ member: `${here}.maps.${name}`, file, entries });
        }
      }
    }
    await readMapFiles(child, here, dir, description, out);
  }
}

// --------------------------------------------------------------------------------- envoy.yaml

const WASM_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm';
const HCM_TYPE =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const STRING_VALUE_TYPE = 'type.googleapis.com/google.protobuf.StringValue';

function get(node: unknown, key: string): unknown {
  return isMap(node) ? node.get(key, true) : undefined;
}

function items(node: unknown): unknown[] {
  return isSeq(node) ? node.items : [];
}

function typeOf(node: unknown): unknown {
  const t = get(node, '@type');
  return isScalar(t) ? t.value : undefined;
}

/** The `config` maps of every envoy.filters.http.wasm filter in the bootstrap. */
function wasmPluginConfigs(root: unknown): YAMLMap[] {
  const found: YAMLMap[] = [];
  for (const listener of items(get(get(root, 'static_resources'), 'listeners'))) {
    for (const chain of items(get(listener, 'filter_chains'))) {
      for (const filter of items(get(chain, 'filters'))) {
        const hcm = get(filter, 'typed_config');
        if (typeOf(hcm) !== HCM_TYPE) continue;
        for (const http of items(get(hcm, 'http_filters'))) {
          const typed = get(http, 'typed_config');
          const config = get(typed, 'config');
          if (typeOf(typed) === WASM_TYPE && isMap(config)) found.push(config);
        }
      }
    }
  }
  return found;
}

/**
 * `yamlText` with the wasm filter's configuration value replaced by `json`; nothing else
 * changes. A block scalar stays a block scalar (with its indentation); any other style becomes
 * a double-quoted string.
 */
export function writeConfiguration(yamlText: string, file: string, json: string): { text: string; line: number } {
  const lines = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lines, uniqueKeys: true });
  const lineOf = (n: YamlNode | undefined): number => (n?.range ? lines.linePos(n.range[0]).line : 1);
  const first = doc.errors[0];
  if (first !== undefined) {
    throw new EdgeConfigFileError(
      `${file}:${first.linePos?.[0].line ?? 1}: not valid YAML: ${first.message.split('\n')[0]}`,
    );
  }
  const configs = wasmPluginConfigs(doc.contents);
  if (configs.length === 0)
    throw new EdgeConfigFileError(
      `${file}: no envoy.filters.http.wasm filter (typed_config "@type": ${WASM_TYPE}) in an HTTP connection manager`,
    );
  if (configs.length > 1)
    throw new EdgeConfigFileError(
      `${file}:${lineOf(configs[1])}: a second wasm filter; origin edge-config writes a bootstrap with one`,
    );
  const config = configs[0]!;
  const configuration = get(config, 'configuration');
  if (!isMap(configuration)) {
    throw new EdgeConfigFileError(
      `${file}:${lineOf(config)}: the wasm filter's config has no configuration map; add configuration: { "@type": ${STRING_VALUE_TYPE}, value: "{}" }`,
    );
  }
  if (typeOf(configuration) !== STRING_VALUE_TYPE) {
    throw new EdgeConfigFileError(
      `${file}:${lineOf(configuration)}: configuration "@type" must be ${STRING_VALUE_TYPE} (the plugin reads its JSON raw)`,
    );
  }
  const pair = configuration.items.find((p) => isScalar(p.key) && p.key.value === 'value');
  const value = pair?.value;
  if (
    pair === undefined ||
    !isScalar(value) ||
    value.range === undefined ||
    value.range === null ||
    !isScalar(pair.key)
  ) {
    throw new EdgeConfigFileError(`${file}:${lineOf(configuration)}: configuration has no string value to replace`);
  }
  const [start, end] = value.range;
  let replacement: string;
  if (value.type === Scalar.BLOCK_LITERAL || value.type === Scalar.BLOCK_FOLDED) {
    const old = yamlText.slice(start, end);
    const content = /\n( +)\S/.exec(old);
    const keyStart = pair.key.range![0];
    const keyColumn = keyStart - (yamlText.lastIndexOf('\n', keyStart - 1) + 1);
    const indent = content !== null ? content[1]! : ' '.repeat(keyColumn + 2);
    replacement = `|\n${json
      .split('\n')
      .map((l) => (l === '' ? '' : indent + l))
      .join('\n')}${old.endsWith('\n') ? '\n' : ''}`;
  } else {
    replacement = JSON.stringify(json.replace(/\n\s*/g, ' '));
  }
  return { text: yamlText.slice(0, start) + replacement + yamlText.slice(end), line: lineOf(value) };
}

/** The configuration value the bootstrap text holds now (to prove a write reads back). */
export function readConfiguration(yamlText: string): string | undefined {
  const doc = parseDocument(yamlText);
  const config = wasmPluginConfigs(doc.contents)[0];
  const value = get(get(config, 'configuration'), 'value');
  return isScalar(value) && typeof value.value === 'string' ? value.value : undefined;
}

// ------------------------------------------------------------------------------------ checking

/**
 * Loads the module the bootstrap names with this configuration through the proxy-wasm host, as
 * Envoy would (canary VM + worker): the plugin's own checks decide. Throws EdgeConfigFileError
 * with the plugin's reason, a map entry's error pointing at its file and line.
 */
export async function checkWithPlugin(
  yamlText: string,
  file: string,
  cwd: string,
  built: BuiltConfiguration,
): Promise<void> {
  const { parseEnvoyConfig } =
    require('../../host-glue/envoy/envoy-config') as typeof import('../../host-glue/envoy/envoy-config');
  const { createProxyWasmPlugin } =
    require('../../host-glue/proxy-wasm/host') as typeof import('../../host-glue/proxy-wasm/host');
  const { PluginLoadError } =
    require('../../host-glue/proxy-wasm/http-filter') as typeof import('../../host-glue/proxy-wasm/http-filter');
  let config: ReturnType<typeof parseEnvoyConfig>;
  try {
    config = parseEnvoyConfig(yamlText, file);
  } catch (e) {
    throw new EdgeConfigFileError((e as Error).message);
  }
  const code = config.plugin.code;
  let wasm: Uint8Array;
  if (code.kind === 'inline') wasm = code.bytes;
  else {
    const module = path.resolve(cwd, code.filename);
    try {
      wasm = new Uint8Array(await fs.readFile(module));
    } catch (e) {
      throw new EdgeConfigFileError(
        `${file}: cannot check the configuration: the module ${module} does not read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; \`npm run build:wasm\` builds build/edge.wasm, or pass --no-check)`,
      );
    }
  }
  const errors: string[] = [];
  try {
    const plugin = await createProxyWasmPlugin({
      wasm,
      name: config.plugin.name,
      rootId: config.plugin.rootId,
      vmId: config.plugin.vmId,
      vmConfiguration: config.plugin.vmConfiguration,
      pluginConfiguration: Buffer.from(built.json, 'utf8'),
      failurePolicy: config.plugin.failurePolicy,
      logLevel: 'warn',
      log: (level, line) => {
        if (level === 'error' || level === 'critical') errors.push(line);
      },
    });
    await plugin.shutdown();
  } catch (e) {
    if (!(e instanceof PluginLoadError)) throw e;
    // The plugin's own lines (proxy_log: `wasm log <name> <root_id> <vm_id>: <message>`), not the host's summary.
    const reasons = errors.filter((l) => l.startsWith('wasm log ')).map((l) => l.replace(/^wasm log [^:]*: /, ''));
    throw new EdgeConfigFileError(
      `the plugin refuses the configuration: ${[...new Set(reasons.map((r) => withMapLine(r, built.maps)))].join('; ') || e.message}`,
    );
  }
}

/** Adds `(<file>:<line>)` to a plugin message that names a key of a map read from a file. */
export function withMapLine(message: string, maps: readonly LoadedMap[]): string {
  for (const m of maps) {
    const tail = /\.maps\.[A-Za-z0-9_]+$/.exec(m.member)![0];
    for (const e of m.entries) {
      if (message.includes(`${tail}.${e.key}:`)) return `${message} (${m.file}:${e.line})`;
    }
    if (message.includes(`${tail}:`)) return `${message} (${m.file})`;
  }
  return message;
}

// --------------------------------------------------------------------------------------- command

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
