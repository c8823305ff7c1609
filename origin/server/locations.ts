// The locations of `--config` as the storage seam takes them: a `proxy_pass` location's URL prefix
// is a directory under the root (root + prefix) whose files are on remote storage
// (io/remote/routed-storage.ts). Presentation URLs are mapped to paths under the root the same way
// (server.ts), so a request under the prefix reads from the location's storage.

import * as path from 'node:path';
import type { LocationConfig } from '../config/config-file';
import type { RemoteLocation } from '../io/remote/routed-storage';

export function remoteLocations(root: string, locations: readonly LocationConfig[]): RemoteLocation[] {
  return locations
    .filter((l) => l.proxyPass !== undefined)
    .map((l) => ({
      dir: path.join(root, ...l.prefix.split('/').filter((s) => s !== '')) + path.sep,
      base: l.proxyPass!,
      connections: l.proxyConnections,
      timeoutMs: l.proxyTimeoutMs,
      revalidateMs: l.proxyRevalidateMs,
      insecureKeys: l.proxyInsecureKeys,
    }));
}
