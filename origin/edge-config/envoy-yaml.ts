// The plugin configuration inside an envoy.yaml: written into the `configuration` StringValue of
// the wasm filter, every other byte of the file (comments, layout) left as it was, and read back.

import { isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar, YAMLMap, Node as YamlNode } from 'yaml';
import { EdgeConfigFileError } from './file-error';

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
