// The keys of `origin serve --config origin.yaml`, as data: the reader (config-file.ts) checks a
// file against them and docs/reference/configuration.md is printed from them (configMarkdown), so
// the two cannot drift. Server keys are the CLI's flags under their snake_case names (a flag given
// on the command line wins over the file); location keys apply to the URLs under a `prefix`, the
// longest prefix winning, like the edge plugin's locations and the reference product's
// <Location>/<Directory> blocks. Live settings will be location keys too.

export type ConfigType =
  | { kind: 'string' }
  | { kind: 'boolean' }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'enum'; values: readonly string[] }
  /** One header line (no CR, LF or NUL, at most 256 characters); '' sends none. */
  | { kind: 'header' }
  /** A URL path starting with '/'. */
  | { kind: 'prefix' }
  /**
   * An http:// or https:// URL of a directory (ending in '/'), without credentials, query or
   * fragment; or s3://bucket/prefix/.
   */
  | { kind: 'storage-url' }
  /** An http:// or https:// URL of a host (an S3 endpoint), without credentials, query or fragment. */
  | { kind: 'endpoint-url' }
  /** The list of locations. */
  | { kind: 'locations' };

export interface ConfigKey {
  name: string;
  type: ConfigType;
  /** The default, as the docs print it (undefined: unset). */
  default?: string;
  /** Whether SIGHUP applies a change of it; the others keep their value until a restart. */
  reload: boolean;
  /** The `origin serve` flag that overrides it (server keys). */
  flag?: string;
  description: string;
}

const header: ConfigType = { kind: 'header' };
const bool: ConfigType = { kind: 'boolean' };
const int = (min: number, max: number): ConfigType => ({ kind: 'integer', min, max });

/** Keys at the top level of the file: what the flags of `origin serve` set. */
export const SERVER_KEYS: readonly ConfigKey[] = [
  {
    name: 'root',
    type: { kind: 'string' },
    reload: false,
    flag: '--root',
    description: "Directory to serve (relative to the configuration file's directory).",
  },
  {
    name: 'host',
    type: { kind: 'string' },
    default: '127.0.0.1',
    reload: false,
    flag: '--host',
    description: 'Address to listen on.',
  },
  {
    name: 'port',
    type: int(0, 65535),
    default: '8081',
    reload: false,
    flag: '--port',
    description: 'Port; 0 takes any free port.',
  },
  {
    name: 'workers',
    type: int(1, 256),
    default: 'the CPUs',
    reload: false,
    flag: '--workers',
    description: 'Worker processes sharing the port; 1 serves in the process itself.',
  },
  {
    name: 'manifest_cache_control',
    type: header,
    default: 'public, max-age=60',
    reload: true,
    flag: '--manifest-cache-control',
    description: 'Cache-Control of manifests and playlists; "" sends none. A location may set its own.',
  },
  {
    name: 'segment_cache_control',
    type: header,
    default: 'public, max-age=86400',
    reload: true,
    flag: '--segment-cache-control',
    description: 'Cache-Control of segments and fragments; "" sends none. A location may set its own.',
  },
  {
    name: 'player',
    type: bool,
    default: 'true',
    reload: false,
    flag: '--no-player',
    description: 'Serve the player page (/, /play, /_players/).',
  },
  {
    name: 'serve_sources',
    type: bool,
    default: 'false',
    reload: false,
    flag: '--serve-sources',
    description: 'Serve media sources and clear server manifests as static files.',
  },
  {
    name: 'follow_symlinks',
    type: bool,
    default: 'false',
    reload: false,
    flag: '--follow-symlinks',
    description: 'Serve static files through symbolic links that resolve outside the root.',
  },
  {
    name: 'stat_ttl_ms',
    type: int(0, 3_600_000),
    default: '1000',
    reload: false,
    flag: '--stat-ttl-ms',
    description: "How long a file's stat (and its open handle) is trusted, ms.",
  },
  {
    name: 'manifest_cache_bytes',
    type: int(0, 2 ** 40),
    default: '67108864',
    reload: false,
    flag: '--manifest-cache-bytes',
    description: 'Bound of the rendered-manifest cache per worker; 0 disables it.',
  },
  {
    name: 'encrypted_segment_cache_bytes',
    type: int(0, 2 ** 40),
    default: '0',
    reload: false,
    flag: '--encrypted-segment-cache-bytes',
    description: 'Bound of the encrypted-segment cache per worker; 0 keeps none.',
  },
  {
    name: 'edge_config',
    type: { kind: 'string' },
    reload: false,
    flag: '--edge-config',
    description:
      "An envoy.yaml whose wasm filter runs in this process (relative to the configuration file's directory).",
  },
  {
    name: 'warm_up_rounds',
    type: int(0, 100),
    default: '3',
    reload: false,
    flag: '--warm-up-rounds',
    description: 'Rounds of the start-up warm-up.',
  },
  {
    name: 'log_format',
    type: { kind: 'enum', values: ['json', 'human'] },
    default: 'human on a terminal, else json',
    reload: false,
    flag: '--log-format',
    description: 'The log format.',
  },
  {
    name: 'log_level',
    type: { kind: 'enum', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] },
    default: 'info',
    reload: false,
    flag: '--log-level',
    description: 'The log threshold.',
  },
  {
    name: 'metrics',
    type: bool,
    default: 'true',
    reload: false,
    flag: '--no-metrics',
    description: 'Count requests and answer /metrics.',
  },
  {
    name: 'drain_seconds',
    type: int(0, 3600),
    default: '10',
    reload: false,
    flag: '--drain-seconds',
    description: 'How long SIGTERM lets the responses in flight finish.',
  },
  ...(['expired', 'missing', 'not_yet'] as const).map((which): ConfigKey => ({
    name: `fragment_${which}_status`,
    type: { kind: 'string' },
    default: "the reference's table (docs/reference/errors.md)",
    reload: false,
    flag: `--fragment-${which.replace('_', '-')}-status`,
    description: `Status of a live segment refusal \`fragment-${which.replace('_', '-')}\`: one for every format (\`503\`) or some (\`dash=425,hls=503\`; formats smooth, hds, hls, dash), 400..599.`,
  })),
  {
    name: 'locations',
    type: { kind: 'locations' },
    reload: true,
    description: 'The list of locations (below); in order, the longest matching prefix wins.',
  },
];

/** Keys of one item of `locations`. */
export const LOCATION_KEYS: readonly ConfigKey[] = [
  {
    name: 'prefix',
    type: { kind: 'prefix' },
    reload: true,
    description:
      'URL path prefix the location applies to (required; starts with `/`; with `proxy_pass`, ends with `/`). The longest matching prefix wins.',
  },
  {
    name: 'proxy_pass',
    type: { kind: 'storage-url' },
    reload: true,
    description:
      'Remote storage over HTTP (`http(s)://host/dir/`) or the S3 API (`s3://bucket/prefix/`): `/<prefix>a/x.ism/...` reads `<proxy_pass>a/x.ism` and its sources with range requests (docs/guide/remote-storage.md). The local root is not read under this prefix.',
  },
  {
    name: 's3_region',
    type: { kind: 'string' },
    default: 'AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1',
    reload: true,
    description: 'The region an `s3://` location signs for (SigV4) and whose AWS endpoint it reads.',
  },
  {
    name: 's3_endpoint',
    type: { kind: 'endpoint-url' },
    default: 'https://s3.<region>.amazonaws.com',
    reload: true,
    description: 'The S3 endpoint of an `s3://` location: another S3-compatible store (MinIO, Ceph RGW, ...).',
  },
  {
    name: 's3_url_style',
    type: { kind: 'enum', values: ['virtual-host', 'path'] },
    default: 'virtual-host',
    reload: true,
    description:
      'How an `s3://` location names its bucket: `virtual-host` (`https://<bucket>.<endpoint host>/<key>`, AWS) or `path` (`https://<endpoint host>/<bucket>/<key>`, most S3-compatible stores).',
  },
  {
    name: 's3_profile',
    type: { kind: 'string' },
    default: 'the environment, else AWS_PROFILE, else default',
    reload: true,
    description:
      "The shared credentials file's profile an `s3://` location signs with (the file: AWS_SHARED_CREDENTIALS_FILE, else `~/.aws/credentials`). Unset: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) from the environment when set, else the file. Credentials are never logged.",
  },
  {
    name: 'proxy_connections',
    type: int(1, 1024),
    default: '16',
    reload: true,
    description: 'Connections to the storage host kept and used at most, per worker.',
  },
  {
    name: 'proxy_timeout_ms',
    type: int(100, 600_000),
    default: '10000',
    reload: true,
    description:
      'A storage request that has not answered (or stalls mid-body) this long fails with 504 `storage-timeout`.',
  },
  {
    name: 'proxy_revalidate_ms',
    type: int(0, 3_600_000),
    default: '5000',
    reload: true,
    description:
      "How long a remote file's validators (ETag, Last-Modified, size) are trusted before a HEAD asks again; every range read still carries `If-Match`.",
  },
  {
    name: 'proxy_negative_ttl_ms',
    type: int(0, 600_000),
    default: '1000',
    reload: true,
    description:
      'How long a path storage answered 404/410 for is taken as missing without asking again (a client retrying a missing presentation costs one HEAD per TTL); 0 remembers no miss.',
  },
  {
    name: 'proxy_insecure_keys',
    type: bool,
    default: 'false',
    reload: true,
    description:
      'Allow a server manifest with DRM keys to be read over plain `http://` (by default only `https://` storage may hold one).',
  },
  {
    name: 'iss_pass_through',
    type: bool,
    default: 'false',
    reload: true,
    description:
      "Legacy Smooth passthrough, for pre-packaged Smooth content the origin cannot parse: `Manifest` is the `.ismc` on storage as it is (the `.ism`'s `clientManifestRelativePath`, else `<name>.ismc`), a fragment the bytes from its `moof` to the end of its `mdat`, found through the source's `tfra`; DASH, HLS and HDS answer 415 `passthrough-smooth-only` (docs/guide/serving.md#legacy-smooth-passthrough).",
  },
  {
    name: 'prefer_static',
    type: bool,
    default: 'false',
    reload: true,
    description:
      'A URL under the prefix that names a file on the local disk is served as that file, before any generated answer (pre-made manifests and fragments, `.ismc`); media sources and server manifests only with `serve_sources`.',
  },
  {
    name: 'manifest_cache_control',
    type: header,
    reload: true,
    description: "Cache-Control of this location's manifests (default: the server's).",
  },
  {
    name: 'segment_cache_control',
    type: header,
    reload: true,
    description: "Cache-Control of this location's segments (default: the server's).",
  },
];

function typeText(t: ConfigType): string {
  switch (t.kind) {
    case 'integer':
      return `integer ${t.min}–${t.max}`;
    case 'enum':
      return t.values.join(' \\| ');
    case 'header':
      return 'header value';
    case 'storage-url':
    case 'endpoint-url':
      return 'URL';
    case 'prefix':
      return 'URL path';
    case 'locations':
      return 'list';
    default:
      return t.kind;
  }
}

/** The key tables of docs/reference/configuration.md. */
export function configMarkdown(keys: readonly ConfigKey[]): string {
  const rows = keys.map(
    (k) =>
      `| \`${k.name}\` | ${typeText(k.type)} | ${k.default === undefined ? 'unset' : `\`${k.default}\``} | ` +
      `${k.reload ? 'yes' : 'no'} | ${k.flag === undefined ? '—' : `\`${k.flag}\``} | ${k.description} |`,
  );
  return ['| key | value | default | SIGHUP | flag | what it does |', '|---|---|---|---|---|---|', ...rows].join('\n');
}
