// The edge in the origin's own process (`origin serve --edge-config envoy.yaml`): the same
// proxy-wasm filter the separate `origin edge` proxy runs, driven in the same order
// (docs/specs.md ABI §1.3), but in front of an in-process handler instead of an upstream
// connection. What the filter sees and what the client gets are `origin edge`'s:
//
//   request headers (+ x-forwarded-proto, x-request-id) → filter → the handler sees the request
//     the filter let through (its :method, :path and headers)
//   request body chunks → filter (the origin takes no bodies: they go nowhere after the filter)
//   the handler's response head (+ x-envoy-upstream-service-time) → filter → client
//   the handler's body chunks → filter → client, one at a time, in order
//   stream over → end(), exactly once
//
// A filter whose module has no callback that could see the response (the real edge.wasm exports
// none: docs/specs.md ABI §1.2, Envoy then never enters the VM for it) lets the response pass:
// the head gets what the connection manager adds (server, date, upstream service time, no
// hop-by-hop headers, lowercase names) and goes out with the body chunks as the handler writes
// them (HttpFilterStream.responsePassesThrough, asked at the head and before each chunk).
//
// The handler writes to a ServerResponse as usual. Its writeHead/write/end are taken over for
// the exchange (the "tap"): the head and chunks queue until the filter has seen them, then go out
// through the response's own methods. There is no route table here: every request the filter
// lets through goes to the handler (the routes and clusters of the envoy.yaml are `origin edge`'s).
// Replies the filter makes are sent as the host built them, as in edge-proxy.ts.

import * as http from 'node:http';
import { Socket } from 'node:net';
import { streamInfoOf } from './connection-io';
import type { ServerHeader } from './edge-headers';
import { EdgeResponse } from './edge-response';
import { InlineExchange } from './inline-exchange';
import { HttpFilterFactory, StreamInfo } from '../proxy-wasm/http-filter';

export { EdgeResponse } from './edge-response';

export interface InlineEdgeOptions {
  factory: HttpFilterFactory;
  /** The connection manager's server_header_transformation and name. */
  server: ServerHeader;
  generateRequestId: boolean;
  suppressEnvoyHeaders: boolean;
  /** Edge errors (a header Node refuses, an internal failure); none when undefined. */
  log?: (line: string) => void;
}

export interface InlineEdgeStats {
  requests: number;
  /** Replies made by the filter instead of the handler. */
  localReplies: number;
}

/** What every exchange of one listener shares. */
export interface InlineEdge {
  options: InlineEdgeOptions;
  stats: InlineEdgeStats;
  handler: Handler;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** One downstream connection, as the stream and the request map see it. */
interface Downstream {
  info: StreamInfo;
  httpVersion: string;
  authority: string;
}

/** A request listener that runs every request through the filter before `handler`; its server
 * must be made with `ServerResponse: EdgeResponse`. */
export function inlineEdge(
  o: InlineEdgeOptions,
  handler: Handler,
): { listener: Handler; stats: InlineEdgeStats; ServerResponse: typeof EdgeResponse } {
  const stats: InlineEdgeStats = { requests: 0, localReplies: 0 };
  const edge: InlineEdge = { options: o, stats, handler };
  // The downstream connection's facts, made once per connection (and per protocol version: a
  // keep-alive connection may carry HTTP/1.0 and HTTP/1.1 requests). The stream only reads them.
  const downstreams = new WeakMap<Socket, Downstream>();
  let connections = 0;
  const listener: Handler = (req, res) => {
    stats.requests++;
    if (!(res instanceof EdgeResponse))
      throw new TypeError('inlineEdge: the server must be created with ServerResponse: EdgeResponse');
    const socket = req.socket;
    let d = downstreams.get(socket);
    if (d === undefined || d.httpVersion !== req.httpVersion) {
      const info = Object.freeze(streamInfoOf(req, d?.info.connectionId ?? ++connections));
      // `:authority` of a request without Host (HTTP/1.0): the address it came in on.
      d = {
        info,
        httpVersion: req.httpVersion,
        authority: info.localAddress !== '' ? `${info.localAddress}:${info.localPort}` : '',
      };
      downstreams.set(socket, d);
    }
    const stream = o.factory.newStream(d.info);
    new InlineExchange(edge, stream, req, res, d.authority).run();
  };
  return { listener, stats, ServerResponse: EdgeResponse };
}
