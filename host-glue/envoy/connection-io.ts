// What both edges (edge-proxy.ts, edge-inline.ts) read of a downstream connection, and how they
// wait for a connection's write buffer to drain.

import type * as http from 'node:http';
import type { StreamInfo } from '../proxy-wasm/http-filter';

/** What the filter's properties read of the downstream connection (source.*, destination.*, connection_id). */
export function streamInfoOf(req: http.IncomingMessage, connectionId: number | undefined): StreamInfo {
  const socket = req.socket;
  return {
    remoteAddress: socket.remoteAddress ?? '',
    remotePort: socket.remotePort ?? 0,
    protocol: `HTTP/${req.httpVersion}`,
    localAddress: socket.localAddress ?? '',
    localPort: socket.localPort ?? 0,
    connectionId,
  };
}

/** Resolves on 'drain', or when the stream closes (a client that left never drains). */
export function drained(w: NodeJS.WritableStream & { once(e: 'close', f: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      w.removeListener('drain', done);
      w.removeListener('close', done);
      resolve();
    };
    w.once('drain', done);
    w.once('close', done);
  });
}
