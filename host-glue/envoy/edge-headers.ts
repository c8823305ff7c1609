// Header maps between Node's HTTP/1.1 messages and the header lists a proxy-wasm filter sees in
// Envoy (docs/specs.md ABI §3.4): lowercase names, order and duplicates kept, pseudo-headers
// first; hop-by-hop headers belong to one connection and are neither shown to the plugin nor
// forwarded (RFC 9110 §7.6.1: `Connection` and the fields it names, `Keep-Alive`,
// `Proxy-Connection`, `Transfer-Encoding`, `TE`, `Trailer`, `Upgrade`) — Node frames each side itself.

import { randomUUID } from 'node:crypto';
import { HeaderList } from '../proxy-wasm/http-filter';

/** A hop-by-hop name (lowercase): by length first, so most names are one comparison of lengths. */
export function isHopByHop(name: string): boolean {
  switch (name.length) {
    case 2:
      return name === 'te';
    case 7:
      return name === 'trailer' || name === 'upgrade';
    case 10:
      return name === 'connection' || name === 'keep-alive';
    case 14:
      return name === 'http2-settings';
    case 16:
      return name === 'proxy-connection';
    case 17:
      return name === 'transfer-encoding';
    default:
      return false;
  }
}

/** Lowercase header names, remembered: clients and handlers send the same few names every time. */
const lowerNames = new Map<string, string>();

export function lowerName(name: string): string {
  let l = lowerNames.get(name);
  if (l === undefined) {
    l = name.toLowerCase();
    if (name.length <= 64) {
      if (lowerNames.size >= 256) lowerNames.clear();
      lowerNames.set(name, l);
    }
  }
  return l;
}

/** Lowercase names listed in `Connection` headers (they are hop-by-hop too). */
function connectionTokens(raw: readonly string[]): Set<string> | undefined {
  let tokens: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length !== 10 || raw[i]!.toLowerCase() !== 'connection') continue;
    for (const t of raw[i + 1]!.split(',')) {
      const name = t.trim().toLowerCase();
      if (name !== '' && name !== 'close' && name !== 'keep-alive') (tokens ??= new Set()).add(name);
    }
  }
  return tokens;
}

/** Node's rawHeaders (name, value, name, value...) as a list, without hop-by-hop headers. */
function endToEnd(raw: readonly string[]): HeaderList {
  const named = connectionTokens(raw);
  const list: HeaderList = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = lowerName(raw[i]!);
    if (isHopByHop(name) || named?.has(name)) continue;
    list.push([name, raw[i + 1]!]);
  }
  return list;
}

export interface RequestLine {
  method: string;
  /** The request target as received: path and query, not normalised (Envoy's default). */
  url: string;
  rawHeaders: readonly string[];
}

export interface RequestHeaderOptions {
  scheme: 'http' | 'https';
  /** `:authority` when the request has no Host (HTTP/1.0). */
  defaultAuthority: string;
  generateRequestId: boolean;
}

/** The request map the filter sees, and whether a body follows the head. */
export interface RequestHead {
  headers: HeaderList;
  /** Content-Length > 0 or a Transfer-Encoding (RFC 9112 §6.3), read from the raw headers. */
  hasBody: boolean;
}

/**
 * The request map the filter sees: `:authority` (from Host), `:path`, `:method`, `:scheme`, the
 * end-to-end headers in order, then what Envoy's connection manager adds before the filters:
 * `x-forwarded-proto` (set to the downstream scheme; Envoy overwrites a client's value when it
 * trusts no hop before it, its default) and `x-request-id` (a UUID when the request has none).
 * One pass over the raw headers: Node's parsed `req.headers` object is never needed for it.
 */
export function requestHeaderList(req: RequestLine, o: RequestHeaderOptions): RequestHead {
  const raw = req.rawHeaders;
  const named = connectionTokens(raw);
  const headers: HeaderList = [
    [':authority', o.defaultAuthority],
    [':path', req.url],
    [':method', req.method],
    [':scheme', o.scheme],
  ];
  let host = false;
  let hasRequestId = false;
  let proto = false;
  let length: string | undefined;
  let chunked = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = lowerName(raw[i]!);
    if (name.length === 14 && name === 'content-length')
      length ??= raw[i + 1]!; // Node keeps the first too
    else if (name.length === 17 && name === 'transfer-encoding') chunked = true;
    if (isHopByHop(name) || named?.has(name)) continue;
    if (name === 'host') {
      if (!host) headers[0]![1] = raw[i + 1]!;
      host = true;
    } else if (name === 'x-forwarded-proto') {
      if (proto) continue;
      proto = true;
      headers.push([name, o.scheme]);
    } else {
      if (name === 'x-request-id') hasRequestId = true;
      headers.push([name, raw[i + 1]!]);
    }
  }
  if (!proto) headers.push(['x-forwarded-proto', o.scheme]);
  if (!hasRequestId && o.generateRequestId) headers.push(['x-request-id', randomUUID()]);
  return { headers, hasBody: requestHasBody(length, chunked ? '' : undefined) };
}

/** The first value of `name` (lowercase) in a list. */
export function headerValue(headers: HeaderList, name: string): string | undefined {
  for (let i = 0; i < headers.length; i++) {
    const entry = headers[i]!;
    if (entry[0] === name) return entry[1];
  }
  return undefined;
}

export interface UpstreamRequestHead {
  method: string;
  path: string;
  authority: string;
  /** Flat [name, value, ...] as Node's http.request takes them: `host` first, no pseudo-headers. */
  headers: string[];
}

/** What goes upstream after the filter: its (possibly rewritten) pseudo-headers and headers. */
export function upstreamRequestHead(headers: HeaderList): UpstreamRequestHead {
  let method = 'GET';
  let path = '/';
  let authority = '';
  const flat: string[] = ['host', ''];
  for (const [k, v] of headers) {
    if (k.charCodeAt(0) === 58 /* ':' */) {
      if (k === ':method') method = v;
      else if (k === ':path') path = v;
      else if (k === ':authority') authority = v;
    } else if (k !== 'host' && !isHopByHop(k)) flat.push(k, v);
  }
  flat[1] = authority;
  return { method, path, authority, headers: flat };
}

/** The response map the filter sees: `:status`, the end-to-end headers, plus what Envoy's router
 * adds (x-envoy-upstream-service-time, unless the router's suppress_envoy_headers: undefined). */
export function responseHeaderList(
  statusCode: number,
  rawHeaders: readonly string[],
  upstreamServiceTimeMs: number | undefined,
): HeaderList {
  const list = endToEnd(rawHeaders);
  list.unshift([':status', String(statusCode)]);
  if (upstreamServiceTimeMs !== undefined)
    list.push(['x-envoy-upstream-service-time', String(Math.round(upstreamServiceTimeMs))]);
  return list;
}

export interface DownstreamHead {
  status: number;
  /** Flat [name, value, ...] for ServerResponse.writeHead. */
  headers: string[];
}

export type ServerHeader = { name: string; transformation: 'OVERWRITE' | 'APPEND_IF_ABSENT' | 'PASS_THROUGH' };

/**
 * The response written to the client from the list the filter let through: its `:status`, its
 * headers, and `server` as the connection manager's server_header_transformation says (Envoy
 * applies it after the filters: OVERWRITE, the default, sends `server: envoy`). Node adds `date`
 * when absent, as Envoy does.
 */
export function downstreamHead(headers: HeaderList, server: ServerHeader): DownstreamHead {
  let status = 0;
  const fields: string[] = [];
  for (let i = 0; i < headers.length; i++) {
    const entry = headers[i]!;
    const k = entry[0];
    if (k.charCodeAt(0) === 58) {
      if (k === ':status') status = Number(entry[1]);
    } else fields.push(k, entry[1]);
  }
  return downstreamFields(status, fields, server);
}

/** downstreamHead for a head given as its status and [name, value, ...] (lowercase names). */
export function downstreamFields(status: number, fields: readonly string[], server: ServerHeader): DownstreamHead {
  const flat: string[] = [];
  let hasServer = false;
  for (let i = 0; i < fields.length; i += 2) {
    const k = fields[i]!;
    if (k === 'server') {
      hasServer = true;
      if (server.transformation !== 'OVERWRITE') flat.push(k, fields[i + 1]!);
    } else if (!isHopByHop(k)) flat.push(k, fields[i + 1]!);
  }
  if (server.transformation === 'OVERWRITE' || (server.transformation === 'APPEND_IF_ABSENT' && !hasServer))
    flat.push('server', server.name);
  // A filter that sets a :status outside 100..599 made a response no client can read: Envoy's
  // codec would reset the stream; we answer 502 instead of throwing inside writeHead.
  if (!Number.isInteger(status) || status < 100 || status > 599) status = 502;
  return { status, headers: flat };
}

/** Whether a response to `method` with this status and these headers has a body (RFC 9112 §6.3). */
export function responseHasBody(method: string, status: number, contentLength: string | undefined): boolean {
  if (method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200)) return false;
  return contentLength === undefined || contentLength.trim() !== '0';
}

/** Whether a request has a body: Content-Length > 0 or a Transfer-Encoding (RFC 9112 §6.3). */
export function requestHasBody(contentLength: string | undefined, transferEncoding: string | undefined): boolean {
  if (transferEncoding !== undefined) return true;
  return contentLength !== undefined && contentLength.trim() !== '0' && contentLength.trim() !== '';
}

/** An Envoy-generated reply (router or connection manager): text/plain body, `content-length`. */
export function envoyReplyHeaders(status: number, body: Uint8Array): HeaderList {
  const headers: HeaderList = [[':status', String(status)]];
  if (body.byteLength > 0) headers.push(['content-length', String(body.byteLength)], ['content-type', 'text/plain']);
  return headers;
}
