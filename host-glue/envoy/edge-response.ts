// The tap's hook into Node: the ServerResponse subclass whose writeHead/write/end go to the
// exchange (inline-exchange.ts) while it has the response tapped, and the real methods the
// exchange writes through.

import * as http from 'node:http';
import type { InlineExchange } from './inline-exchange';

export type WriteCallback = (error?: Error | null) => void;

/**
 * The real methods, called on the response past the tap. The tap stays for the whole exchange:
 * a handler writing after the filter replaced or ended the response is ignored, never a write
 * after end (which Node reports as an 'error' event).
 */
export const REAL = http.ServerResponse.prototype as unknown as {
  writeHead(this: http.ServerResponse, status: number, headers: string[]): http.ServerResponse;
  write(this: http.ServerResponse, data: Uint8Array, cb?: WriteCallback): boolean;
  end(this: http.ServerResponse, data?: Uint8Array, cb?: () => void): http.ServerResponse;
};

const EMIT = http.ServerResponse.prototype.emit;

/**
 * The server's response class (`http.createServer({ ServerResponse: EdgeResponse })`): while an
 * exchange has it tapped, writeHead/write/end go to the exchange. A subclass rather than methods
 * set on each response: no closures per request, and every response keeps one shape.
 */
export class EdgeResponse extends http.ServerResponse {
  /** The exchange the handler's writes go to; unset before forward() and for non-edge use. */
  tapped: InlineExchange | undefined = undefined;
  /** The exchange told when the response closes (finished or not). */
  exchange: InlineExchange | undefined = undefined;

  // 'close' (finished or not) tells the exchange, ahead of any listener: caught in emit rather
  // than a listener added to every response.
  override emit(event: string | symbol): boolean {
    if (event === 'close') this.exchange?.onClose();
    // `arguments` handed on as is: no rest array and spread on every event of every response.
    // eslint-disable-next-line prefer-rest-params
    return (EMIT as (...a: unknown[]) => boolean).apply(this, arguments as unknown as unknown[]);
  }

  // The overloads of ServerResponse, taken loosely: the exchange sorts the arguments out.
  override writeHead(status: number, a?: unknown, b?: unknown): this {
    const t = this.tapped;
    if (t === undefined)
      return (REAL.writeHead as (this: http.ServerResponse, ...x: unknown[]) => this).call(this, status, a, b);
    t.captureHead(status, typeof a === 'string' ? b : a);
    return this;
  }

  override write(chunk: unknown, a?: unknown, b?: unknown): boolean {
    const t = this.tapped;
    if (t === undefined)
      return (REAL.write as (this: http.ServerResponse, ...x: unknown[]) => boolean).call(this, chunk, a, b);
    t.captureHead(this.statusCode, undefined);
    return t.enqueue(
      chunk,
      false,
      typeof a === 'function' ? (a as WriteCallback) : typeof b === 'function' ? (b as WriteCallback) : undefined,
    );
  }

  override end(chunk?: unknown, a?: unknown, b?: unknown): this {
    const t = this.tapped;
    if (t === undefined)
      return (REAL.end as (this: http.ServerResponse, ...x: unknown[]) => this).call(this, chunk, a, b);
    const done =
      typeof chunk === 'function'
        ? (chunk as WriteCallback)
        : typeof a === 'function'
          ? (a as WriteCallback)
          : typeof b === 'function'
            ? (b as WriteCallback)
            : undefined;
    const data = typeof chunk === 'function' ? undefined : chunk;
    t.captureHead(this.statusCode, undefined, true, data);
    t.finish(data, done);
    return this;
  }
}
