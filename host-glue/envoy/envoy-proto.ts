// Protobuf as an Envoy bootstrap writes it in YAML: the type URLs of the google.protobuf.Any
// values origin edge reads, enums by name or number, BoolValue, base64 bytes, and the unknown
// fields Envoy rejects. Each reader fails with the file, line and field (edge-yaml.ts).

import { YamlCursor } from './edge-yaml';

const TYPE_PREFIX = 'type.googleapis.com/';
export const TYPE_URL = {
  hcm: `${TYPE_PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
  wasm: `${TYPE_PREFIX}envoy.extensions.filters.http.wasm.v3.Wasm`,
  router: `${TYPE_PREFIX}envoy.extensions.filters.http.router.v3.Router`,
  stringValue: `${TYPE_PREFIX}google.protobuf.StringValue`,
  bytesValue: `${TYPE_PREFIX}google.protobuf.BytesValue`,
  struct: `${TYPE_PREFIX}google.protobuf.Struct`,
} as const;

export function typeUrl(any: YamlCursor): string {
  return any.need('@type', 'the type URL of this google.protobuf.Any').str();
}

export function enumOf<T extends string>(
  c: YamlCursor | undefined,
  names: readonly T[],
  fallback: T,
  numbers?: readonly number[],
): T {
  if (c === undefined) return fallback;
  const v = c.text();
  const byNumber = numbers?.indexOf(Number(v)) ?? -1;
  if (/^\d+$/.test(v) && byNumber >= 0) return names[byNumber]!;
  if (!names.includes(v as T)) c.fail(`expected one of ${names.join(', ')}, found "${v}"`);
  return v as T;
}

/** A bool or a google.protobuf.BoolValue written as `{ value: true }`. */
export function boolValue(c: YamlCursor | undefined): boolean | undefined {
  if (c === undefined) return undefined;
  return c.isMapping() ? c.need('value').bool() : c.bool();
}

export function base64(c: YamlCursor): Uint8Array {
  const s = c.str().replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) c.fail('expected base64 bytes');
  return new Uint8Array(Buffer.from(s, 'base64'));
}

/** Envoy rejects unknown fields; here they are typos the plugin would silently not get. */
export function knownFields(c: YamlCursor, known: readonly string[], message: string): void {
  for (const k of c.keys())
    if (!known.includes(k)) c.need(k).fail(`unknown field of ${message} (known: ${known.join(', ')})`);
}
