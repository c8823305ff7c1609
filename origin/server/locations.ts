// The locations of `--config` as the storage seam takes them: a `proxy_pass` location's URL prefix
// is a directory under the root (root + prefix) whose files are on remote storage
// (io/remote/routed-storage.ts). Presentation URLs are mapped to paths under the root the same way
// (server.ts), so a request under the prefix reads from the location's storage.

// An `s3://bucket/prefix/` location becomes the bucket's HTTP base URL and its signing settings
// (io/remote/s3-address.ts); its region defaults to the environment's, as the AWS tools do.

import * as path from 'node:path';
import type { LocationConfig } from '../config/config-file';
import { awsEndpoint, parseS3Url, s3BaseUrl } from '../io/remote/s3-address';
import type { RemoteLocation } from '../io/remote/routed-storage';

export function remoteLocations(
  root: string,
  locations: readonly LocationConfig[],
  env: NodeJS.ProcessEnv = process.env,
): RemoteLocation[] {
  return locations
    .filter((l) => l.proxyPass !== undefined)
    .map((l) => ({
      dir: path.join(root, ...l.prefix.split('/').filter((s) => s !== '')) + path.sep,
      connections: l.proxyConnections,
      timeoutMs: l.proxyTimeoutMs,
      revalidateMs: l.proxyRevalidateMs,
      negativeTtlMs: l.proxyNegativeTtlMs,
      insecureKeys: l.proxyInsecureKeys,
      ...target(l, env),
    }));
}

function target(l: LocationConfig, env: NodeJS.ProcessEnv): Pick<RemoteLocation, 'base' | 's3'> {
  const s3 = parseS3Url(l.proxyPass!);
  if (typeof s3 === 'string') return { base: l.proxyPass! };
  const region = l.s3Region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1');
  const base = s3BaseUrl(s3, l.s3Endpoint ?? awsEndpoint(region), l.s3UrlStyle ?? 'virtual-host');
  return { base: base.href, s3: l.s3Profile === undefined ? { region } : { region, profile: l.s3Profile } };
}
