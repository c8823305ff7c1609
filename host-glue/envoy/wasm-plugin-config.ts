// The envoy.filters.http.wasm filter's PluginConfig and VmConfig (Envoy API envoy.extensions.wasm.v3): the
// module, its configurations (google.protobuf.Any), the failure policy, and what origin edge
// refuses rather than runs differently.

import { FailurePolicy } from '../proxy-wasm/http-filter';
import { YamlCursor } from './edge-yaml';
import type { ConfigurationType, WasmPluginConfig } from './envoy-config';
import { TYPE_URL, base64, enumOf, knownFields, typeUrl } from './envoy-proto';

/** Runtimes a bootstrap may name; all run the module in V8 here (Node is V8). `null` is native code. */
const WASM_RUNTIMES = [
  'envoy.wasm.runtime.v8',
  'envoy.wasm.runtime.wasmtime',
  'envoy.wasm.runtime.wamr',
  'envoy.wasm.runtime.wavm',
];

const PLUGIN_FIELDS = [
  'name',
  'root_id',
  'vm_config',
  'configuration',
  'fail_open',
  'failure_policy',
  'allow_on_headers_stop_iteration',
  'capability_restriction_config',
  'reload_config',
];
const VM_FIELDS = [
  'vm_id',
  'runtime',
  'code',
  'configuration',
  'allow_precompiled',
  'nack_on_code_cache_miss',
  'environment_variables',
];

export function readPlugin(typed: YamlCursor): WasmPluginConfig {
  const config = typed.need('config', 'envoy.extensions.wasm.v3.PluginConfig');
  knownFields(config, PLUGIN_FIELDS, 'PluginConfig');
  if (config.has('capability_restriction_config'))
    config
      .need('capability_restriction_config')
      .fail('capability restrictions are not supported by origin edge; remove them to run it here');
  if (config.field('allow_on_headers_stop_iteration')?.bool() === true)
    config
      .need('allow_on_headers_stop_iteration')
      .fail(
        'origin edge treats a PAUSE from a headers callback as Envoy does by default (stop all iteration); allow_on_headers_stop_iteration: true is not supported',
      );
  const vm = config.need('vm_config');
  knownFields(vm, VM_FIELDS, 'VmConfig');
  const runtime = vm.field('runtime')?.str() ?? WASM_RUNTIMES[0]!;
  if (!WASM_RUNTIMES.includes(runtime))
    vm.need('runtime').fail(
      `"${runtime}" is not a WebAssembly runtime origin edge can stand in for (${WASM_RUNTIMES.join(', ')})`,
    );
  const configuration = readAny(config.field('configuration'));
  return {
    name: config.field('name')?.text() ?? '',
    rootId: config.field('root_id')?.text() ?? '',
    vmId: vm.field('vm_id')?.text() ?? '',
    runtime,
    code: readCode(vm.need('code', 'the module')),
    vmConfiguration: readAny(vm.field('configuration')).bytes,
    pluginConfiguration: configuration.bytes,
    pluginConfigurationType: configuration.type,
    failurePolicy: readFailurePolicy(config),
    reloadBackoffMs: config.field('reload_config')?.field('backoff')?.field('base_interval')?.durationMs(),
  };
}

function readCode(code: YamlCursor): WasmPluginConfig['code'] {
  if (code.has('remote'))
    code.need('remote').fail('origin edge loads local modules only: download the module and name it in local.filename');
  const local = code.need('local');
  knownFields(local, ['filename', 'inline_bytes', 'inline_string', 'environment_variable'], 'DataSource');
  const filename = local.field('filename');
  if (filename !== undefined) return { kind: 'file', filename: filename.str(), line: filename.line() };
  const inline = local.field('inline_bytes');
  if (inline !== undefined) return { kind: 'inline', bytes: base64(inline) };
  return local.fail('expected filename (or inline_bytes) naming the .wasm module');
}

function readFailurePolicy(config: YamlCursor): FailurePolicy {
  const policy = enumOf(
    config.field('failure_policy'),
    ['UNSPECIFIED', 'FAIL_RELOAD', 'FAIL_CLOSED', 'FAIL_OPEN'],
    'UNSPECIFIED',
    [0, 1, 2, 3],
  );
  if (policy !== 'UNSPECIFIED') return policy;
  return config.field('fail_open')?.bool() === true ? 'FAIL_OPEN' : 'FAIL_CLOSED';
}

/** A google.protobuf.Any configuration (§5.1): StringValue/BytesValue raw, Struct as JSON. */
function readAny(any: YamlCursor | undefined): { bytes: Uint8Array; type: ConfigurationType } {
  if (any === undefined) return { bytes: new Uint8Array(0), type: 'none' };
  const type = typeUrl(any);
  const value = any.field('value');
  switch (type) {
    case TYPE_URL.stringValue:
      return { bytes: new TextEncoder().encode(value?.text() ?? ''), type: 'StringValue' };
    case TYPE_URL.bytesValue:
      return { bytes: value === undefined ? new Uint8Array(0) : base64(value), type: 'BytesValue' };
    case TYPE_URL.struct: {
      const v = value?.plain() ?? {};
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        any.need('value').fail('a google.protobuf.Struct value must be a mapping');
      return { bytes: new TextEncoder().encode(JSON.stringify(v)), type: 'Struct' };
    }
    default:
      return any
        .need('@type')
        .fail(
          `origin edge passes ${TYPE_URL.stringValue}, ${TYPE_URL.bytesValue} or ${TYPE_URL.struct} configurations; ${type} would reach the plugin as serialized protobuf`,
        );
  }
}
