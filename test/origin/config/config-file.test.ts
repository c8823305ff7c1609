// The reader of `origin serve --config` (origin/config/config-file.ts): what a good file gives, and
// for bad files the exact message — file, line, key path — since an operator reads it at 3 a.m.

import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ConfigFileError, LOCATION_DEFAULTS, parseConfig } from '../../../origin/config/config-file';
import { remoteLocations } from '../../../origin/server/locations';
import { Locations } from '../../../origin/config/locations';
import { configMarkdown, LOCATION_KEYS, SERVER_KEYS } from '../../../origin/config/schema';
import { DEFAULT_DRAIN_SECONDS, SERVE_USAGE } from '../../../origin/cli/serve-command';
import { DEFAULT_CACHE_CONTROL, DEFAULT_MANIFEST_CACHE_BYTES } from '../../../origin/server/server';
import { DEFAULT_LIMITS } from '../../../origin/cache/presentation-store';
import { WARM_UP_ROUNDS } from '../../../origin/server/warm-up';

const GOOD = `# origin serve configuration
root: media
port: 8082
workers: 2
segment_cache_control: "public, max-age=10"
locations:
  - prefix: /remote/
    proxy_pass: https://storage.example/media/
    proxy_connections: 4
  - prefix: /remote/short/
    segment_cache_control: ""
  - prefix: /legacy/
    iss_pass_through: false
`;

test('a good file: server settings by key, locations in file order with their defaults', () => {
  const c = parseConfig(GOOD, 'o.yaml');
  expect([...c.server]).toEqual([
    ['root', 'media'],
    ['port', 8082],
    ['workers', 2],
    ['segment_cache_control', 'public, max-age=10'],
  ]);
  expect(c.locations.map((l) => [l.prefix, l.line])).toEqual([
    ['/remote/', 7],
    ['/remote/short/', 10],
    ['/legacy/', 12],
  ]);
  expect(c.locations[0]).toMatchObject({
    proxyPass: 'https://storage.example/media/',
    proxyConnections: 4,
    proxyTimeoutMs: LOCATION_DEFAULTS.proxyTimeoutMs,
    proxyRevalidateMs: LOCATION_DEFAULTS.proxyRevalidateMs,
    proxyInsecureKeys: false,
  });
  expect(c.locations[1]!.segmentCacheControl).toBe('');
  expect(parseConfig('', 'empty.yaml')).toEqual({ file: 'empty.yaml', server: new Map(), locations: [] });
});

test('the longest matching prefix wins, whatever the file order', () => {
  const l = new Locations(parseConfig(GOOD, 'o.yaml').locations);
  expect(l.match('/remote/short/a/x.ism')?.prefix).toBe('/remote/short/');
  expect(l.match('/remote/a/x.ism')?.prefix).toBe('/remote/');
  expect(l.match('/remotely/x.ism')).toBeUndefined();
  expect(l.match('/legacy/x.ism')?.prefix).toBe('/legacy/');
  expect(l.remote.map((x) => x.prefix)).toEqual(['/remote/']);
});

test.each([
  ['port: 80\nprot: 81\n', 'f.yaml:2: unknown key "prot" (the top level takes root, host, port,'],
  ['port: "80"\n', 'f.yaml:1: port: expected an integer 0..65535, found "80"'],
  ['port: 70000\n', 'f.yaml:1: port: expected an integer 0..65535, found 70000'],
  ['workers: 0\n', 'f.yaml:1: workers: expected an integer 1..256, found 0'],
  ['player: yes please\n', 'f.yaml:1: player: expected true or false, found "yes please"'],
  [
    'log_level: loud\n',
    'f.yaml:1: log_level: expected one of trace, debug, info, warn, error, fatal, silent, found "loud"',
  ],
  ['segment_cache_control: [a]\n', 'f.yaml:1: segment_cache_control: expected a string, found a list'],
  ['port: 1\nport: 2\n', 'f.yaml:2: not valid YAML: Map keys must be unique'],
  [
    'locations:\n  - prefix: /a/\n    proxypass: http://s/\n',
    'f.yaml:3: locations[0]: unknown key "proxypass" (a location takes prefix, proxy_pass,',
  ],
  ['locations:\n  - proxy_pass: http://s/\n', 'f.yaml:2: locations[0]: missing "prefix"'],
  ['locations:\n  - prefix: a/\n', 'f.yaml:2: locations[0].prefix: expected a URL path starting with "/"'],
  ['locations:\n  - prefix: /a/../b/\n', 'f.yaml:2: locations[0].prefix: expected a URL path starting with "/"'],
  [
    'locations:\n  - prefix: /a\n    proxy_pass: http://s/\n',
    'f.yaml:2: locations[0].prefix: a location with proxy_pass is a directory: end "/a" with "/"',
  ],
  [
    'locations:\n  - prefix: /a/\n  - prefix: /b/\n  - prefix: /a/\n',
    'f.yaml:4: locations[2].prefix: "/a/" is also the prefix of line 2',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: ftp://s/m/\n',
    'f.yaml:3: locations[0].proxy_pass: expected an http://, https:// or s3:// URL, not ftp://',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: s3://Bucket/m/\n',
    'f.yaml:3: locations[0].proxy_pass: "Bucket" is not an S3 bucket name (3-63 of a-z, 0-9, ".", "-")',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: s3://bucket/m\n',
    'f.yaml:3: locations[0].proxy_pass: an S3 prefix names a directory: end it with "/" (m)',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: https://s/m/\n    s3_region: eu-west-1\n',
    'f.yaml:2: locations[0].s3_region: only a location whose proxy_pass is s3://bucket/prefix/ takes s3_ keys',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: s3://bucket/m/\n    s3_url_style: host\n',
    'f.yaml:4: locations[0].s3_url_style: expected one of virtual-host, path, found "host"',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: s3://bucket/m/\n    s3_endpoint: http://u:p@minio:9000\n',
    'f.yaml:4: locations[0].s3_endpoint: an S3 endpoint must not carry credentials',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: storage/m/\n',
    'f.yaml:3: locations[0].proxy_pass: expected an http://, https:// or s3:// URL, found "storage/m/"',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: https://s/media\n',
    'f.yaml:3: locations[0].proxy_pass: a storage URL names a directory: end it with "/" (/media)',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_pass: https://s/m/?sig=1\n',
    'f.yaml:3: locations[0].proxy_pass: a storage URL has no query or fragment',
  ],
  [
    'locations:\n  - prefix: /a/\n    proxy_connections: 0\n',
    'f.yaml:3: locations[0].proxy_connections: expected an integer 1..1024, found 0',
  ],
  [
    'locations:\n  - prefix: /a/\n    segment_cache_control: "a\\nb"\n',
    'f.yaml:3: locations[0].segment_cache_control: expected one header line',
  ],
  ['locations: /a/\n', 'f.yaml:1: locations: expected a list of locations'],
  ['locations:\n  - /a/\n', 'f.yaml:2: locations[0]: expected a mapping with a prefix'],
  ['- a\n', 'f.yaml:1: expected a mapping of keys'],
  ['port: [1\n', 'f.yaml:2: not valid YAML: Flow sequence in block collection must be sufficiently indented'],
])('%j fails with %j', (text, message) => {
  let thrown: unknown;
  try {
    parseConfig(text, 'f.yaml');
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(ConfigFileError);
  expect((thrown as Error).message.slice(0, message.length)).toBe(message);
});

test('credentials in a storage URL are refused without being echoed', () => {
  expect(() =>
    parseConfig('locations:\n  - prefix: /a/\n    proxy_pass: https://user:s3cret@s/m/\n', 'f.yaml'),
  ).toThrow(/^f\.yaml:3: locations\[0\]\.proxy_pass: a storage URL must not carry credentials$/);
});

test('every server key but locations is a flag of origin serve, named in its usage', () => {
  for (const k of SERVER_KEYS) {
    if (k.name === 'locations') continue;
    expect(k.flag).toBeDefined();
    expect(SERVE_USAGE).toContain(k.flag!);
  }
});

const DOC = path.join(__dirname, '..', '..', '..', 'docs', 'reference', 'configuration.md');

test.each([
  ['server-keys', () => configMarkdown(SERVER_KEYS)],
  ['location-keys', () => configMarkdown(LOCATION_KEYS)],
])('docs/reference/configuration.md prints the %s of the schema (UPDATE_GOLDEN=1 rewrites it)', (marker, render) => {
  let doc = readFileSync(DOC, 'utf8');
  const table = new RegExp(`(<!-- ${marker} -->\\n)([\\s\\S]*?)(\\n?<!-- \\/${marker} -->)`);
  if (process.env.UPDATE_GOLDEN === '1') {
    doc = doc.replace(table, (_, open: string, _old: string) => `${open}${render()}\n<!-- /${marker} -->`);
    writeFileSync(DOC, doc);
  }
  expect(table.exec(doc)?.[2]).toBe(render());
});

test("the defaults the docs print are the code's", () => {
  const d = (name: string): string | undefined => SERVER_KEYS.find((k) => k.name === name)!.default;
  expect(d('manifest_cache_control')).toBe(DEFAULT_CACHE_CONTROL.manifest);
  expect(d('segment_cache_control')).toBe(DEFAULT_CACHE_CONTROL.segment);
  expect(d('manifest_cache_bytes')).toBe(String(DEFAULT_MANIFEST_CACHE_BYTES));
  expect(d('stat_ttl_ms')).toBe(String(DEFAULT_LIMITS.statTtlMs));
  expect(d('warm_up_rounds')).toBe(String(WARM_UP_ROUNDS));
  expect(d('drain_seconds')).toBe(String(DEFAULT_DRAIN_SECONDS));
  const l = (name: string): string | undefined => LOCATION_KEYS.find((k) => k.name === name)!.default;
  expect([l('proxy_connections'), l('proxy_timeout_ms'), l('proxy_revalidate_ms')]).toEqual(
    [LOCATION_DEFAULTS.proxyConnections, LOCATION_DEFAULTS.proxyTimeoutMs, LOCATION_DEFAULTS.proxyRevalidateMs].map(
      String,
    ),
  );
});

test('an s3:// location: its keys, and the base URL and signing the storage takes', () => {
  const c = parseConfig(
    [
      'locations:',
      '  - prefix: /s3/',
      '    proxy_pass: s3://media-bucket/vod/',
      '    s3_region: eu-west-1',
      '  - prefix: /minio/',
      '    proxy_pass: s3://mmm/',
      '    s3_endpoint: http://127.0.0.1:9000',
      '    s3_url_style: path',
      '    s3_profile: ci',
      '',
    ].join('\n'),
    'o.yaml',
  );
  expect(c.locations[0]).toMatchObject({ proxyPass: 's3://media-bucket/vod/', s3Region: 'eu-west-1' });
  const [s3, minio] = remoteLocations('/srv', c.locations, { AWS_REGION: 'ap-south-1' });
  expect(s3).toMatchObject({
    base: 'https://media-bucket.s3.eu-west-1.amazonaws.com/vod/',
    s3: { region: 'eu-west-1' },
  });
  expect(minio).toMatchObject({ base: 'http://127.0.0.1:9000/mmm/', s3: { region: 'ap-south-1', profile: 'ci' } });
  const [plain] = remoteLocations(
    '/srv',
    parseConfig('locations:\n  - prefix: /p/\n    proxy_pass: s3://bbb/\n', 'o').locations,
    {},
  );
  expect(plain).toMatchObject({ base: 'https://bbb.s3.us-east-1.amazonaws.com/', s3: { region: 'us-east-1' } });
});
