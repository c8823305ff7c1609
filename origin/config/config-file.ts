// The reader of `origin serve --config origin.yaml`: YAML text in, an OriginConfig out, checked
// against the keys of schema.ts. Strict: an unknown key, a value of the wrong type, a bad URL or a
// duplicate prefix fails with `<file>:<line>: <key path>: <what is wrong>` (the key path written
// as `locations[2].proxy_pass`). No I/O: the CLI reads the file (origin/cli/serve-config.ts).
//
//   root: /srv/media
//   port: 8081
//   locations:
//     - prefix: /remote/
//       proxy_pass: https://storage.example/media/   # /remote/a/x.ism/.mpd reads media/a/x.ism

import { isMap, isScalar, isSeq, LineCounter, Node as YamlNode, parseDocument, YAMLMap } from 'yaml';
import { parseS3Url, S3UrlStyle } from '../io/remote/s3-address';
import { ConfigKey, ConfigType, LOCATION_KEYS, SERVER_KEYS } from './schema';

/** A configuration file that is wrong; the message starts with `<file>:<line>:`. */
export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

export type ConfigValue = string | number | boolean;

export interface LocationConfig {
  /** URL path prefix, from '/'. */
  prefix: string;
  /** Remote storage: an http(s) URL ending in '/', or s3://bucket/prefix/. */
  proxyPass?: string;
  /** S3 locations: the signing region (unset: the environment's, else us-east-1). */
  s3Region?: string;
  /** S3 locations: an endpoint other than AWS's. */
  s3Endpoint?: string;
  s3UrlStyle?: S3UrlStyle;
  /** S3 locations: the shared credentials file's profile. */
  s3Profile?: string;
  /** Connections to the storage host per worker (default 16). */
  proxyConnections: number;
  /** A storage request that stalls this long fails (ms, default 10 000). */
  proxyTimeoutMs: number;
  /** How long remote validators are trusted before a HEAD asks again (ms, default 5000). */
  proxyRevalidateMs: number;
  /** How long a path storage does not have is taken as missing (ms, default 1000; 0: not remembered). */
  proxyNegativeTtlMs: number;
  /** Allow a server manifest with keys over plain http://. */
  proxyInsecureKeys: boolean;
  issPassThrough: boolean;
  preferStatic: boolean;
  manifestCacheControl?: string;
  segmentCacheControl?: string;
  /** Line of the item in the file (messages). */
  line: number;
}

export interface OriginConfig {
  file: string;
  /** The server keys the file sets, by key name (schema.ts SERVER_KEYS). */
  server: ReadonlyMap<string, ConfigValue>;
  /** In file order. */
  locations: LocationConfig[];
}

export const LOCATION_DEFAULTS = {
  proxyConnections: 16,
  proxyTimeoutMs: 10_000,
  proxyRevalidateMs: 5000,
  proxyNegativeTtlMs: 1000,
} as const;

interface Where {
  file: string;
  lines: LineCounter;
}

function fail(w: Where, node: unknown, path: string, message: string): never {
  const range = (node as YamlNode | null)?.range;
  const line = range ? w.lines.linePos(range[0]).line : 1;
  throw new ConfigFileError(`${w.file}:${line}:${path === '' ? '' : ` ${path}:`} ${message}`);
}

/** The configuration in `text`; `file` names it in messages. */
export function parseConfig(text: string, file: string): OriginConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const w: Where = { file, lines };
  const first = doc.errors[0];
  if (first !== undefined) {
    const line = first.linePos?.[0].line ?? 1;
    const message = first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigFileError(`${file}:${line}: not valid YAML: ${message}`);
  }
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return { file, server: new Map(), locations: [] };
  if (!isMap(root)) fail(w, root, '', 'expected a mapping of keys (root, port, locations, ...)');
  const server = new Map<string, ConfigValue>();
  let locations: LocationConfig[] = [];
  for (const [key, value, keyNode] of pairs(w, root, '')) {
    const spec = known(w, SERVER_KEYS, { key, node: keyNode, path: '' }, 'the top level');
    if (spec.type.kind === 'locations') locations = readLocations(w, value);
    else server.set(key, valueOf(w, spec.type, value, key));
  }
  return { file, server, locations };
}

function* pairs(w: Where, map: YAMLMap, path: string): Generator<[string, unknown, unknown]> {
  for (const p of map.items) {
    if (!isScalar(p.key) || typeof p.key.value !== 'string') fail(w, p.key, path, 'keys must be plain names');
    yield [p.key.value, p.value, p.key];
  }
}

/** The spec of `key` among `keys` (the keys of `what`, for the message); unknown keys fail. */
function known(
  w: Where,
  keys: readonly ConfigKey[],
  at: { key: string; node: unknown; path: string },
  what: string,
): ConfigKey {
  const spec = keys.find((k) => k.name === at.key);
  if (spec === undefined)
    fail(
      w,
      at.node,
      at.path,
      `unknown key "${at.key.slice(0, 64)}" (${what} takes ${keys.map((k) => k.name).join(', ')})`,
    );
  return spec;
}

function readLocations(w: Where, node: unknown): LocationConfig[] {
  if (!isSeq(node)) fail(w, node, 'locations', 'expected a list of locations');
  const out: LocationConfig[] = [];
  node.items.forEach((item, i) => {
    const path = `locations[${i}]`;
    if (!isMap(item)) fail(w, item, path, 'expected a mapping with a prefix');
    const given = new Map<string, ConfigValue>();
    for (const [key, value, keyNode] of pairs(w, item, path)) {
      const spec = known(w, LOCATION_KEYS, { key, node: keyNode, path }, 'a location');
      given.set(key, valueOf(w, spec.type, value, `${path}.${key}`));
    }
    const prefix = given.get('prefix') as string | undefined;
    if (prefix === undefined) fail(w, item, path, 'missing "prefix"');
    const line = w.lines.linePos(item.range![0]).line;
    const same = out.find((o) => o.prefix === prefix);
    if (same !== undefined) fail(w, item, `${path}.prefix`, `"${prefix}" is also the prefix of line ${same.line}`);
    const proxyPass = given.get('proxy_pass') as string | undefined;
    if (proxyPass !== undefined && !prefix.endsWith('/'))
      fail(w, item, `${path}.prefix`, `a location with proxy_pass is a directory: end "${prefix}" with "/"`);
    out.push({
      prefix,
      proxyPass,
      proxyConnections: (given.get('proxy_connections') as number) ?? LOCATION_DEFAULTS.proxyConnections,
      proxyTimeoutMs: (given.get('proxy_timeout_ms') as number) ?? LOCATION_DEFAULTS.proxyTimeoutMs,
      proxyRevalidateMs: (given.get('proxy_revalidate_ms') as number) ?? LOCATION_DEFAULTS.proxyRevalidateMs,
      proxyNegativeTtlMs: (given.get('proxy_negative_ttl_ms') as number) ?? LOCATION_DEFAULTS.proxyNegativeTtlMs,
      proxyInsecureKeys: given.get('proxy_insecure_keys') === true,
      ...s3Keys(w, item, path, given),
      issPassThrough: given.get('iss_pass_through') === true,
      preferStatic: given.get('prefer_static') === true,
      manifestCacheControl: given.get('manifest_cache_control') as string | undefined,
      segmentCacheControl: given.get('segment_cache_control') as string | undefined,
      line,
    });
  });
  return out;
}

/** The s3_* keys of a location; they mean nothing without an s3:// proxy_pass. */
function s3Keys(w: Where, item: unknown, path: string, given: Map<string, ConfigValue>): Partial<LocationConfig> {
  const proxyPass = given.get('proxy_pass') as string | undefined;
  const stray = [...given.keys()].find((k) => k.startsWith('s3_'));
  if (stray !== undefined && !proxyPass?.startsWith('s3://'))
    fail(w, item, `${path}.${stray}`, 'only a location whose proxy_pass is s3://bucket/prefix/ takes s3_ keys');
  const out: Partial<LocationConfig> = {};
  if (given.has('s3_region')) out.s3Region = given.get('s3_region') as string;
  if (given.has('s3_endpoint')) out.s3Endpoint = given.get('s3_endpoint') as string;
  if (given.has('s3_url_style')) out.s3UrlStyle = given.get('s3_url_style') as S3UrlStyle;
  if (given.has('s3_profile')) out.s3Profile = given.get('s3_profile') as string;
  return out;
}

function valueOf(w: Where, type: ConfigType, node: unknown, path: string): ConfigValue {
  const v = isScalar(node) ? node.value : undefined;
  const found = (): string =>
    isMap(node) ? 'a mapping' : isSeq(node) ? 'a list' : typeof v === 'string' ? `"${v.slice(0, 64)}"` : String(v);
  switch (type.kind) {
    case 'boolean':
      if (typeof v !== 'boolean') fail(w, node, path, `expected true or false, found ${found()}`);
      return v;
    case 'integer':
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < type.min || v > type.max)
        fail(w, node, path, `expected an integer ${type.min}..${type.max}, found ${found()}`);
      return v;
    case 'enum':
      if (typeof v !== 'string' || !type.values.includes(v))
        fail(w, node, path, `expected one of ${type.values.join(', ')}, found ${found()}`);
      return v;
    case 'locations':
      return fail(w, node, path, 'expected a list');
    default: {
      if (typeof v !== 'string') fail(w, node, path, `expected a string, found ${found()}`);
      const why = stringProblem(type, v);
      if (why !== undefined) fail(w, node, path, why);
      return v;
    }
  }
}

/** Why a string is not a value of `type`, or undefined when it is. */
function stringProblem(type: ConfigType, v: string): string | undefined {
  if (type.kind === 'header')
    return /[\r\n\0]/.test(v) || v.length > 256 ? 'expected one header line of at most 256 characters' : undefined;
  if (type.kind === 'prefix')
    return /^\/[^\s?#\\]*$/.test(v) && !v.split('/').some((s) => s === '.' || s === '..')
      ? undefined
      : `expected a URL path starting with "/" (no spaces, "?", "#", "." or ".." segments), found "${v.slice(0, 64)}"`;
  if (type.kind === 'storage-url') return storageUrlProblem(v);
  if (type.kind === 'endpoint-url') return httpUrlProblem(v, 'an S3 endpoint');
  return undefined;
}

function storageUrlProblem(v: string): string | undefined {
  if (v.startsWith('s3://')) {
    const s3 = parseS3Url(v);
    return typeof s3 === 'string' ? s3 : undefined;
  }
  const why = httpUrlProblem(v, 'a storage URL');
  if (why !== undefined) return why;
  const { pathname } = new URL(v);
  if (!pathname.endsWith('/')) return `a storage URL names a directory: end it with "/" (${pathname})`;
  return undefined;
}

function httpUrlProblem(v: string, what: string): string | undefined {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return `expected an http://, https:// or s3:// URL, found "${v.slice(0, 64)}"`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `expected an http://, https:// or s3:// URL, not ${u.protocol}//`;
  // Credentials in a URL end up in logs and process listings: never accepted.
  if (u.username !== '' || u.password !== '') return `${what} must not carry credentials`;
  if (u.search !== '' || u.hash !== '') return `${what} has no query or fragment`;
  return undefined;
}
