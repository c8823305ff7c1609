// Route matching as Envoy's router does it, run AFTER the filter on the headers it let through
// (docs/specs.md ABI §3.4: a plugin that rewrites :path or :authority is routed on the new
// value): the virtual host by :authority (exact, then `*.suffix`, then `prefix.*`, then `*`;
// a port in :authority only matches a domain that names it, or after it is stripped), then the
// first route whose match accepts the path (the query is not part of the match), then one
// endpoint of its cluster, round robin.

import { Cluster, Endpoint, RouteEntry, VirtualHost } from './envoy-config';

export interface RouteTarget {
  route: RouteEntry;
  cluster: Cluster;
  endpoint: Endpoint;
  /** :path to send upstream (prefix_rewrite applied). */
  path: string;
}

export class RouteTable {
  private readonly exact = new Map<string, VirtualHost>();
  private readonly suffixes: Array<[string, VirtualHost]> = [];
  private readonly prefixes: Array<[string, VirtualHost]> = [];
  private readonly any: VirtualHost | undefined;
  private readonly next = new Map<string, number>();

  constructor(
    virtualHosts: readonly VirtualHost[],
    private readonly clusters: ReadonlyMap<string, Cluster>,
  ) {
    let any: VirtualHost | undefined;
    for (const vh of virtualHosts) {
      for (const d of vh.domains) {
        if (d === '*') any ??= vh;
        else if (d.startsWith('*')) this.suffixes.push([d.slice(1), vh]);
        else if (d.endsWith('*')) this.prefixes.push([d.slice(0, -1), vh]);
        else if (!this.exact.has(d)) this.exact.set(d, vh);
      }
    }
    // Envoy prefers the longest wildcard match.
    this.suffixes.sort((a, b) => b[0].length - a[0].length);
    this.prefixes.sort((a, b) => b[0].length - a[0].length);
    this.any = any;
  }

  /** The upstream for a request, or undefined (Envoy: 404, details route_not_found). */
  resolve(authority: string, path: string): RouteTarget | undefined {
    const vh = this.virtualHost(authority.toLowerCase());
    if (vh === undefined) return undefined;
    const q = path.indexOf('?');
    const pathOnly = q < 0 ? path : path.slice(0, q);
    for (const route of vh.routes) {
      if (!matches(route, pathOnly)) continue;
      const cluster = this.clusters.get(route.cluster);
      if (cluster === undefined) return undefined;
      const i = this.next.get(cluster.name) ?? 0;
      this.next.set(cluster.name, (i + 1) % cluster.endpoints.length);
      const rewritten =
        route.prefixRewrite !== undefined && route.match.kind !== 'path'
          ? route.prefixRewrite + path.slice(route.match.value.length)
          : path;
      return { route, cluster, endpoint: cluster.endpoints[i]!, path: rewritten };
    }
    return undefined;
  }

  private virtualHost(authority: string): VirtualHost | undefined {
    const found = this.lookup(authority);
    if (found !== undefined) return found;
    const port = /:\d+$/.exec(authority);
    return port !== null ? (this.lookup(authority.slice(0, port.index)) ?? this.any) : this.any;
  }

  private lookup(host: string): VirtualHost | undefined {
    const exact = this.exact.get(host);
    if (exact !== undefined) return exact;
    for (const [suffix, vh] of this.suffixes) if (host.length > suffix.length && host.endsWith(suffix)) return vh;
    for (const [prefix, vh] of this.prefixes) if (host.length > prefix.length && host.startsWith(prefix)) return vh;
    return undefined;
  }
}

/** safe_regex matches, compiled once per route. */
const compiled = new WeakMap<RouteEntry, RegExp>();

function matches(route: RouteEntry, path: string): boolean {
  const { kind, value, caseSensitive } = route.match;
  if (kind === 'safe_regex') {
    let re = compiled.get(route);
    // Envoy's safe_regex matches the whole path (without the query); case_sensitive does not apply.
    if (re === undefined) compiled.set(route, (re = new RegExp(`^(?:${value})$`)));
    return re.test(path);
  }
  const p = caseSensitive ? path : path.toLowerCase();
  const v = caseSensitive ? value : value.toLowerCase();
  switch (kind) {
    case 'path':
      return p === v;
    case 'prefix':
      return p.startsWith(v);
    case 'path_separated_prefix':
      return p === v || p.startsWith(v.endsWith('/') ? v : `${v}/`);
  }
}
