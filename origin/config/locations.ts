// Which location a URL path falls in: the longest `prefix` that starts it (the edge plugin's rule,
// assembly/edge/, and nginx's for prefix locations). Immutable: a reload makes a new one.

import type { LocationConfig } from './config-file';

export class Locations {
  /** Longest prefix first. */
  private readonly list: readonly LocationConfig[];

  constructor(locations: readonly LocationConfig[] = []) {
    this.list = [...locations].sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** The location of a decoded URL path (from '/'), or undefined when none matches. */
  match(urlPath: string): LocationConfig | undefined {
    for (const l of this.list) if (urlPath.startsWith(l.prefix)) return l;
    return undefined;
  }

  /** The locations with remote storage. */
  get remote(): LocationConfig[] {
    return this.list.filter((l) => l.proxyPass !== undefined);
  }

  get size(): number {
    return this.list.length;
  }
}
